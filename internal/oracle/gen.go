package oracle

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"
)

// This file generates random workloads for property tests: a schema of
// two or three tables (about a third with a primary key, gen_keys.go),
// views over them, and a stream of changes (inserts with duplicates and
// NULLs, updates, deletes, upserts of keyed tables, transactions committed
// or rolled back, ad-hoc queries) with the views created at random points in
// it, so that some are backfilled over existing rows. The views' queries
// combine and nest, at random:
//
//   - filters and projections with arithmetic, CASE, COALESCE, NULLIF and
//     the function library (gen_funcs.go), and over jsonb columns ->, ->>,
//     #>, ||, @>, <@ and ?;
//   - inner, cross, LEFT, RIGHT and FULL joins of up to three sources on a
//     pair of columns of one class, at times with a residual predicate;
//     the NULL-padded columns of outer joins flow into expressions,
//     aggregates and GROUP BY like any other;
//   - grouped and global aggregates (count, count(DISTINCT), sum, avg,
//     min, max, bool_and/or, string_agg, the variance family, FILTER) and
//     HAVING;
//   - DISTINCT, and UNION [ALL], INTERSECT [ALL] and EXCEPT [ALL] of two
//     to four branches nested in parentheses;
//   - subqueries in FROM, views on views, WITH and WITH RECURSIVE
//     (gen_with.go);
//   - subqueries in WHERE, HAVING and select lists: [NOT] IN, [NOT]
//     EXISTS, op ANY/ALL and scalar subqueries, uncorrelated or correlated
//     and nested (gen_sub.go);
//   - ORDER BY ... LIMIT, per-group top-k and window functions
//     (gen_order.go).
//
// Every generated statement is valid and well typed, and its evaluation
// cannot fail: values stay in small ranges, arithmetic multiplies and
// divides only by small non-zero constants, updates only add small
// constants, a scalar subquery is an aggregate without GROUP BY (one row,
// always), and a recursive query stops over any data. So no expression
// can overflow or divide by zero, and a failure in a generated workload is
// a disagreement, never an accident of evaluation order. The one failure
// generated on purpose is a primary-key violation, known to fail when it
// is generated and marked so. Nor is any result
// left open by SQL: what picks rows by order orders them totally, and
// values merged as equal have one spelling (dedupSafe).

// sqlType is a column or expression type of the generated workloads.
type sqlType uint8

const (
	tInt sqlType = iota
	tBigint
	tNumeric
	tText
	tBool
	tDate
	tJsonb
	tTimetz
)

var allTypes = []sqlType{tInt, tBigint, tNumeric, tText, tBool, tDate, tJsonb, tTimetz}

// ddl returns the type as written in CREATE TABLE.
func (t sqlType) ddl() string {
	return [...]string{"int", "bigint", "numeric(8,2)", "text", "boolean", "date", "jsonb", "timetz"}[t]
}

// class groups types that compare with each other and can meet in a
// UNION: the numeric types are one class.
func (t sqlType) class() sqlType {
	if t == tBigint || t == tNumeric {
		return tInt
	}
	return t
}

// orderable reports whether min and max apply (PostgreSQL has them for
// neither boolean nor jsonb).
func (t sqlType) orderable() bool { return t != tBool && t != tJsonb }

// widen returns the common type of two numeric types.
func widen(a, b sqlType) sqlType {
	if a > b {
		return a
	}
	return b
}

// column is a named, typed column of a relation.
type column struct {
	name string
	typ  sqlType
}

// relation is a table or view the generator can read.
type relation struct {
	name string
	cols []column
	// appendOnly tables are created APPEND ONLY (plain for PostgreSQL)
	// and only ever get INSERTs.
	appendOnly bool
	// key holds the positions of a table's primary-key columns, if it
	// has one (gen_keys.go).
	key []int
}

// expr is a generated scalar expression.
type expr struct {
	sql string
	typ sqlType
}

// Workload is a generated script. Its GoString is short, so that rapid's
// log of the draw stays readable; Statements holds the script.
type Workload struct {
	Statements []Statement
}

// GoString implements fmt.GoStringer.
func (w Workload) GoString() string {
	return fmt.Sprintf("Workload{%d statements}", len(w.Statements))
}

// WorkloadGen generates workloads of up to maxSteps changes.
func WorkloadGen(maxSteps int) *rapid.Generator[Workload] {
	return rapid.Custom(func(t *rapid.T) Workload {
		g := &gen{t: t}
		return Workload{Statements: g.workload(maxSteps)}
	})
}

