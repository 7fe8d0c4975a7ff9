package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// Set-returning functions in FROM and in the select list: unnest(array),
// generate_subscripts(array, dim [, reverse]), regexp_matches and
// regexp_split_to_table (regexp_srf.go), jsonb_array_elements[_text] and
// jsonb_object_keys, generate_series (over integers, numerics, timestamps
// and timestamptz) and, in FROM, jsonb_each[_text]. Each is unnest of an
// array (the subscripts, the matches, the series, the elements or keys of
// a jsonb value; jsonb_each unnests the keys and projects their values
// after) and becomes a plan.Unnest, a flat map over the rows it applies
// to:
//
//   - in FROM, unnest may read the columns of the FROM items before it
//     (as PostgreSQL lets functions in FROM do, with or without LATERAL):
//     FROM t, unnest(t.tags) AS u(tag) and t CROSS JOIN LATERAL
//     unnest(t.tags) unnest each row of t, WITH ORDINALITY adds the
//     position;
//   - in the select list, SELECT id, unnest(tags) FROM t returns one row
//     per element, as PostgreSQL's ProjectSet: after grouping and window
//     functions, before DISTINCT, ORDER BY and LIMIT. Several different
//     calls are zipped, as PostgreSQL 10 and later do (selectUnnest).
//
// Other set-returning functions are not supported.

// unnestName is the name of the binder's placeholder call for unnest in a
// select list; no scalar function has it.
const unnestName = "unnest"

// unnestTree is the joinTree of unnest over the FROM items to its left.
type unnestTree struct {
	array      plan.Expr // over the left tree's row
	ordinality bool
	cols       []plan.Column
	// outer is LEFT JOIN LATERAL unnest(...) ON: the joinTree's on then
	// decides the matches and stays at the Unnest.
	outer bool
	// rowText: the array's elements are the texts of the rows of
	// regexp_matches, read back as text[] above the Unnest (and in its
	// ON).
	rowText bool
	// each, for jsonb_each and jsonb_each_text, is the object (over the
	// left tree's row) whose keys array unnests: the value column is
	// computed from it and the key after the Unnest.
	each *jsonbEach
	// record, for jsonb_to_record(set), lists the columns computed from
	// each object after the Unnest.
	record *jsonbRecord
	// jsonEach, for json_each and json_each_text, splits each unnested
	// pair into key and value after the Unnest.
	jsonEach *jsonEach
}

// unnestFunction returns the unnest call of a function in FROM, or nil.
func unnestFunction(n *pg.Node) (*pg.RangeFunction, *pg.FuncCall) {
	rf := n.GetRangeFunction()
	if rf == nil {
		return nil, nil
	}
	fc := rangeFuncCall(rf)
	if fc == nil {
		return nil, nil
	}
	if schema, name := funcName(fc.Funcname); name != "unnest" && name != "generate_series" && name != "generate_subscripts" && regexpRowsName(name) == "" && !isJSONBSetFunc(name) && name != "jsonb_each" && name != "jsonb_each_text" && !isJSONBRecordFunc(name) && name != "json_each" && name != "json_each_text" && name != optionsTableName || (schema != "" && schema != "pg_catalog") {
		return nil, nil
	}
	return rf, fc
}

