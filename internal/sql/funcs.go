package sql

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// aggregateNames are the aggregates the engine maintains (every is
// bool_and under its standard name).
var aggregateNames = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true,
}

// otherAggregates are PostgreSQL aggregates the engine does not maintain
// yet.
var otherAggregates = map[string]bool{
	"array_agg": true, "string_agg": true, "json_agg": true, "jsonb_agg": true,
	"json_object_agg": true, "jsonb_object_agg": true, "xmlagg": true,
	"stddev": true, "stddev_pop": true, "stddev_samp": true,
	"variance": true, "var_pop": true, "var_samp": true,
	"bit_and": true, "bit_or": true, "bit_xor": true,
	"corr": true, "covar_pop": true, "covar_samp": true,
	"regr_avgx": true, "regr_avgy": true, "regr_count": true, "regr_intercept": true,
	"regr_r2": true, "regr_slope": true, "regr_sxx": true, "regr_sxy": true, "regr_syy": true,
	"percentile_cont": true, "percentile_disc": true, "mode": true,
	"any_value": true, "range_agg": true, "range_intersect_agg": true,
}

// windowFunctions are PostgreSQL's window-only functions.
var windowFunctions = map[string]bool{
	"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true,
	"cume_dist": true, "ntile": true, "lag": true, "lead": true,
	"first_value": true, "last_value": true, "nth_value": true,
}

// volatileFunctions are functions whose result depends on when or where
// they are evaluated; a maintained view cannot contain them.
var volatileFunctions = map[string]bool{
	"now": true, "clock_timestamp": true, "statement_timestamp": true,
	"transaction_timestamp": true, "timeofday": true,
	"random": true, "random_normal": true, "setseed": true,
	"nextval": true, "currval": true, "lastval": true, "setval": true,
	"gen_random_uuid": true, "uuid_generate_v1": true, "uuid_generate_v4": true,
	"txid_current": true, "pg_current_xact_id": true, "pg_backend_pid": true,
	"current_setting": true, "set_config": true, "pg_sleep": true,
	"inet_client_addr": true, "version": true, "current_database": true,
}

// knownFunctions are PostgreSQL functions the engine does not implement
// yet; calling one fails with 0A000 rather than "does not exist".
var knownFunctions = map[string]bool{
	"round": true, "trunc": true, "ceil": true, "ceiling": true, "floor": true,
	"sign": true, "sqrt": true, "cbrt": true, "power": true, "pow": true,
	"exp": true, "ln": true, "log": true, "log10": true, "mod": true, "div": true,
	"width_bucket": true, "scale": true, "gcd": true, "lcm": true,
	"sin": true, "cos": true, "tan": true, "pi": true, "degrees": true, "radians": true,
	"substr": true, "substring": true, "position": true, "strpos": true,
	"trim": true, "btrim": true, "ltrim": true, "rtrim": true, "lpad": true, "rpad": true,
	"replace": true, "concat": true, "concat_ws": true, "left": true, "right": true,
	"repeat": true, "reverse": true, "split_part": true, "initcap": true,
	"octet_length": true, "bit_length": true, "md5": true, "sha256": true,
	"to_char": true, "to_number": true, "to_date": true, "to_timestamp": true,
	"format": true, "regexp_replace": true, "regexp_match": true, "regexp_matches": true,
	"starts_with": true, "ascii": true, "chr": true, "encode": true, "decode": true,
	"date_trunc": true, "date_part": true, "extract": true, "date_bin": true,
	"age": true, "make_date": true, "make_timestamp": true, "make_interval": true,
	"justify_days": true, "justify_hours": true, "justify_interval": true,
	"isfinite": true, "timezone": true, "generate_series": true, "unnest": true,
	"array_length": true, "cardinality": true,
	"json_build_object": true, "jsonb_build_object": true, "to_json": true, "to_jsonb": true,
	"tumble": true, "hop": true,
}

