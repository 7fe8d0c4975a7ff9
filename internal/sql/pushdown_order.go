package sql

import (
	"math"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// This file pushes filters into set operations, TopK and window nodes, and
// turns a filter on ROW_NUMBER() into a TopK.

// pushIntoSetOp filters both inputs: a row is in σ(A ∩ B) (σ(A − B)) as
// often as it is in σA ∩ σB (σA − σB), under set and bag semantics alike.
func pushIntoSetOp(s *plan.SetOp, conj []plan.Expr) plan.Node {
	out := *s
	out.Left = pushFilter(s.Left, conj)
	out.Right = pushFilter(s.Right, conj)
	return &out
}

// partitionConjuncts splits conj (over a TopK's or Window's output) into
// those that read only partition columns (plain column references of
// PartitionBy, below width), which can filter the input instead: they keep
// or drop whole partitions, and a partition's result depends only on its
// own rows. The rest stay above.
func partitionConjuncts(partitionBy []plan.Expr, width int, conj []plan.Expr) (below, above []plan.Expr) {
	part := map[int]bool{}
	for _, e := range partitionBy {
		if c, ok := e.(*plan.ColRef); ok {
			part[c.Index] = true
		}
	}
	for _, c := range conj {
		idx := colRefIndexes(c)
		ok := len(idx) > 0
		for _, i := range idx {
			ok = ok && i < width && part[i]
		}
		if ok {
			below = append(below, c)
		} else {
			above = append(above, c)
		}
	}
	return below, above
}

func pushIntoTopK(t *plan.TopK, conj []plan.Expr) plan.Node {
	below, above := partitionConjuncts(t.PartitionBy, len(t.Input.Columns()), conj)
	if len(below) == 0 {
		return filterOf(t, conj)
	}
	out := *t
	out.Input = pushFilter(t.Input, below)
	return filterOf(&out, above)
}

// pushIntoWindow pushes conjuncts on partition columns below a Window, and
// turns a Window that computes only ROW_NUMBER() under conjuncts bounding
// it by constants (rn <= k, rn < k, rn = k, rn > j, ...) into a TopK that
// keeps only those rows of each partition, numbered: per-group top-k.
func pushIntoWindow(w *plan.Window, conj []plan.Expr) plan.Node {
	width := len(w.Input.Columns())
	below, above := partitionConjuncts(w.PartitionBy, width, conj)
	var n plan.Node = w
	if len(below) > 0 {
		out := *w
		out.Input = pushFilter(w.Input, below)
		n = &out
	}
	if len(w.Funcs) == 1 && w.Funcs[0].Func == "row_number" {
		lo, hi := int64(1), int64(math.MaxInt64)
		bounded := false
		var rest []plan.Expr
		for _, c := range above {
			l, h, ok := rowNumberBound(c, width)
			if !ok {
				rest = append(rest, c)
				continue
			}
			lo, hi = max(lo, l), min(hi, h)
			bounded = bounded || h != math.MaxInt64
		}
		if bounded {
			win := n.(*plan.Window)
			count := max(hi-lo+1, 0)
			t := plan.NewTopK(win.Input, win.PartitionBy, win.OrderBy, count, lo-1, win.Cols[width].Name)
			return filterOf(t, rest)
		}
	}
	return filterOf(n, above)
}

// rowNumberBound reads "rn op k" (or "k op rn") where rn is column col
// (a row number, 1 and up) and k an integer constant, as the range of row
// numbers it keeps: [lo, hi], hi MaxInt64 when unbounded.
func rowNumberBound(c plan.Expr, col int) (lo, hi int64, ok bool) {
	b, isBin := c.(*plan.BinOp)
	if !isBin {
		return 0, 0, false
	}
	op := b.Op.Name
	ref, isRef := b.Left.(*plan.ColRef)
	k := b.Right
	if !isRef || ref.Index != col {
		ref, isRef = b.Right.(*plan.ColRef)
		k = b.Left
		if !isRef || ref.Index != col {
			return 0, 0, false
		}
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
	}
	if hasColRefs(k) {
		return 0, 0, false
	}
	if _, isParam := k.(*plan.Param); isParam {
		return 0, 0, false
	}
	v, err := k.Eval(nil)
	if err != nil || v.IsNull() {
		return 0, 0, false
	}
	switch k.Type().ID {
	case types.Int2, types.Int4, types.Int8:
	default:
		return 0, 0, false
	}
	n := v.Int()
	lo, hi = 1, math.MaxInt64
	switch op {
	case "<=":
		hi = n
	case "<":
		if n == math.MinInt64 {
			return 0, 0, false
		}
		hi = n - 1
	case "=":
		lo, hi = n, n
	case ">=":
		lo = n
	case ">":
		if n == math.MaxInt64 {
			return 0, 0, false
		}
		lo = n + 1
	default:
		return 0, 0, false
	}
	return max(lo, 1), hi, true
}
