package oracle

import (
	"fmt"
	"strings"
)

// Scalar expressions and predicates of generated workloads, over the
// columns in scope: arithmetic that cannot overflow or divide by zero,
// casts, CASE, COALESCE, NULLIF, comparisons, BETWEEN, IN lists, IS [NOT]
// NULL, IS [NOT] DISTINCT FROM and the logical connectives.

// anyExpr returns an expression over sc, mostly of a type sc has.
func (g *gen) anyExpr(sc []expr, depth int) expr {
	if !g.chance(50) {
		return pick(g, sc)
	}
	class := pick(g, sc).typ.class()
	if g.chance(15) {
		class = pick(g, []sqlType{tInt, tText, tBool, tDate})
	}
	return g.exprOf(sc, class, depth)
}

// exprOf returns an expression of class want (tInt stands for the
// numeric class) over sc.
func (g *gen) exprOf(sc []expr, want sqlType, depth int) expr {
	var cands []expr
	for _, e := range sc {
		if e.typ.class() == want {
			cands = append(cands, e)
		}
	}
	if depth <= 0 || g.chance(35) {
		if len(cands) > 0 && !g.chance(15) {
			return pick(g, cands)
		}
		if want == tInt && g.chance(30) {
			return expr{g.literal(tNumeric), tNumeric}
		}
		return expr{g.typedLiteral(want), want}
	}
	if g.chance(20) {
		if e, ok := g.funcExpr(sc, want, depth); ok {
			return e
		}
	}
	sub := func() expr { return g.exprOf(sc, want, depth-1) }
	switch want {
	case tInt:
		switch g.intn(0, 8, "numeric expr") {
		case 0:
			a, b := sub(), sub()
			return expr{"(" + a.sql + " + " + b.sql + ")", widen(a.typ, b.typ)}
		case 1:
			a := sub()
			return expr{fmt.Sprintf("(%s - %d)", a.sql, g.intn(0, 5, "k")), a.typ}
		case 2:
			a := sub()
			return expr{fmt.Sprintf("(%s * %d)", a.sql, g.intn(-3, 3, "k")), a.typ}
		case 3:
			a := sub()
			return expr{fmt.Sprintf("(%s / %d)", a.sql, g.intn(1, 4, "k")), a.typ}
		case 4:
			a := sub()
			return expr{fmt.Sprintf("(%s %% %d)", a.sql, g.intn(2, 4, "k")), a.typ}
		case 5:
			a := sub()
			return expr{"(-(" + a.sql + "))", a.typ}
		case 6:
			a := sub()
			if a.typ == tNumeric {
				return expr{"(" + a.sql + ")::bigint", tBigint}
			}
			return expr{"(" + a.sql + ")::numeric", tNumeric}
		case 7:
			d1, d2 := g.exprOf(sc, tDate, 0), g.exprOf(sc, tDate, 0)
			return expr{"(" + d1.sql + " - " + d2.sql + ")", tInt}
		}
	case tText:
		if g.chance(30) {
			n := g.exprOf(sc, tInt, 0)
			return expr{"(" + n.sql + ")::text", tText}
		}
		if g.chance(15) {
			j := g.exprOf(sc, tJsonb, 0)
			return expr{"(" + j.sql + " ->> " + pick(g, []string{"'a'", "'b'", "0"}) + ")", tText}
		}
	case tJsonb:
		if g.chance(50) {
			j := sub()
			switch g.intn(0, 3, "jsonb expr") {
			case 0:
				return expr{"(" + j.sql + " -> " + pick(g, []string{"'a'", "'b'", "0", "-1"}) + ")", tJsonb}
			case 1:
				return expr{"(" + j.sql + " || " + g.typedLiteral(tJsonb) + ")", tJsonb}
			default:
				return expr{"(" + j.sql + " #> '{b,0}')", tJsonb}
			}
		}
	case tBool:
		return expr{g.pred(sc, depth), tBool}
	case tDate:
		if g.chance(50) {
			d := sub()
			return expr{fmt.Sprintf("(%s + %d)", d.sql, g.intn(-3, 3, "days")), tDate}
		}
	case tTimetz:
		if g.chance(50) {
			d := sub()
			if g.chance(30) {
				// The same instant at another fixed offset.
				return expr{"(" + d.sql + " AT TIME ZONE " + pick(g, []string{"'UTC'", "INTERVAL '+02:00'", "INTERVAL '-05:00'"}) + ")", tTimetz}
			}
			return expr{fmt.Sprintf("(%s + interval '%d minutes')", d.sql, 15*g.intn(-4, 4, "minutes")), tTimetz}
		}
	}
	// CASE, COALESCE and NULLIF for every class.
	switch g.intn(0, 2, "conditional") {
	case 0:
		a, b := sub(), sub()
		t := a.typ
		if want == tInt {
			t = widen(a.typ, b.typ)
		}
		return expr{"CASE WHEN " + g.pred(sc, depth-1) + " THEN " + a.sql + " ELSE " + b.sql + " END", t}
	case 1:
		a := sub()
		lit := g.literal(a.typ)
		t := a.typ
		if want == tInt && strings.Contains(lit, ".") {
			t = widen(t, tNumeric)
		}
		return expr{"COALESCE(" + a.sql + ", " + lit + ")", t}
	default:
		a := sub()
		return expr{"NULLIF(" + a.sql + ", " + g.literal(a.typ) + ")", a.typ}
	}
}

