package sql

import (
	"errors"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// This file binds the array constructs of expressions: ARRAY[...],
// subscripts and slices, op ANY/ALL (array) and ARRAY(subquery). They
// become plan.Func calls (whose names EXPLAIN shows), so every rewrite of
// the binder handles them as it handles functions.

// arrayConstructor binds ARRAY[e1, e2, ...]: the elements converted to
// their common type, as PostgreSQL's transformArrayExpr. target, when an
// array type, is the type a cast around the constructor asks for; it
// types an empty ARRAY[] and converts the elements directly.
func (ec *exprCtx) arrayConstructor(a *pg.A_ArrayExpr, target types.Type) (plan.Expr, error) {
	es := make([]plan.Expr, len(a.Elements))
	locs := make([]int32, len(a.Elements))
	// multi is PostgreSQL's multidims: the elements are arrays (nested
	// brackets or array values), which become the sub-arrays of an array
	// of one more dimension.
	multi := false
	for i, n := range a.Elements {
		var e plan.Expr
		var err error
		if sub := n.GetAArrayExpr(); sub != nil {
			e, err = ec.arrayConstructor(sub, target)
			multi = true
		} else if e, err = ec.bind(n); err == nil && e.Type().ID.IsArray() {
			multi = true
		}
		if err != nil {
			return nil, err
		}
		es[i], locs[i] = e, exprLocation(n)
	}
	var elem types.Type
	switch {
	case target.ID.IsArray():
		elem = target.Elem()
		if multi {
			elem = target
		}
		for i, e := range es {
			c, err := ec.coerce(e, elem, explicitCoercion)
			if errors.Is(err, errNoCast) {
				return nil, posErr(errs.Newf(errs.CannotCoerce, "cannot cast type %s to %s", e.Type(), elem), locs[i])
			}
			if err != nil {
				return nil, posErr(err, locs[i])
			}
			es[i] = c
		}
	case len(es) == 0:
		return nil, posErr(errs.New(errs.IndeterminateDatatype, "cannot determine type of empty array"), a.Location)
	default:
		var err error
		if es, elem, err = ec.common("ARRAY", es, locs); err != nil {
			return nil, err
		}
		if elem.ID == types.Unknown {
			elem = types.Of(types.Text)
			for i, e := range es {
				if es[i], err = ec.coerce(e, elem, implicitCoercion); err != nil {
					return nil, posErr(err, locs[i])
				}
			}
		}
	}
	if multi {
		if !elem.ID.IsArray() {
			return nil, posErr(errs.Newf(errs.DatatypeMismatch, "could not find array type for data type %s", elem), a.Location)
		}
		ek := elem.ID.Elem()
		f := &plan.Func{Name: "ARRAY", Args: es, Typ: elem, NonStrict: true,
			Fn:     func(args []types.Value) (types.Value, error) { return types.ArrayOfArrays(ek, args) },
			Render: func(args []string) string { return "ARRAY[" + strings.Join(args, ", ") + "]" }}
		return foldConstants(f)
	}
	if !types.HasArrayType(elem.ID) {
		return nil, posErr(errs.Newf(errs.UndefinedObject, "could not find array type for data type %s", elem), a.Location)
	}
	typ := types.ArrayType(elem)
	build := func(args []types.Value) (types.Value, error) {
		out := make([]types.Value, len(args))
		copy(out, args)
		return types.MakeArray(elem.ID, out), nil
	}
	f := &plan.Func{Name: "ARRAY", Args: es, Typ: typ, NonStrict: true, Fn: build,
		Render: func(args []string) string { return "ARRAY[" + strings.Join(args, ", ") + "]" }}
	return foldConstants(f)
}

// foldConstants computes a call over constants now.
func foldConstants(f *plan.Func) (plan.Expr, error) {
	for _, a := range f.Args {
		if _, ok := a.(*plan.Const); !ok {
			return f, nil
		}
	}
	v, err := f.Eval(nil)
	if err != nil {
		return nil, err
	}
	return &plan.Const{Val: v, Typ: f.Typ}, nil
}

// indirection binds a[i], a[i:j] and chains of them (a[i][j], one
// subscript per dimension); field selection ((row).field) only of
// composite set-returning calls (records.go).
func (ec *exprCtx) indirection(x *pg.A_Indirection) (plan.Expr, error) {
	if len(x.Indirection) == 1 && x.Indirection[0].GetString_() != nil {
		if e, ok, err := ec.fieldSelection(x.Arg, x.Indirection[0].GetString_().GetSval(), exprLocation(x.Arg)); ok || err != nil {
			return e, err
		}
	}
	arg, err := ec.bind(x.Arg)
	if err != nil {
		return nil, err
	}
	loc := exprLocation(x.Arg)
	inds := make([]*pg.A_Indices, len(x.Indirection))
	for i, n := range x.Indirection {
		if inds[i] = n.GetAIndices(); inds[i] == nil {
			return nil, notSupported(loc, "field selection is not supported")
		}
	}
	t := arg.Type()
	if len(inds) == 1 && (t.ID == types.Name || t.Vector) {
		return ec.vectorSubscript(arg, inds[0], loc)
	}
	if !t.ID.IsArray() {
		if t.ID == types.Unknown {
			// PostgreSQL takes an untyped literal as text, which has no
			// subscripts either.
			t = types.Of(types.Text)
		}
		return nil, posErr(errs.Newf(errs.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", t), loc)
	}
	if len(inds) > types.MaxArrayDims {
		return nil, posErr(errs.Newf(errs.ProgramLimitExceeded, "number of array dimensions (%d) exceeds the maximum allowed (%d)", len(inds), types.MaxArrayDims), loc)
	}
	return ec.arraySubscripts(arg, inds)
}

// arraySubscripts binds a[i][j]... and a[lo:hi][lo:hi]... as PostgreSQL's
// transformContainerSubscripts: when any subscript is a slice, all are,
// and a lone subscript i means 1:i.
func (ec *exprCtx) arraySubscripts(arg plan.Expr, inds []*pg.A_Indices) (plan.Expr, error) {
	t := arg.Type()
	isSlice := false
	for _, ind := range inds {
		isSlice = isSlice || ind.IsSlice
	}
	args := []plan.Expr{arg}
	if !isSlice {
		for _, ind := range inds {
			i, err := ec.arrayIndex(ind.Uidx)
			if err != nil {
				return nil, err
			}
			args = append(args, i)
		}
		return &plan.Func{Name: "subscript", Args: args, Typ: t.Elem(), NonStrict: true,
			Fn: func(v []types.Value) (types.Value, error) { return types.ArrayElement(v[0], v[1:]), nil },
			Render: func(a []string) string {
				return "(" + a[0] + ")[" + strings.Join(a[1:], "][") + "]"
			}}, nil
	}
	// has[2k] and has[2k+1] say whether range k has its lower and upper
	// bound among the arguments.
	has := make([]bool, 0, 2*len(inds))
	one := &plan.Const{Val: types.MakeInt(types.Int4, 1), Typ: types.Of(types.Int4)}
	for _, ind := range inds {
		lo, err := ec.arrayIndex(ind.Lidx)
		if err != nil {
			return nil, err
		}
		if !ind.IsSlice {
			lo = one
		}
		hi, err := ec.arrayIndex(ind.Uidx)
		if err != nil {
			return nil, err
		}
		for _, e := range []plan.Expr{lo, hi} {
			has = append(has, e != nil)
			if e != nil {
				args = append(args, e)
			}
		}
	}
	name := "slice"
	if len(inds) == 1 {
		// The names EXPLAIN has always shown for one range.
		name += map[bool]string{true: "L", false: ""}[has[0]] + map[bool]string{true: "U", false: ""}[has[1]]
	}
	return &plan.Func{Name: name, Args: args, Typ: t, NonStrict: true,
		Fn: func(v []types.Value) (types.Value, error) {
			ranges := make([]types.SliceBound, len(has)/2)
			k := 1
			for i := range ranges {
				r := &ranges[i]
				if r.HasLo = has[2*i]; r.HasLo {
					r.Lo, k = v[k], k+1
				}
				if r.HasHi = has[2*i+1]; r.HasHi {
					r.Hi, k = v[k], k+1
				}
			}
			return types.ArraySliceDims(v[0], ranges), nil
		},
		Render: func(a []string) string {
			var b strings.Builder
			b.WriteString("(" + a[0] + ")")
			k := 1
			for i := 0; i < len(has); i += 2 {
				lo, hi := "", ""
				if has[i] {
					lo, k = a[k], k+1
				}
				if has[i+1] {
					hi, k = a[k], k+1
				}
				b.WriteString("[" + lo + ":" + hi + "]")
			}
			return b.String()
		}}, nil
}

// arrayIndex binds one array subscript, converted to integer; nil for a
// missing one.
func (ec *exprCtx) arrayIndex(n *pg.Node) (plan.Expr, error) {
	if n == nil {
		return nil, nil
	}
	e, err := ec.bind(n)
	if err != nil {
		return nil, err
	}
	c, err := ec.coerce(e, types.Of(types.Int4), assignmentCoercion)
	if errors.Is(err, errNoCast) {
		return nil, posErr(errs.Newf(errs.DatatypeMismatch, "array subscript must have type integer"), exprLocation(n))
	}
	return c, err
}

// vectorSubscript binds the subscript of a name (PostgreSQL's char[64],
// from 0: name[i] is its i-th byte as "char", the empty "char" past its
// end) or of an int2vector or oidvector (from 0).
func (ec *exprCtx) vectorSubscript(arg plan.Expr, ind *pg.A_Indices, loc int32) (plan.Expr, error) {
	t := arg.Type()
	if ind.IsSlice {
		if t.ID == types.Name {
			return nil, posErr(errs.Newf(errs.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", t), loc)
		}
		return nil, notSupported(loc, "slices of %s are not supported", t)
	}
	i, err := ec.arrayIndex(ind.Uidx)
	if err != nil {
		return nil, err
	}
	if t.ID == types.Name {
		return &plan.Func{Name: "name_subscript", Args: []plan.Expr{arg, i}, Typ: types.Of(types.Char), NonStrict: true,
			Fn:     func(v []types.Value) (types.Value, error) { return nameSubscript(v[0], v[1]), nil },
			Render: func(a []string) string { return "(" + a[0] + ")[" + a[1] + "]" }}, nil
	}
	return &plan.Func{Name: "vector_subscript", Args: []plan.Expr{arg, i}, Typ: t.Elem(), NonStrict: true,
		Fn:     func(v []types.Value) (types.Value, error) { return types.VectorSubscript(v[0], v[1]), nil },
		Render: func(a []string) string { return "(" + a[0] + ")[" + a[1] + "]" }}, nil
}

// arrayComparison binds x op ANY (array) and x op ALL (array), as
// PostgreSQL's make_scalar_array_op: op is resolved between x and the
// array's element type (an untyped literal array takes the operator's
// right type), must yield boolean, and is applied to each element with
// SQL's NULL rules: ANY is true when some comparison is true, else NULL
// when some is NULL, else false (false for an empty array); ALL is false
// when some comparison is false, else NULL when some is NULL, else true.
// A NULL array gives NULL.
func (ec *exprCtx) arrayComparison(a *pg.A_Expr, all bool) (plan.Expr, error) {
	op, err := opName(a.Name, a.Location)
	if err != nil {
		return nil, err
	}
	l, err := ec.bind(a.Lexpr)
	if err != nil {
		return nil, err
	}
	r, err := ec.bind(a.Rexpr)
	if err != nil {
		return nil, err
	}
	rt := r.Type()
	elem := types.Of(types.Unknown)
	switch {
	case rt.ID.IsArray():
		elem = rt.Elem()
	case rt.ID != types.Unknown:
		return nil, posErr(errs.New(errs.WrongObjectType, "op ANY/ALL (array) requires array on right side"), a.Location)
	}
	o, err := types.ResolveBinary(op, l.Type(), elem)
	if err != nil {
		return nil, posErr(err, a.Location)
	}
	o = o.InZone(ec.st.b.Zone)
	if o.Result.ID != types.Bool {
		return nil, posErr(errs.New(errs.WrongObjectType, "op ANY/ALL (array) requires operator to yield boolean"), a.Location)
	}
	if !types.HasArrayType(o.Right.ID) {
		return nil, posErr(errs.Newf(errs.UndefinedObject, "could not find array type for data type %s", o.Right), a.Location)
	}
	if l, err = ec.operand(l, o.Left, op, a.Location); err != nil {
		return nil, err
	}
	if r, err = ec.operand(r, types.ArrayType(o.Right), op, a.Location); err != nil {
		return nil, err
	}
	name := op + " ANY"
	if all {
		name = op + " ALL"
	}
	return &plan.Func{Name: name, Args: []plan.Expr{l, r}, Typ: types.Of(types.Bool), NonStrict: true,
		Fn:     func(v []types.Value) (types.Value, error) { return compareEach(o, all, v[0], v[1]) },
		Render: func(a []string) string { return a[0] + " " + name + " (" + a[1] + ")" }}, nil
}

// compareEach applies o between x and each element of arr for ANY (all
// false) or ALL (all true).
func compareEach(o *types.Operator, all bool, x, arr types.Value) (types.Value, error) {
	if arr.IsNull() {
		return types.Null, nil
	}
	sawNull := false
	for _, e := range arr.Elems() {
		if x.IsNull() || e.IsNull() {
			sawNull = true
			continue
		}
		r, err := o.Eval(x, e)
		if err != nil {
			return types.Null, err
		}
		switch {
		case r.IsNull():
			sawNull = true
		case r.Bool() != all:
			return types.MakeBool(!all), nil
		}
	}
	if sawNull {
		return types.Null, nil
	}
	return types.MakeBool(all), nil
}

// arraySubquery rewrites ARRAY(SELECT x FROM ... [ORDER BY ...]) into the
// scalar subquery (SELECT COALESCE(array_agg(x ORDER BY ...), '{}') FROM
// ...), which has the same value for every outer row (the empty array
// when the subquery has no rows) and is decorrelated as scalar subqueries
// with aggregates are. Subqueries that already group, aggregate, use
// DISTINCT, LIMIT, window functions or set operations are not rewritten
// and not supported.
func arraySubquery(sl *pg.SubLink) (*pg.SubLink, error) {
	sel := sl.Subselect.GetSelectStmt()
	loc := sl.Location
	switch {
	case sel == nil || sel.Op != pg.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0:
		return nil, notSupported(loc, "ARRAY(subquery) over a set operation or VALUES is not supported")
	case len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.DistinctClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.WindowClause) > 0 || sel.WithClause != nil:
		return nil, notSupported(loc, "ARRAY(subquery) with GROUP BY, HAVING, DISTINCT, LIMIT, OFFSET, WINDOW or WITH is not supported")
	case len(sel.TargetList) != 1:
		return nil, posErr(errs.New(errs.SyntaxError, "subquery must return only one column"), loc)
	}
	target := sel.TargetList[0].GetResTarget()
	if target == nil || target.Val == nil || isStar(target.Val) {
		return nil, notSupported(loc, "ARRAY(SELECT *) is not supported")
	}
	var order []*pg.Node
	for _, n := range sel.SortClause {
		sb := n.GetSortBy()
		if sb == nil {
			return nil, notSupported(loc, "ORDER BY item %s is not supported", nodeName(n))
		}
		cp := proto.Clone(sb).(*pg.SortBy)
		// ORDER BY 1 and ORDER BY the output name mean the select-list
		// item, which inside the aggregate must be written out.
		if c := sb.Node.GetAConst(); c != nil && c.GetIval() != nil {
			if c.GetIval().Ival != 1 {
				return nil, posErr(errs.Newf(errs.InvalidColumnRef, "ORDER BY position %d is not in select list", c.GetIval().Ival), sb.Location)
			}
			cp.Node = target.Val
		} else if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && target.Name != "" &&
			strings.EqualFold(cr.Fields[0].GetString_().GetSval(), target.Name) {
			cp.Node = target.Val
		}
		order = append(order, &pg.Node{Node: &pg.Node_SortBy{SortBy: cp}})
	}
	val := target.Val
	rewritten := proto.Clone(sel).(*pg.SelectStmt)
	if hasSubLink(val) {
		// A subquery in the element would become an aggregate argument:
		// the elements (and the keys they are ordered by) are computed
		// in a derived table of the subquery's FROM and WHERE instead.
		inner := proto.Clone(sel).(*pg.SelectStmt)
		inner.SortClause = nil
		inner.TargetList = []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: "elem", Val: val, Location: loc}}}}
		for i, o := range order {
			sb := o.GetSortBy()
			name := fmt.Sprintf("key%d", i+1)
			inner.TargetList = append(inner.TargetList, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: name, Val: sb.Node, Location: loc}}})
			sb.Node = pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode("array_elems"), pg.MakeStrNode(name)}, loc)
		}
		val = pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode("array_elems"), pg.MakeStrNode("elem")}, loc)
		rewritten = &pg.SelectStmt{FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
			Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: inner}},
			Alias:    &pg.Alias{Aliasname: "array_elems"},
		}}}}}
	}
	agg := &pg.FuncCall{
		Funcname: []*pg.Node{pg.MakeStrNode("array_agg")},
		Args:     []*pg.Node{val},
		AggOrder: order,
		Location: loc,
	}
	empty := pg.MakeAConstStrNode("{}", loc)
	coalesce := &pg.Node{Node: &pg.Node_CoalesceExpr{CoalesceExpr: &pg.CoalesceExpr{
		Args:     []*pg.Node{{Node: &pg.Node_FuncCall{FuncCall: agg}}, empty},
		Location: loc,
	}}}
	rewritten.TargetList = []*pg.Node{pg.MakeResTargetNodeWithVal(coalesce, loc)}
	rewritten.SortClause = nil
	out := proto.Clone(sl).(*pg.SubLink)
	out.SubLinkType = pg.SubLinkType_EXPR_SUBLINK
	out.Subselect = &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: rewritten}}
	return out, nil
}

// hasSubLink reports whether n holds a subquery.
func hasSubLink(n *pg.Node) bool {
	found := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if found || !m.IsValid() {
			return
		}
		if _, ok := m.Interface().(*pg.SubLink); ok {
			found = true
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
				walk(v.Message())
			}
			return !found
		})
	}
	walk(n.ProtoReflect())
	return found
}

// nameSubscript returns name[i]: the i-th byte (from 0) of the name as
// "char", the empty "char" past the name's end within its 64 bytes, and
// NULL outside them or when either is NULL.
func nameSubscript(n, i types.Value) types.Value {
	if n.IsNull() || i.IsNull() {
		return types.Null
	}
	k, s := i.Int(), n.Str()
	switch {
	case k < 0 || k >= 64:
		return types.Null
	case k >= int64(len(s)):
		return types.MakeText("")
	}
	return types.MakeText(s[k : k+1])
}
