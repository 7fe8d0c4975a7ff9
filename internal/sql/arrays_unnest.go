package sql

import (
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// ARRAY(SELECT f(x) FROM unnest(a) AS x [WHERE p(x)] [ORDER BY ...]) — the
// form psql and client catalogs use to map or filter an array column of
// the row around them — depends on nothing but the array a of that row.
// It is bound as a scalar function of a: the subquery's expressions are
// bound over a private row (the element and, WITH ORDINALITY, its
// position) and evaluated element by element. Being a function of the
// row, it needs no state and no join. Its expressions may read only
// unnest's columns; a reference to the row around it is not supported.

// unnestArray is a bound ARRAY(SELECT ... FROM unnest(...)).
type unnestArray struct {
	where      plan.Expr // nil when absent
	target     plan.Expr
	order      []plan.SortKey
	ordinality bool
	elem       types.Type // the result's element type
}

// unnestSubquery returns the SELECT of sl and its unnest call when sl's
// subquery reads nothing but unnest(...) and has no grouping, DISTINCT,
// LIMIT, window or WITH clause; nil otherwise.
func unnestSubquery(sl *pg.SubLink) (*pg.SelectStmt, *pg.RangeFunction, *pg.FuncCall) {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil || sel.Op != pg.SetOperation_SETOP_NONE || len(sel.FromClause) != 1 {
		return nil, nil, nil
	}
	rf, fc := unnestFunction(sel.FromClause[0])
	if rf == nil || len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.DistinctClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.WindowClause) > 0 || sel.WithClause != nil ||
		rf.IsRowsfrom || len(rf.Coldeflist) > 0 {
		return nil, nil, nil
	}
	return sel, rf, fc
}

// privateUnnest binds unnest's argument over ec and returns a context for
// the subquery's expressions over the private row, and private, which
// turns an expression bound in that context into one over the private
// row (refusing references to the row around the subquery).
func (ec *exprCtx) privateUnnest(rf *pg.RangeFunction, fc *pg.FuncCall) (args []plan.Expr, inner *exprCtx, private func(plan.Expr, int32) (plan.Expr, error), err error) {
	fn, args, err := ec.unnestArgs(fc)
	if err != nil {
		return nil, nil, nil, err
	}
	elem, err := unnestElement(args, fc.Location)
	if err != nil {
		return nil, nil, nil, err
	}
	cols := []plan.Column{{Name: fn, Type: elem}}
	if rf.Alias != nil {
		cols[0].Name = rf.Alias.Aliasname
	}
	if rf.Ordinality {
		cols = append(cols, plan.Column{Name: "ordinality", Type: types.Of(types.Int8)})
	}
	item, err := leafItem(nil, cols, optionsAlias(fn, rf.Alias), fn)
	if err != nil {
		return nil, nil, nil, posErr(err, fc.Location)
	}
	if fn == optionsTableName {
		if err := splitOptions(item, rf.Alias); err != nil {
			return nil, nil, nil, posErr(err, fc.Location)
		}
	}
	// The private row follows the row around the subquery in the scope, so
	// that a reference to the latter is recognised (and refused) rather
	// than reported as an unknown name.
	width := scopeWidth(ec.sc)
	inner = &exprCtx{st: ec.st, sc: &Scope{items: append(append([]*nsItem(nil), ec.sc.items...), shiftItems(item.ns, width)...)},
		kind: kindScalar, env: ec.env}
	private = func(e plan.Expr, at int32) (plan.Expr, error) {
		for _, i := range colRefIndexes(e) {
			if i < width {
				return nil, notSupported(at, "a subquery over unnest(...) of the row may read only the columns of unnest")
			}
		}
		return shiftExpr(e, -width), nil
	}
	return args, inner, private, nil
}

