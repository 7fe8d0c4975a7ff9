package sql

import (
	"errors"
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// jsonObjectAggPair is the name of the call that makes one member of
// json_object_agg: "key" : value, as text. No SQL identifier can hold it.
const jsonObjectAggPair = "json_object_agg\x00pair"

func init() {
	aggregateNames["json_agg"] = true
	aggregateNames["json_object_agg"] = true
	delete(aggregateRejections, "json_agg")
	delete(aggregateRejections, "json_object_agg")
}

// jsonAgg binds json_agg(x) as the json array of array_agg(to_json(x)::text)
// and json_object_agg(k, v) as the json object of array_agg of its
// members' texts, with the call's ORDER BY and FILTER, as jsonbAgg does
// for jsonb: the array aggregate is maintained, and the result is made
// from it. json keeps every member, duplicate keys included.
func (ec *exprCtx) jsonAgg(f *pg.FuncCall, name string) (plan.Expr, error) {
	if name == "json_object_agg" {
		return ec.viaArrayAgg(f, name, 2, jsonObjectAggPair, false, types.Of(types.Json), types.JSONObjectOfMembers)
	}
	return ec.viaArrayAgg(f, name, 1, "to_json", true, types.Of(types.Json), types.JSONArrayOfTexts)
}

// jsonExtractPath binds json_extract_path[_text](json, VARIADIC text[]).
func (ec *exprCtx) jsonExtractPath(display, name string, args []plan.Expr, loc int32) (plan.Expr, error) {
	if len(args) < 2 {
		return nil, undefinedFunction(display, args, loc)
	}
	out := make([]plan.Expr, len(args))
	for i, a := range args {
		want := types.Of(types.Text)
		if i == 0 {
			want = types.Of(types.Json)
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
	typ := types.Of(types.Json)
	if name == "json_extract_path_text" {
		typ = types.Of(types.Text)
	}
	return &plan.Func{Name: name, Args: out, Typ: typ, NonStrict: true,
		Fn: types.JSONExtractPath(name == "json_extract_path_text")}, nil
}

// jsonObjectAggMember binds one member of json_object_agg.
func (ec *exprCtx) jsonObjectAggMember(args []plan.Expr) plan.Expr {
	out := make([]plan.Expr, len(args))
	raw := make([]bool, len(args))
	for i, a := range args {
		out[i] = ec.resolveUnknown(a)
		raw[i] = out[i].Type().ID == types.Json
	}
	return &plan.Func{Name: jsonObjectAggPair, Args: out, Typ: types.Of(types.Text), NonStrict: true,
		Fn: types.JSONObjectMember(raw, ec.st.b.Zone)}
}

// jsonEach is json_each(object) or json_each_text(object) in FROM: an
// unnest of the object's members as ["key", value] pairs (every member,
// duplicate keys included, the value as written), then a projection that
// splits each pair into key (pair ->> 0) and value (pair -> 1, or ->> 1
// for json_each_text).
type jsonEach struct {
	text     *types.Operator // json ->> int
	value    *types.Operator // json -> int or ->> int
	valueTyp types.Type
}

// jsonEachArgs binds json_each's argument as the array of its pairs.
func (ec *exprCtx) jsonEachArgs(fn string, args []plan.Expr, loc int32) (*jsonEach, []plan.Expr, error) {
	if len(args) != 1 {
		return nil, nil, undefinedFunction(fn, args, loc)
	}
	obj, err := ec.coerce(args[0], types.Of(types.Json), implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, nil, undefinedFunction(fn, args, loc)
	}
	if err != nil {
		return nil, nil, err
	}
	e := &jsonEach{}
	if e.text, err = types.ResolveBinary("->>", types.Of(types.Json), types.Of(types.Int4)); err != nil {
		return nil, nil, posErr(err, loc)
	}
	e.value, e.valueTyp = e.text, types.Of(types.Text)
	if fn == "json_each" {
		if e.value, err = types.ResolveBinary("->", types.Of(types.Json), types.Of(types.Int4)); err != nil {
			return nil, nil, posErr(err, loc)
		}
		e.valueTyp = types.Of(types.Json)
	}
	f, err := types.ResolveFunction(fn, types.JSONEachPairsArray, []types.Type{types.Of(types.Json)})
	if err != nil {
		return nil, nil, posErr(err, loc)
	}
	return e, []plan.Expr{&plan.Func{Name: fn, Args: []plan.Expr{obj}, Typ: f.Result, Fn: f.Eval}}, nil
}

// plan makes u emit the input columns, the pair and the ordinality, and
// projects them into the FROM item's columns: key, value[, ordinality].
func (e *jsonEach) plan(u *plan.Unnest, inCols, cols []plan.Column) plan.Node {
	n := len(inCols)
	pair := plan.Column{Name: "pair", Type: types.Of(types.Json)}
	u.Cols = append(append([]plan.Column(nil), inCols...), pair)
	if u.WithOrdinality {
		u.Cols = append(u.Cols, cols[2])
	}
	exprs := make([]plan.Expr, 0, n+len(cols))
	for i, c := range inCols {
		exprs = append(exprs, &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type})
	}
	p := &plan.ColRef{Index: n, Name: pair.Name, Typ: pair.Type}
	at := func(i int64) plan.Expr {
		return &plan.Const{Val: types.MakeInt(types.Int4, i), Typ: types.Of(types.Int4)}
	}
	exprs = append(exprs, &plan.BinOp{Op: e.text, Left: p, Right: at(0)}, &plan.BinOp{Op: e.value, Left: p, Right: at(1)})
	if u.WithOrdinality {
		exprs = append(exprs, &plan.ColRef{Index: n + 1, Name: cols[2].Name, Typ: cols[2].Type})
	}
	return &plan.Project{Input: u, Exprs: exprs, Cols: append(append([]plan.Column(nil), inCols...), cols...)}
}

// rowToJSON binds row_to_json(ROW(...) [, pretty]): the row's fields are
// f1, f2, ... A whole-row reference (row_to_json(t)) is not supported: a
// row of an outer join's padded side is NULL there, not a row of NULLs,
// which the engine's rows cannot tell apart.
func (ec *exprCtx) rowToJSON(f *pg.FuncCall) (plan.Expr, error) {
	if len(f.Args) < 1 || len(f.Args) > 2 {
		return nil, posErr(errs.New(errs.UndefinedFunction, "function row_to_json does not exist"), f.Location)
	}
	fields, ok, err := ec.rowFields(f.Args[0])
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notSupported(f.Location, "row_to_json is supported for ROW(...) only, not for a whole-row reference or a record value")
	}
	names := make([]string, len(fields))
	raw := make([]bool, len(fields))
	args := make([]plan.Expr, 0, len(fields)+1)
	for i, e := range fields {
		e = ec.resolveUnknown(e)
		names[i] = "f" + strconv.Itoa(i+1)
		raw[i] = e.Type().ID == types.Json
		args = append(args, e)
	}
	if len(f.Args) == 2 {
		p, err := ec.bind(f.Args[1])
		if err != nil {
			return nil, err
		}
		if p, err = ec.coerce(p, types.Of(types.Bool), implicitCoercion); err != nil {
			return nil, posErr(errs.New(errs.UndefinedFunction, "function row_to_json(record, "+p.Type().String()+") does not exist"), f.Location)
		}
		args = append(args, p)
	}
	return &plan.Func{Name: "row_to_json", Args: args, Typ: types.Of(types.Json), NonStrict: true,
		Fn: types.RowToJSONFunc(names, raw, ec.st.b.Zone)}, nil
}
