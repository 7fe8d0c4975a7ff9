package diff

import "github.com/rockstream/rockstream/internal/plan"

// insertOnly reports whether every delta p's circuit can produce is a set
// of insertions, whatever its inputs receive: p reads only append-only
// relations through operators that never retract what they emitted
// (filters, projections, UNION ALL, unnest, time windows, inner joins).
// An aggregate over such an input keeps its MIN and MAX as a value per
// group, without an arrangement of every value seen. The answer errs on
// the side of false: an operator not listed may retract.
func insertOnly(p plan.Node) bool {
	switch n := p.(type) {
	case *plan.Scan:
		return n.AppendOnly
	case *plan.Filter:
		return insertOnly(n.Input)
	case *plan.Project:
		return insertOnly(n.Input)
	case *plan.Unnest:
		return insertOnly(n.Input)
	case *plan.TimeWindow:
		return insertOnly(n.Input)
	case *plan.Union:
		for _, in := range n.Ins {
			if !insertOnly(in) {
				return false
			}
		}
		return true
	case *plan.Join:
		return n.Kind == plan.InnerJoin && insertOnly(n.Left) && insertOnly(n.Right)
	}
	return false
}
