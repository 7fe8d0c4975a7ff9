package sql

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// This file binds calls of the scalar function catalog (internal/types,
// funcs*.go): overloads are resolved as PostgreSQL resolves them, and the
// arguments are converted to the chosen overload's argument types. The
// special syntax of SQL (SUBSTRING(x FROM a FOR b), TRIM(BOTH c FROM x),
// POSITION(a IN b), EXTRACT(f FROM x), OVERLAY(...)) reaches here as the
// pg_catalog function calls PostgreSQL's parser turns it into.

// namedArgFunctions lists the functions whose parameters have names, in
// order, with the default of each (nil: no default), so that calls may
// name their arguments and leave out those with defaults.
var namedArgFunctions = map[string][]struct {
	name string
	def  types.Value
	typ  types.TypeID
}{
	"make_interval": {
		{"years", types.MakeInt(types.Int4, 0), types.Int4},
		{"months", types.MakeInt(types.Int4, 0), types.Int4},
		{"weeks", types.MakeInt(types.Int4, 0), types.Int4},
		{"days", types.MakeInt(types.Int4, 0), types.Int4},
		{"hours", types.MakeInt(types.Int4, 0), types.Int4},
		{"mins", types.MakeInt(types.Int4, 0), types.Int4},
		{"secs", types.MakeFloat8(0), types.Float8},
	},
}

// funcArgs binds a call's arguments. Named arguments (name => value) are
// placed at their parameter's position, and parameters left out take
// their defaults, for the functions that have named parameters.
func (ec *exprCtx) funcArgs(f *pg.FuncCall, name string) ([]plan.Expr, error) {
	params, named := namedArgFunctions[name]
	var args []plan.Expr
	var names []string
	for _, a := range f.Args {
		if na := a.GetNamedArgExpr(); na != nil {
			if !named && !ec.hasNamedSQLFunction(f) {
				return nil, notSupported(f.Location, "named function arguments are not supported for %s()", name)
			}
			e, err := ec.bind(na.Arg)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
			names = append(names, na.Name)
			continue
		}
		e, err := ec.bind(a)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
		names = append(names, "")
	}
	if !named && hasName(names) {
		return ec.placeSQLFunctionArgs(f, name, args, names)
	}
	if !named || len(args) == len(params) && !hasName(names) {
		return args, nil
	}
	// Place the arguments by name, then fill in the defaults.
	out := make([]plan.Expr, len(params))
	for i, e := range args {
		pos := i
		if names[i] != "" {
			pos = -1
			for k, p := range params {
				if p.name == names[i] {
					pos = k
				}
			}
		}
		if pos < 0 || pos >= len(params) || out[pos] != nil {
			return nil, posErr(errs.Newf(errs.UndefinedFunction, "function %s(%s) does not exist",
				name, argSignature(args, names)), f.Location)
		}
		out[pos] = e
	}
	for k, p := range params {
		if out[k] == nil {
			out[k] = &plan.Const{Val: p.def, Typ: types.Of(p.typ)}
		}
	}
	return out, nil
}

func hasName(names []string) bool {
	for _, n := range names {
		if n != "" {
			return true
		}
	}
	return false
}

// argSignature renders argument types as PostgreSQL's messages do, with
// "name => type" for named arguments.
func argSignature(args []plan.Expr, names []string) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += ", "
		}
		if names[i] != "" {
			s += names[i] + " => "
		}
		s += a.Type().ID.String()
	}
	return s
}

