package sql

import (
	"errors"
	"strconv"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// SQL functions (CREATE FUNCTION ... LANGUAGE SQL) whose body is one
// expression are inlined: a call binds the body with each parameter (by
// name, or as $n) standing for the call's argument, converted to the
// parameter's type, and the call is replaced by the bound body,
// converted to the declared result type. No plan holds a call of a SQL
// function, so a view calling one is maintained as if the body were
// written in its place; the catalog keeps the function, and the views
// that call it depend on it (Binder.UsedFunctions).
//
// The body is bound once at CREATE FUNCTION, over its parameters, so
// that a body that does not bind fails there as in PostgreSQL, and again
// at every call. What the inliner cannot take fails at CREATE with
// 0A000 naming it: another language, a body that is not one SELECT of an
// expression (a FROM clause, WHERE, several statements...), subqueries
// and aggregates in the body, set-returning results (RETURNS SETOF,
// RETURNS TABLE), OUT parameters and parameter defaults.
//
// A STRICT function returns NULL when any argument is NULL without
// evaluating the body. A function is VOLATILE unless declared IMMUTABLE
// or STABLE, as in PostgreSQL; a view's query (bound without a Clock)
// refuses to call a VOLATILE function, as it refuses random().

// Volatility is a function's pg_proc.provolatile.
type Volatility byte

// The volatilities.
const (
	Immutable Volatility = 'i'
	Stable    Volatility = 's'
	Volatile  Volatility = 'v'
)

// Function is a SQL function whose body is one expression.
type Function struct {
	// Schema is the function's schema when not public ("" for public);
	// Name its name in it.
	Schema string
	Name   string
	// ArgNames are the parameters' names ("" for one without a name).
	ArgNames   []string
	ArgTypes   []types.Type
	Result     types.Type
	Volatility Volatility
	Strict     bool
	// Body is the body's expression; Source is the body's text as
	// written after AS (empty for a SQL-standard body, RETURN expr or
	// BEGIN ATOMIC ... END, as PostgreSQL's prosrc).
	Body   *pg.Node
	Source string
	// Uses are the signatures of the SQL functions the body calls.
	Uses []string
}

// Signature is the function's identity: its name and argument types, as
// PostgreSQL's regprocedure prints it (add(integer, integer)).
// A function outside public is named qualified (s.add(integer)).
func (f *Function) Signature() string { return f.QualifiedName() + "(" + f.IdentityArgs() + ")" }

// QualifiedName is the function's name, schema-qualified when its schema
// is not public.
func (f *Function) QualifiedName() string {
	if f.Schema == "" {
		return f.Name
	}
	return f.Schema + "." + f.Name
}

// IdentityArgs lists the argument types (integer, text).
func (f *Function) IdentityArgs() string {
	ts := make([]string, len(f.ArgTypes))
	for i, t := range f.ArgTypes {
		ts[i] = t.String()
	}
	return strings.Join(ts, ", ")
}

// Arguments lists the arguments with their names (x integer, text), as
// pg_get_function_arguments does.
func (f *Function) Arguments() string {
	ts := make([]string, len(f.ArgTypes))
	for i, t := range f.ArgTypes {
		ts[i] = t.String()
		if f.ArgNames[i] != "" {
			ts[i] = f.ArgNames[i] + " " + ts[i]
		}
	}
	return strings.Join(ts, ", ")
}

// FunctionCatalog is a Catalog that also holds SQL functions.
type FunctionCatalog interface {
	// Functions returns the SQL functions a call of schema.name can
	// mean: with a schema, that schema's overloads called name; without
	// one, those of the search path's schemas, where an overload of the
	// same argument types as one of an earlier schema is hidden by it,
	// as in PostgreSQL.
	Functions(schema, name string) []*Function
	// SchemaExists reports whether a schema of that name exists.
	SchemaExists(name string) bool
}

// checkTime is the clock a function's body is checked with.
var checkTime = time.Unix(0, 0).UTC()

// maxFunctionDepth bounds the nesting of SQL functions calling SQL
// functions (a function replaced to call itself would never end).
const maxFunctionDepth = 32

// DefineFunction checks a CREATE FUNCTION statement and returns the
// function it defines, its body bound once over its parameters against
// b's catalog.
func (b *Binder) DefineFunction(cs *pg.CreateFunctionStmt) (*Function, error) {
	if cs.IsProcedure {
		return nil, notSupported(-1, "CREATE PROCEDURE is not supported")
	}
	schema, name := funcName(cs.Funcname)
	if schema == "public" {
		schema = ""
	}
	// An unqualified name is created in the catalog's creation schema,
	// which the caller sets (Function.Schema).
	f := &Function{Schema: schema, Name: name, Volatility: Volatile}
	seen := map[string]bool{}
	for _, n := range cs.Parameters {
		p := n.GetFunctionParameter()
		if p == nil {
			return nil, notSupported(-1, "this function parameter is not supported")
		}
		switch p.Mode {
		case pg.FunctionParameterMode_FUNC_PARAM_IN, pg.FunctionParameterMode_FUNC_PARAM_DEFAULT:
		case pg.FunctionParameterMode_FUNC_PARAM_TABLE:
			return nil, notSupported(-1, "RETURNS TABLE is not supported: only scalar SQL functions, which are inlined, are")
		case pg.FunctionParameterMode_FUNC_PARAM_VARIADIC:
			return nil, notSupported(-1, "VARIADIC parameters are not supported")
		default:
			return nil, notSupported(-1, "OUT and INOUT parameters are not supported")
		}
		if p.Defexpr != nil {
			return nil, notSupported(-1, "parameter defaults are not supported")
		}
		t, err := typeOf(p.ArgType)
		if err != nil {
			return nil, err
		}
		if p.Name != "" {
			if seen[p.Name] {
				return nil, errs.Newf(errs.InvalidFunctionDef, "parameter name %q used more than once", p.Name)
			}
			seen[p.Name] = true
		}
		f.ArgNames = append(f.ArgNames, p.Name)
		f.ArgTypes = append(f.ArgTypes, unmodified(t))
	}
	if cs.ReturnType == nil {
		return nil, notSupported(-1, "a function without RETURNS is not supported")
	}
	if cs.ReturnType.Setof {
		return nil, notSupported(cs.ReturnType.Location, "set-returning functions (RETURNS SETOF) are not supported: only scalar SQL functions, which are inlined, are")
	}
	rt, err := typeOf(cs.ReturnType)
	if err != nil {
		return nil, err
	}
	f.Result = unmodified(rt)
	language := ""
	for _, o := range cs.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "language":
			language = strings.ToLower(d.Arg.GetString_().GetSval())
		case "as":
			items := d.Arg.GetList().GetItems()
			if len(items) != 1 {
				return nil, notSupported(-1, "a function defined by an object file is not supported")
			}
			f.Source = items[0].GetString_().GetSval()
		case "volatility":
			f.Volatility = Volatility(d.Arg.GetString_().GetSval()[0])
		case "strict":
			f.Strict = d.Arg.GetBoolean().GetBoolval()
		case "cost", "rows", "parallel", "leakproof":
			// Planner hints: nothing to do for an inlined function.
		case "security":
			if d.Arg.GetBoolean().GetBoolval() {
				return nil, notSupported(-1, "SECURITY DEFINER is not supported")
			}
		case "set":
			return nil, notSupported(-1, "SET in CREATE FUNCTION is not supported")
		case "window":
			return nil, notSupported(-1, "WINDOW functions are not supported")
		default:
			return nil, notSupported(-1, "the function option %s is not supported", strings.ToUpper(d.Defname))
		}
	}
	if cs.SqlBody != nil {
		if language == "" {
			language = "sql"
		}
		if f.Source != "" {
			return nil, errs.New(errs.InvalidFunctionDef, "duplicate function body specified")
		}
	}
	switch language {
	case "sql":
	case "":
		return nil, errs.New(errs.InvalidFunctionDef, "no language specified")
	default:
		return nil, notSupported(-1, "LANGUAGE %s is not supported: only LANGUAGE SQL functions whose body is one expression, which are inlined", language)
	}
	if f.Body, err = functionBody(f.Name, cs.SqlBody, f.Source); err != nil {
		return nil, err
	}
	params := make([]plan.Expr, len(f.ArgTypes))
	for i, t := range f.ArgTypes {
		params[i] = &plan.ColRef{Index: i, Name: f.paramName(i), Typ: t}
	}
	// The body is checked with a clock, so that it binds whatever
	// calls it makes: whether a view may call it is decided at each
	// call, by its volatility and by what its body calls.
	check := &Binder{Cat: b.Cat, Clock: Clock{Transaction: checkTime, Statement: checkTime}}
	if _, err := check.inline(f, params); err != nil {
		return nil, err
	}
	f.Uses = check.UsedFunctions
	return f, nil
}

