package sql

import (
	"github.com/rockstream/rockstream/internal/plan"
)

// pushFilter returns n filtered by the conjuncts conj (over n's output
// row), with each conjunct moved as far down as it keeps its meaning:
// through projections (by substituting the projected expressions), into
// the inputs of unions, below DISTINCT and below unnest (when it reads the
// input's columns only), to the one input of a join it
// reads (as planOuter decides for outer joins), into an inner join's keys
// or residual, and below an aggregate when it reads only group keys.
// Filtering early keeps the state of joins and aggregates small.
//
// Moving a filter never makes an expression run on a row it would not
// have run on otherwise: a projection computes its expressions for every
// input row anyway.
func pushFilter(n plan.Node, conj []plan.Expr) plan.Node {
	if len(conj) == 0 {
		return n
	}
	switch x := n.(type) {
	case *plan.Filter:
		return pushFilter(x.Input, append(conjuncts(x.Pred), conj...))
	case *plan.Project:
		var below []plan.Expr
		for _, c := range conj {
			below = append(below, mapColRefs(c, func(r *plan.ColRef) plan.Expr { return x.Exprs[r.Index] }))
		}
		return &plan.Project{Input: pushFilter(x.Input, below), Exprs: x.Exprs, Cols: x.Cols}
	case *plan.Distinct:
		return &plan.Distinct{Input: pushFilter(x.Input, conj)}
	case *plan.Unnest:
		// Conjuncts on the input's columns filter the rows to unnest.
		w := len(x.Input.Columns())
		var below, above []plan.Expr
		for _, c := range conj {
			if side(c, w)&2 == 0 {
				below = append(below, c)
			} else {
				above = append(above, c)
			}
		}
		if len(below) == 0 {
			break
		}
		u := *x
		u.Input = pushFilter(x.Input, below)
		return filterOf(&u, above)
	case *plan.Union:
		u := &plan.Union{Cols: x.Cols}
		for _, in := range x.Ins {
			u.Ins = append(u.Ins, pushFilter(in, conj))
		}
		return u
	case *plan.Aggregate:
		if len(x.GroupBy) == 0 {
			break
		}
		var below, above []plan.Expr
		for _, c := range conj {
			onKeys := true
			for _, i := range colRefIndexes(c) {
				onKeys = onKeys && i < len(x.GroupBy)
			}
			if !onKeys {
				above = append(above, c)
				continue
			}
			below = append(below, mapColRefs(c, func(r *plan.ColRef) plan.Expr { return x.GroupBy[r.Index] }))
		}
		if len(below) == 0 {
			break
		}
		agg := *x
		agg.Input = pushFilter(x.Input, below)
		return filterOf(&agg, above)
	case *plan.Join:
		return pushIntoJoin(x, conj)
	case *plan.SetOp:
		return pushIntoSetOp(x, conj)
	case *plan.TopK:
		return pushIntoTopK(x, conj)
	case *plan.Window:
		return pushIntoWindow(x, conj)
	}
	return filterOf(n, conj)
}

// filterOf puts the conjuncts conj over n, if there are any.
func filterOf(n plan.Node, conj []plan.Expr) plan.Node {
	if p := andOf(conj); p != nil {
		return &plan.Filter{Input: n, Pred: p}
	}
	return n
}

// pushIntoJoin pushes conjuncts over a join's output row into the join.
func pushIntoJoin(j *plan.Join, conj []plan.Expr) plan.Node {
	lw := len(j.Left.Columns())
	var lconj, rconj, keep, above []plan.Expr
	for _, c := range conj {
		s := side(c, lw)
		switch j.Kind {
		case plan.InnerJoin:
			switch {
			case s == 1:
				lconj = append(lconj, c)
			case s == 2:
				rconj = append(rconj, shiftExpr(c, -lw))
			case s == 3:
				keep = append(keep, c)
			default:
				above = append(above, c)
			}
		case plan.LeftJoin:
			if s&2 == 0 {
				lconj = append(lconj, c)
			} else {
				above = append(above, c)
			}
		case plan.RightJoin:
			if s&1 == 0 {
				rconj = append(rconj, shiftExpr(c, -lw))
			} else {
				above = append(above, c)
			}
		default:
			above = append(above, c)
		}
	}
	if len(lconj)+len(rconj)+len(keep) == 0 {
		return filterOf(j, conj)
	}
	out := *j
	out.Left = pushFilter(j.Left, lconj)
	out.Right = pushFilter(j.Right, rconj)
	out.LeftKeys = append([]plan.Expr(nil), j.LeftKeys...)
	out.RightKeys = append([]plan.Expr(nil), j.RightKeys...)
	out.NullSafe = append([]bool(nil), j.NullSafe...)
	for _, c := range keep {
		addJoinCond(&out, c, lw)
	}
	return filterOf(&out, above)
}