// catalogFunc binds a call of a function of the catalog. ok is false when
// name is not one of its functions.
func (ec *exprCtx) catalogFunc(display, name string, args []plan.Expr, loc int32) (plan.Expr, bool, error) {
	switch name {
	case "concat", "concat_ws":
		e, err := ec.concat(display, name, args, loc)
		return e, true, err
	case "format":
		e, err := ec.format(display, args, loc)
		return e, true, err
	case "quote_literal", "quote_nullable":
		// quote_literal(anyelement) and quote_nullable(anyelement) quote
		// the argument's text.
		if len(args) == 1 && args[0].Type().ID != types.Text && args[0].Type().ID != types.Unknown {
			a, err := ec.coerce(args[0], types.Of(types.Text), explicitCoercion)
			if errors.Is(err, errNoCast) {
				return nil, true, undefinedFunction(display, args, loc)
			}
			if err != nil {
				return nil, true, err
			}
			args = []plan.Expr{a}
		}
	case "pg_typeof":
		// pg_typeof("any") is the argument's type, known when binding:
		// a regtype constant printed as format_type prints the type
		// without modifiers (a literal or NULL without a type is
		// unknown).
		if len(args) != 1 {
			return nil, true, undefinedFunction(display, args, loc)
		}
		t := args[0].Type()
		return &plan.Const{Val: types.MakeReg(types.RegType, t.OID(), t.ID.String()), Typ: types.Of(types.RegType)}, true, nil
	case "to_jsonb", "jsonb_build_object", "jsonb_build_array", "jsonb_extract_path", "jsonb_extract_path_text", jsonbObjectAggPair:
		e, err := ec.jsonbFunc(display, name, args, loc)
		return e, true, err
	case "to_json", "json_build_object", "json_build_array", "json_extract_path", "json_extract_path_text":
		e, err := ec.jsonFunc(display, name, args, loc)
		return e, true, err
	case jsonObjectAggPair:
		return ec.jsonObjectAggMember(args), true, nil
	}
	if !types.IsFunction(name) {
		return nil, false, nil
	}
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	f, err := types.ResolveFunction(display, name, ts)
	if err != nil {
		return nil, true, posErr(err, loc)
	}
	f = f.InZone(ec.st.b.Zone)
	out := make([]plan.Expr, len(args))
	for i, a := range args {
		c, err := ec.coerce(a, f.Args[i], implicitCoercion)
		if errors.Is(err, errNoCast) {
			return nil, true, undefinedFunction(display, args, loc)
		}
		if err != nil {
			return nil, true, err
		}
		out[i] = c
	}
	if err := ec.atZoneCurrentDate(name, f, out, loc); err != nil {
		return nil, true, err
	}
	call := &plan.Func{Name: name, Args: out, Typ: f.Result, NonStrict: f.NonStrict, Fn: f.Eval}
	if err := types.RegexCallRefusal(f, constArgs(out)); err != nil {
		return nil, true, posErr(err, loc)
	}
	if f.Immutable {
		return foldConstant(call), true, nil
	}
	return call, true, nil
}

// atZoneCurrentDate checks timezone(text, timetz) (timetz AT TIME ZONE
// text), which takes a region's offset on the current date: with the
// statement's clock it reads the clock (so that what binds it is bound
// again at each statement's); without one (a view's query) it is refused
// unless the zone is a constant whose offset does not depend on the
// date, as PostgreSQL marks the function not immutable.
func (ec *exprCtx) atZoneCurrentDate(name string, f *types.Function, args []plan.Expr, loc int32) error {
	if name != "timezone" || len(args) != 2 || f.Result.ID != types.TimeTZ || f.Args[0].ID != types.Text {
		return nil
	}
	if k, ok := args[0].(*plan.Const); ok && (k.Val.IsNull() || !types.AtZoneReadsCurrentDate(k.Val.Str())) {
		return nil
	}
	if ec.st.b.Zone.Dated() {
		ec.st.b.UsedClock = true
		return nil
	}
	return notSupported(loc, "time with time zone AT TIME ZONE a zone that is not a constant with a fixed offset is not supported in a view: it takes the offset the zone has on the current date (daylight saving time), so the view would depend on when it is computed; write an offset (AT TIME ZONE '+02', INTERVAL '2 hours') or a fixed zone")
}

// constArgs returns the values of the constant arguments (nil for the
// others).
func constArgs(args []plan.Expr) []*types.Value {
	out := make([]*types.Value, len(args))
	for i, a := range args {
		if c, ok := a.(*plan.Const); ok {
			out[i] = &c.Val
		}
	}
	return out
}

