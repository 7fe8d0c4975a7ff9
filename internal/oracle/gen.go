package oracle

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"
)

// This file generates random workloads for property tests: a schema of
// two or three tables, views over them drawn from the first-tier grammar
// (filters, projections with arithmetic, grouped aggregates, joins on
// compatible columns, DISTINCT, UNION [ALL], subqueries in FROM, views on
// views), and a stream of changes (inserts with duplicates and NULLs,
// updates, deletes, transactions) with the views created at random points
// in it, so that some are backfilled over existing rows.
//
// Every generated statement is valid and well typed, and its evaluation
// cannot fail: values stay in small ranges, arithmetic multiplies and
// divides only by small non-zero constants, and updates only add small
// constants, so no expression can overflow or divide by zero. A failure in
// a generated workload is therefore a disagreement, never an accident of
// evaluation order.

// sqlType is a column or expression type of the generated workloads.
type sqlType uint8

const (
	tInt sqlType = iota
	tBigint
	tNumeric
	tText
	tBool
	tDate
)

var allTypes = []sqlType{tInt, tBigint, tNumeric, tText, tBool, tDate}

// ddl returns the type as written in CREATE TABLE.
func (t sqlType) ddl() string {
	return [...]string{"int", "bigint", "numeric(8,2)", "text", "boolean", "date"}[t]
}

// class groups types that compare with each other and can meet in a
// UNION: the numeric types are one class.
func (t sqlType) class() sqlType {
	if t == tBigint || t == tNumeric {
		return tInt
	}
	return t
}

