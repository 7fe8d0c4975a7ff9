package oracle

import (
	"fmt"
	"strings"
)

// Generated queries that pick or number rows by order: ORDER BY ... LIMIT,
// per-group top-k with ROW_NUMBER(), INTERSECT/EXCEPT, and window
// functions. SQL leaves the order of rows equal on every ORDER BY key open,
// so each generated query is one whose result does not depend on that
// order: LIMIT and ROW_NUMBER() order by every output column (rows equal
// on all of them are the same row), and the window functions generated
// (rank, dense_rank, count, sum, min and max over RANGE and GROUPS frames)
// treat peers alike. Numeric values that are equal yet written differently
// (1 and 1.00) would still show which peer came first, so numeric columns
// are not ordered by, and min and max skip the numeric class.

// ordered returns a query that keeps rows by their order.
func (g *gen) ordered(depth int) (string, []column) {
	from, sc := g.from(depth)
	sql, cols := g.projection(from, sc)
	for _, c := range cols {
		if c.typ == tNumeric {
			return sql, cols
		}
	}
	if g.chance(50) {
		keys := make([]string, len(cols))
		for i := range cols {
			keys[i] = fmt.Sprintf("%d%s", i+1, g.direction())
		}
		sql += " ORDER BY " + strings.Join(keys, ", ") + fmt.Sprintf(" LIMIT %d", g.intn(0, 4, "limit"))
		if g.chance(30) {
			sql += fmt.Sprintf(" OFFSET %d", g.intn(1, 3, "offset"))
		}
		return sql, cols
	}
	// Per-group top-k: ROW_NUMBER() partitioned by the first column and
	// ordered by the others, bounded from outside.
	var order []string
	for _, c := range cols[1:] {
		order = append(order, "q."+c.name+g.direction())
	}
	over := "PARTITION BY q." + cols[0].name
	if len(order) > 0 {
		over += " ORDER BY " + strings.Join(order, ", ")
	}
	bound := pick(g, []string{"rn <= %d", "rn < %d", "rn = %d"})
	out := fmt.Sprintf("SELECT * FROM (SELECT q.*, row_number() OVER (%s) AS rn FROM (%s) q) r WHERE "+bound,
		over, sql, g.intn(1, 3, "k"))
	return out, append(cols, column{"rn", tBigint})
}

// direction returns an ORDER BY direction and NULL placement.
func (g *gen) direction() string {
	return pick(g, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"})
}

// setOperator returns the operator joining the two branches of a set
// operation.
func (g *gen) setOperator() string {
	switch {
	case g.chance(40):
		return "UNION"
	case g.chance(50):
		return pick(g, []string{"INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"})
	}
	return "UNION ALL"
}

// windowCall returns a window function call over sc whose value does not
// depend on the order of peers.
func (g *gen) windowCall(sc []expr) expr {
	var parts []string
	if g.chance(60) {
		parts = append(parts, "PARTITION BY "+pick(g, sc).sql)
	}
	ordered := g.chance(70)
	if ordered {
		var keys []string
		for i := g.intn(1, 2, "window keys"); i > 0; i-- {
			keys = append(keys, pick(g, sc).sql+g.direction())
		}
		parts = append(parts, "ORDER BY "+strings.Join(keys, ", "))
	}
	frame := ""
	switch {
	case ordered && g.chance(20):
		frame = fmt.Sprintf(" GROUPS BETWEEN %d PRECEDING AND CURRENT ROW", g.intn(0, 2, "groups"))
	case g.chance(20):
		frame = " RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"
	}
	over := " OVER (" + strings.Join(parts, " ") + ")"
	switch g.intn(0, 5, "window function") {
	case 0:
		return expr{"rank()" + over, tBigint}
	case 1:
		return expr{"dense_rank()" + over, tBigint}
	case 2:
		return expr{"count(*)" + strings.TrimSuffix(over, ")") + frame + ")", tBigint}
	case 3:
		e := g.exprOf(sc, tInt, 1)
		t := tBigint
		if e.typ != tInt {
			t = tNumeric
		}
		return expr{"sum(" + e.sql + ")" + strings.TrimSuffix(over, ")") + frame + ")", t}
	case 4:
		var cands []expr
		for _, e := range sc {
			if e.typ.orderable() && e.typ.class() != tInt {
				cands = append(cands, e)
			}
		}
		if len(cands) == 0 {
			return expr{"count(*)" + over, tBigint}
		}
		e := pick(g, cands)
		fn := pick(g, []string{"min", "max"})
		return expr{fn + "(" + e.sql + ")" + strings.TrimSuffix(over, ")") + frame + ")", e.typ}
	default:
		e := g.anyExpr(sc, 1)
		return expr{"count(" + e.sql + ")" + strings.TrimSuffix(over, ")") + frame + ")", tBigint}
	}
}
