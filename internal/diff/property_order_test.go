package diff

import (
	"testing"

	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// Random set operations, TopK and Window nodes for the property test.

// orderedNode draws one of the nodes of this file over inputs drawn by g.
func (g *planGen) orderedNode(t *rapid.T, depth int) plan.Node {
	switch rapid.IntRange(0, 2).Draw(t, "ordered") {
	case 0:
		return g.setOp(t, g.node(t, depth-1), g.node(t, rapid.IntRange(0, depth-1).Draw(t, "rdepth")))
	case 1:
		return g.topK(t, g.node(t, depth-1))
	}
	return g.window(t, g.node(t, depth-1))
}

func (g *planGen) setOp(t *rapid.T, l, r plan.Node) plan.Node {
	u, ok := g.union(t, l, r).(*plan.Union)
	if !ok || len(u.Ins) != 2 {
		return g.union(t, l, r)
	}
	kind := plan.Intersect
	if rapid.Bool().Draw(t, "except") {
		kind = plan.Except
	}
	return &plan.SetOp{Kind: kind, All: rapid.Bool().Draw(t, "all"), Left: u.Ins[0], Right: u.Ins[1], Cols: u.Cols}
}

func (g *planGen) sortKeys(t *rapid.T, cols []plan.Column, label string) []plan.SortKey {
	var keys []plan.SortKey
	for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(cols)-1), 0, 2, rapid.ID[int]).Draw(t, label) {
		k := plan.SortKey{Expr: col(cols, i), Desc: rapid.Bool().Draw(t, "desc")}
		k.NullsFirst = rapid.Bool().Draw(t, "nullsfirst")
		keys = append(keys, k)
	}
	return keys
}

func (g *planGen) partition(t *rapid.T, cols []plan.Column) []plan.Expr {
	var part []plan.Expr
	for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(cols)-1), 0, 1, rapid.ID[int]).Draw(t, "partition") {
		part = append(part, col(cols, i))
	}
	return part
}

func (g *planGen) topK(t *rapid.T, in plan.Node) plan.Node {
	cols := in.Columns()
	count := int64(rapid.IntRange(-1, 3).Draw(t, "count"))
	offset := int64(rapid.IntRange(0, 2).Draw(t, "offset"))
	if count < 0 && offset == 0 {
		offset = 1
	}
	rn := ""
	if count >= 0 && rapid.Bool().Draw(t, "rownumber") {
		rn = "rn"
	}
	return plan.NewTopK(in, g.partition(t, cols), g.sortKeys(t, cols, "keys"), count, offset, rn)
}

func (g *planGen) window(t *rapid.T, in plan.Node) plan.Node {
	cols := in.Columns()
	w := &plan.Window{Input: in, PartitionBy: g.partition(t, cols), OrderBy: g.sortKeys(t, cols, "order")}
	w.Cols = append([]plan.Column(nil), cols...)
	nums := colsOf(cols, types.Int4, types.Int8, types.Numeric)
	for i, n := 0, rapid.IntRange(1, 3).Draw(t, "nfuncs"); i < n; i++ {
		f := plan.WindowFunc{Frame: g.frame(t, w.OrderBy)}
		anyCol := col(cols, rapid.IntRange(0, len(cols)-1).Draw(t, "arg"))
		switch fn := rapid.SampledFrom([]string{"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
			"lag", "lead", "first_value", "last_value", "nth_value", "count", "sum", "avg", "min", "max"}).Draw(t, "wfunc"); fn {
		case "row_number", "rank", "dense_rank":
			f.Func, f.Type = fn, types.Of(types.Int8)
		case "percent_rank", "cume_dist":
			f.Func, f.Type = fn, types.Of(types.Float8)
		case "ntile":
			f.Func, f.Type, f.Args = fn, types.Of(types.Int4), []plan.Expr{intConst(int64(rapid.IntRange(1, 3).Draw(t, "tiles")))}
		case "lag", "lead":
			f.Func, f.Type = fn, anyCol.Type()
			f.Args = []plan.Expr{anyCol, intConst(int64(rapid.IntRange(-1, 2).Draw(t, "off"))), &plan.Const{Val: types.Null, Typ: anyCol.Type()}}
		case "first_value", "last_value":
			f.Func, f.Type, f.Args = fn, anyCol.Type(), []plan.Expr{anyCol}
		case "nth_value":
			f.Func, f.Type, f.Args = fn, anyCol.Type(), []plan.Expr{anyCol, intConst(int64(rapid.IntRange(1, 3).Draw(t, "nth")))}
		default:
			f.Func, f.Type = fn, types.Of(types.Int8)
			if fn == "count" && rapid.Bool().Draw(t, "star") {
				break
			}
			arg := anyCol
			switch {
			case fn == "sum" || fn == "avg":
				if len(nums) == 0 {
					f.Func = "count"
					break
				}
				arg = col(cols, rapid.SampledFrom(nums).Draw(t, "numarg"))
			case anyCol.Type().ID == types.Bool:
				f.Func = "count"
			}
			f.Args = []plan.Expr{arg}
			var err error
			if f.Type, err = types.AggregateType(f.Func, arg.Type()); err != nil {
				t.Fatalf("%s(%s): %v", f.Func, arg.Type(), err)
			}
			if rapid.IntRange(0, 3).Draw(t, "wfilter") == 0 {
				f.Filter = g.predicate(t, cols)
			}
		}
		w.Funcs = append(w.Funcs, f)
		w.Cols = append(w.Cols, plan.Column{Name: fmt.Sprintf("w%d", i), Type: f.Type})
	}
	return w
}