// gen holds the state of one workload's generation.
type gen struct {
	t      *rapid.T
	tables []relation
	// readable holds the tables and every view created so far.
	readable []relation
	stmts    []Statement
	nviews   int
	// rows remembers inserted rows per table, to insert duplicates.
	rows map[string][][]string
	// keys models the live keys of each table with a primary key; saved
	// is their state at the open transaction block's BEGIN, and aborted
	// is set once a statement of the block failed (gen_keys.go).
	keys    map[string]*keyModel
	saved   map[string]*keyModel
	aborted bool
	// cte, while a query with a WITH item is generated, is that item:
	// the query's first source (gen_with.go).
	cte *relation
	// sublevel counts the subqueries in expressions around the one being
	// generated (gen_sub.go).
	sublevel int
	// derived counts the subqueries in FROM around the query being
	// generated.
	derived int
}

// emit appends a statement; its Line is its number in the script.
func (g *gen) emit(format string, args ...any) {
	g.stmts = append(g.stmts, Statement{SQL: fmt.Sprintf(format, args...), Line: len(g.stmts) + 1})
}

func (g *gen) intn(lo, hi int, label string) int {
	return rapid.IntRange(lo, hi).Draw(g.t, label)
}

// chance reports true percent% of the time. Small draws mean false, so
// that shrinking a failing workload turns features off.
func (g *gen) chance(percent int) bool { return g.intn(0, 99, "chance") >= 100-percent }

func pick[E any](g *gen, xs []E) E { return xs[g.intn(0, len(xs)-1, "pick")] }

func (g *gen) workload(maxSteps int) []Statement {
	g.rows = map[string][][]string{}
	g.keys = map[string]*keyModel{}
	ntables := g.intn(2, 3, "tables")
	for i := 1; i <= ntables; i++ {
		// The first column is an int with a small domain, so every pair
		// of tables has a join key with matches.
		cols := []column{{"k", tInt}}
		for j := 1; j <= g.intn(1, 3, "columns"); j++ {
			cols = append(cols, column{fmt.Sprintf("c%d", j), pick(g, allTypes)})
		}
		rel := relation{name: fmt.Sprintf("t%d", i), cols: cols, appendOnly: g.chance(25)}
		if !rel.appendOnly {
			rel.key = g.chooseKey(cols)
		}
		if rel.keyed() {
			g.keys[rel.name] = &keyModel{}
		}
		g.emit("CREATE TABLE %s (%s)", rel.name, tableDDL(rel))
		if rel.appendOnly {
			st := &g.stmts[len(g.stmts)-1]
			st.Expect.Postgres = st.SQL
			st.SQL += " APPEND ONLY"
		}
		g.tables = append(g.tables, rel)
		g.readable = append(g.readable, rel)
	}
	for _, f := range sqlFunctions {
		g.emit("%s", f)
	}
	nviews := g.intn(1, 4, "views")
	steps := g.intn(1, maxSteps, "steps")
	// Each view is created before a random step (or after the last).
	at := make([]int, nviews)
	for i := range at {
		at[i] = g.intn(0, steps, "view position")
	}
	for s := 0; s <= steps; s++ {
		for _, a := range at {
			if a == s {
				g.createView()
			}
		}
		if s < steps {
			g.step()
		}
	}
	return g.stmts
}

// createView emits CREATE [MATERIALIZED] VIEW over the readable relations.
func (g *gen) createView() {
	g.nviews++
	name := fmt.Sprintf("v%d", g.nviews)
	sql, cols := g.query(0)
	kind := "MATERIALIZED VIEW"
	if g.chance(20) {
		kind = "VIEW"
	}
	g.emit("CREATE %s %s AS %s", kind, name, sql)
	g.readable = append(g.readable, relation{name: name, cols: cols})
}

// scope returns rel's columns as expressions, qualified by alias.
func (g *gen) scope(rel relation, alias string) []expr {
	out := make([]expr, len(rel.cols))
	for i, c := range rel.cols {
		name := c.name
		if alias != "" {
			name = alias + "." + c.name
		}
		out[i] = expr{name, c.typ}
	}
	return out
}

// query returns a SELECT over the readable relations and its columns.
// depth counts enclosing subqueries.
func (g *gen) query(depth int) (string, []column) {
	switch {
	case depth == 0 && g.cte == nil && g.chance(6):
		return g.with()
	case g.chance(12):
		return g.union(depth)
	case depth == 0 && g.chance(8):
		// LIMIT is for the outermost query only.
		return g.ordered(depth)
	}
	from, sc := g.from(depth)
	if g.chance(40) {
		return g.aggregate(from, sc)
	}
	return g.projection(from, sc)
}

