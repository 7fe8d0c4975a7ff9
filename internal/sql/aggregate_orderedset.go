package sql

import (
	"errors"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// This file binds the ordered-set aggregates, written with WITHIN GROUP
// (ORDER BY x): percentile_cont(fraction), percentile_disc(fraction) and
// mode(), with PostgreSQL's signatures:
//
//	percentile_cont(float8 | float8[]) WITHIN GROUP (ORDER BY float8 | interval)
//	percentile_disc(float8 | float8[]) WITHIN GROUP (ORDER BY anyelement)
//	mode() WITHIN GROUP (ORDER BY anyelement)
//	rank, dense_rank, percent_rank, cume_dist("any" ...) WITHIN GROUP (ORDER BY "any" ...)
//
// The fraction, and the hypothetical row of the hypothetical-set
// aggregates, are direct arguments: PostgreSQL evaluates them once per
// group, so they may use only the query's grouped columns (and constants).
// It is bound over the input row here and rewritten over the group's
// values once the group keys are known (bindSelect, directOverGroups).

// orderedSetAggregate binds a call written with WITHIN GROUP.
func (ec *exprCtx) orderedSetAggregate(f *pg.FuncCall, name string) (plan.Expr, error) {
	argCtx := ec.in(kindAggArg, nil)
	direct := make([]plan.Expr, len(f.Args))
	for i, a := range f.Args {
		if a.GetNamedArgExpr() != nil {
			return nil, notSupported(f.Location, "named function arguments are not supported yet")
		}
		e, err := argCtx.bind(a)
		if err != nil {
			return nil, err
		}
		direct[i] = e
	}
	ordered := make([]plan.Expr, len(f.AggOrder))
	sorts := make([]*pg.SortBy, len(f.AggOrder))
	for i, n := range f.AggOrder {
		sb := n.GetSortBy()
		if sb == nil {
			return nil, notSupported(f.Location, "ORDER BY item %s is not supported", nodeName(n))
		}
		if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, notSupported(sb.Location, "ORDER BY ... USING is not supported")
		}
		e, err := argCtx.bind(sb.Node)
		if err != nil {
			return nil, err
		}
		ordered[i], sorts[i] = e, sb
	}
	noSuch := func() error {
		return undefinedFunction(name, append(slices.Clone(direct), ordered...), f.Location)
	}
	if plan.IsHypothetical(name) {
		return ec.hypothetical(f, name, argCtx, direct, ordered, sorts)
	}
	if !plan.IsOrderedSet(name) {
		return nil, noSuch()
	}
	wantDirect := 1
	if name == "mode" {
		wantDirect = 0
	}
	if len(direct) != wantDirect || len(ordered) != 1 {
		return nil, noSuch()
	}
	x := ordered[0]
	call := plan.AggCall{Func: name}
	if wantDirect == 1 {
		d, err := ec.fraction(argCtx, direct[0], f.Location, noSuch)
		if err != nil {
			return nil, err
		}
		call.Direct = []plan.Expr{d}
	}
	many := len(call.Direct) > 0 && call.Direct[0].Type().ID.IsArray()
	switch name {
	case "percentile_cont":
		argType, result, err := types.ResolveAggregate(name, x.Type())
		if err != nil {
			return nil, noSuch()
		}
		if x, err = argCtx.coerce(x, argType, implicitCoercion); err != nil {
			return nil, posErr(err, f.Location)
		}
		call.Type = result
	default:
		t := x.Type()
		switch {
		case t.ID == types.Unknown:
			return nil, posErr(errs.New(errs.DatatypeMismatch,
				"could not determine polymorphic type because input has type unknown"), f.Location)
		case many && t.ID.IsArray():
			return nil, posErr(errs.Newf(errs.UndefinedObject, "could not find array type for data type %s", t), f.Location)
		case many && !types.HasArrayType(t.ID):
			return nil, notSupported(f.Location, "%s(double precision[]) over %s is not supported", name, t)
		}
		// A polymorphic result has no type modifier, as in PostgreSQL.
		call.Type = types.Of(t.ID)
	}
	if many {
		call.Type = types.ArrayType(call.Type)
	}
	desc, nullsFirst := sortDirection(sorts[0])
	call.Arg = x
	call.Order = []plan.SortKey{{Expr: x, Desc: desc, NullsFirst: nullsFirst}}
	return ec.addOrderedSet(f, call)
}

