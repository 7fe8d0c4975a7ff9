package oracle

// Function calls and aggregates of the function catalog in generated
// workloads: string, numeric and date functions, SQL functions the
// workload defines (sqlFunctions), LIKE/ILIKE, string_agg,
// array_agg, the variance family, and array constructors, functions and
// op ANY/ALL (array) over the workloads' scalar columns. As everywhere in the generator, no call can
// fail on the values the workloads hold.
//
// Numeric results keep the scales the workloads' values already have (0
// for integers, 2 for numeric(8,2)): a group key or DISTINCT value that is
// equal under = but written with another scale (0 and 0.00) shows the
// scale of whichever row PostgreSQL happens to read first, which no
// engine can reproduce.

// funcExpr returns a function call of class want over sc, or false when
// it has none for that class.
func (g *gen) funcExpr(sc []expr, want sqlType, depth int) (expr, bool) {
	sub := func(c sqlType) expr { return g.exprOf(sc, c, depth-1) }
	if g.chance(25) {
		if e, ok := g.arrayExpr(sc, want, depth); ok {
			return e, true
		}
	}
	if g.chance(30) {
		if e, ok := g.sqlFunctionCall(sc, want, depth); ok {
			return e, true
		}
	}
	switch want {
	case tInt:
		switch g.intn(0, 6, "numeric function") {
		case 0:
			a := sub(tInt)
			return expr{"abs(" + a.sql + ")", a.typ}, true
		case 1:
			a := sub(tInt)
			return expr{"round((" + a.sql + ")::numeric / 3, 2)", tNumeric}, true
		case 2:
			a := sub(tInt)
			return expr{"mod(" + a.sql + ", 3)", a.typ}, true
		case 3:
			a := sub(tInt)
			return expr{pick(g, []string{"ceil", "floor", "trunc"}) + "((" + a.sql + ")::numeric / 4)::int", tInt}, true
		case 4:
			t := sub(tText)
			return expr{pick(g, []string{"length", "octet_length", "ascii"}) + "(" + t.sql + ")", tInt}, true
		case 5:
			t := sub(tText)
			return expr{"strpos(" + t.sql + ", 'b')", tInt}, true
		default:
			d := sub(tDate)
			return expr{"extract(" + pick(g, []string{"day", "dow", "week", "year", "epoch"}) + " FROM " + d.sql + ")::bigint", tBigint}, true
		}
	case tText:
		t := sub(tText)
		switch g.intn(0, 10, "text function") {
		case 0:
			return expr{pick(g, []string{"upper", "lower", "initcap", "reverse", "trim", "md5"}) + "(" + t.sql + ")", tText}, true
		case 1:
			return expr{"substring(" + t.sql + " FROM 2 FOR 2)", tText}, true
		case 2:
			return expr{pick(g, []string{"left", "right"}) + "(" + t.sql + ", " + pick(g, []string{"1", "2", "-1"}) + ")", tText}, true
		case 3:
			return expr{"lpad(" + t.sql + ", 3, '*')", tText}, true
		case 4:
			return expr{"replace(" + t.sql + ", 'a', 'xy')", tText}, true
		case 5:
			n := sub(tInt)
			return expr{"concat(" + t.sql + ", '-', " + n.sql + ")", tText}, true
		case 6:
			return expr{"concat_ws('/', " + t.sql + ", " + sub(tText).sql + ")", tText}, true
		case 7:
			return expr{"split_part(" + t.sql + ", ' ', " + pick(g, []string{"1", "2", "-1"}) + ")", tText}, true
		case 8:
			d := sub(tDate)
			return expr{"to_char(" + d.sql + ", " + pick(g, []string{"'YYYY-MM-DD'", "'FMDay DD Mon'", "'IYYY-IW'"}) + ")", tText}, true
		case 9:
			n := sub(tInt)
			return expr{"to_char(" + n.sql + ", " + pick(g, []string{"'FM999990.00'", "'S9999'", "'9,999.9'"}) + ")", tText}, true
		default:
			return expr{"rpad(" + t.sql + ", 2)", tText}, true
		}
	case tBool:
		t := sub(tText)
		op := pick(g, []string{"LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"})
		pat := pick(g, []string{"'a%'", "'%B%'", "'_'", "''", "'%'", "'a!%' ESCAPE '!'"})
		if g.chance(20) {
			return expr{"starts_with(" + t.sql + ", 'a')", tBool}, true
		}
		return expr{"(" + t.sql + " " + op + " " + pat + ")", tBool}, true
	case tDate:
		d := sub(tDate)
		return expr{"(date_trunc(" + pick(g, []string{"'month'", "'week'", "'year'", "'day'"}) + ", " + d.sql + "))::date", tDate}, true
	}
	return expr{}, false
}

// sqlFunctions are the SQL functions (CREATE FUNCTION ... LANGUAGE SQL)
// every workload defines; the engine inlines their bodies.
var sqlFunctions = []string{
	"CREATE FUNCTION rs_clamp(x bigint) RETURNS bigint LANGUAGE SQL IMMUTABLE STRICT AS 'SELECT greatest(least(x, 5), -5)'",
	"CREATE FUNCTION rs_tag(s text) RETURNS text LANGUAGE SQL IMMUTABLE AS $$ SELECT coalesce(s, '-') || '!' $$",
	"CREATE FUNCTION rs_pick(a bigint, b bigint) RETURNS bigint LANGUAGE SQL IMMUTABLE RETURN CASE WHEN a > b THEN a ELSE b END",
}

