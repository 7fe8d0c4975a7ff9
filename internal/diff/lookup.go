package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
)

// Lookup joins (ops/lookupjoin.go). A materialized view's circuit built
// with BuildView reads an inner join's input by key, instead of keeping
// an arrangement of it, when that input is a scan of a stored relation
// (under filters without now()) whose stored key columns are exactly the
// join key's columns on that side, each compared with a key of the other
// side of the same type, and when the circuit reads that relation
// nowhere else. The right input is chosen when both qualify. An outer,
// semi-, anti- or mark join may read its nullable input so
// (lookupOuterJoin below, ops.LookupOuterJoin); a FULL join, whose inputs
// are both preserved, keeps its arrangements. Nothing of this applies to ad-hoc
// queries (their inputs are whole relations in one step) or inside a
// recursive query's body.
//
// The choice depends only on the plan and on what lookups says about
// each relation (its stored key, which never changes), so a circuit
// rebuilt after a restart reads its inputs as the one that wrote its
// state did.

// StoredRelation says how a circuit may read a relation's stored rows
// by key.
type StoredRelation struct {
	// Base names the stored relation; several scan names (of different
	// columns of one table) may read it.
	Base string
	// KeyCols are the scan's columns that hold the relation's stored key,
	// in key order.
	KeyCols []int
	// Rows reads the stored rows by key.
	Rows ops.StoredRows
}

// Lookups says how a scanned relation may be read by key; ok is false
// when it may not.
type Lookups func(scan string) (rel StoredRelation, ok bool)

// BuildView is Build (forQuery false) for a materialized view whose
// inner joins may read stored relations through lookups.
func BuildView(p plan.Node, prefix []byte, lookups Lookups) (*Circuit, error) {
	c, err := buildWith(p, ops.Prefix{Circuit: slices.Clone(prefix)}, false, false, lookups)
	if err == nil {
		c.emitted = newEmitted(len(c.nodes))
	}
	return c, err
}

// LookedUp reports whether the circuit reads relation rel (a name of
// Relations) only by key, from its stored rows: a step that starts from
// no state over whole relations (a backfill) must then feed it no delta,
// since the stored rows already hold all of it.
func (c *Circuit) LookedUp(rel string) bool { return c.lookedUp[rel] }

// scanUses counts, by stored relation, the scans of p that read it.
func scanUses(p plan.Node, lookups Lookups) map[string]int {
	uses := map[string]int{}
	var visit func(n plan.Node)
	visit = func(n plan.Node) {
		if s, ok := n.(*plan.Scan); ok {
			base := s.Relation
			if sr, ok := lookups(s.Relation); ok {
				base = sr.Base
			}
			uses[base]++
		}
		for _, in := range n.Inputs() {
			visit(in)
		}
	}
	visit(p)
	return uses
}

// scanBelow returns the scan under n's filters and the filters'
// predicates, innermost first; nil when n is not a scan under filters or
// a filter reads now().
func scanBelow(n plan.Node) (*plan.Scan, []plan.Expr) {
	var preds []plan.Expr
	for {
		switch x := n.(type) {
		case *plan.Filter:
			if plan.ContainsNow(x.Pred) {
				return nil, nil
			}
			preds = append(preds, x.Pred)
			n = x.Input
		case *plan.Scan:
			slices.Reverse(preds)
			return x, preds
		default:
			return nil, nil
		}
	}
}

// lookupTarget returns how join n may read its left (left true) or
// right input by key: the relation and, for each of its key columns,
// the join pair that gives it. ok is false when it may not.
func (b *builder) lookupTarget(n *plan.Join, left bool) (scan *plan.Scan, preds []plan.Expr, sr StoredRelation, order []int, ok bool) {
	side, own, other := n.Right, n.RightKeys, n.LeftKeys
	if left {
		side, own, other = n.Left, n.LeftKeys, n.RightKeys
	}
	if scan, preds = scanBelow(side); scan == nil {
		return nil, nil, sr, nil, false
	}
	if sr, ok = b.lookups(scan.Relation); !ok || b.uses[sr.Base] != 1 || len(sr.KeyCols) != len(own) {
		return nil, nil, sr, nil, false
	}
	order = make([]int, len(sr.KeyCols))
	used := make([]bool, len(own))
	for k, col := range sr.KeyCols {
		order[k] = -1
		for i, e := range own {
			c, isCol := e.(*plan.ColRef)
			if used[i] || !isCol || c.Index != col || other[i].Type().ID != c.Typ.ID {
				continue
			}
			order[k], used[i] = i, true
			break
		}
		if order[k] < 0 {
			return nil, nil, sr, nil, false
		}
	}
	return scan, preds, sr, order, true
}

