package sql

import (
	"errors"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// jsonbFunc binds the jsonb functions whose arguments are polymorphic or
// variadic: to_jsonb(anyelement), jsonb_build_object(VARIADIC "any"),
// jsonb_build_array(VARIADIC "any") and jsonb_extract_path[_text](jsonb,
// VARIADIC text[]). Untyped literals among "any" arguments are text, as
// in PostgreSQL.
func (ec *exprCtx) jsonbFunc(display, name string, args []plan.Expr, loc int32) (plan.Expr, error) {
	jsonb := types.Of(types.Jsonb)
	switch name {
	case "to_jsonb":
		if len(args) != 1 {
			return nil, undefinedFunction(display, args, loc)
		}
		if args[0].Type().ID == types.Unknown {
			return nil, posErr(errs.New(errs.DatatypeMismatch, "could not determine polymorphic type because input has type unknown"), loc)
		}
		return &plan.Func{Name: name, Args: args, Typ: jsonb, Fn: types.ToJSONBFuncZone(ec.st.b.Zone)}, nil
	case "jsonb_build_object", "jsonb_build_array", jsonbObjectAggPair:
		out := make([]plan.Expr, len(args))
		for i, a := range args {
			out[i] = ec.resolveUnknown(a)
		}
		fn := types.JSONBBuildArrayZone(ec.st.b.Zone)
		switch name {
		case "jsonb_build_object":
			fn = types.JSONBBuildObjectZone(ec.st.b.Zone)
		case jsonbObjectAggPair:
			fn = types.JSONBObjectAggPairZone(ec.st.b.Zone)
		}
		return &plan.Func{Name: name, Args: out, Typ: jsonb, NonStrict: true, Fn: fn}, nil
	}
	// jsonb_extract_path, jsonb_extract_path_text
	if len(args) < 2 {
		return nil, undefinedFunction(display, args, loc)
	}
	out := make([]plan.Expr, len(args))
	for i, a := range args {
		want := types.Of(types.Text)
		if i == 0 {
			want = jsonb
		}
		c, err := ec.coerce(a, want, implicitCoercion)
		if errors.Is(err, errNoCast) {
			return nil, undefinedFunction(display, args, loc)
		}
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	typ := jsonb
	if name == "jsonb_extract_path_text" {
		typ = types.Of(types.Text)
	}
	return &plan.Func{Name: name, Args: out, Typ: typ, NonStrict: true,
		Fn: types.JSONBExtractPath(name == "jsonb_extract_path_text")}, nil
}

// jsonbSetFuncs maps jsonb's set-returning functions to the functions
// returning their rows as an array, which unnest then flattens.
var jsonbSetFuncs = map[string]string{
	"jsonb_array_elements":      types.JSONBArrayElementsArray,
	"jsonb_array_elements_text": types.JSONBArrayElementsTextArray,
	"jsonb_object_keys":         types.JSONBObjectKeysArray,
	"json_array_elements":       types.JSONArrayElementsArray,
	"json_array_elements_text":  types.JSONArrayElementsTextArray,
	"json_object_keys":          types.JSONObjectKeysArray,
}

// isJSONBSetFunc reports whether name is one of jsonb's set-returning
// functions that bind as unnest.
func isJSONBSetFunc(name string) bool { _, ok := jsonbSetFuncs[name]; return ok }

// jsonbSetColumn is the column name of a jsonb set-returning function in
// FROM when its OUT parameter names it ("value"), or "" when the function's
// column takes the alias, as a scalar function's does.
func jsonbSetColumn(name string) string {
	if name == "jsonb_object_keys" || name == "json_object_keys" {
		return ""
	}
	return "value"
}

// jsonbSetArray binds a call of one of jsonb's set-returning functions as
// the array of its rows.
func (ec *exprCtx) jsonbSetArray(name string, args []plan.Expr, loc int32) (plan.Expr, error) {
	if len(args) != 1 {
		return nil, undefinedFunction(name, args, loc)
	}
	argType := types.Of(types.Jsonb)
	if strings.HasPrefix(name, "json_") {
		argType = types.Of(types.Json)
	}
	a, err := ec.coerce(args[0], argType, implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, undefinedFunction(name, args, loc)
	}
	if err != nil {
		return nil, err
	}
	f, err := types.ResolveFunction(name, jsonbSetFuncs[name], []types.Type{argType})
	if err != nil {
		return nil, posErr(err, loc)
	}
	return &plan.Func{Name: name, Args: []plan.Expr{a}, Typ: f.Result, Fn: f.Eval}, nil
}

// jsonb's operators (@>, <@, ||, - and the comparisons are shared with
// other types), and the JSON functions that fail with 0A000 rather than
// "does not exist": the two-column set-returning functions, the
// aggregates, the json type's functions and the SQL/JSON path language.
func init() {
	for _, op := range []string{"->", "->>", "#>", "#>>", "?", "?|", "?&", "#-"} {
		operatorNames[op] = true
	}
	aggregateNames["jsonb_agg"] = true
	aggregateNames["jsonb_object_agg"] = true
	for _, fn := range []string{"jsonb_each", "jsonb_each_text",
		"jsonb_to_record", "jsonb_to_recordset", "jsonb_populate_record", "jsonb_populate_recordset",
		"jsonb_object", "jsonb_path_query", "jsonb_path_exists", "jsonb_path_match", "jsonb_path_query_array",
		"jsonb_path_query_first", "jsonb_set_lax",
		"array_to_json", "json_strip_nulls", "json_each", "json_each_text"} {
		knownFunctions[fn] = true
	}
}

// jsonbEach is jsonb_each(object) or jsonb_each_text(object) in FROM: an
// unnest of the object's keys, then a projection that adds each key's
// value (object -> key, or ->> for jsonb_each_text).
type jsonbEach struct {
	object plan.Expr // over the row of the FROM items to its left
	arrow  *types.Operator
}

func (e *jsonbEach) valueType() types.Type { return e.arrow.Result }

// jsonbEachArgs binds jsonb_each's argument and returns the keys array to
// unnest.
func (ec *exprCtx) jsonbEachArgs(fn string, args []plan.Expr, loc int32) (*jsonbEach, []plan.Expr, error) {
	if len(args) != 1 {
		return nil, nil, undefinedFunction(fn, args, loc)
	}
	obj, err := ec.coerce(args[0], types.Of(types.Jsonb), implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, nil, undefinedFunction(fn, args, loc)
	}
	if err != nil {
		return nil, nil, err
	}
	op := "->"
	if fn == "jsonb_each_text" {
		op = "->>"
	}
	arrow, err := types.ResolveBinary(op, types.Of(types.Jsonb), types.Of(types.Text))
	if err != nil {
		return nil, nil, posErr(err, loc)
	}
	f, err := types.ResolveFunction(fn, types.JSONBEachKeysArray, []types.Type{types.Of(types.Jsonb)})
	if err != nil {
		return nil, nil, posErr(err, loc)
	}
	keys := &plan.Func{Name: fn, Args: []plan.Expr{obj}, Typ: f.Result, Fn: f.Eval}
	return &jsonbEach{object: obj, arrow: arrow}, []plan.Expr{keys}, nil
}

// plan makes u emit the input columns, the key and the ordinality, and
// projects them into the FROM item's columns: key, value[, ordinality].
// object is e.object over u's input row, which u's row begins with.
func (e *jsonbEach) plan(u *plan.Unnest, object plan.Expr, inCols, cols []plan.Column) plan.Node {
	n := len(inCols)
	ucols := append(append([]plan.Column(nil), inCols...), cols[0])
	if u.WithOrdinality {
		ucols = append(ucols, cols[2])
	}
	u.Cols = ucols
	exprs := make([]plan.Expr, 0, n+len(cols))
	for i, c := range ucols[:n+1] {
		exprs = append(exprs, &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type})
	}
	key := &plan.ColRef{Index: n, Name: cols[0].Name, Typ: cols[0].Type}
	exprs = append(exprs, &plan.BinOp{Op: e.arrow, Left: object, Right: key})
	if u.WithOrdinality {
		exprs = append(exprs, &plan.ColRef{Index: n + 1, Name: cols[2].Name, Typ: cols[2].Type})
	}
	return &plan.Project{Input: u, Exprs: exprs, Cols: append(append([]plan.Column(nil), inCols...), cols...)}
}

// jsonbObjectAggPair is the name of the call that makes one pair of
// jsonb_object_agg: jsonb_build_object(key, value) with the aggregate's
// error for a NULL key. No SQL identifier can hold it.
const jsonbObjectAggPair = "jsonb_object_agg\x00pair"

// jsonbAgg binds jsonb_agg(x) as the jsonb array of array_agg(to_jsonb(x))
// and jsonb_object_agg(k, v) as the merge of array_agg of its pairs (the
// last of duplicate keys winning), with the call's ORDER BY and FILTER:
// the array aggregate is maintained, and the conversion applies to its
// result. DISTINCT is not supported (array_agg would compare the jsonb
// conversions, whose order is not the argument type's).
func (ec *exprCtx) jsonbAgg(f *pg.FuncCall, name string) (plan.Expr, error) {
	if name == "jsonb_object_agg" {
		return ec.viaArrayAgg(f, name, 2, jsonbObjectAggPair, false, types.Of(types.Jsonb), types.JSONBMergeObjects)
	}
	return ec.viaArrayAgg(f, name, 1, "to_jsonb", false, types.Of(types.Jsonb), types.ToJSONBFunc)
}

// viaArrayAgg binds aggregate name, of want arguments, as fn of
// array_agg(inner(arguments)) (of that call's text when asText), with the
// call's ORDER BY and FILTER: the array aggregate is maintained, and fn
// makes the result, of type typ, from its array.
func (ec *exprCtx) viaArrayAgg(f *pg.FuncCall, name string, want int, inner string, asText bool, typ types.Type, fn func([]types.Value) (types.Value, error)) (plan.Expr, error) {
	if f.AggDistinct {
		return nil, notSupported(f.Location, "DISTINCT is not supported in %s()", name)
	}
	if f.AggStar {
		return nil, posErr(errs.Newf(errs.UndefinedFunction, "function %s(*) does not exist", name), f.Location)
	}
	if len(f.Args) != want {
		args := make([]plan.Expr, 0, len(f.Args))
		for _, a := range f.Args {
			e, err := ec.in(kindAggArg, nil).bind(a)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		return nil, undefinedFunction(name, args, f.Location)
	}
	arg := pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode(inner)}, f.Args, f.Location)
	if asText {
		arg = &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: arg,
			TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("text")}, Typemod: -1}, Location: -1}}}
	}
	g := &pg.FuncCall{Funcname: []*pg.Node{pg.MakeStrNode("array_agg")}, Args: []*pg.Node{arg},
		AggOrder: f.AggOrder, AggFilter: f.AggFilter, Funcformat: f.Funcformat, Location: f.Location}
	ref, err := ec.aggregate(g, "array_agg")
	if err != nil {
		return nil, err
	}
	return &plan.Func{Name: name, Args: []plan.Expr{ref}, Typ: typ, Fn: fn}, nil
}

