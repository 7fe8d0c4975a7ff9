package oracle

import (
	"fmt"
	"strings"
)

// Subqueries in expressions: [NOT] IN, [NOT] EXISTS, op ANY/ALL and scalar
// subqueries, in WHERE, in HAVING and in select lists, uncorrelated or
// correlated with the query around them, and nested one level in each
// other. A subquery names its sources s0, s1, ... (u0, u1, ... one level
// deeper), so that it can refer to the query around it unambiguously.
//
// The shapes stay within what cannot fail and what is defined: a scalar
// subquery is always an aggregate without GROUP BY, which returns exactly
// one row; a subquery with aggregates refers to the query around it only
// through equalities inner = outer in its WHERE clause, and never in its
// select list. NOT IN and op ALL meet NULLs on both sides, as the values
// of the workloads hold them.

// tAny asks for an expression of any type.
const tAny sqlType = 255

// maxSublevel bounds the nesting of subqueries in expressions.
const maxSublevel = 2

// where returns a WHERE condition over sc: a predicate, at times holding
// a subquery alone, under NOT, or beside another predicate.
func (g *gen) where(sc []expr, depth int) string {
	if g.sublevel >= maxSublevel || !g.chance(15) {
		return g.pred(sc, depth)
	}
	p := g.subPred(sc)
	switch g.intn(0, 3, "subquery connective") {
	case 0:
		return p
	case 1:
		return "(" + p + " AND " + g.pred(sc, depth-1) + ")"
	case 2:
		return "(" + p + " OR " + g.pred(sc, depth-1) + ")"
	default:
		return "NOT (" + p + ")"
	}
}

// subPred returns a predicate over outer holding a subquery that may be
// correlated with outer (nil: uncorrelated).
func (g *gen) subPred(outer []expr) string {
	switch g.intn(0, 3, "subquery predicate") {
	case 0:
		// x [NOT] IN (SELECT ...): over rows, or over the groups of an
		// aggregate.
		x := g.subTestExpr(outer)
		not := ""
		if g.chance(40) {
			not = "NOT "
		}
		return "(" + x.sql + ") " + not + "IN (" + g.subSelect(outer, x.typ.class(), g.chance(20)) + ")"
	case 1:
		not := ""
		if g.chance(40) {
			not = "NOT "
		}
		g.sublevel++
		defer func() { g.sublevel-- }()
		from, inner := g.fromAs(1, g.subPrefix())
		conds := g.subConds(outer, inner, false)
		return not + "EXISTS (SELECT 1 FROM " + from + whereClause(conds) + ")"
	case 2:
		// x op (scalar subquery).
		sub, t := g.scalarSub(outer, tAny)
		x := expr{g.typedLiteral(t), t}
		if len(outer) > 0 {
			x = g.exprOf(outer, t.class(), 1)
		}
		return "(" + x.sql + ") " + " " + g.compareOp(t) + " " + sub
	default:
		x := g.subTestExpr(outer)
		q := pick(g, []string{"ANY", "ALL", "SOME"})
		return "(" + x.sql + ") " + g.compareOp(x.typ) + " " + q + " (" + g.subSelect(outer, x.typ.class(), g.chance(15)) + ")"
	}
}

// subTestExpr returns the left side of IN or op ANY/ALL.
func (g *gen) subTestExpr(outer []expr) expr {
	if len(outer) == 0 {
		return expr{g.typedLiteral(tInt), tInt}
	}
	if g.chance(70) {
		return pick(g, outer)
	}
	return g.anyExpr(outer, 1)
}

// compareOp returns a comparison operator for values of type t.
func (g *gen) compareOp(t sqlType) string {
	if t == tBool {
		return pick(g, []string{"=", "<>"})
	}
	return pick(g, []string{"=", "<>", "<", "<=", ">", ">="})
}

// subPrefix returns the alias prefix of the sources of the subquery
// being generated (g.sublevel is its level, from 1).
func (g *gen) subPrefix() string {
	return [...]string{"a", "s", "u"}[g.sublevel]
}