// Unmodified is t without its modifiers, as a function's parameter
// and result types are.
func Unmodified(t types.Type) types.Type { return unmodified(t) }

// unmodified drops a type's modifiers, as PostgreSQL does for the types
// of a function's parameters and result.
func unmodified(t types.Type) types.Type {
	if t.ID.IsArray() {
		return types.ArrayType(types.Of(t.ID.Elem()))
	}
	return types.Of(t.ID)
}

func (f *Function) paramName(i int) string {
	if f.ArgNames[i] != "" {
		return f.ArgNames[i]
	}
	return "$" + strconv.Itoa(i+1)
}

// functionBody returns the expression of a function's body: the one
// expression of SELECT expr (in the text after AS, or the only statement
// of BEGIN ATOMIC ... END), or of RETURN expr.
func functionBody(name string, sqlBody *pg.Node, source string) (*pg.Node, error) {
	var stmts []*pg.Node
	switch {
	case sqlBody != nil && sqlBody.GetReturnStmt() != nil:
		return sqlBody.GetReturnStmt().Returnval, nil
	case sqlBody != nil:
		for _, l := range sqlBody.GetList().GetItems() {
			stmts = append(stmts, l.GetList().GetItems()...)
		}
	default:
		tree, err := pg.Parse(source)
		if err != nil {
			return nil, errs.Newf(errs.SyntaxError, "in the body of function %s: %v", name, err)
		}
		for _, s := range tree.Stmts {
			stmts = append(stmts, s.Stmt)
		}
	}
	refuse := func(what string) error {
		return notSupported(-1, "the body of function %s has %s: only a body of one SELECT of an expression, without FROM, is supported (it is inlined where the function is called)", name, what)
	}
	switch {
	case len(stmts) == 0:
		return nil, refuse("no statement")
	case len(stmts) > 1:
		return nil, refuse("several statements")
	}
	sel := stmts[0].GetSelectStmt()
	switch {
	case sel == nil:
		return nil, refuse("a " + strings.TrimSuffix(nodeName(stmts[0]), "Stmt") + " statement")
	case sel.Op != pg.SetOperation_SETOP_NONE:
		return nil, refuse("a set operation")
	case len(sel.ValuesLists) > 0:
		return nil, refuse("VALUES")
	case len(sel.FromClause) > 0:
		return nil, refuse("a FROM clause")
	case sel.WhereClause != nil:
		return nil, refuse("a WHERE clause")
	case len(sel.GroupClause) > 0 || sel.HavingClause != nil:
		return nil, refuse("GROUP BY or HAVING")
	case len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil:
		return nil, refuse("ORDER BY, LIMIT or OFFSET")
	case len(sel.DistinctClause) > 0:
		return nil, refuse("DISTINCT")
	case sel.WithClause != nil:
		return nil, refuse("WITH")
	case len(sel.WindowClause) > 0 || sel.IntoClause != nil || len(sel.LockingClause) > 0:
		return nil, refuse("a clause other than the select list")
	case len(sel.TargetList) != 1:
		return nil, refuse("a select list of other than one expression")
	}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Val == nil || rt.Val.GetColumnRef() != nil && len(rt.Val.GetColumnRef().Fields) > 0 &&
		rt.Val.GetColumnRef().Fields[len(rt.Val.GetColumnRef().Fields)-1].GetAStar() != nil {
		return nil, refuse("a select list of other than one expression")
	}
	return rt.Val, nil
}

