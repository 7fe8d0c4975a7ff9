package oracle

import "fmt"

// Queries with a WITH item: a common table expression that the query's
// first source reads (later sources, subqueries in FROM and in WHERE read
// it too at times, so it is referenced once or more), or a WITH RECURSIVE
// item of a shape that terminates over any data the workloads hold:
//
//   - reachability: the values of an integer column, then the values
//     that rows matching a reached value lead to, under UNION, which
//     stops because every value comes from a finite set;
//   - a countdown from a column value, under UNION ALL, bounded by a
//     depth counter;
//   - paths of at most two steps over a join, under UNION ALL.
//
// Reached values are bigint on both sides of the UNION, as PostgreSQL
// requires the recursive term to keep the non-recursive term's types.

// with returns a query with one WITH item.
func (g *gen) with() (string, []column) {
	var def string
	var item relation
	if g.chance(40) {
		def, item = g.recursiveItem()
		def = "WITH RECURSIVE " + def
	} else {
		sql, cols := g.query(1)
		item = relation{name: "c1", cols: cols}
		def = "WITH c1 AS (" + sql + ")"
	}
	g.cte = &item
	body, cols := g.query(0)
	g.cte = nil
	return def + " " + body, cols
}

// intColumn returns a bigint expression reading an integer-class column
// of a source aliased alias, drawn from the tables.
func (g *gen) intColumn(rel relation, alias string) string {
	var cands []string
	for _, c := range rel.cols {
		if c.typ.class() == tInt {
			cands = append(cands, alias+"."+c.name)
		}
	}
	return "(" + pick(g, cands) + ")::bigint"
}

// recursiveItem returns the definition of a WITH RECURSIVE item, r(n, d),
// and its relation.
func (g *gen) recursiveItem() (string, relation) {
	start := pick(g, g.tables)
	anchor := fmt.Sprintf("SELECT %s, 0 FROM %s a", g.intColumn(start, "a"), start.name)
	if g.chance(40) {
		anchor += " WHERE " + g.pred(g.scope(start, "a"), 1)
	}
	var step string
	switch g.intn(0, 2, "recursion") {
	case 0:
		edges := pick(g, g.tables)
		step = fmt.Sprintf("SELECT %s, 0 FROM r JOIN %s e ON %s = r.n",
			g.intColumn(edges, "e"), edges.name, g.intColumn(edges, "e"))
		if g.chance(40) {
			step += " WHERE " + g.pred(g.scope(edges, "e"), 1)
		}
		return "r(n, d) AS (" + anchor + " UNION " + step + ")", g.recursive()
	case 1:
		step = fmt.Sprintf("SELECT r.n - 1, r.d + 1 FROM r WHERE r.n > %d AND r.d < %d",
			g.intn(-2, 1, "countdown floor"), g.intn(1, 4, "countdown depth"))
	default:
		edges := pick(g, g.tables)
		step = fmt.Sprintf("SELECT %s, r.d + 1 FROM r JOIN %s e ON %s = r.n WHERE r.d < %d",
			g.intColumn(edges, "e"), edges.name, g.intColumn(edges, "e"), g.intn(1, 2, "path length"))
	}
	return "r(n, d) AS (" + anchor + " UNION ALL " + step + ")", g.recursive()
}

// recursive returns the relation of the WITH RECURSIVE item.
func (g *gen) recursive() relation {
	return relation{name: "r", cols: []column{{"n", tBigint}, {"d", tInt}}}
}