// unnestItem binds unnest(array) in FROM over left, the FROM items before
// it (nil when it comes first).
func (st *bindState) unnestItem(left *fromItem, rf *pg.RangeFunction, fc *pg.FuncCall) (*fromItem, error) {
	loc := fc.Location
	_, fname := funcName(fc.Funcname)
	if rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 && !isJSONBRecordFunc(fname) {
		return nil, notSupported(loc, "ROWS FROM and column definition lists are not supported")
	}
	if items := rf.Functions[0].GetList().GetItems(); len(items) > 1 && items[1].GetNode() != nil {
		return nil, notSupported(loc, "a column definition list is not supported for unnest")
	}
	if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.Over != nil || fc.FuncVariadic {
		return nil, posErr(errs.New(errs.WrongObjectType, "unnest is not an aggregate or window function"), loc)
	}
	if left == nil {
		left = &fromItem{tree: &joinTree{leaf: &plan.Values{Rows: [][]plan.Expr{{}}}}}
	}
	ec := &exprCtx{st: st, sc: &Scope{items: left.ns}, kind: kindScalar}
	fn, args, err := ec.unnestArgs(fc)
	if err != nil {
		return nil, err
	}
	var each *jsonbEach
	if fn == "jsonb_each" || fn == "jsonb_each_text" {
		if each, args, err = ec.jsonbEachArgs(fn, args, loc); err != nil {
			return nil, err
		}
	}
	var jeach *jsonEach
	if fn == "json_each" || fn == "json_each_text" {
		if jeach, args, err = ec.jsonEachArgs(fn, args, loc); err != nil {
			return nil, err
		}
	}
	var record *jsonbRecord
	if isJSONBRecordFunc(fn) {
		if record, args, err = ec.jsonbRecordArgs(fn, rf, args, loc); err != nil {
			return nil, err
		}
	}
	elem, err := unnestElement(args, loc)
	if err != nil {
		return nil, err
	}
	if fn == "json_array_elements" {
		elem = types.Of(types.Json) // json texts, in a text[]
	}
	rowText := fn == "regexp_matches"
	if rowText {
		elem = textArray
	}
	if hasSubLinks(args[0]) {
		return nil, notSupported(loc, "subqueries in the argument of unnest in FROM are not supported")
	}
	name := fn
	cols := []plan.Column{{Name: name, Type: elem}}
	if each != nil {
		cols = []plan.Column{{Name: "key", Type: elem}, {Name: "value", Type: each.valueType()}}
	} else if jeach != nil {
		cols = []plan.Column{{Name: "key", Type: types.Of(types.Text)}, {Name: "value", Type: jeach.valueTyp}}
	} else if record != nil {
		cols = append([]plan.Column(nil), record.fields...)
	} else if c := jsonbSetColumn(name); isJSONBSetFunc(name) && c != "" {
		cols[0].Name = c // the function's OUT parameter names its column
	} else if rf.Alias != nil {
		cols[0].Name = rf.Alias.Aliasname // a scalar function's column takes the alias
	}
	if rf.Ordinality {
		cols = append(cols, plan.Column{Name: "ordinality", Type: types.Of(types.Int8)})
	}
	item, err := leafItem(nil, cols, optionsAlias(fn, rf.Alias), name)
	if err != nil {
		return nil, posErr(err, loc)
	}
	for i := range cols {
		cols[i].Name = item.cols[i].name // as the alias's column list renames them
	}
	if fn == optionsTableName {
		if err := splitOptions(item, rf.Alias); err != nil {
			return nil, posErr(err, loc)
		}
	}
	lw := left.tree.width
	return &fromItem{
		tree: &joinTree{left: left.tree, width: lw + len(cols),
			unnest: &unnestTree{array: args[0], ordinality: rf.Ordinality, cols: cols, rowText: rowText, each: each, record: record, jsonEach: jeach}},
		ns:   append(append([]*nsItem(nil), left.ns...), shiftItems(item.ns, lw)...),
		cols: append(append([]nsCol(nil), left.cols...), shiftCols(item.cols, lw)...),
	}, nil
}

// unnestArgs binds the arguments of unnest or generate_series in FROM and
// returns the function's name and the arguments of the unnest it is:
// generate_series(start, stop [, step]) is unnest of the series as an
// array.
func (ec *exprCtx) unnestArgs(fc *pg.FuncCall) (string, []plan.Expr, error) {
	_, fn := funcName(fc.Funcname)
	args, err := ec.funcArgs(fc, fn)
	if err != nil {
		return fn, args, err
	}
	var series plan.Expr
	switch fn {
	case "generate_series":
		series, err = ec.seriesArray(args, fc.Location)
	case "generate_subscripts":
		series, err = ec.subscriptsArray(args, fc.Location)
	case "regexp_matches", "regexp_split_to_table":
		series, err = ec.regexpRows(fn, fn, args, fc.Location)
	case "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys", "json_array_elements", "json_array_elements_text", "json_object_keys":
		series, err = ec.jsonbSetArray(fn, args, fc.Location)
	case optionsTableName:
		args, err = ec.optionsTableArgs(args, fc.Location)
		return fn, args, err
	default:
		return fn, args, nil
	}
	if err != nil {
		return fn, nil, err
	}
	return fn, []plan.Expr{series}, nil
}

// unnestElement checks unnest's arguments and returns the element type.
func unnestElement(args []plan.Expr, loc int32) (types.Type, error) {
	if len(args) != 1 {
		if len(args) > 1 {
			return types.Type{}, notSupported(loc, "unnest with more than one argument is not supported")
		}
		return types.Type{}, undefinedFunction("unnest", args, loc)
	}
	t := args[0].Type()
	switch {
	case t.ID == types.Unknown:
		return types.Type{}, posErr(errs.New(errs.IndeterminateDatatype, "could not determine polymorphic type because input has type unknown"), loc)
	case !t.ID.IsArray():
		return types.Type{}, undefinedFunction("unnest", args, loc)
	}
	return t.Elem(), nil
}