// pred returns a boolean expression over sc.
func (g *gen) pred(sc []expr, depth int) string {
	if depth > 0 && g.chance(30) {
		switch g.intn(0, 2, "connective") {
		case 0:
			return "(" + g.pred(sc, depth-1) + " AND " + g.pred(sc, depth-1) + ")"
		case 1:
			return "(" + g.pred(sc, depth-1) + " OR " + g.pred(sc, depth-1) + ")"
		default:
			return "NOT (" + g.pred(sc, depth-1) + ")"
		}
	}
	if g.chance(6) {
		if p, ok := g.rowPred(sc); ok {
			return p
		}
	}
	e := pick(g, sc)
	switch g.intn(0, 7, "predicate") {
	case 0:
		return e.sql + " IS NULL"
	case 1:
		return e.sql + " IS NOT NULL"
	}
	if e.typ == tBool {
		switch g.intn(0, 2, "bool predicate") {
		case 0:
			return e.sql
		case 1:
			return e.sql + " IS DISTINCT FROM " + g.literal(tBool)
		default:
			return e.sql + " = " + g.literal(tBool)
		}
	}
	if e.typ == tJsonb && g.chance(40) {
		switch g.intn(0, 2, "jsonb predicate") {
		case 0:
			return e.sql + " @> " + g.literal(tJsonb)
		case 1:
			return e.sql + " <@ " + g.literal(tJsonb)
		default:
			return e.sql + " ? " + pick(g, []string{"'a'", "'b'", "'x'"})
		}
	}
	other := func() string {
		if g.chance(30) {
			return g.exprOf(sc, e.typ.class(), 0).sql
		}
		return g.literal(e.typ)
	}
	switch g.intn(0, 4, "comparison") {
	case 0:
		return e.sql + " BETWEEN " + other() + " AND " + other()
	case 1:
		list := []string{g.literal(e.typ), g.literal(e.typ)}
		if g.chance(20) {
			list = append(list, "NULL")
		}
		not := ""
		if g.chance(30) {
			not = "NOT "
		}
		return e.sql + " " + not + "IN (" + strings.Join(list, ", ") + ")"
	case 2:
		return e.sql + " IS DISTINCT FROM " + other()
	default:
		op := pick(g, []string{"=", "<>", "<", "<=", ">", ">="})
		return e.sql + " " + op + " " + other()
	}
}

// rowPred compares a row of two columns with a row of literals (or
// NULLs): =, <>, <, <=, >, >=, IS DISTINCT FROM, or [NOT] IN a list of
// rows. It reports false when sc has no column a row can compare.
func (g *gen) rowPred(sc []expr) (string, bool) {
	var cs []expr
	for _, e := range sc {
		if e.typ != tJsonb {
			cs = append(cs, e)
		}
	}
	if len(cs) == 0 {
		return "", false
	}
	a, b := pick(g, cs), pick(g, cs)
	left := "(" + a.sql + ", " + b.sql + ")"
	row := func() string {
		lit := func(e expr) string {
			if g.chance(15) {
				return "NULL"
			}
			return g.literal(e.typ)
		}
		return "(" + lit(a) + ", " + lit(b) + ")"
	}
	switch g.intn(0, 2, "row predicate") {
	case 0:
		not := ""
		if g.chance(30) {
			not = "NOT "
		}
		return left + " " + not + "IN (" + row() + ", " + row() + ")", true
	case 1:
		return left + " IS DISTINCT FROM " + row(), true
	}
	return left + " " + pick(g, []string{"=", "<>", "<", "<=", ">", ">="}) + " " + row(), true
}