// jsonFunc binds json's builders: to_json(anyelement),
// json_build_object(VARIADIC "any") and json_build_array(VARIADIC "any").
// The functions are told which arguments are json, whose text they embed
// as it is.
func (ec *exprCtx) jsonFunc(display, name string, args []plan.Expr, loc int32) (plan.Expr, error) {
	if name == "json_extract_path" || name == "json_extract_path_text" {
		return ec.jsonExtractPath(display, name, args, loc)
	}
	out := make([]plan.Expr, len(args))
	raw := make([]bool, len(args))
	for i, a := range args {
		if name == "to_json" && a.Type().ID == types.Unknown {
			return nil, posErr(errs.New(errs.DatatypeMismatch, "could not determine polymorphic type because input has type unknown"), loc)
		}
		out[i] = ec.resolveUnknown(a)
		raw[i] = out[i].Type().ID == types.Json
	}
	json := types.Of(types.Json)
	switch name {
	case "to_json":
		if len(args) != 1 {
			return nil, undefinedFunction(display, args, loc)
		}
		return &plan.Func{Name: name, Args: out, Typ: json, Fn: types.ToJSONFunc(raw[0], ec.st.b.Zone)}, nil
	case "json_build_object":
		return &plan.Func{Name: name, Args: out, Typ: json, NonStrict: true, Fn: types.JSONBuildObjectFunc(raw, ec.st.b.Zone)}, nil
	}
	return &plan.Func{Name: name, Args: out, Typ: json, NonStrict: true, Fn: types.JSONBuildArrayFunc(raw, ec.st.b.Zone)}, nil
}