// arrayOverUnnest binds sl when it is ARRAY(SELECT ... FROM unnest(...));
// ok is false when it is another subquery.
func (ec *exprCtx) arrayOverUnnest(sl *pg.SubLink) (e plan.Expr, ok bool, err error) {
	sel, rf, fc := unnestSubquery(sl)
	if sel == nil {
		return nil, false, nil
	}
	loc := sl.Location
	if len(sel.TargetList) != 1 {
		return nil, true, posErr(errs.New(errs.SyntaxError, "subquery must return only one column"), loc)
	}
	args, inner, private, err := ec.privateUnnest(rf, fc)
	if err != nil {
		return nil, true, err
	}
	u := &unnestArray{ordinality: rf.Ordinality}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Val == nil {
		return nil, true, notSupported(loc, "this select list is not supported in ARRAY(subquery)")
	}
	target, err := inner.bind(rt.Val)
	if err != nil {
		return nil, true, err
	}
	if target, err = private(inner.resolveUnknown(target), exprLocation(rt.Val)); err != nil {
		return nil, true, err
	}
	switch t := target.Type(); {
	case !t.ID.IsArray() && !types.HasArrayType(t.ID):
		return nil, true, posErr(errs.Newf(errs.UndefinedObject, "could not find array type for data type %s", t), loc)
	}
	u.target, u.elem = target, target.Type()
	if sel.WhereClause != nil {
		w, err := inner.bindBool(sel.WhereClause, "WHERE")
		if err != nil {
			return nil, true, err
		}
		if u.where, err = private(w, exprLocation(sel.WhereClause)); err != nil {
			return nil, true, err
		}
	}
	for _, n := range sel.SortClause {
		sb := n.GetSortBy()
		if sb == nil || sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, true, notSupported(loc, "this ORDER BY is not supported in ARRAY(subquery)")
		}
		var key plan.Expr
		if c := sb.Node.GetAConst(); c != nil && c.GetIval() != nil {
			if c.GetIval().Ival != 1 {
				return nil, true, posErr(errs.Newf(errs.InvalidColumnRef, "ORDER BY position %d is not in select list", c.GetIval().Ival), sb.Location)
			}
			key = u.target
		} else if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && rt.Name != "" &&
			strings.EqualFold(cr.Fields[0].GetString_().GetSval(), rt.Name) {
			key = u.target
		} else {
			k, err := inner.bind(sb.Node)
			if err != nil {
				return nil, true, err
			}
			if key, err = private(inner.resolveUnknown(k), exprLocation(sb.Node)); err != nil {
				return nil, true, err
			}
		}
		desc, nullsFirst := sortDirection(sb)
		u.order = append(u.order, plan.SortKey{Expr: key, Desc: desc, NullsFirst: nullsFirst})
	}
	// The name holds the private expressions, which are not arguments, so
	// that two calls are equal (exprEqual) only when they compute alike.
	typ := u.elem
	if !typ.ID.IsArray() {
		typ = types.ArrayType(u.elem)
	}
	return &plan.Func{Name: u.describe(), Args: args, Typ: typ, NonStrict: true, Fn: u.eval,
		Render: func(a []string) string { return strings.Replace(u.describe(), "unnest()", "unnest("+a[0]+")", 1) }}, true, nil
}

// describe renders the call with its private expressions and the array
// argument left out: ARRAY(SELECT f FROM unnest() [WITH ORDINALITY]
// [WHERE p] [ORDER BY k, ...]).
func (u *unnestArray) describe() string {
	var b strings.Builder
	b.WriteString("ARRAY(SELECT " + u.target.String() + " FROM unnest()")
	if u.ordinality {
		b.WriteString(" WITH ORDINALITY")
	}
	if u.where != nil {
		b.WriteString(" WHERE " + u.where.String())
	}
	for i, k := range u.order {
		sep := ", "
		if i == 0 {
			sep = " ORDER BY "
		}
		dir := " ASC"
		if k.Desc {
			dir = " DESC"
		}
		nulls := " NULLS LAST"
		if k.NullsFirst {
			nulls = " NULLS FIRST"
		}
		b.WriteString(sep + k.Expr.String() + dir + nulls)
	}
	b.WriteString(")")
	return b.String()
}

