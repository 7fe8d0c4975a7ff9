package sql

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// This file binds what aggregate calls have beyond one argument and
// DISTINCT/FILTER: string_agg's second argument, ORDER BY inside the call,
// and the standard names of the variance family.

// aggregateAliases maps aggregates to the one the engine computes them
// as.
var aggregateAliases = map[string]string{
	"every": "bool_and", "variance": "var_samp", "stddev": "stddev_samp",
}

// aggregateRejections says why an aggregate PostgreSQL has is rejected,
// where more than "not supported yet" helps.
var aggregateRejections = map[string]string{
	"json_agg":         "json_agg is not supported yet; use jsonb_agg",
	"jsonb_agg":        "JSON is not supported",
	"json_object_agg":  "json_object_agg is not supported yet; use jsonb_object_agg",
	"jsonb_object_agg": "JSON is not supported",
	"xmlagg":           "XML is not supported",
	"range_agg":        "range types are not supported",
}

// aggRejection returns the message for an aggregate the engine does not
// maintain.
func aggRejection(name string) string {
	if why, ok := aggregateRejections[name]; ok {
		return "aggregate function " + name + "() is not supported: " + why
	}
	return "aggregate function " + name + "() is not supported yet"
}

// orderSensitive reports whether an aggregate's result depends on the
// order of its input, so that ORDER BY inside the call must be kept.
func orderSensitive(fn string) bool { return fn == "string_agg" || fn == "array_agg" }

// arrayAgg binds array_agg(value): its result is an array of the value's
// type, or for an array argument (PostgreSQL's array_agg(anyarray)) an
// array of the same type with one more dimension. An untyped argument has
// no type to make an array of, as in PostgreSQL.
func (ec *exprCtx) arrayAgg(call *plan.AggCall, argCtx *exprCtx, args []plan.Expr, loc int32) error {
	if len(args) != 1 {
		return undefinedFunction("array_agg", args, loc)
	}
	t := args[0].Type()
	switch {
	case t.ID == types.Unknown:
		// PostgreSQL has array_agg(anynonarray) and array_agg(anyarray).
		return posErr(errs.New(errs.AmbiguousFunction, "function array_agg(unknown) is not unique"), loc)
	case t.ID.IsArray():
		call.Arg, call.Type = args[0], t
		return nil
	case !types.HasArrayType(t.ID):
		return undefinedFunction("array_agg", args, loc)
	}
	call.Arg, call.Type = args[0], types.ArrayType(t)
	return nil
}

// stringAgg binds string_agg(value, delimiter): (text, text) or (bytea,
// bytea), resolved as PostgreSQL resolves the overloads.
func (ec *exprCtx) stringAgg(call *plan.AggCall, argCtx *exprCtx, args []plan.Expr, loc int32) error {
	if len(args) != 2 {
		return undefinedFunction("string_agg", args, loc)
	}
	ts, err := types.ResolveStringAgg(args[0].Type(), args[1].Type())
	if err != nil {
		return posErr(err, loc)
	}
	out := make([]plan.Expr, 2)
	for i, a := range args {
		c, err := argCtx.coerce(a, ts[i], implicitCoercion)
		if errors.Is(err, errNoCast) {
			return undefinedFunction("string_agg", args, loc)
		}
		if err != nil {
			return err
		}
		out[i] = c
	}
	call.Arg, call.More, call.Type = out[0], out[1:], types.Of(ts[0].ID)
	return nil
}

// aggOrder binds the ORDER BY inside an aggregate call. Its expressions
// are bound like arguments (no aggregates inside). With DISTINCT, each
// must be one of the arguments, as PostgreSQL requires. The keys are kept
// only for aggregates whose result depends on the order.
func (ec *exprCtx) aggOrder(f *pg.FuncCall, argCtx *exprCtx, call *plan.AggCall) error {
	if len(f.AggOrder) == 0 {
		return nil
	}
	args := append([]plan.Expr{call.Arg}, call.More...)
	var keys []plan.SortKey
	for _, n := range f.AggOrder {
		sb := n.GetSortBy()
		if sb == nil {
			return notSupported(f.Location, "ORDER BY item %s is not supported", nodeName(n))
		}
		if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return notSupported(sb.Location, "ORDER BY ... USING is not supported")
		}
		e, err := argCtx.bind(sb.Node)
		if err != nil {
			return err
		}
		e = argCtx.resolveUnknown(e)
		if call.Distinct {
			found := false
			for _, a := range args {
				if a != nil && (exprEqual(a, e) || exprEqual(stripCast(a), e)) {
					found = true
				}
			}
			if !found {
				return posErr(errs.New(errs.InvalidColumnRef,
					"in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list"), exprLocation(sb.Node))
			}
		}
		desc, nullsFirst := sortDirection(sb)
		keys = append(keys, plan.SortKey{Expr: e, Desc: desc, NullsFirst: nullsFirst})
	}
	if orderSensitive(call.Func) {
		call.Order = keys
	}
	return nil
}

// stripCast removes an implicit conversion the binder added to an
// argument (varchar to text), so that ORDER BY the unconverted column
// matches it.
func stripCast(e plan.Expr) plan.Expr {
	if c, ok := e.(*plan.Cast); ok && !c.Explicit {
		return c.Arg
	}
	return e
}

// sameAggExtras reports whether two calls have the same further
// arguments and ORDER BY, so that identical calls are computed once.
func sameAggExtras(a, b plan.AggCall) bool {
	if len(a.More) != len(b.More) || len(a.Order) != len(b.Order) {
		return false
	}
	for i := range a.More {
		if !exprEqual(a.More[i], b.More[i]) {
			return false
		}
	}
	for i := range a.Order {
		x, y := a.Order[i], b.Order[i]
		if x.Desc != y.Desc || x.NullsFirst != y.NullsFirst || !exprEqual(x.Expr, y.Expr) {
			return false
		}
	}
	return true
}

// remapAggCall renumbers the column references of an aggregate call's
// expressions to the planned input row.
func remapAggCall(c plan.AggCall, perm []int) plan.AggCall {
	c.Arg = remapOrNil(c.Arg, perm)
	c.Filter = remapOrNil(c.Filter, perm)
	if len(c.More) > 0 {
		more := make([]plan.Expr, len(c.More))
		for i, e := range c.More {
			more[i] = remapExpr(e, perm)
		}
		c.More = more
	}
	if len(c.Order) > 0 {
		order := make([]plan.SortKey, len(c.Order))
		for i, k := range c.Order {
			k.Expr = remapExpr(k.Expr, perm)
			order[i] = k
		}
		c.Order = order
	}
	return c
}
