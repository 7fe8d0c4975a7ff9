package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// aggregateNames are the aggregates the engine maintains (every is
// bool_and under its standard name).
var aggregateNames = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true, "string_agg": true, "array_agg": true,
	"stddev": true, "stddev_pop": true, "stddev_samp": true,
	"variance": true, "var_pop": true, "var_samp": true,
	"bit_and": true, "bit_or": true, "bit_xor": true,
	"percentile_cont": true, "percentile_disc": true, "mode": true,
}

// otherAggregates are PostgreSQL aggregates the engine does not maintain
// yet.
var otherAggregates = map[string]bool{
	"json_agg": true, "jsonb_agg": true,
	"json_object_agg": true, "jsonb_object_agg": true, "xmlagg": true,
	"corr": true, "covar_pop": true, "covar_samp": true,
	"regr_avgx": true, "regr_avgy": true, "regr_count": true, "regr_intercept": true,
	"regr_r2": true, "regr_slope": true, "regr_sxx": true, "regr_sxy": true, "regr_syy": true,
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
	"to_number": true, "unnest": true,
	"array_length": true, "cardinality": true,
	"jsonb_build_object": true, "to_jsonb": true,
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
		if e, ok, err := ec.systemFunc(f, display, name); ok {
			return e, err
		}
	}
	if schema == "" || schema == "pg_catalog" {
		switch {
		case aggregateNames[name] || f.AggWithinGroup && plan.IsHypothetical(name):
			return ec.aggregate(f, name)
		case windowFunctions[name]:
			return nil, posErr(errs.Newf(errs.WrongObjectType, "window function %s requires an OVER clause", name), f.Location)
		case otherAggregates[name]:
			return nil, notSupported(f.Location, "%s", aggRejection(name))
		case volatileFunctions[name]:
			if e, ok, err := ec.clockFunction(f, name); ok {
				return e, err
			}
			if e, ok, err := ec.randomFunction(f, name); ok {
				return e, err
			}
			return nil, nonDeterministic(f.Location, name+"()")
		}
	}
	if (schema == "" || schema == "pg_catalog") && name == "row_to_json" && f.Over == nil && !f.AggStar &&
		!f.AggDistinct && f.AggFilter == nil && len(f.AggOrder) == 0 && !f.AggWithinGroup {
		return ec.rowToJSON(f)
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
	if f.FuncVariadic && (name != "format" || schema != "" && schema != "pg_catalog") {
		return nil, notSupported(f.Location, "VARIADIC is not supported yet")
	}
	args, err := ec.funcArgs(f, name)
	if err != nil {
		return nil, err
	}
	if f.FuncVariadic {
		return ec.variadicFormat(display, args, f.Location)
	}
	if e, ok, err := ec.recordCall(schema, name, args, f.Location); ok || err != nil {
		return e, err
	}
	if (name == "unnest" || name == "generate_subscripts" || isJSONBSetFunc(name)) && (schema == "" || schema == "pg_catalog") {
		return ec.srfCall(name, args, f.Location)
	}
	if name == "generate_series" && (schema == "" || schema == "pg_catalog") {
		return ec.seriesSRFCall(args, f.Location)
	}
	if regexpRowsName(name) != "" && (schema == "" || schema == "pg_catalog") {
		return ec.regexpSRFCall(display, name, args, f.Location)
	}
	if schema == "" || schema == "pg_catalog" {
		if e, ok, err := ec.catalogFunc(display, name, args, f.Location); ok || err != nil {
			return e, err
		}
		if knownFunctions[name] {
			return nil, notSupported(f.Location, "function %s() is not supported yet", name)
		}
	}
	if e, ok, err := ec.userFunction(schema, name, args, f.Location); ok || err != nil {
		return e, err
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

// nonDeterministic refuses a function whose result depends on when or how
// often it runs (random(), nextval(), clock_timestamp(), ...). A view must
// equal its query whenever it is read, and an ad-hoc query is answered by
// the same circuit; the functions of the transaction's time are the
// exception, bound as constants of the statement (clock.go).
func nonDeterministic(loc int32, what string) error {
	return notSupported(loc, "%s is not supported: its result depends on when or how often it is evaluated", what)
}