// funcName splits a function name into schema and name.
func funcName(names []*pg.Node) (schema, name string) {
	var parts []string
	for _, n := range names {
		parts = append(parts, n.GetString_().GetSval())
	}
	if len(parts) == 0 {
		return "", ""
	}
	name = parts[len(parts)-1]
	if len(parts) > 1 {
		schema = strings.Join(parts[:len(parts)-1], ".")
	}
	return schema, name
}

// funcCall binds a function call: an aggregate, a supported scalar
// function, or a clear error.
func (ec *exprCtx) funcCall(f *pg.FuncCall) (plan.Expr, error) {
	schema, name := funcName(f.Funcname)
	display := name
	if schema != "" {
		display = schema + "." + name
	}
	if f.Over != nil {
		return ec.windowCall(f, schema, name)
	}
	if schema == "" || schema == "pg_catalog" {
		switch {
		case aggregateNames[name]:
			return ec.aggregate(f, name)
		case windowFunctions[name]:
			return nil, posErr(errs.Newf(errs.WrongObjectType, "window function %s requires an OVER clause", name), f.Location)
		case otherAggregates[name]:
			return nil, notSupported(f.Location, "aggregate function %s() is not supported yet", name)
		case volatileFunctions[name]:
			return nil, notSupported(f.Location, "function %s() is not allowed in a materialized view: it is not deterministic", name)
		}
	}
	for _, c := range []struct {
		set  bool
		what string
	}{
		{f.AggStar, display + "(*)"},
		{f.AggDistinct, "DISTINCT"},
		{f.AggFilter != nil, "FILTER"},
		{len(f.AggOrder) > 0, "ORDER BY"},
		{f.AggWithinGroup, "WITHIN GROUP"},
	} {
		if c.set {
			return nil, posErr(errs.Newf(errs.WrongObjectType,
				"%s specified, but %s is not an aggregate function", c.what, display), f.Location)
		}
	}
	if f.FuncVariadic {
		return nil, notSupported(f.Location, "VARIADIC is not supported yet")
	}
	args := make([]plan.Expr, len(f.Args))
	for i, a := range f.Args {
		if a.GetNamedArgExpr() != nil {
			return nil, notSupported(f.Location, "named function arguments are not supported yet")
		}
		e, err := ec.bind(a)
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	if schema == "" || schema == "pg_catalog" {
		if e, ok, err := ec.scalarFunc(name, args, f.Location); ok || err != nil {
			return e, err
		}
		if knownFunctions[name] {
			return nil, notSupported(f.Location, "function %s() is not supported yet", name)
		}
	}
	return nil, undefinedFunction(display, args, f.Location)
}

func undefinedFunction(name string, args []plan.Expr, loc int32) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	return posErr(errs.Newf(errs.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")), loc)
}

// scalarFunc binds the few scalar functions implemented here. ok is false
// when name is not one of them or no variant takes these arguments.
func (ec *exprCtx) scalarFunc(name string, args []plan.Expr, loc int32) (plan.Expr, bool, error) {
	one := func(want types.TypeID) (plan.Expr, error) {
		if len(args) != 1 {
			return nil, undefinedFunction(name, args, loc)
		}
		return ec.coerce(args[0], types.Of(want), implicitCoercion)
	}
	switch name {
	case "abs":
		if len(args) != 1 {
			return nil, false, undefinedFunction(name, args, loc)
		}
		a := args[0]
		switch a.Type().ID {
		case types.Unknown:
			// abs('1') resolves to the preferred numeric type.
			var err error
			if a, err = ec.coerce(a, types.Of(types.Float8), implicitCoercion); err != nil {
				return nil, false, err
			}
		case types.Int2, types.Int4, types.Int8, types.Numeric, types.Float4, types.Float8:
		default:
			return nil, false, undefinedFunction(name, args, loc)
		}
		t := types.Of(a.Type().ID)
		return &plan.Func{Name: "abs", Args: []plan.Expr{a}, Typ: t, Fn: absFn(t.ID)}, true, nil
	case "length", "char_length", "character_length":
		if len(args) == 1 && args[0].Type().ID == types.Bytea && name == "length" {
			return &plan.Func{Name: name, Args: args, Typ: types.Of(types.Int4), Fn: byteLength}, true, nil
		}
		if len(args) != 1 || !isText(args[0].Type().ID) {
			return nil, false, undefinedFunction(name, args, loc)
		}
		a, err := one(types.Text)
		if err != nil {
			return nil, false, err
		}
		return &plan.Func{Name: name, Args: []plan.Expr{a}, Typ: types.Of(types.Int4), Fn: charLength}, true, nil
	case "lower", "upper":
		if len(args) != 1 || !isText(args[0].Type().ID) {
			return nil, false, undefinedFunction(name, args, loc)
		}
		a, err := one(types.Text)
		if err != nil {
			return nil, false, err
		}
		return &plan.Func{Name: name, Args: []plan.Expr{a}, Typ: types.Of(types.Text), Fn: asciiCase(name == "upper")}, true, nil
	}
	return nil, false, nil
}

// isText reports whether id is a character type or an untyped literal.
func isText(id types.TypeID) bool {
	return id == types.Text || id == types.Varchar || id == types.Unknown
}

func absFn(id types.TypeID) func([]types.Value) (types.Value, error) {
	switch id {
	case types.Int2, types.Int4, types.Int8:
		min, name := int64(math.MinInt64), "bigint"
		switch id {
		case types.Int2:
			min, name = math.MinInt16, "smallint"
		case types.Int4:
			min, name = math.MinInt32, "integer"
		}
		return func(a []types.Value) (types.Value, error) {
			n := a[0].Int()
			if n == min {
				return types.Null, errs.Newf(errs.NumericOutOfRange, "%s out of range", name)
			}
			if n < 0 {
				n = -n
			}
			return types.MakeInt(id, n), nil
		}
	case types.Float4:
		return func(a []types.Value) (types.Value, error) {
			return types.MakeFloat4(float32(math.Abs(a[0].Float()))), nil
		}
	case types.Float8:
		return func(a []types.Value) (types.Value, error) {
			return types.MakeFloat8(math.Abs(a[0].Float())), nil
		}
	}
	return func(a []types.Value) (types.Value, error) {
		d := new(apd.Decimal).Abs(a[0].Decimal())
		return types.MakeNumeric(d), nil
	}
}

func charLength(a []types.Value) (types.Value, error) {
	return types.MakeInt(types.Int4, int64(utf8.RuneCountInString(a[0].Str()))), nil
}

func byteLength(a []types.Value) (types.Value, error) {
	return types.MakeInt(types.Int4, int64(len(a[0].Str()))), nil
}

// asciiCase maps only ASCII letters, as lower() and upper() do under the
// C collation the engine compares text by.
func asciiCase(upper bool) func([]types.Value) (types.Value, error) {
	lo, hi := byte('A'), byte('Z')
	delta := byte('a' - 'A')
	if upper {
		lo, hi = 'a', 'z'
	}
	return func(a []types.Value) (types.Value, error) {
		b := []byte(a[0].Str())
		for i, c := range b {
			if c >= lo && c <= hi {
				if upper {
					b[i] = c - delta
				} else {
					b[i] = c + delta
				}
			}
		}
		return types.MakeText(string(b)), nil
	}
}

// extremeFn returns GREATEST (or LEAST): the largest (smallest) non-NULL
// argument, NULL when all are NULL.
func extremeFn(greatest bool) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		best := types.Null
		for _, v := range a {
			if v.IsNull() {
				continue
			}
			if best.IsNull() {
				best = v
				continue
			}
			c := types.Compare(v, best)
			if (greatest && c > 0) || (!greatest && c < 0) {
				best = v
			}
		}
		return best, nil
	}
}