// lookupJoin makes inner join j of plan node n read one input by key
// when it can, and returns the EXPLAIN text of what it reads so ("" when
// it reads nothing so).
func (b *builder) lookupJoin(n *plan.Join, j *ops.Join) string {
	if b.lookups == nil || b.forQuery || b.serial || n.Kind != plan.InnerJoin || len(n.LeftKeys) == 0 {
		return ""
	}
	for _, left := range []bool{false, true} {
		scan, preds, sr, order, ok := b.lookupTarget(n, left)
		if !ok {
			continue
		}
		j.LookUp(left, sr.Rows, order, preds)
		b.lookupOrder(sr.Base, order)
		if b.lookedUp == nil {
			b.lookedUp = map[string]bool{}
		}
		b.lookedUp[scan.Relation] = true
		cols := make([]string, len(sr.KeyCols))
		for i, c := range sr.KeyCols {
			cols[i] = scan.Cols[c].Name
		}
		return "lookup " + sr.Base + " by (" + strings.Join(cols, ", ") + ")"
	}
	return ""
}

// Lookups on the nullable side. A LEFT join's right input, a RIGHT
// join's left input, or a semi-, anti- or mark join's right input (its
// subquery) is read by key under the same conditions as an inner join's,
// and also through a projection of its scan's columns (a subquery's
// select list), when the join has no NULL-safe key and no ANY test (NOT
// IN): ops.LookupOuterJoin, whose delta rule reads the relation's rows
// after the epoch from the store and those before as the stored rows
// less the relation's delta in the step. A FULL join, whose two inputs
// are both preserved, keeps its arrangements.

// lookupOuterJoin returns the operator for outer, semi-, anti- or mark
// join n of plan reading its nullable input by key, and writes its state
// to sb; nil when n may not read an input so.
func (b *builder) lookupOuterJoin(n *plan.Join, prefix ops.Prefix, lw, rw int, lkeys, rkeys string, sb *strings.Builder) ops.Operator {
	if b.lookups == nil || b.forQuery || b.serial || len(n.LeftKeys) == 0 || n.Test != nil || slices.Contains(n.NullSafe, true) {
		return nil
	}
	side, own, other, arranged, arrangedKeys := n.Right, n.RightKeys, n.LeftKeys, "left", lkeys
	switch n.Kind {
	case plan.LeftJoin, plan.SemiJoin, plan.AntiJoin, plan.MarkJoin:
	case plan.RightJoin:
		side, own, other, arranged, arrangedKeys = n.Left, n.LeftKeys, n.RightKeys, "right", rkeys
	default:
		return nil
	}
	var proj []int
	below := side
	if p, ok := side.(*plan.Project); ok {
		proj = make([]int, len(p.Exprs))
		for i, e := range p.Exprs {
			c, isCol := e.(*plan.ColRef)
			if !isCol {
				return nil
			}
			proj[i] = c.Index
		}
		below = p.Input
	}
	scan, preds := scanBelow(below)
	if scan == nil {
		return nil
	}
	sr, ok := b.lookups(scan.Relation)
	if !ok || b.uses[sr.Base] != 1 || len(sr.KeyCols) != len(own) {
		return nil
	}
	order := make([]int, len(sr.KeyCols))
	used := make([]bool, len(own))
	for k, col := range sr.KeyCols {
		order[k] = -1
		for i, e := range own {
			c, isCol := e.(*plan.ColRef)
			if used[i] || !isCol || other[i].Type().ID != c.Typ.ID {
				continue
			}
			at := c.Index
			if proj != nil && at < len(proj) {
				at = proj[at]
			} else if proj != nil {
				continue
			}
			if at != col {
				continue
			}
			order[k], used[i] = i, true
			break
		}
		if order[k] < 0 {
			return nil
		}
	}
	op := ops.NewLookupOuterJoin(prefix, n.Kind, n.LeftKeys, n.RightKeys, n.Residual, lw, rw, n.SingleMatch, sr.Rows, order, preds, proj)
	b.lookupOrder(sr.Base, order)
	if b.lookedUp == nil {
		b.lookedUp = map[string]bool{}
	}
	b.lookedUp[scan.Relation] = true
	cols := make([]string, len(sr.KeyCols))
	for i, c := range sr.KeyCols {
		cols[i] = scan.Cols[c].Name
	}
	fmt.Fprintf(sb, "  state=arrangement(%s by %s)  lookup %s by (%s)", arranged, arrangedKeys, sr.Base, strings.Join(cols, ", "))
	return op
}

// lookupOrder records, when a join reads relation base by its key in
// another order than the join's pairs (order[k], the pair giving the
// relation's k-th key column, is not k), that the circuit cannot step
// over Peers: the relation's rows lie in the bucket of their key, the
// join's probes are routed by the bucket of the join's key, and on a
// mesh those are different members' (mesh.go). On one process the
// workers share one store, and the order does not matter.
func (b *builder) lookupOrder(base string, order []int) {
	for k, pair := range order {
		if pair != k && b.meshRefusal == nil {
			b.meshRefusal = errs.Newf(errs.FeatureNotSupported,
				"a circuit that reads %s by its key in another order than its join's cannot step across processes", base)
		}
	}
}