// isStar reports whether n is * or t.*.
func isStar(n *pg.Node) bool {
	cr := n.GetColumnRef()
	return cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// scopeWidth is the width of the row a scope's columns are read from.
func scopeWidth(sc *Scope) int {
	w := 0
	for _, it := range sc.items {
		for _, c := range it.cols {
			for _, i := range colRefIndexes(c.expr) {
				w = max(w, i+1)
			}
		}
	}
	return w
}

// eval computes the array for one array argument: each element's row,
// filtered, mapped, sorted stably (elements equal on every key keep their
// order in the array). A NULL array gives the empty array, as a subquery
// with no rows does.
func (u *unnestArray) eval(args []types.Value) (types.Value, error) {
	type item struct {
		v    types.Value
		keys []types.Value
	}
	var items []item
	row := make(zset.Row, 2)
	for i, e := range args[0].Elems() {
		row[0], row[1] = e, types.MakeInt(types.Int8, int64(i+1))
		if u.where != nil {
			ok, err := u.where.Eval(row)
			if err != nil {
				return types.Null, err
			}
			if ok.IsNull() || !ok.Bool() {
				continue
			}
		}
		v, err := u.target.Eval(row)
		if err != nil {
			return types.Null, err
		}
		it := item{v: v}
		for _, k := range u.order {
			kv, err := k.Expr.Eval(row)
			if err != nil {
				return types.Null, err
			}
			it.keys = append(it.keys, kv)
		}
		items = append(items, it)
	}
	slices.SortStableFunc(items, func(a, b item) int {
		for i, k := range u.order {
			if c := compareSortKey(a.keys[i], b.keys[i], k); c != 0 {
				return c
			}
		}
		return 0
	})
	out := make([]types.Value, len(items))
	for i, it := range items {
		out[i] = it.v
	}
	if u.elem.ID.IsArray() {
		// Arrays become the sub-arrays of one more dimension, as
		// array_agg(anyarray) makes them; no rows give the empty array.
		if len(out) == 0 {
			return types.MakeArray(u.elem.ID.Elem(), nil), nil
		}
		return types.AccumArrays(u.elem.ID.Elem(), out)
	}
	return types.MakeArray(u.elem.ID, out), nil
}

// compareSortKey orders two values of an ORDER BY key with its direction
// and NULL placement.
func compareSortKey(a, b types.Value, k plan.SortKey) int {
	switch {
	case a.IsNull() && b.IsNull():
		return 0
	case a.IsNull() || b.IsNull():
		if a.IsNull() == k.NullsFirst {
			return -1
		}
		return 1
	}
	c := types.Compare(a, b)
	if k.Desc {
		return -c
	}
	return c
}

// existsOverUnnest binds sl when it is EXISTS (SELECT ... FROM unnest(...)
// [WHERE ...]) over an array of the row: whether some element's row
// satisfies the condition, a function of the row like arrayOverUnnest.
// The select list is bound (so that its names are checked) and never
// evaluated, as EXISTS never evaluates it.
func (ec *exprCtx) existsOverUnnest(sl *pg.SubLink) (e plan.Expr, ok bool, err error) {
	sel, rf, fc := unnestSubquery(sl)
	if sel == nil || len(sel.SortClause) > 0 {
		return nil, false, nil
	}
	args, inner, private, err := ec.privateUnnest(rf, fc)
	if err != nil {
		return nil, true, err
	}
	for _, n := range sel.TargetList {
		if rt := n.GetResTarget(); rt != nil && rt.Val != nil && !isStar(rt.Val) {
			x, err := inner.bind(rt.Val)
			if err != nil {
				return nil, true, err
			}
			if _, err := private(x, exprLocation(rt.Val)); err != nil {
				return nil, true, err
			}
		}
	}
	var where plan.Expr
	if sel.WhereClause != nil {
		w, err := inner.bindBool(sel.WhereClause, "WHERE")
		if err != nil {
			return nil, true, err
		}
		if where, err = private(w, exprLocation(sel.WhereClause)); err != nil {
			return nil, true, err
		}
	}
	name := "EXISTS(SELECT FROM unnest()"
	if where != nil {
		name += " WHERE " + where.String()
	}
	name += ")"
	fn := func(v []types.Value) (types.Value, error) {
		row := make(zset.Row, 2)
		for i, e := range v[0].Elems() {
			if where == nil {
				return types.MakeBool(true), nil
			}
			row[0], row[1] = e, types.MakeInt(types.Int8, int64(i+1))
			ok, err := where.Eval(row)
			if err != nil {
				return types.Null, err
			}
			if !ok.IsNull() && ok.Bool() {
				return types.MakeBool(true), nil
			}
		}
		return types.MakeBool(false), nil
	}
	return &plan.Func{Name: name, Args: args, Typ: types.Of(types.Bool), NonStrict: true, Fn: fn,
		Render: func(a []string) string { return strings.Replace(name, "unnest()", "unnest("+a[0]+")", 1) }}, true, nil
}