// from returns a FROM clause (with its join conditions) and the columns
// in scope, its sources aliased a0, a1, ...
func (g *gen) from(depth int) (string, []expr) { return g.fromAs(depth, "a") }

// fromAs is from with the sources aliased prefix0, prefix1, ...: a
// subquery in WHERE names its sources apart from the query around it.
// Joins are inner, cross, or outer (joinKind), on a pair of columns of one
// class and at times a residual predicate, or a LATERAL subquery
// (gen_lateral.go); the columns of an outer join's
// NULL-padded side flow into the rest of the query like any other.
func (g *gen) fromAs(depth int, prefix string) (string, []expr) {
	nsrc := 1
	if g.chance(35) {
		nsrc = g.intn(2, 3, "join width")
	}
	var (
		clause strings.Builder
		sc     []expr
	)
	for i := 0; i < nsrc; i++ {
		if i == 2 && strings.Contains(clause.String(), " CROSS JOIN ") {
			break // keep intermediate results small
		}
		alias := fmt.Sprintf("%s%d", prefix, i)
		var src string
		var rel relation
		switch {
		case g.cte != nil && (i == 0 || g.chance(30)):
			rel = *g.cte
			src = rel.name
		case depth < 1 && g.chance(15):
			g.derived++
			sql, cols := g.query(depth + 1)
			g.derived--
			src, rel = "("+sql+")", relation{cols: cols}
		default:
			rel = pick(g, g.readable)
			src = rel.name
		}
		if i > 0 && depth < 1 && g.sublevel == 0 && g.chance(12) {
			text, cols := g.lateral(sc, alias)
			clause.WriteString(text)
			sc = append(sc, cols...)
			continue
		}
		cols := g.scope(rel, alias)
		if i == 0 {
			fmt.Fprintf(&clause, "%s %s", src, alias)
			sc = cols
			continue
		}
		// Join on a pair of columns of one class, when there is one.
		var pairs [][2]expr
		for _, l := range sc {
			for _, r := range cols {
				if l.typ.class() == r.typ.class() && l.typ != tBool {
					pairs = append(pairs, [2]expr{l, r})
				}
			}
		}
		all := append(append([]expr{}, sc...), cols...)
		switch {
		case len(pairs) == 0 && i == 2:
			return clause.String(), sc
		case len(pairs) > 0 && (i == 2 || !g.chance(10)):
			p := pick(g, pairs)
			kind := g.joinKind()
			cond := p[0].sql + " = " + p[1].sql
			// PostgreSQL runs a FULL JOIN only on a hashable or
			// mergeable condition, which IS NOT DISTINCT FROM is not.
			if kind != "FULL JOIN" && g.chance(10) {
				cond = p[0].sql + " IS NOT DISTINCT FROM " + p[1].sql
			}
			if g.chance(25) {
				cond += " AND " + g.pred(all, 1)
			}
			fmt.Fprintf(&clause, " %s %s %s ON %s", kind, src, alias, cond)
		default:
			fmt.Fprintf(&clause, " CROSS JOIN %s %s", src, alias)
		}
		sc = all
	}
	return clause.String(), sc
}

// joinKind returns the kind of a join with an ON condition.
func (g *gen) joinKind() string {
	if !g.chance(45) {
		return "JOIN"
	}
	return pick(g, []string{"LEFT JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"})
}

// selectBlock is a generated SELECT without aggregates, kept in parts so
// that a UNION can adjust its select list before it is rendered.
type selectBlock struct {
	distinct bool
	items    []expr
	from     string
	where    string
	// window, when set, is a window function call after the items
	// (gen_order.go).
	window *expr
}

// sql renders the block, casting the select list to types where given
// (nil: as generated).
func (b selectBlock) sql(types []sqlType) string {
	all := b.items
	if b.window != nil {
		all = append(append([]expr(nil), b.items...), *b.window)
	}
	items := make([]string, len(all))
	for i, e := range all {
		if types != nil {
			e = dedupSafe(expr{e.sql, types[i]})
		} else if b.distinct {
			e = dedupSafe(e)
		}
		items[i] = fmt.Sprintf("%s AS %s", e.sql, b.name(i))
	}
	var w strings.Builder
	w.WriteString("SELECT ")
	if b.distinct {
		w.WriteString("DISTINCT ")
	}
	fmt.Fprintf(&w, "%s FROM %s", strings.Join(items, ", "), b.from)
	if b.where != "" {
		fmt.Fprintf(&w, " WHERE %s", b.where)
	}
	return w.String()
}

