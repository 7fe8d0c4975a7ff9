package oracle

import (
	"fmt"
	"strings"
)

// Grouped and global aggregate queries of generated workloads: group keys
// that read a column (at times grouped several ways at once, by ROLLUP,
// CUBE or GROUPING SETS, with GROUPING()), aggregate calls with DISTINCT
// and FILTER, and HAVING over counts, sums, the group keys or a subquery.

// aggregate returns a grouped (or global) aggregate query.
func (g *gen) aggregate(from string, sc []expr) (string, []column) {
	var items []string
	var keys []expr
	var cols []column
	for i := 1; i <= g.intn(0, 2, "group keys"); i++ {
		// A constant in GROUP BY is an error (or, for an integer, a
		// column position): keys always read a column.
		e := pick(g, sc)
		if g.chance(30) {
			if k := g.exprOf(sc, e.typ.class(), 1); refersToColumn(k.sql) {
				e = k
			}
		}
		e = dedupSafe(e)
		name := fmt.Sprintf("g%d", i)
		items = append(items, e.sql+" AS "+name)
		keys = append(keys, e)
		cols = append(cols, column{name, e.typ})
	}
	for i := 1; i <= g.intn(1, 3, "aggregates"); i++ {
		a := g.aggCall(sc)
		name := fmt.Sprintf("y%d", i)
		items = append(items, a.sql+" AS "+name)
		cols = append(cols, column{name, a.typ})
	}
	texts := make([]string, len(keys))
	for i, k := range keys {
		texts[i] = k.sql
	}
	groupBy := strings.Join(texts, ", ")
	if len(keys) > 0 && g.chance(35) {
		groupBy = g.groupingSets(texts)
		if g.chance(50) {
			items = append(items, "grouping("+strings.Join(texts, ", ")+") AS gs")
			cols = append(cols, column{"gs", tInt})
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %s FROM %s", strings.Join(items, ", "), from)
	if g.chance(40) {
		fmt.Fprintf(&b, " WHERE %s", g.where(sc, 2))
	}
	if len(keys) > 0 {
		fmt.Fprintf(&b, " GROUP BY %s", groupBy)
	}
	if g.chance(25) {
		switch n := g.intn(0, 3, "having"); {
		case n == 0 || n == 2 && len(keys) == 0:
			fmt.Fprintf(&b, " HAVING count(*) > %d", g.intn(0, 2, "having count"))
		case n == 1:
			num := g.exprOf(sc, tInt, 1)
			fmt.Fprintf(&b, " HAVING sum(%s) > %s", num.sql, g.literal(tInt))
		case n == 3:
			// A subquery in HAVING may refer to the group keys that
			// are columns.
			var outer []expr
			for _, k := range keys {
				if !strings.Contains(k.sql, "(") {
					outer = append(outer, k)
				}
			}
			if g.sublevel < maxSublevel {
				fmt.Fprintf(&b, " HAVING %s", g.subPred(outer))
			} else {
				fmt.Fprintf(&b, " HAVING count(*) > %d", g.intn(0, 2, "having count"))
			}
		default:
			// Outside aggregates, HAVING may use the group keys only.
			fmt.Fprintf(&b, " HAVING %s", g.pred(keys, 1))
		}
	}
	return b.String(), cols
}

// groupingSets groups by the keys several ways at once: ROLLUP, CUBE,
// GROUPING SETS with the empty set, or a key crossed with a ROLLUP.
func (g *gen) groupingSets(keys []string) string {
	all := strings.Join(keys, ", ")
	switch g.intn(0, 3, "grouping sets") {
	case 0:
		return "ROLLUP (" + all + ")"
	case 1:
		return "CUBE (" + all + ")"
	case 2:
		return "GROUPING SETS ((" + all + "), (" + keys[len(keys)-1] + "), ())"
	}
	if len(keys) == 1 {
		return all + ", ROLLUP (" + all + ")"
	}
	return keys[0] + ", ROLLUP (" + strings.Join(keys[1:], ", ") + ")"
}

// refersToColumn reports whether a generated expression reads a column
// (columns in queries are always qualified by an alias a0, a1, ...).
func refersToColumn(sql string) bool {
	for i := 0; i+2 < len(sql); i++ {
		if sql[i] == 'a' && sql[i+1] >= '0' && sql[i+1] <= '9' && sql[i+2] == '.' {
			return true
		}
	}
	return false
}

// aggCall returns an aggregate call over sc.
func (g *gen) aggCall(sc []expr) expr {
	filter := ""
	if g.chance(20) {
		filter = " FILTER (WHERE " + g.pred(sc, 1) + ")"
	}
	if g.chance(15) {
		return g.funcAgg(sc, filter)
	}
	switch g.intn(0, 7, "aggregate") {
	case 0:
		return expr{"count(*)" + filter, tBigint}
	case 1:
		e := g.anyExpr(sc, 1)
		return expr{"count(" + e.sql + ")" + filter, tBigint}
	case 2:
		e := g.anyExpr(sc, 1)
		return expr{"count(DISTINCT " + e.sql + ")" + filter, tBigint}
	case 3:
		e := g.exprOf(sc, tInt, 1)
		// sum(int) is bigint; sum(bigint) and sum(numeric) are numeric.
		t := tBigint
		if e.typ != tInt {
			t = tNumeric
		}
		return expr{"sum(" + e.sql + ")" + filter, t}
	case 4:
		e := g.exprOf(sc, tInt, 1)
		return expr{"avg(" + e.sql + ")" + filter, tNumeric}
	case 5, 6:
		e := g.anyExpr(sc, 1)
		if e.typ == tJsonb {
			// jsonb has no min, max, bool_and or bool_or.
			return expr{"count(" + e.sql + ")" + filter, tBigint}
		}
		if !e.typ.orderable() {
			fn := "bool_and"
			if g.chance(50) {
				fn = "bool_or"
			}
			return expr{fn + "(" + e.sql + ")" + filter, tBool}
		}
		fn := "min"
		if g.chance(50) {
			fn = "max"
		}
		e = dedupSafe(e)
		return expr{fn + "(" + e.sql + ")" + filter, e.typ}
	default:
		e := g.exprOf(sc, tBool, 1)
		fn := "bool_and"
		if g.chance(50) {
			fn = "bool_or"
		}
		return expr{fn + "(" + e.sql + ")" + filter, tBool}
	}
}

// orderedSetAgg returns an ordered-set aggregate (percentile_cont,
// percentile_disc, mode() WITHIN GROUP), a hypothetical-set one (rank,
// dense_rank, percent_rank, cume_dist WITHIN GROUP) or a bitwise one
// (bit_and, bit_or, bit_xor) over sc. percentile_cont's fractions are quarters, so
// that four times its result over integers is an integer computed
// exactly, whatever the order of the float operations.
func (g *gen) orderedSetAgg(sc []expr, filter string) expr {
	dir := pick(g, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"})
	fraction := pick(g, []string{"0", "0.25", "0.5", "0.75", "1"})
	if g.chance(25) {
		// A hypothetical-set aggregate: the row is a literal of the
		// ordered value's type.
		e := g.anyExpr(sc, 1)
		call := pick(g, []string{"rank", "dense_rank", "percent_rank", "cume_dist"}) + "(" + g.literal(e.typ) +
			") WITHIN GROUP (ORDER BY " + e.sql + dir + ")" + filter
		if strings.HasPrefix(call, "rank") || strings.HasPrefix(call, "dense_rank") {
			return expr{call, tBigint}
		}
		return expr{"CAST(" + call + " * 1000 AS bigint)", tBigint}
	}
	switch g.intn(0, 3, "ordered-set aggregate") {
	case 0:
		if e := g.exprOf(sc, tInt, 1); e.typ != tNumeric {
			return expr{"CAST(percentile_cont(" + fraction + ") WITHIN GROUP (ORDER BY " + e.sql + dir + ")" + filter + " * 4 AS bigint)", tBigint}
		}
		fallthrough
	case 1:
		e := dedupSafe(g.anyExpr(sc, 1))
		if g.chance(30) {
			fraction = pick(g, []string{"0.1", "0.3", "0.6", "0.9"})
		}
		return expr{"percentile_disc(" + fraction + ") WITHIN GROUP (ORDER BY " + e.sql + dir + ")" + filter, e.typ}
	case 2:
		e := dedupSafe(g.anyExpr(sc, 1))
		return expr{"mode() WITHIN GROUP (ORDER BY " + e.sql + dir + ")" + filter, e.typ}
	default:
		e := g.exprOf(sc, tInt, 1)
		if e.typ == tNumeric {
			e = expr{"CAST(" + e.sql + " AS bigint)", tBigint}
		}
		fn := pick(g, []string{"bit_and", "bit_or", "bit_xor"})
		return expr{fn + "(" + e.sql + ")" + filter, e.typ}
	}
}
