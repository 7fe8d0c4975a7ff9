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
//
// The fraction is a direct argument: PostgreSQL evaluates it once per
// group, so it may use only the query's grouped columns (and constants).
// It is bound over the input row here and rewritten over the group's
// values once the group keys are known (bindSelect, directOverGroups).

// hypotheticalSets are PostgreSQL's hypothetical-set aggregates, which
// the engine does not maintain.
var hypotheticalSets = map[string]bool{"rank": true, "dense_rank": true, "percent_rank": true, "cume_dist": true}

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
	if !plan.IsOrderedSet(name) {
		if hypotheticalSets[name] {
			return nil, notSupported(f.Location, "hypothetical-set aggregate %s() is not supported yet", name)
		}
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
	var err error
	if wantDirect == 1 {
		if call.Direct, err = ec.fraction(argCtx, direct[0], f.Location, noSuch); err != nil {
			return nil, err
		}
	}
	many := call.Direct != nil && call.Direct.Type().ID.IsArray()
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
		call.Type = t
	}
	if many {
		call.Type = types.ArrayType(call.Type)
	}
	desc, nullsFirst := sortDirection(sorts[0])
	call.Arg = x
	call.Order = []plan.SortKey{{Expr: x, Desc: desc, NullsFirst: nullsFirst}}
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
		if c.Direct == nil {
			continue
		}
		d, err := st.overAggregate(c.Direct, keys, cols[:len(keys)])
		if err != nil {
			return err
		}
		c.Direct = d
	}
	return nil
}
