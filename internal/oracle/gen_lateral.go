package oracle

import (
	"fmt"
	"strings"
)

// LATERAL subqueries in generated FROM clauses: a subquery joined to the
// FROM items before it (outer) that reads their columns, in three shapes
// the engine decorrelates differently:
//
//   - a projection whose select list and WHERE may read the outer row
//     (a join on the correlation, or a projection of the outer row when
//     the subquery has no correlation);
//   - aggregates correlated by inner = outer without GROUP BY, one row
//     for every outer row (count(*) is 0 without matches);
//   - per-outer-row top-k, ORDER BY every selected column ... LIMIT k, so
//     that the rows kept do not depend on the order of peers (numeric
//     columns, whose equal values may be written differently, are not
//     selected there).
//
// Each is joined by a comma, CROSS JOIN LATERAL or LEFT JOIN LATERAL ...
// ON true.

// lateral returns the FROM-clause text that joins a LATERAL subquery
// aliased alias to the items before it, and the columns it adds.
func (g *gen) lateral(outer []expr, alias string) (string, []expr) {
	g.sublevel++
	defer func() { g.sublevel-- }()
	from, inner := g.fromAs(1, g.subPrefix())
	var items []expr
	var tail string
	switch shape := g.intn(0, 2, "lateral shape"); shape {
	case 0:
		both := append(append([]expr{}, inner...), outer...)
		for i := 0; i < g.intn(1, 2, "lateral items"); i++ {
			items = append(items, g.anyExpr(both, 1))
		}
		tail = whereClause(g.subConds(outer, inner, false))
	case 1:
		for i := 0; i < g.intn(1, 2, "lateral aggregates"); i++ {
			items = append(items, g.aggCall(inner))
		}
		tail = whereClause(g.subConds(outer, inner, true))
	default:
		for _, e := range inner {
			if e.typ.orderable() && e.typ != tNumeric && (len(items) == 0 || g.chance(40)) {
				items = append(items, e)
			}
		}
		if len(items) == 0 {
			items = append(items, expr{"count(*)", tBigint})
			tail = whereClause(g.subConds(outer, inner, true))
			break
		}
		keys := make([]string, len(items))
		for i := range items {
			keys[i] = fmt.Sprintf("%d%s", i+1, g.direction())
		}
		tail = whereClause(g.subConds(outer, inner, true)) + " ORDER BY " + strings.Join(keys, ", ") +
			fmt.Sprintf(" LIMIT %d", g.intn(1, 3, "lateral limit"))
	}
	sel := make([]string, len(items))
	cols := make([]expr, len(items))
	for i, it := range items {
		name := fmt.Sprintf("l%d", i)
		sel[i] = it.sql + " AS " + name
		cols[i] = expr{alias + "." + name, it.typ}
	}
	sub := "LATERAL (SELECT " + strings.Join(sel, ", ") + " FROM " + from + tail + ") " + alias
	switch g.intn(0, 2, "lateral join") {
	case 0:
		return ", " + sub, cols
	case 1:
		return " CROSS JOIN " + sub, cols
	}
	return " LEFT JOIN " + sub + " ON true", cols
}