// foldConstant computes a call of an immutable function over constants
// once, at bind time, as PostgreSQL's planner does (like_escape of a
// constant pattern, for instance). A call that fails is left as it is, so
// that its error is raised where PostgreSQL raises it: when a row
// evaluates it.
func foldConstant(f *plan.Func) plan.Expr {
	for _, a := range f.Args {
		if _, ok := a.(*plan.Const); !ok {
			return f
		}
	}
	v, err := f.Eval(nil)
	if err != nil {
		return f
	}
	return &plan.Const{Val: v, Typ: f.Typ}
}

// format binds format(formatstr, args...), whose arguments after the
// format string may have any type: %s shows each as its type's output
// function writes it. Like PostgreSQL's, it is stable, so it is not
// computed when binding.
func (ec *exprCtx) format(display string, args []plan.Expr, loc int32) (plan.Expr, error) {
	if len(args) < 1 {
		return nil, undefinedFunction(display, args, loc)
	}
	out := make([]plan.Expr, len(args))
	ts := make([]types.Type, len(args))
	for i, a := range args {
		out[i] = ec.resolveUnknown(a)
		if i == 0 {
			f, err := ec.coerce(a, types.Of(types.Text), implicitCoercion)
			if errors.Is(err, errNoCast) {
				return nil, undefinedFunction(display, args, loc)
			}
			if err != nil {
				return nil, err
			}
			out[0] = f
		}
		ts[i] = out[i].Type()
	}
	return &plan.Func{Name: "format", Args: out, Typ: types.Of(types.Text), NonStrict: true, Fn: types.TextFormatZone(ts, ec.st.b.Zone)}, nil
}

// variadicFormat binds format(formatstr, VARIADIC array): the array's
// elements are the arguments (none when it is NULL).
func (ec *exprCtx) variadicFormat(display string, args []plan.Expr, loc int32) (plan.Expr, error) {
	if len(args) != 2 {
		return nil, undefinedFunction(display, args, loc)
	}
	arr := args[1]
	if !arr.Type().ID.IsArray() {
		return nil, posErr(errs.New(errs.DatatypeMismatch, "VARIADIC argument must be an array"), loc)
	}
	f, err := ec.coerce(args[0], types.Of(types.Text), implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, undefinedFunction(display, args, loc)
	}
	if err != nil {
		return nil, err
	}
	elem := arr.Type().Elem()
	zone := ec.st.b.Zone
	return &plan.Func{Name: "format", Args: []plan.Expr{f, arr}, Typ: types.Of(types.Text), NonStrict: true,
		Fn: func(a []types.Value) (types.Value, error) {
			vals := []types.Value{a[0]}
			ts := []types.Type{types.Of(types.Text)}
			if !a[1].IsNull() {
				for _, e := range a[1].Elems() {
					vals = append(vals, e)
					ts = append(ts, elem)
				}
			}
			return types.TextFormatZone(ts, zone)(vals)
		}}, nil
}

// concat binds concat(...) and concat_ws(sep, ...), whose arguments after
// the separator may have any type: each is shown as its type's output
// function writes it. NULL arguments are skipped.
func (ec *exprCtx) concat(display, name string, args []plan.Expr, loc int32) (plan.Expr, error) {
	min := 1
	if name == "concat_ws" {
		min = 2
	}
	if len(args) < min {
		return nil, undefinedFunction(display, args, loc)
	}
	out := make([]plan.Expr, len(args))
	for i, a := range args {
		out[i] = ec.resolveUnknown(a)
	}
	fn := types.ConcatZone(ec.st.b.Zone)
	if name == "concat_ws" {
		sep, err := ec.coerce(args[0], types.Of(types.Text), implicitCoercion)
		if errors.Is(err, errNoCast) {
			return nil, undefinedFunction(display, args, loc)
		}
		if err != nil {
			return nil, err
		}
		out[0] = sep
		fn = types.ConcatWSZone(ec.st.b.Zone)
	}
	return &plan.Func{Name: name, Args: out, Typ: types.Of(types.Text), NonStrict: true, Fn: fn}, nil
}