// planUnnest plans an unnest tree: the FROM items to its left with the
// conjuncts that read only them, the Unnest, and the other conjuncts
// above it.
func (st *bindState) planUnnest(t *joinTree, conj []plan.Expr) (plan.Node, []int) {
	lw := t.left.width
	var below, above, on []plan.Expr
	pending := conj
	if t.unnest.outer {
		// ON decides which elements match; only conditions from above on
		// the preserved side may move below.
		on = t.on
	} else {
		pending = append(append([]plan.Expr(nil), t.on...), conj...)
	}
	for _, c := range pending {
		if side(c, lw)&2 == 0 {
			below = append(below, c)
		} else {
			above = append(above, c)
		}
	}
	input, lperm := st.planTree(t.left, below)
	inCols := input.Columns()
	un := &plan.Unnest{Input: input, Array: remapExpr(t.unnest.array, lperm), WithOrdinality: t.unnest.ordinality,
		Outer: t.unnest.outer, Cols: append(append([]plan.Column(nil), inCols...), t.unnest.cols...)}
	var node plan.Node = un
	switch {
	case t.unnest.rowText:
		// The Unnest yields each row's text; a projection reads it as
		// text[].
		un.Cols[len(inCols)].Type = types.Of(types.Text)
		proj := &plan.Project{Input: un, Cols: append([]plan.Column(nil), t.unnest.cols...)}
		proj.Cols = append(append([]plan.Column(nil), inCols...), proj.Cols...)
		for i, c := range un.Cols {
			var e plan.Expr = &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type}
			if i == len(inCols) {
				e = rowArray(e)
			}
			proj.Exprs = append(proj.Exprs, e)
		}
		node = proj
	case t.unnest.each != nil:
		e := t.unnest.each
		node = e.plan(un, remapExpr(e.object, lperm), inCols, t.unnest.cols)
	case t.unnest.record != nil:
		node = t.unnest.record.plan(un, inCols, t.unnest.cols)
	case t.unnest.jsonEach != nil:
		node = t.unnest.jsonEach.plan(un, inCols, t.unnest.cols)
	}
	perm := append([]int(nil), lperm...)
	for i := range t.unnest.cols {
		perm = append(perm, len(inCols)+i)
	}
	if len(on) > 0 {
		for i, c := range on {
			on[i] = remapExpr(c, perm)
			if t.unnest.rowText {
				// ON is evaluated at the Unnest, which holds each row's
				// text: read it as text[] there too.
				elem := len(inCols)
				on[i], _ = transform(on[i], func(e plan.Expr) (plan.Expr, bool, error) {
					if c, ok := e.(*plan.ColRef); ok && c.Index == elem {
						return rowArray(&plan.ColRef{Index: elem, Name: c.Name, Typ: types.Of(types.Text)}), true, nil
					}
					return nil, false, nil
				})
			}
		}
		un.On = andOf(on)
	}
	for i, c := range above {
		above[i] = remapExpr(c, perm)
	}
	return pushFilter(node, above), perm
}

// subscriptsArray binds generate_subscripts(array, dim [, reverse]) as the
// array of the subscripts of the array's dimension dim (its lower to its
// upper bound), in reverse order when reverse is true. A dimension the
// array does not have, a NULL array or a NULL dim give none.
func (ec *exprCtx) subscriptsArray(args []plan.Expr, loc int32) (plan.Expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, undefinedFunction("generate_subscripts", args, loc)
	}
	if t := args[0].Type(); t.ID == types.Unknown || !t.ID.IsArray() {
		return nil, undefinedFunction("generate_subscripts", args, loc)
	}
	want := []types.Type{args[0].Type(), types.Of(types.Int4), types.Of(types.Bool)}
	out := make([]plan.Expr, len(args))
	out[0] = args[0]
	for i := 1; i < len(args); i++ {
		c, err := ec.coerce(args[i], want[i], implicitCoercion)
		if err != nil {
			return nil, undefinedFunction("generate_subscripts", args, loc)
		}
		out[i] = c
	}
	fn := func(v []types.Value) (types.Value, error) {
		dims, lbs := v[0].ArrayShape()
		if v[0].IsNull() || v[1].IsNull() || v[1].Int() < 1 || v[1].Int() > int64(len(dims)) {
			return types.MakeArray(types.Int4, nil), nil
		}
		n, lb := dims[v[1].Int()-1], lbs[v[1].Int()-1]
		reverse := len(v) == 3 && !v[2].IsNull() && v[2].Bool()
		subs := make([]types.Value, n)
		for i := range subs {
			s := lb + i
			if reverse {
				s = lb + n - 1 - i
			}
			subs[i] = types.MakeInt(types.Int4, int64(s))
		}
		return types.MakeArray(types.Int4, subs), nil
	}
	return &plan.Func{Name: "generate_subscripts", Args: out, Typ: types.ArrayType(types.Of(types.Int4)), NonStrict: true, Fn: fn}, nil
}