func (g *planGen) frame(t *rapid.T, order []plan.SortKey) plan.Frame {
	if rapid.IntRange(0, 2).Draw(t, "defaultframe") == 0 {
		return plan.DefaultFrame
	}
	modes := []plan.FrameMode{plan.FrameRows, plan.FrameRange}
	if len(order) > 0 {
		modes = append(modes, plan.FrameGroups)
	}
	fr := plan.Frame{Mode: rapid.SampledFrom(modes).Draw(t, "mode")}
	// RANGE offsets need one numeric ORDER BY key.
	rangeKey := types.Unknown
	if len(order) == 1 {
		switch id := order[0].Expr.Type().ID; id {
		case types.Int4, types.Int8, types.Numeric:
			rangeKey = id
		}
	}
	bound := func(label string, kinds []plan.BoundKind) plan.FrameBound {
		b := plan.FrameBound{Kind: rapid.SampledFrom(kinds).Draw(t, label)}
		if b.Kind == plan.OffsetPreceding || b.Kind == plan.OffsetFollowing {
			n := int64(rapid.IntRange(0, 2).Draw(t, label+"off"))
			switch {
			case fr.Mode != plan.FrameRange:
				b.Offset = n
			case rangeKey == types.Numeric:
				v, err := types.Parse(types.Of(types.Numeric), rapid.SampledFrom([]string{"0", "0.75", "1", "1.50", "2"}).Draw(t, label+"num"))
				if err != nil {
					t.Fatal(err)
				}
				b.Value, b.ValueType = v, types.Of(types.Numeric)
			default:
				b.Value, b.ValueType = types.MakeInt(types.Int8, n), types.Of(types.Int8)
			}
		}
		return b
	}
	offsets := fr.Mode != plan.FrameRange || rangeKey != types.Unknown
	startKinds := []plan.BoundKind{plan.UnboundedPreceding, plan.CurrentRow}
	endKinds := []plan.BoundKind{plan.CurrentRow, plan.UnboundedFollowing}
	if offsets {
		startKinds = append(startKinds, plan.OffsetPreceding, plan.OffsetFollowing)
		endKinds = append(endKinds, plan.OffsetPreceding, plan.OffsetFollowing)
	}
	fr.Start = bound("start", startKinds)
	// The end may not come before the start's kind (SQL's rule).
	var ends []plan.BoundKind
	for _, k := range endKinds {
		if k >= fr.Start.Kind {
			ends = append(ends, k)
		}
	}
	fr.End = bound("end", ends)
	fr.Exclude = rapid.SampledFrom([]plan.FrameExclusion{plan.ExcludeNoOthers, plan.ExcludeCurrentRow, plan.ExcludeGroup, plan.ExcludeTies}).Draw(t, "exclude")
	return fr
}

// describeOrdered renders the nodes of this file for failure messages.
func describeOrdered(p plan.Node) string {
	switch n := p.(type) {
	case *plan.SetOp:
		s := strings.ToLower(n.Kind.String())
		if n.All {
			s += " all"
		}
		return s
	case *plan.TopK:
		return fmt.Sprintf("topk partition=%s order=%s count=%d offset=%d rownumber=%v",
			exprList(n.PartitionBy), sortKeyList(n.Keys), n.Count, n.Offset, n.RowNumber)
	case *plan.Window:
		calls := make([]string, len(n.Funcs))
		for i := range n.Funcs {
			calls[i] = n.Funcs[i].String()
		}
		return fmt.Sprintf("window partition=%s order=%s funcs=[%s]", exprList(n.PartitionBy), sortKeyList(n.OrderBy), strings.Join(calls, ", "))
	}
	return fmt.Sprintf("%T", p)
}

// TestOrderedIncrementalEqualsBatch is TestIncrementalEqualsBatch with a
// set operation, TopK or Window at the root of every plan.
func TestOrderedIncrementalEqualsBatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, func(g *planGen) plan.Node { return g.orderedNode(t, rapid.IntRange(1, 3).Draw(t, "depth")) })
	})
}