// orderable reports whether min and max apply.
func (t sqlType) orderable() bool { return t != tBool }

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
	// cte, while a query with a WITH item is generated, is that item:
	// the query's first source (gen_with.go).
	cte *relation
	// sublevel counts the subqueries in expressions around the one being
	// generated (gen_sub.go).
	sublevel int
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
	ntables := g.intn(2, 3, "tables")
	for i := 1; i <= ntables; i++ {
		// The first column is an int with a small domain, so every pair
		// of tables has a join key with matches.
		cols := []column{{"k", tInt}}
		for j := 1; j <= g.intn(1, 3, "columns"); j++ {
			cols = append(cols, column{fmt.Sprintf("c%d", j), pick(g, allTypes)})
		}
		rel := relation{name: fmt.Sprintf("t%d", i), cols: cols}
		defs := make([]string, len(cols))
		for j, c := range cols {
			defs[j] = c.name + " " + c.typ.ddl()
		}
		g.emit("CREATE TABLE %s (%s)", rel.name, strings.Join(defs, ", "))
		g.tables = append(g.tables, rel)
		g.readable = append(g.readable, rel)
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

// step emits one change, a transaction of changes, or an ad-hoc query.
func (g *gen) step() {
	switch n := g.intn(0, 99, "step kind"); {
	case n < 40:
		g.insert()
	case n < 60:
		g.update()
	case n < 75:
		g.delete()
	case n < 90:
		g.emit("BEGIN")
		for i := g.intn(1, 3, "transaction size"); i > 0; i-- {
			switch g.intn(0, 2, "change kind") {
			case 0:
				g.insert()
			case 1:
				g.update()
			default:
				g.delete()
			}
		}
		if g.chance(70) {
			g.emit("COMMIT")
		} else {
			g.emit("ROLLBACK")
		}
	default:
		sql, _ := g.query(0)
		g.emit("%s", sql)
	}
}

// value returns a random literal of type t, NULL at times.
func (g *gen) value(t sqlType) string {
	if g.chance(12) {
		return "NULL"
	}
	return g.literal(t)
}

// literal returns a random non-NULL literal of type t, from a small
// domain so that values repeat.
func (g *gen) literal(t sqlType) string {
	switch t {
	case tInt:
		return fmt.Sprint(g.intn(-3, 8, "int"))
	case tBigint:
		if g.chance(10) {
			return fmt.Sprint(3000000000 + g.intn(0, 2, "big"))
		}
		return fmt.Sprint(g.intn(-3, 8, "bigint"))
	case tNumeric:
		cents := g.intn(-400, 900, "numeric")
		sign := ""
		if cents < 0 {
			sign, cents = "-", -cents
		}
		if g.chance(50) {
			cents -= cents % 50 // fewer distinct values
		}
		return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
	case tText:
		return "'" + pick(g, []string{"a", "b", "c", "ab", "B", "", "é", "a b"}) + "'"
	case tBool:
		return pick(g, []string{"true", "false"})
	default:
		return fmt.Sprintf("'2024-01-%02d'", g.intn(1, 9, "day"))
	}
}

// typedLiteral returns a literal whose type PostgreSQL knows without
// context (for select lists and CASE results).
func (g *gen) typedLiteral(t sqlType) string {
	switch t {
	case tText:
		return g.literal(t) + "::text"
	case tDate:
		return g.literal(t) + "::date"
	case tBigint:
		return g.literal(t) + "::bigint"
	case tNumeric:
		return g.literal(t) + "::numeric"
	}
	return g.literal(t)
}

func (g *gen) insert() {
	rel := pick(g, g.tables)
	n := g.intn(1, 4, "rows")
	rows := make([]string, n)
	for i := range rows {
		prev := g.rows[rel.name]
		var vals []string
		if len(prev) > 0 && g.chance(25) {
			vals = pick(g, prev) // a duplicate
		} else {
			vals = make([]string, len(rel.cols))
			for j, c := range rel.cols {
				vals[j] = g.value(c.typ)
			}
			g.rows[rel.name] = append(prev, vals)
		}
		rows[i] = "(" + strings.Join(vals, ", ") + ")"
	}
	g.emit("INSERT INTO %s VALUES %s", rel.name, strings.Join(rows, ", "))
}

func (g *gen) update() {
	rel := pick(g, g.tables)
	c := pick(g, rel.cols)
	var val string
	switch {
	case c.typ == tBool && g.chance(50):
		val = "NOT " + c.name
	case (c.typ == tInt || c.typ == tBigint) && g.chance(50):
		val = fmt.Sprintf("%s + %d", c.name, g.intn(-2, 2, "delta"))
	case c.typ == tNumeric && g.chance(50):
		val = fmt.Sprintf("%s + %d.25", c.name, g.intn(-1, 1, "delta"))
	case c.typ == tDate && g.chance(50):
		val = fmt.Sprintf("%s + %d", c.name, g.intn(-2, 2, "delta"))
	default:
		val = g.value(c.typ)
	}
	sc := g.scope(rel, "")
	g.emit("UPDATE %s SET %s = %s WHERE %s", rel.name, c.name, val, g.pred(sc, 1))
}

func (g *gen) delete() {
	rel := pick(g, g.tables)
	g.emit("DELETE FROM %s WHERE %s", rel.name, g.pred(g.scope(rel, ""), 1))
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
	case depth == 0 && g.cte == nil && g.chance(10):
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
// class and at times a residual predicate; the columns of an outer join's
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
			sql, cols := g.query(depth + 1)
			src, rel = "("+sql+")", relation{cols: cols}
		default:
			rel = pick(g, g.readable)
			src = rel.name
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
		case g.sublevel < maxSublevel && g.chance(8):
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
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %s FROM %s", strings.Join(items, ", "), from)
	if g.chance(40) {
		fmt.Fprintf(&b, " WHERE %s", g.where(sc, 2))
	}
	if len(keys) > 0 {
		texts := make([]string, len(keys))
		for i, k := range keys {
			texts[i] = k.sql
		}
		fmt.Fprintf(&b, " GROUP BY %s", strings.Join(texts, ", "))
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
	case tBool:
		return expr{g.pred(sc, depth), tBool}
	case tDate:
		if g.chance(50) {
			d := sub()
			return expr{fmt.Sprintf("(%s + %d)", d.sql, g.intn(-3, 3, "days")), tDate}
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
