package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// aggCollector gathers the aggregate calls of one query level. Identical
// calls (same function, argument, DISTINCT and FILTER) are computed once.
type aggCollector struct {
	calls []plan.AggCall
	names []string
	// groupings are the GROUPING(...) calls, in the order they were bound.
	groupings []*groupingRef
}

// add returns the index of call, adding it unless an identical call is
// already there.
func (ac *aggCollector) add(call plan.AggCall, name string) int {
	for i, c := range ac.calls {
		if c.Func == call.Func && c.Distinct == call.Distinct &&
			exprEqual(c.Arg, call.Arg) && exprEqual(c.Filter, call.Filter) && sameAggExtras(c, call) &&
			exprsEqual(c.Direct, call.Direct) {
			return i
		}
	}
	ac.calls = append(ac.calls, call)
	ac.names = append(ac.names, name)
	return len(ac.calls) - 1
}

// aggregate binds an aggregate call into a reference to the query's
// Aggregate node.
func (ec *exprCtx) aggregate(f *pg.FuncCall, name string) (plan.Expr, error) {
	if ec.aggs == nil {
		msg := "aggregate functions are not allowed in " + ec.kind.where()
		switch ec.kind {
		case kindAggArg:
			msg = "aggregate function calls cannot be nested"
		case kindScalar:
			msg = "aggregate functions are not allowed here"
		}
		return nil, posErr(errs.New(errs.GroupingError, msg), f.Location)
	}
	if f.FuncVariadic {
		return nil, notSupported(f.Location, "VARIADIC is not supported yet")
	}
	if f.AggWithinGroup || plan.IsOrderedSet(name) {
		return ec.orderedSetAggregate(f, name)
	}
	if name == "jsonb_agg" || name == "jsonb_object_agg" {
		return ec.jsonbAgg(f, name)
	}
	if name == "json_agg" || name == "json_object_agg" {
		return ec.jsonAgg(f, name)
	}
	fn := name
	if alias, ok := aggregateAliases[fn]; ok {
		fn = alias
	}
	argCtx := ec.in(kindAggArg, nil)
	call := plan.AggCall{Func: fn, Distinct: f.AggDistinct}
	switch {
	case f.AggStar:
		if fn != "count" {
			return nil, posErr(errs.Newf(errs.UndefinedFunction, "function %s(*) does not exist", name), f.Location)
		}
		call.Type = types.Of(types.Int8)
	default:
		args := make([]plan.Expr, len(f.Args))
		for i, a := range f.Args {
			if a.GetNamedArgExpr() != nil {
				return nil, notSupported(f.Location, "named function arguments are not supported yet")
			}
			e, err := argCtx.bind(a)
			if err != nil {
				return nil, err
			}
			args[i] = e
		}
		if fn == "string_agg" {
			if err := ec.stringAgg(&call, argCtx, args, f.Location); err != nil {
				return nil, err
			}
			break
		}
		if fn == "array_agg" {
			if err := ec.arrayAgg(&call, argCtx, args, f.Location); err != nil {
				return nil, err
			}
			break
		}
		if len(args) != 1 {
			return nil, undefinedFunction(name, args, f.Location)
		}
		arg := args[0]
		argType, t, err := types.ResolveAggregate(fn, arg.Type())
		if err != nil {
			return nil, posErr(err, f.Location)
		}
		if argType.ID == types.Unknown {
			argType = types.Of(types.Text)
		}
		if arg, err = argCtx.coerce(arg, argType, implicitCoercion); err != nil {
			return nil, posErr(err, f.Location)
		}
		call.Arg, call.Type = arg, t
	}
	if err := ec.aggOrder(f, argCtx, &call); err != nil {
		return nil, err
	}
	if call.Distinct && call.Arg != nil {
		if err := needEquality(call.Arg, f.Location); err != nil {
			return nil, err
		}
	}
	switch fn {
	case "min", "max", "bool_and", "bool_or", "bit_and", "bit_or":
		// Duplicates cannot change these results; DISTINCT only costs state.
		call.Distinct = false
	}
	if f.AggFilter != nil {
		filter, err := ec.in(kindFilter, nil).bindBool(f.AggFilter, "FILTER")
		if err != nil {
			return nil, err
		}
		call.Filter = filter
	}
	idx := ec.aggs.add(call, name)
	return &aggRef{idx: idx, typ: call.Type, name: name}, nil
}

// overAggregate rewrites e, bound over the FROM row, into an expression over
// the output of an Aggregate whose group keys are keys: a subexpression
// equal to a key becomes that key's column, an aggregate call its result
// column, and any other column reference is a grouping error.
func (st *bindState) overAggregate(e plan.Expr, keys []plan.Expr, cols []plan.Column) (plan.Expr, error) {
	return st.overGroups(e, keys, cols, -1)
}

// overGroups is overAggregate for an Aggregate or a Union of grouping
// sets: with groupingCol >= 0 GROUPING call i is column groupingCol+i,
// otherwise (a plain GROUP BY) the constant 0.
func (st *bindState) overGroups(e plan.Expr, keys []plan.Expr, cols []plan.Column, groupingCol int) (plan.Expr, error) {
	return transform(e, func(x plan.Expr) (plan.Expr, bool, error) {
		if _, ok := x.(*plan.Const); !ok {
			for i, k := range keys {
				if exprEqual(x, k) {
					return &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}, true, nil
				}
			}
		}
		switch x := x.(type) {
		case *aggRef:
			i := len(keys) + x.idx
			return &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}, true, nil
		case *groupingRef:
			v, err := st.groupingValue(x, keys, nil, true)
			if err != nil {
				return nil, true, err
			}
			if groupingCol < 0 {
				return &plan.Const{Val: types.MakeInt(types.Int4, int64(v)), Typ: x.Type()}, true, nil
			}
			i := groupingCol + x.idx
			return &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}, true, nil
		case *plan.ColRef:
			loc, ok := st.locs[x]
			if !ok {
				loc = -1
			}
			return nil, true, posErr(errs.Newf(errs.GroupingError,
				"column %q must appear in the GROUP BY clause or be used in an aggregate function", x.Name), loc)
		}
		return nil, false, nil
	})
}