// name is the name of output column i: x1, x2, ..., and w1 for the
// window function.
func (b selectBlock) name(i int) string {
	if i == len(b.items) {
		return "w1"
	}
	return fmt.Sprintf("x%d", i+1)
}

// columns returns the block's output columns.
func (b selectBlock) columns() []column {
	cols := make([]column, len(b.items))
	for i, e := range b.items {
		cols[i] = column{b.name(i), e.typ}
	}
	if b.window != nil {
		cols = append(cols, column{"w1", b.window.typ})
	}
	return cols
}

// dedupSafe returns e ready for a place where equal values merge
// (DISTINCT, UNION, GROUP BY, min and max). Equal numerics can differ in
// scale (0 and 0.00 print differently), and which one such a merge keeps
// is up to the implementation, so numerics get one scale there.
func dedupSafe(e expr) expr {
	if e.typ != tNumeric {
		return e
	}
	return expr{"CAST(" + e.sql + " AS numeric(20,4))", tNumeric}
}

// selectBlock returns a projection over from. When want is not nil, the
// select list has one expression of each wanted type's class (for the
// second branch of a UNION).
func (g *gen) selectBlock(from string, sc []expr, want []sqlType) selectBlock {
	n := len(want)
	if want == nil {
		n = g.intn(1, 4, "select list")
	}
	b := selectBlock{from: from, items: make([]expr, n)}
	for i := range b.items {
		class := tAny
		if want != nil {
			class = want[i].class()
		}
		switch {
		case g.sublevel < maxSublevel && g.derived == 0 && g.chance(3):
			// Not in a subquery in FROM: PostgreSQL takes seconds to
			// plan a correlated subquery that refers to a column of a
			// subquery in FROM holding a scalar subquery.
			b.items[i] = g.scalarItem(sc, class)
		case want == nil:
			b.items[i] = g.anyExpr(sc, 2)
		default:
			b.items[i] = g.exprOf(sc, class, 2)
		}
	}
	if want == nil && g.chance(15) {
		w := g.windowCall(sc)
		b.window = &w
	}
	b.distinct = g.chance(15)
	if g.chance(50) {
		b.where = g.where(sc, 2)
	}
	return b
}

// projection returns SELECT [DISTINCT] exprs FROM from [WHERE].
func (g *gen) projection(from string, sc []expr) (string, []column) {
	b := g.selectBlock(from, sc, nil)
	return b.sql(nil), b.columns()
}

// union returns two to four projections combined by UNION [ALL],
// INTERSECT [ALL] and EXCEPT [ALL], nested in parentheses at random.
// Where a column merges or matches equal values (any operator but UNION
// ALL, or DISTINCT in a branch), every branch casts it to the column's
// common type, with one numeric scale.
func (g *gen) union(depth int) (string, []column) {
	n := 2
	if g.chance(30) {
		n = g.intn(3, 4, "set operands")
	}
	from, sc := g.from(depth)
	branches := []selectBlock{g.selectBlock(from, sc, nil)}
	cols := branches[0].columns()
	want := make([]sqlType, len(cols))
	for i, c := range cols {
		want[i] = c.typ
	}
	for len(branches) < n {
		from, sc := g.from(depth)
		b := g.selectBlock(from, sc, want)
		for i, c := range b.columns() {
			if cols[i].typ.class() == tInt {
				cols[i].typ = widen(cols[i].typ, c.typ)
			}
		}
		branches = append(branches, b)
	}
	ops := make([]string, n-1)
	merges := false
	for i := range ops {
		ops[i] = g.setOperator()
		merges = merges || ops[i] != "UNION ALL"
	}
	for _, b := range branches {
		merges = merges || b.distinct
	}
	var types []sqlType
	if merges {
		types = make([]sqlType, len(cols))
		for i, c := range cols {
			types[i] = c.typ
		}
	}
	texts := make([]string, n)
	for i, b := range branches {
		texts[i] = b.sql(types)
	}
	return g.setTree(texts, ops), cols
}

// setTree combines branches with ops (ops[i] between branches i and
// i+1), grouping them in a random tree: ops[k-1] at the root splits them
// into branches[:k] and branches[k:].
func (g *gen) setTree(branches, ops []string) string {
	if len(branches) == 1 {
		return branches[0]
	}
	k := g.intn(1, len(branches)-1, "set split")
	left, right := g.setTree(branches[:k], ops[:k-1]), g.setTree(branches[k:], ops[k:])
	if k > 1 {
		left = "(" + left + ")"
	}
	if len(branches)-k > 1 {
		right = "(" + right + ")"
	}
	return left + " " + ops[k-1] + " " + right
}
