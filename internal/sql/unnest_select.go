package sql

import (
	"fmt"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// Set-returning functions in a select list (see unnest.go): each call is
// a placeholder until the select list is bound, then selectUnnest turns
// them into one plan.Unnest.

// srfCall binds a set-returning function in a select list — unnest(array)
// or generate_subscripts(array, dim [, reverse]) — to a placeholder call
// over the array of the rows it returns, which selectUnnest replaces by
// the element column of a plan.Unnest.
func (ec *exprCtx) srfCall(name string, args []plan.Expr, loc int32) (plan.Expr, error) {
	if wc := ec.st.wins; wc != nil && wc.nestArgs > 0 {
		return nil, posErr(errs.New(errs.FeatureNotSupported, "window function calls cannot contain set-returning function calls"), loc)
	} else if wc != nil && wc.nestDef > 0 {
		return nil, posErr(errs.New(errs.FeatureNotSupported, "set-returning functions are not allowed in window definitions"), loc)
	}
	switch ec.kind {
	case kindSelect:
	case kindAggArg:
		return nil, posErr(errs.New(errs.FeatureNotSupported, "aggregate function calls cannot contain set-returning function calls"), loc)
	default:
		return nil, posErr(errs.Newf(errs.FeatureNotSupported, "set-returning functions are not allowed in %s", ec.kind.where()), loc)
	}
	if isJSONBSetFunc(name) {
		a, err := ec.jsonbSetArray(name, args, loc)
		if err != nil {
			return nil, err
		}
		args = []plan.Expr{a}
	}
	if name == "generate_subscripts" {
		a, err := ec.subscriptsArray(args, loc)
		if err != nil {
			return nil, err
		}
		args = []plan.Expr{a}
	}
	elem, err := unnestElement(args, loc)
	if err != nil {
		return nil, err
	}
	if name == "json_array_elements" {
		elem = types.Of(types.Json) // json texts, in a text[]
	}
	return &plan.Func{Name: unnestName, Args: args, Typ: elem, NonStrict: true,
		Fn: func([]types.Value) (types.Value, error) {
			return types.Null, errs.New(errs.Internal, "unnest evaluated outside its Unnest")
		}}, nil
}

// isUnnestCall reports whether e is srfCall's placeholder.
func isUnnestCall(e plan.Expr) bool {
	f, ok := e.(*plan.Func)
	return ok && f.Name == unnestName
}

// selectUnnest puts the set-returning calls of a select list (over node's
// row) into a plan.Unnest over node and replaces them by its element
// column. Several different calls are zipped, as PostgreSQL 10's
// ProjectSet does: a row gives as many rows as its longest set, the
// shorter ones padded with NULLs. For that, the rows' arrays become
// columns of a projection, the Unnest runs over the positions 1..n of
// the longest, and each call becomes its array's element at the
// position.
func selectUnnest(node plan.Node, tl []*target) (plan.Node, error) {
	var calls []*plan.Func
	for _, t := range tl {
		walkExpr(t.expr, func(e plan.Expr) {
			if !isUnnestCall(e) {
				return
			}
			for _, c := range calls {
				if exprEqual(c, e) {
					return
				}
			}
			calls = append(calls, e.(*plan.Func))
		})
	}
	if len(calls) == 0 {
		return node, nil
	}
	for _, t := range tl {
		if what := conditionalUnnest(t.expr); what != "" {
			return nil, notSupported(-1, "set-returning functions are not allowed in %s", what)
		}
	}
	for _, c := range calls {
		nested := false
		walkExpr(c.Args[0], func(e plan.Expr) { nested = nested || isUnnestCall(e) })
		if nested {
			return nil, notSupported(-1, "nested set-returning functions are not supported")
		}
	}
	inCols := node.Columns()
	if len(calls) == 1 {
		call := calls[0]
		u := &plan.Unnest{Input: node, Array: call.Args[0],
			Cols: append(append([]plan.Column(nil), inCols...), plan.Column{Name: "unnest", Type: call.Typ})}
		elem := &plan.ColRef{Index: len(inCols), Name: "unnest", Typ: call.Typ}
		replaceCalls(tl, func(*plan.Func) plan.Expr { return elem })
		return u, nil
	}
	proj := &plan.Project{Input: node, Cols: append([]plan.Column(nil), inCols...)}
	for i, c := range inCols {
		proj.Exprs = append(proj.Exprs, &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type})
	}
	arrays := make([]plan.Expr, len(calls))
	for i, c := range calls {
		name := fmt.Sprintf("srf%d", i+1)
		arrays[i] = &plan.ColRef{Index: len(proj.Cols), Name: name, Typ: c.Args[0].Type()}
		proj.Exprs = append(proj.Exprs, c.Args[0])
		proj.Cols = append(proj.Cols, plan.Column{Name: name, Type: c.Args[0].Type()})
	}
	posType := types.Of(types.Int4)
	positions := &plan.Func{Name: "srf_positions", Args: arrays, Typ: types.ArrayType(posType), Fn: zipPositions}
	positions.NonStrict = true
	pos := &plan.ColRef{Index: len(proj.Cols), Name: "position", Typ: posType}
	u := &plan.Unnest{Input: proj, Array: positions,
		Cols: append(append([]plan.Column(nil), proj.Cols...), plan.Column{Name: "position", Type: posType})}
	replaceCalls(tl, func(call *plan.Func) plan.Expr {
		for i, c := range calls {
			if exprEqual(c, call) {
				return &plan.Func{Name: "srf_element", Args: []plan.Expr{arrays[i], pos}, Typ: call.Typ, NonStrict: true, Fn: elementAt}
			}
		}
		return call
	})
	return u, nil
}

// replaceCalls replaces the set-returning calls of a select list.
func replaceCalls(tl []*target, by func(*plan.Func) plan.Expr) {
	for _, t := range tl {
		t.expr, _ = transform(t.expr, func(e plan.Expr) (plan.Expr, bool, error) {
			if isUnnestCall(e) {
				return by(e.(*plan.Func)), true, nil
			}
			return nil, false, nil
		})
	}
}

// zipPositions returns the positions 1..n of the longest of its arrays (a
// NULL array has none).
func zipPositions(arrays []types.Value) (types.Value, error) {
	n := 0
	for _, a := range arrays {
		n = max(n, len(a.Elems()))
	}
	pos := make([]types.Value, n)
	for i := range pos {
		pos[i] = types.MakeInt(types.Int4, int64(i+1))
	}
	return types.MakeArray(types.Int4, pos), nil
}

// elementAt is element pos (1-based) of an array, NULL past its end.
func elementAt(v []types.Value) (types.Value, error) {
	elems, pos := v[0].Elems(), int(v[1].Int())
	if pos < 1 || pos > len(elems) {
		return types.Null, nil
	}
	return elems[pos-1], nil
}