// addOrderedSet binds an ordered-set call's FILTER and adds the call to
// the query's aggregates.
func (ec *exprCtx) addOrderedSet(f *pg.FuncCall, call plan.AggCall) (plan.Expr, error) {
	if f.AggFilter != nil {
		filter, err := ec.in(kindFilter, nil).bindBool(f.AggFilter, "FILTER")
		if err != nil {
			return nil, err
		}
		call.Filter = filter
	}
	idx := ec.aggs.add(call, call.Func)
	return &aggRef{idx: idx, typ: call.Type, name: call.Func}, nil
}

// hypothetical binds rank, dense_rank, percent_rank or cume_dist(args)
// WITHIN GROUP (ORDER BY keys): one direct argument per key, each pair
// converted to a common type as PostgreSQL does (42804 when there is
// none). The direct arguments form the hypothetical row.
func (ec *exprCtx) hypothetical(f *pg.FuncCall, name string, argCtx *exprCtx, direct, ordered []plan.Expr, sorts []*pg.SortBy) (plan.Expr, error) {
	if len(direct) != len(ordered) {
		return nil, undefinedFunction(name, append(slices.Clone(direct), ordered...), f.Location)
	}
	call := plan.AggCall{Func: name, Type: types.Of(types.Int8)}
	if name == "percent_rank" || name == "cume_dist" {
		call.Type = types.Of(types.Float8)
	}
	for i := range direct {
		if hasOuterRefs(direct[i]) || hasSubLinks(direct[i]) {
			return nil, notSupported(f.Location, "a direct argument of an ordered-set aggregate that reads an outer query or holds a subquery is not supported")
		}
		t, err := types.CommonType("WITHIN GROUP", []types.Type{direct[i].Type(), ordered[i].Type()})
		if err != nil {
			return nil, posErr(err, exprLocation(sorts[i].Node))
		}
		d, err := argCtx.coerce(direct[i], t, implicitCoercion)
		if err != nil {
			return nil, err
		}
		o, err := argCtx.coerce(ordered[i], t, implicitCoercion)
		if err != nil {
			return nil, err
		}
		desc, nullsFirst := sortDirection(sorts[i])
		call.Direct = append(call.Direct, d)
		call.Order = append(call.Order, plan.SortKey{Expr: o, Desc: desc, NullsFirst: nullsFirst})
	}
	call.Arg = call.Order[0].Expr
	return ec.addOrderedSet(f, call)
}

// fraction binds percentile_cont's or percentile_disc's direct argument:
// double precision, or an array of them. It must not depend on the input
// row beyond the grouped columns (checked once the group keys are known),
// and may not read the query around it nor hold a subquery.
func (ec *exprCtx) fraction(argCtx *exprCtx, e plan.Expr, loc int32, noSuch func() error) (plan.Expr, error) {
	if hasOuterRefs(e) || hasSubLinks(e) {
		return nil, notSupported(loc, "a direct argument of an ordered-set aggregate that reads an outer query or holds a subquery is not supported")
	}
	want := types.Of(types.Float8)
	if e.Type().ID.IsArray() {
		want = types.ArrayType(want)
	}
	out, err := argCtx.coerce(e, want, implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, noSuch()
	}
	return out, err
}

// directOverGroups rewrites the direct arguments of calls, bound over the
// input row, over the group's values (column i being keys[i]): a
// direct argument may use only grouped columns, as in PostgreSQL.
func (st *bindState) directOverGroups(calls []plan.AggCall, keys []plan.Expr, cols []plan.Column) error {
	for i := range calls {
		c := &calls[i]
		if len(c.Direct) == 0 {
			continue
		}
		direct := make([]plan.Expr, len(c.Direct))
		for j, e := range c.Direct {
			d, err := st.overAggregate(e, keys, cols[:len(keys)])
			if err != nil {
				return err
			}
			direct[j] = d
		}
		c.Direct = direct
	}
	return nil
}

// exprsEqual reports whether two lists of expressions are equal.
func exprsEqual(a, b []plan.Expr) bool {
	return slices.EqualFunc(a, b, exprEqual)
}