// inline binds f's body with args (of f's argument types) for its
// parameters and returns it converted to f's result type.
func (b *Binder) inline(f *Function, args []plan.Expr) (plan.Expr, error) {
	if b.fnDepth >= maxFunctionDepth {
		return nil, errs.Newf(errs.StatementTooComplex, "SQL functions nested too deeply at %s", f.Signature())
	}
	b.fnDepth++
	defer func() { b.fnDepth-- }()
	st := newBindState(b)
	st.fnArgs, st.fnBody = args, true
	st.noSubLinks = "subqueries in the body of a SQL function are not supported"
	item := &nsItem{name: f.Name, relVisible: true, colsVisible: true}
	for i, n := range f.ArgNames {
		if n != "" {
			item.cols = append(item.cols, nsCol{name: n, expr: args[i]})
		}
	}
	ec := &exprCtx{st: st, sc: &Scope{items: []*nsItem{item}}, kind: kindScalar}
	e, err := ec.bind(f.Body)
	if err != nil {
		return nil, err
	}
	e = ec.resolveUnknown(e)
	st.noteCast(e.Type(), f.Result)
	out, err := coerceExpr(e, f.Result, assignmentCoercion, st.setParamType, st.b.Zone)
	if errors.Is(err, errNoCast) {
		ee := errs.Newf(errs.InvalidFunctionDef, "return type mismatch in function declared to return %s", f.Result).(*errs.Error)
		ee.Detail = "Actual return type is " + e.Type().String() + "."
		return nil, ee
	}
	if err != nil {
		return nil, err
	}
	if f.Strict && len(args) > 0 {
		var nulls []plan.Expr
		for _, a := range args {
			if c, ok := a.(*plan.Const); ok && !c.Val.IsNull() {
				continue
			}
			nulls = append(nulls, &plan.IsNull{Arg: a})
		}
		if len(nulls) > 0 {
			var cond plan.Expr = &plan.Or{Args: nulls}
			if len(nulls) == 1 {
				cond = nulls[0]
			}
			out = &plan.Case{Whens: []plan.When{{Cond: cond, Result: nullOf(f.Result)}}, Else: out, Typ: f.Result}
		}
	}
	return out, nil
}