// walkExpr calls f on e and every subexpression of it.
func walkExpr(e plan.Expr, f func(plan.Expr)) {
	if e == nil {
		return
	}
	f(e)
	for _, k := range children(e) {
		walkExpr(k, f)
	}
}

// joinUnnest binds l [CROSS | LEFT] JOIN [LATERAL] unnest(...) [ON cond]:
// a join of each row of l with its elements, the condition deciding the
// matching pairs; LEFT keeps a row of l without matches once, with NULL
// unnest columns. RIGHT and FULL joins with unnest, and USING or NATURAL,
// are not supported.
func (st *bindState) joinUnnest(l *fromItem, j *pg.JoinExpr, rf *pg.RangeFunction, fc *pg.FuncCall) (*fromItem, error) {
	if j.Jointype != pg.JoinType_JOIN_INNER && j.Jointype != pg.JoinType_JOIN_LEFT || j.IsNatural || len(j.UsingClause) > 0 {
		return nil, notSupported(fc.Location, "only an inner, cross or left join with unnest is supported")
	}
	it, err := st.unnestItem(l, rf, fc)
	if err != nil {
		return nil, err
	}
	it.tree.unnest.outer = j.Jointype == pg.JoinType_JOIN_LEFT
	if it.tree.unnest.outer && it.tree.unnest.each != nil {
		return nil, notSupported(fc.Location, "LEFT JOIN with jsonb_each is not supported")
	}
	if it.tree.unnest.outer && it.tree.unnest.jsonEach != nil {
		return nil, notSupported(fc.Location, "LEFT JOIN with json_each is not supported")
	}
	if it.tree.unnest.outer && it.tree.unnest.record != nil {
		return nil, notSupported(fc.Location, "LEFT JOIN with jsonb_to_record is not supported")
	}
	if j.Quals != nil {
		ec := &exprCtx{st: st, sc: &Scope{items: it.ns}, kind: kindJoinOn}
		on, err := ec.bindBool(j.Quals, "JOIN/ON")
		if err != nil {
			return nil, err
		}
		it.tree.on = conjuncts(on)
	}
	if j.Alias != nil {
		return nil, notSupported(fc.Location, "an alias for a join with unnest is not supported")
	}
	return it, nil
}

// conditionalUnnest returns the construct (CASE, COALESCE) that holds an
// unnest call in e, where PostgreSQL forbids set-returning functions
// because they would run for rows the condition skips; "" when none does.
func conditionalUnnest(e plan.Expr) string {
	var what string
	walkExpr(e, func(x plan.Expr) {
		if what != "" {
			return
		}
		var name string
		switch x.(type) {
		case *plan.Case:
			name = "CASE"
		case *plan.Coalesce:
			name = "COALESCE"
		default:
			return
		}
		walkExpr(x, func(y plan.Expr) {
			if isUnnestCall(y) {
				what = name
			}
		})
	})
	return what
}

// seriesArray binds generate_series(start, stop [, step]) as the array of
// its values (types.SeriesRows), resolved among its overloads as
// PostgreSQL resolves them.
func (ec *exprCtx) seriesArray(args []plan.Expr, loc int32) (plan.Expr, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	f, err := types.ResolveFunction("generate_series", types.SeriesRows, ts)
	if err != nil {
		return nil, posErr(err, loc)
	}
	f = f.InZone(ec.st.b.Zone)
	out := make([]plan.Expr, len(args))
	for i, a := range args {
		if out[i], err = ec.coerce(a, f.Args[i], implicitCoercion); err != nil {
			return nil, err
		}
	}
	// Not computed when binding, even over constants: the rows are made
	// when the Unnest runs.
	return &plan.Func{Name: "generate_series", Args: out, Typ: f.Result, Fn: f.Eval}, nil
}

// seriesSRFCall binds generate_series in a select list.
func (ec *exprCtx) seriesSRFCall(args []plan.Expr, loc int32) (plan.Expr, error) {
	rows, err := ec.seriesArray(args, loc)
	if err != nil {
		return nil, err
	}
	return ec.srfCall(unnestName, []plan.Expr{rows}, loc)
}