// sqlFunctionCall returns a call of one of sqlFunctions of class want.
func (g *gen) sqlFunctionCall(sc []expr, want sqlType, depth int) (expr, bool) {
	integer := func() string {
		a := g.exprOf(sc, tInt, depth-1)
		if a.typ != tInt && a.typ != tBigint {
			return "(" + a.sql + ")::bigint"
		}
		return a.sql
	}
	switch want {
	case tInt:
		if g.chance(50) {
			return expr{"rs_clamp(" + integer() + ")", tBigint}, true
		}
		return expr{"rs_pick(" + integer() + ", " + integer() + ")", tBigint}, true
	case tText:
		return expr{"rs_tag(" + g.exprOf(sc, tText, depth-1).sql + ")", tText}, true
	}
	return expr{}, false
}

// funcAgg returns an aggregate of the catalog's second tier over sc:
// string_agg ordered by its own value (so that the result is the same
// whatever order rows are read in), or one of the variance family.
func (g *gen) funcAgg(sc []expr, filter string) expr {
	if g.chance(30) {
		return g.arrayAgg(sc, filter)
	}
	if g.chance(30) {
		return g.orderedSetAgg(sc, filter)
	}
	if g.chance(50) {
		t := g.exprOf(sc, tText, 1)
		distinct := ""
		if g.chance(25) {
			distinct = "DISTINCT "
		}
		dir := pick(g, []string{"", " DESC", " DESC NULLS LAST"})
		return expr{"string_agg(" + distinct + t.sql + ", " + pick(g, []string{"','", "''", "' / '"}) +
			" ORDER BY " + t.sql + dir + ")" + filter, tText}
	}
	n := g.exprOf(sc, tInt, 1)
	fn := pick(g, []string{"var_samp", "var_pop", "stddev_samp", "stddev_pop", "variance", "stddev"})
	return expr{fn + "(" + n.sql + ")" + filter, tNumeric}
}

// arrayExpr returns an expression of class want built on arrays of the
// scope's values, or false when it has none for that class.
func (g *gen) arrayExpr(sc []expr, want sqlType, depth int) (expr, bool) {
	sub := func(c sqlType) expr { return g.exprOf(sc, c, depth-1) }
	switch want {
	case tInt:
		a, b := sub(tInt), sub(tInt)
		if g.chance(50) {
			return expr{"cardinality(ARRAY[" + a.sql + ", " + b.sql + ", NULL])", tInt}, true
		}
		return expr{"array_position(ARRAY[" + a.sql + ", " + b.sql + "], " + sub(tInt).sql + ")", tInt}, true
	case tText:
		t := sub(tText)
		switch g.intn(0, 2, "array text function") {
		case 0:
			return expr{"array_to_string(ARRAY[" + t.sql + ", " + sub(tText).sql + "], ',', '*')", tText}, true
		case 1:
			return expr{"(string_to_array(" + t.sql + ", " + pick(g, []string{"' '", "'a'", "''"}) + "))[" +
				pick(g, []string{"1", "2"}) + "]", tText}, true
		default:
			return expr{"array_to_string(array_remove(string_to_array(" + t.sql + ", NULL), 'a'), '')", tText}, true
		}
	case tBool:
		if g.chance(50) {
			x, a, b := sub(tInt), sub(tInt), sub(tInt)
			op := pick(g, []string{"= ANY", "<> ALL", "< ANY", ">= ALL"})
			return expr{"(" + x.sql + " " + op + " (ARRAY[" + a.sql + ", " + b.sql + "]))", tBool}, true
		}
		t, u := sub(tText), sub(tText)
		if g.chance(50) {
			return expr{"(" + t.sql + " = ANY (string_to_array(" + u.sql + ", ' ')))", tBool}, true
		}
		return expr{"(string_to_array(" + t.sql + ", ' ') " + pick(g, []string{"@>", "<@", "&&"}) +
			" ARRAY[" + u.sql + "])", tBool}, true
	}
	return expr{}, false
}

// arrayAgg returns array_agg over text or dates, ordered by its own value
// (so that the array is the same whatever order rows are read in: equal
// values print alike), as the array's text or its cardinality.
func (g *gen) arrayAgg(sc []expr, filter string) expr {
	e := g.exprOf(sc, pick(g, []sqlType{tText, tDate, tInt}), 1)
	if e.typ.class() == tInt {
		// Numerics equal under = may print differently (1 and 1.00);
		// their text orders and prints alike.
		e = expr{"(" + e.sql + ")::text", tText}
	}
	distinct := ""
	if g.chance(25) {
		distinct = "DISTINCT "
	}
	dir := pick(g, []string{"", " DESC", " NULLS FIRST"})
	call := "array_agg(" + distinct + e.sql + " ORDER BY " + e.sql + dir + ")" + filter
	if g.chance(30) {
		return expr{"cardinality(" + call + ")", tInt}
	}
	return expr{call + "::text", tText}
}
