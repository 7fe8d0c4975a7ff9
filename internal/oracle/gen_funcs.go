package oracle

// Function calls and aggregates of the function catalog in generated
// workloads: string, numeric and date functions, LIKE/ILIKE, string_agg
// and the variance family. As everywhere in the generator, no call can
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

// funcAgg returns an aggregate of the catalog's second tier over sc:
// string_agg ordered by its own value (so that the result is the same
// whatever order rows are read in), or one of the variance family.
func (g *gen) funcAgg(sc []expr, filter string) expr {
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