// userFunction binds a call of a SQL function of the catalog; ok is false
// when the catalog has no function of that name taking args.
func (ec *exprCtx) userFunction(schema, name string, args []plan.Expr, loc int32) (plan.Expr, bool, error) {
	fc, _ := ec.st.b.Cat.(FunctionCatalog)
	if fc == nil {
		return nil, false, nil
	}
	if schema != "" && !fc.SchemaExists(schema) {
		return nil, true, posErr(errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", schema), loc)
	}
	f, err := pickFunction(fc.Functions(schema, name), args)
	if f == nil || err != nil {
		return nil, err != nil, posErr(err, loc)
	}
	b := ec.st.b
	if f.Volatility == Volatile && b.Clock.Transaction.IsZero() {
		return nil, true, notSupported(loc, "function %s is VOLATILE, which a view cannot call: its result may depend on when or how often it is evaluated; declare it IMMUTABLE or STABLE if it is not", f.Signature())
	}
	conv := make([]plan.Expr, len(args))
	for i, a := range args {
		c, err := ec.coerce(a, f.ArgTypes[i], implicitCoercion)
		if err != nil {
			return nil, true, posErr(err, loc)
		}
		conv[i] = c
	}
	e, err := b.inline(f, conv)
	if err != nil {
		// Positions inside the body mean nothing in the calling
		// statement: the call is named instead.
		var ee *errs.Error
		if errors.As(err, &ee) {
			c := *ee
			c.Position = 0
			if !strings.Contains(c.Message, "(in function ") {
				c.Message += " (in function " + f.Signature() + ")"
			}
			return nil, true, posErr(&c, loc)
		}
		return nil, true, err
	}
	sig := f.Signature()
	if !slicesContains(b.UsedFunctions, sig) {
		b.UsedFunctions = append(b.UsedFunctions, sig)
	}
	return e, true, nil
}

func slicesContains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// pickFunction chooses among a function's overloads the one a call with
// args resolves to: of the overloads whose parameters each argument
// converts to implicitly (an untyped literal converts to any type), the
// one with the most arguments of exactly its parameter's type. A tie is
// 42725, as in PostgreSQL; no candidate is a nil Function.
func pickFunction(cands []*Function, args []plan.Expr) (*Function, error) {
	var best *Function
	bestExact, bestStrings, tie := -1, -1, false
	for _, f := range cands {
		if len(f.ArgTypes) != len(args) {
			continue
		}
		exact, strs, ok := 0, 0, true
		for i, a := range args {
			at, pt := a.Type(), f.ArgTypes[i]
			switch {
			case at.ID == pt.ID:
				exact++
			case at.ID == types.Unknown:
				if cat, _ := types.CategoryOf(pt.ID); cat == 'S' {
					strs++
				}
			case !castAllowed(at.ID, pt.ID, implicitCoercion):
				ok = false
			}
		}
		// An untyped literal prefers a parameter of the string
		// category, as PostgreSQL's func_select_candidate does.
		switch {
		case !ok:
		case exact > bestExact || exact == bestExact && strs > bestStrings:
			best, bestExact, bestStrings, tie = f, exact, strs, false
		case exact == bestExact && strs == bestStrings:
			tie = true
		}
	}
	if tie {
		return nil, errs.Newf(errs.AmbiguousFunction, "function %s(%s) is not unique", best.Name, argTypeList(args))
	}
	return best, nil
}

func argTypeList(args []plan.Expr) string {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	return strings.Join(ts, ", ")
}
