package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/plan"
)

// This file binds INTERSECT and EXCEPT, and ORDER BY ... LIMIT below the
// top of a statement.

// setOpName is the SQL keyword of a set operation, as messages name it.
func setOpName(op pg.SetOperation) string {
	switch op {
	case pg.SetOperation_SETOP_INTERSECT:
		return "INTERSECT"
	case pg.SetOperation_SETOP_EXCEPT:
		return "EXCEPT"
	}
	return "UNION"
}

// setOpNode is INTERSECT or EXCEPT [ALL] of l and r, whose columns are
// already of the types cols gives. The parser has applied the precedence
// (INTERSECT binds tighter than UNION and EXCEPT) and the parentheses.
func setOpNode(sel *pg.SelectStmt, l, r plan.Node, cols []plan.Column) plan.Node {
	kind := plan.Intersect
	if sel.Op == pg.SetOperation_SETOP_EXCEPT {
		kind = plan.Except
	}
	return &plan.SetOp{Kind: kind, All: sel.All, Left: l, Right: r, Cols: cols}
}

// orderAndLimit puts the query's ORDER BY (sorts, over cols) and
// LIMIT/OFFSET over node. At the top of a statement they are a Sort and a
// Limit, which the caller applies to the result. Elsewhere a relation has
// no order, so ORDER BY alone was dropped already, and with LIMIT or OFFSET
// the rows it picks are a TopK.
func orderAndLimit(node plan.Node, cols []plan.Column, sorts []sortItem, count, offset int64, top bool) plan.Node {
	var keys []plan.SortKey
	for _, s := range sorts {
		keys = append(keys, plan.SortKey{
			Expr:       &plan.ColRef{Index: s.idx, Name: cols[s.idx].Name, Typ: cols[s.idx].Type},
			Desc:       s.desc,
			NullsFirst: s.nullsFirst,
		})
	}
	limited := count >= 0 || offset > 0
	if !top {
		if !limited {
			return node
		}
		return plan.NewTopK(node, nil, keys, count, offset, "")
	}
	if len(keys) > 0 {
		node = &plan.Sort{Input: node, Keys: keys}
	}
	if limited {
		node = &plan.Limit{Input: node, Count: count, Offset: offset}
	}
	return node
}