// subSelect returns a one-column subquery whose column has class want,
// for IN and op ANY/ALL: a projection, or with grouped the groups'
// aggregates (which the query around it may reach only by equalities).
func (g *gen) subSelect(outer []expr, want sqlType, grouped bool) string {
	g.sublevel++
	defer func() { g.sublevel-- }()
	from, inner := g.fromAs(1, g.subPrefix())
	if !grouped {
		item := g.exprOf(inner, want, 1)
		distinct := ""
		if g.chance(15) {
			distinct = "DISTINCT "
		}
		return "SELECT " + distinct + item.sql + " FROM " + from + whereClause(g.subConds(outer, inner, false))
	}
	agg := g.aggOf(inner, want)
	key := pick(g, inner)
	return "SELECT " + agg.sql + " FROM " + from + whereClause(g.subConds(outer, inner, true)) + " GROUP BY " + key.sql
}

// scalarSub returns a scalar subquery over outer and its type: an
// aggregate without GROUP BY (exactly one row), of class want (tAny: any).
func (g *gen) scalarSub(outer []expr, want sqlType) (string, sqlType) {
	g.sublevel++
	defer func() { g.sublevel-- }()
	from, inner := g.fromAs(1, g.subPrefix())
	var agg expr
	if want == tAny {
		agg = g.aggCall(inner)
	} else {
		agg = g.aggOf(inner, want)
	}
	return "(SELECT " + agg.sql + " FROM " + from + whereClause(g.subConds(outer, inner, true)) + ")", agg.typ
}

// scalarItem returns a select-list item of class want (tAny: any) that is a
// scalar subquery correlated with sc or not.
func (g *gen) scalarItem(sc []expr, want sqlType) expr {
	sub, t := g.scalarSub(sc, want)
	if g.chance(30) {
		lit := g.literal(t)
		if t.class() == tInt && strings.Contains(lit, ".") {
			t = widen(t, tNumeric)
		}
		return expr{"COALESCE(" + sub + ", " + lit + ")", t}
	}
	return expr{sub, t}
}

// aggOf returns an aggregate call of class want over sc.
func (g *gen) aggOf(sc []expr, want sqlType) expr {
	for range 8 {
		if a := g.aggCall(sc); a.typ.class() == want {
			return a
		}
	}
	e := dedupSafe(g.exprOf(sc, want, 1))
	switch want {
	case tBool:
		return expr{"bool_or(" + e.sql + ")", tBool}
	case tJsonb:
		return expr{"jsonb_agg(" + e.sql + " ORDER BY " + e.sql + ")", tJsonb}
	}
	return expr{pick(g, []string{"min", "max"}) + "(" + e.sql + ")", e.typ}
}

// subConds returns the WHERE conjuncts of a subquery over inner: at times
// a correlation with outer (only inner = outer when equalOnly), at times a
// predicate of its own, which may hold a subquery one level deeper.
func (g *gen) subConds(outer, inner []expr, equalOnly bool) []string {
	var conds []string
	if len(outer) > 0 && g.chance(65) {
		var pairs [][2]expr
		for _, i := range inner {
			for _, o := range outer {
				if i.typ.class() == o.typ.class() && i.typ != tBool {
					pairs = append(pairs, [2]expr{i, o})
				}
			}
		}
		if len(pairs) > 0 {
			p := pick(g, pairs)
			op := "="
			if !equalOnly && g.chance(25) {
				op = pick(g, []string{"<>", "<", ">=", "IS NOT DISTINCT FROM"})
			}
			conds = append(conds, fmt.Sprintf("%s %s %s", p[0].sql, op, p[1].sql))
		}
	}
	if g.chance(30) {
		conds = append(conds, g.where(inner, 1))
	}
	return conds
}

// whereClause renders conjuncts as a WHERE clause ("" for none).
func whereClause(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}
