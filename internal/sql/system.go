package sql

import (
	"errors"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// SystemCatalog is implemented by a Catalog that answers a session's
// queries: it resolves the names of OID alias types ('orders'::regclass,
// oid::regtype) and provides the system information functions (version(),
// current_user, pg_get_viewdef(), format_type(), ...).
//
// Their values depend on the session and the catalog at the time of the
// query, so only ad-hoc queries (and plain views they expand) may use
// them: a Catalog that binds a materialized view does not implement this
// interface, and there the functions are refused as non-deterministic.
type SystemCatalog interface {
	Catalog
	types.RegCatalog
	// InSession reports whether the catalog binds a session's ad-hoc
	// query; only then are the system functions, name lookups of OID
	// alias types and per-row subqueries available.
	InSession() bool
	// SystemFunction returns the overloads of the system function name
	// (lower case, without schema), or nil.
	SystemFunction(name string) []SystemFunc
}

// SystemFunc is one overload of a system information function.
type SystemFunc struct {
	Args   []types.Type
	Result types.Type
	// NonStrict is set when Eval must see NULL arguments.
	NonStrict bool
	Eval      func(args []types.Value) (types.Value, error)
}

// systemCatalog returns the binder's catalog as a SystemCatalog when it
// binds a session's query, or nil.
func (st *bindState) systemCatalog() SystemCatalog {
	sc, _ := st.b.Cat.(SystemCatalog)
	if sc == nil || !sc.InSession() {
		return nil
	}
	return sc
}

// systemFunc binds a call of a system function; ok is false when name is
// none (or the catalog has none).
func (ec *exprCtx) systemFunc(f *pg.FuncCall, display, name string) (plan.Expr, bool, error) {
	sc := ec.st.systemCatalog()
	if sc == nil {
		return nil, false, nil
	}
	overloads := sc.SystemFunction(name)
	if overloads == nil {
		return nil, false, nil
	}
	if f.AggStar || f.AggDistinct || f.AggFilter != nil || len(f.AggOrder) > 0 || f.FuncVariadic {
		return nil, true, notSupported(f.Location, "this form of %s() is not supported", display)
	}
	var args []plan.Expr
	for _, a := range f.Args {
		if a.GetNamedArgExpr() != nil {
			return nil, true, notSupported(f.Location, "named arguments are not supported for %s()", display)
		}
		e, err := ec.bind(a)
		if err != nil {
			return nil, true, err
		}
		args = append(args, e)
	}
	e, err := ec.callSystem(display, name, overloads, args, f.Location)
	return e, true, err
}

// callSystem resolves a system function's overload for args and binds
// the call: the first overload whose parameters are the arguments' types
// (an untyped literal counting as text, as PostgreSQL prefers the string
// category for it), else the first that every argument converts to
// implicitly. A call over constants is computed once.
func (ec *exprCtx) callSystem(display, name string, overloads []SystemFunc, args []plan.Expr, loc int32) (plan.Expr, error) {
	ec.st.b.UsedSession = true
	exact := func(o SystemFunc) bool {
		for i, a := range args {
			id := a.Type().ID
			if id == types.Unknown {
				id = types.Text
			}
			if id != o.Args[i].ID {
				return false
			}
		}
		return true
	}
	var ordered []SystemFunc
	for _, o := range overloads {
		if len(o.Args) == len(args) && exact(o) {
			ordered = append(ordered, o)
		}
	}
	ordered = append(ordered, overloads...)
	for _, o := range ordered {
		if len(o.Args) != len(args) {
			continue
		}
		out := make([]plan.Expr, len(args))
		ok := true
		for i, a := range args {
			c, err := ec.coerce(a, o.Args[i], implicitCoercion)
			if errors.Is(err, errNoCast) {
				ok = false
				break
			}
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		if !ok {
			continue
		}
		return foldConstant(&plan.Func{Name: name, Args: out, Typ: o.Result, NonStrict: o.NonStrict, Fn: o.Eval}), nil
	}
	return nil, undefinedFunction(display, args, loc)
}

// sqlValueSystemFunction binds CURRENT_USER, SESSION_USER, USER,
// CURRENT_ROLE, CURRENT_CATALOG and CURRENT_SCHEMA as the system
// functions of the same meaning; ok is false for the others.
func (ec *exprCtx) sqlValueSystemFunction(f *pg.SQLValueFunction) (plan.Expr, bool, error) {
	var name string
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE, pg.SQLValueFunctionOp_SVFOP_USER:
		name = "current_user"
	case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		name = "session_user"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		name = "current_database"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		name = "current_schema"
	default:
		return nil, false, nil
	}
	var overloads []SystemFunc
	if sc := ec.st.systemCatalog(); sc != nil {
		overloads = sc.SystemFunction(name)
	}
	if overloads == nil {
		return nil, true, notSupported(f.Location, "%s is not supported here: it depends on the session, so only a session's queries may use it, not a materialized view",
			strings.ToLower(strings.TrimPrefix(f.Op.String(), "SVFOP_")))
	}
	e, err := ec.callSystem(name, name, overloads, nil, f.Location)
	return e, true, err
}

// regCoerce converts e to an OID alias type (regclass, regtype, ...),
// resolving names in the system catalog: a constant is converted now (so
// that 'nosuch'::regclass fails when the statement is bound, as in
// PostgreSQL), anything else per row. ok is false when the conversion is
// not one (the target is no alias type, or the query is not a session's:
// a materialized view cannot depend on names in the catalog, so there
// only numeric OIDs convert, without names).
func (ec *exprCtx) regCoerce(e plan.Expr, to types.Type, c coercion) (plan.Expr, bool, error) {
	from := e.Type().ID
	sc := ec.st.systemCatalog()
	if to.ID.IsArray() && types.IsReg(to.ID.Elem()) && from != to.ID && sc != nil {
		return ec.regArrayCoerce(e, to, c, sc)
	}
	if !types.IsReg(to.ID) || from == to.ID || sc == nil {
		return nil, false, nil
	}
	if _, isParam := e.(*plan.Param); isParam && from == types.Unknown {
		return nil, false, nil
	}
	if !castAllowed(from, to.ID, c) {
		return nil, true, errNoCast
	}
	explicit := c == explicitCoercion
	ec.st.b.UsedSession = true
	if k, ok := e.(*plan.Const); ok {
		v, err := types.CastReg(k.Val, to, explicit, sc)
		if err != nil {
			if loc, ok := ec.st.locs[e]; ok {
				err = posErr(err, loc)
			}
			return nil, true, err
		}
		return &plan.Const{Val: v, Typ: to}, true, nil
	}
	return &plan.Func{Name: to.String(), Args: []plan.Expr{e}, Typ: to,
		Fn: func(a []types.Value) (types.Value, error) { return types.CastReg(a[0], to, explicit, sc) }}, true, nil
}

// regArrayCoerce converts e to an array of an OID alias type, element by
// element as regCoerce converts one value (text input is read as text[]
// first).
func (ec *exprCtx) regArrayCoerce(e plan.Expr, to types.Type, c coercion, sc SystemCatalog) (plan.Expr, bool, error) {
	from := e.Type().ID
	if _, isParam := e.(*plan.Param); isParam && from == types.Unknown {
		return nil, false, nil
	}
	if !castAllowed(from, to.ID, c) {
		return nil, true, errNoCast
	}
	explicit := c == explicitCoercion
	ec.st.b.UsedSession = true
	elem := to.Elem()
	textArray := types.ArrayType(types.Of(types.Text))
	conv := func(v types.Value) (types.Value, error) {
		if v.IsNull() {
			return types.Null, nil
		}
		if !v.Kind().IsArray() {
			var err error
			if v, err = types.Cast(v, textArray, explicit); err != nil {
				return types.Null, err
			}
		}
		in := v.Elems()
		out := make([]types.Value, len(in))
		for i, x := range in {
			r, err := types.CastReg(x, elem, explicit, sc)
			if err != nil {
				return types.Null, err
			}
			out[i] = r
		}
		return v.WithElems(elem.ID, out), nil
	}
	if k, ok := e.(*plan.Const); ok {
		v, err := conv(k.Val)
		if err != nil {
			return nil, true, err
		}
		return &plan.Const{Val: v, Typ: to}, true, nil
	}
	return &plan.Func{Name: to.String(), Args: []plan.Expr{e}, Typ: to,
		Fn: func(a []types.Value) (types.Value, error) { return conv(a[0]) }}, true, nil
}
