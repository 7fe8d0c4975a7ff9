package sql

import (
	"errors"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// This file binds operators and the special forms of expressions:
// BETWEEN, IN, boolean logic and tests, casts, CASE, COALESCE and
// GREATEST/LEAST.

// operatorNames are the operators the engine implements.
var operatorNames = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "%": true, "||": true,
	"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true,
	"~~": true, "!~~": true, "~~*": true, "!~~*": true,
	"~": true, "~*": true, "!~": true, "!~*": true,
	"@>": true, "<@": true, "&&": true,
	"&": true, "|": true, "#": true, "<<": true, ">>": true,
}

// opName returns the operator name of an A_Expr (OPERATOR(pg_catalog.+)
// is +).
func opName(names []*pg.Node, loc int32) (string, error) {
	var parts []string
	for _, n := range names {
		parts = append(parts, n.GetString_().GetSval())
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	if len(parts) != 1 {
		return "", posErr(errs.Newf(errs.UndefinedFunction, "operator does not exist: %s", strings.Join(parts, ".")), loc)
	}
	if !operatorNames[parts[0]] {
		return "", notSupported(loc, "operator %s is not supported yet", parts[0])
	}
	return parts[0], nil
}

// binaryOp resolves l op r and converts the operands to the operator's
// argument types.
func (ec *exprCtx) binaryOp(op string, l, r plan.Expr, loc int32) (*plan.BinOp, error) {
	o, err := types.ResolveBinary(op, l.Type(), r.Type())
	if err != nil {
		return nil, posErr(err, loc)
	}
	o = o.InZone(ec.st.b.Zone)
	if l, err = ec.operand(l, o.Left, op, loc); err != nil {
		return nil, err
	}
	if r, err = ec.operand(r, o.Right, op, loc); err != nil {
		return nil, err
	}
	if c, ok := r.(*plan.Const); ok && (op == "~" || op == "~*" || op == "!~" || op == "!~*") {
		if err := types.RegexOperatorRefusal(op, c.Val); err != nil {
			return nil, posErr(err, loc)
		}
	}
	return &plan.BinOp{Op: o, Left: l, Right: r}, nil
}

// operand converts an operator's operand to the argument type the
// operator declares. A polymorphic argument takes the operand as it is
// (an Unknown literal becomes text).
func (ec *exprCtx) operand(e plan.Expr, want types.Type, op string, loc int32) (plan.Expr, error) {
	if !realType(want.ID) {
		return ec.resolveUnknown(e), nil
	}
	out, err := ec.coerce(e, want, implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, posErr(errs.Newf(errs.UndefinedFunction,
			"operator %s cannot take an argument of type %s", op, e.Type()), loc)
	}
	return out, err
}

// aExpr binds operator expressions and their special forms.
func (ec *exprCtx) aExpr(a *pg.A_Expr) (plan.Expr, error) {
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		op, err := opName(a.Name, a.Location)
		if err != nil {
			return nil, err
		}
		if a.Lexpr == nil {
			arg, err := ec.bind(a.Rexpr)
			if err != nil {
				return nil, err
			}
			if op != "-" && op != "+" && op != "~" {
				return nil, notSupported(a.Location, "prefix operator %s is not supported yet", op)
			}
			o, err := types.ResolveUnary(op, arg.Type())
			if err != nil {
				return nil, posErr(err, a.Location)
			}
			if arg, err = ec.operand(arg, o.Right, op, a.Location); err != nil {
				return nil, err
			}
			return &plan.UnaryOp{Op: o, Arg: arg}, nil
		}
		if a.Rexpr == nil {
			return nil, notSupported(a.Location, "postfix operators are not supported")
		}
		if isRow(a.Lexpr) || isRow(a.Rexpr) {
			return ec.rowBinary(op, a)
		}
		l, err := ec.bind(a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := ec.bind(a.Rexpr)
		if err != nil {
			return nil, err
		}
		return ec.binaryOp(op, l, r, a.Location)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		return ec.arrayComparison(a, a.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		if isRow(a.Lexpr) || isRow(a.Rexpr) {
			l, err := ec.rowOperand(a.Lexpr)
			if err != nil {
				return nil, err
			}
			r, err := ec.rowOperand(a.Rexpr)
			if err != nil {
				return nil, err
			}
			if !l.row || !r.row {
				return ec.compareOperands("=", l, r, a.Location)
			}
			return ec.rowDistinct(l.fields, r.fields, a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT, a.Location)
		}
		l, err := ec.bind(a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := ec.bind(a.Rexpr)
		if err != nil {
			return nil, err
		}
		eq, err := ec.binaryOp("=", l, r, a.Location)
		if err != nil {
			return nil, err
		}
		return &plan.IsDistinct{Eq: eq.Op, Left: eq.Left, Right: eq.Right,
			Negated: a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT}, nil
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		l, err := ec.bind(a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := ec.bind(a.Rexpr)
		if err != nil {
			return nil, err
		}
		eq, err := ec.binaryOp("=", l, r, a.Location)
		if err != nil {
			return nil, err
		}
		if eq.Op.Result.ID != types.Bool {
			return nil, posErr(errs.New(errs.DatatypeMismatch, "NULLIF requires = operator to yield boolean"), a.Location)
		}
		return &plan.NullIf{Eq: eq.Op, Left: eq.Left, Right: eq.Right}, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		return ec.inList(a)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		return ec.like(a)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return ec.similar(a)
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return ec.between(a)
	}
	return nil, notSupported(a.Location, "operator expression %s is not supported yet", a.Kind)
}

// between expands BETWEEN into comparisons, as PostgreSQL's parser does:
// a BETWEEN x AND y is a >= x AND a <= y; NOT BETWEEN is a < x OR a > y;
// SYMMETRIC also tries the bounds swapped.
func (ec *exprCtx) between(a *pg.A_Expr) (plan.Expr, error) {
	bounds := a.Rexpr.GetList().GetItems()
	if len(bounds) != 2 {
		return nil, posErr(errs.New(errs.SyntaxError, "malformed BETWEEN"), a.Location)
	}
	if isRow(a.Lexpr) || isRow(bounds[0]) || isRow(bounds[1]) {
		return ec.rowBetween(a, bounds)
	}
	arg, err := ec.bind(a.Lexpr)
	if err != nil {
		return nil, err
	}
	lo, err := ec.bind(bounds[0])
	if err != nil {
		return nil, err
	}
	hi, err := ec.bind(bounds[1])
	if err != nil {
		return nil, err
	}
	return expandBetween(a, arg, lo, hi, func(op string, l, r plan.Expr, loc int32) (plan.Expr, error) {
		return ec.binaryOp(op, l, r, loc)
	})
}

// expandBetween is BETWEEN a of arg, lo and hi, bound values or rows,
// as comparisons compare makes.
func expandBetween[T any](a *pg.A_Expr, arg, lo, hi T, compare func(op string, l, r T, loc int32) (plan.Expr, error)) (plan.Expr, error) {
	not := a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN || a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM
	one := func(lo, hi T) (plan.Expr, error) {
		geOp, leOp := ">=", "<="
		if not {
			geOp, leOp = "<", ">"
		}
		x, err := compare(geOp, arg, lo, a.Location)
		if err != nil {
			return nil, err
		}
		y, err := compare(leOp, arg, hi, a.Location)
		if err != nil {
			return nil, err
		}
		if not {
			return &plan.Or{Args: []plan.Expr{x, y}}, nil
		}
		return &plan.And{Args: []plan.Expr{x, y}}, nil
	}
	e1, err := one(lo, hi)
	if err != nil {
		return nil, err
	}
	if a.Kind == pg.A_Expr_Kind_AEXPR_BETWEEN || a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
		return e1, nil
	}
	e2, err := one(hi, lo)
	if err != nil {
		return nil, err
	}
	if not {
		return &plan.And{Args: []plan.Expr{e1, e2}}, nil
	}
	return &plan.Or{Args: []plan.Expr{e1, e2}}, nil
}

// inList binds x [NOT] IN (list) as PostgreSQL does: the elements that do
// not read columns are compared together as one IN list when they and x
// have a common type; every other element is compared on its own, and the
// comparisons are ORed (ANDed with <> for NOT IN).
func (ec *exprCtx) inList(a *pg.A_Expr) (plan.Expr, error) {
	not := false
	if name, _ := opName(a.Name, a.Location); name == "<>" {
		not = true
	}
	items := a.Rexpr.GetList().GetItems()
	if len(items) == 0 {
		return nil, notSupported(a.Location, "IN (subquery) is not supported yet")
	}
	if isRow(a.Lexpr) || slices.ContainsFunc(items, isRow) {
		return ec.rowInList(a, items, not)
	}
	arg, err := ec.bind(a.Lexpr)
	if err != nil {
		return nil, err
	}
	all := make([]plan.Expr, len(items))
	var vars, consts []plan.Expr
	for i, it := range items {
		e, err := ec.bind(it)
		if err != nil {
			return nil, err
		}
		all[i] = e
		if hasColRefs(e) {
			vars = append(vars, e)
		} else {
			consts = append(consts, e)
		}
	}
	var arms []plan.Expr
	rest := all
	if len(consts) > 1 {
		if in, ok := ec.commonInList(arg, consts, not); ok {
			arms = append(arms, in)
			rest = vars
		}
	}
	op := "="
	if not {
		op = "<>"
	}
	for _, e := range rest {
		cmp, err := ec.binaryOp(op, arg, e, a.Location)
		if err != nil {
			return nil, err
		}
		arms = append(arms, cmp)
	}
	if len(arms) == 1 {
		return arms[0], nil
	}
	if not {
		return &plan.And{Args: arms}, nil
	}
	return &plan.Or{Args: arms}, nil
}

// commonInList builds arg IN (list) over the common type of arg and list,
// or reports that there is none.
func (ec *exprCtx) commonInList(arg plan.Expr, list []plan.Expr, not bool) (plan.Expr, bool) {
	ts := []types.Type{arg.Type()}
	for _, e := range list {
		ts = append(ts, e.Type())
	}
	t, err := types.CommonType("IN", ts)
	if err != nil {
		return nil, false
	}
	for _, x := range ts {
		if !castAllowed(x.ID, t.ID, implicitCoercion) {
			return nil, false
		}
	}
	eq, err := types.ResolveBinary("=", t, t)
	if err != nil || eq.Result.ID != types.Bool || eq.Left.ID != t.ID || eq.Right.ID != t.ID {
		return nil, false
	}
	carg, err := ec.coerce(arg, t, implicitCoercion)
	if err != nil {
		return nil, false
	}
	in := &plan.InList{Eq: eq, Arg: carg, Negated: not}
	for _, e := range list {
		ce, err := ec.coerce(e, t, implicitCoercion)
		if err != nil {
			return nil, false
		}
		in.List = append(in.List, ce)
	}
	return in, true
}

// boolExpr binds AND, OR and NOT.
func (ec *exprCtx) boolExpr(b *pg.BoolExpr) (plan.Expr, error) {
	var clause string
	switch b.Boolop {
	case pg.BoolExprType_AND_EXPR:
		clause = "AND"
	case pg.BoolExprType_OR_EXPR:
		clause = "OR"
	default:
		clause = "NOT"
	}
	args := make([]plan.Expr, len(b.Args))
	for i, n := range b.Args {
		e, err := ec.bindBool(n, clause)
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	switch b.Boolop {
	case pg.BoolExprType_AND_EXPR:
		return &plan.And{Args: args}, nil
	case pg.BoolExprType_OR_EXPR:
		return &plan.Or{Args: args}, nil
	}
	return &plan.Not{Arg: args[0]}, nil
}

func (ec *exprCtx) nullTest(t *pg.NullTest) (plan.Expr, error) {
	if fields, ok, err := ec.rowFields(t.Arg); ok {
		if err != nil {
			return nil, err
		}
		return rowNullTest(fields, t.Nulltesttype == pg.NullTestType_IS_NOT_NULL, ec), nil
	}
	arg, err := ec.bind(t.Arg)
	if err != nil {
		return nil, err
	}
	return &plan.IsNull{Arg: ec.resolveUnknown(arg), Negated: t.Nulltesttype == pg.NullTestType_IS_NOT_NULL}, nil
}

func (ec *exprCtx) booleanTest(t *pg.BooleanTest) (plan.Expr, error) {
	var test, clause string
	var neg bool
	switch t.Booltesttype {
	case pg.BoolTestType_IS_TRUE:
		test, clause = "true", "IS TRUE"
	case pg.BoolTestType_IS_NOT_TRUE:
		test, clause, neg = "true", "IS NOT TRUE", true
	case pg.BoolTestType_IS_FALSE:
		test, clause = "false", "IS FALSE"
	case pg.BoolTestType_IS_NOT_FALSE:
		test, clause, neg = "false", "IS NOT FALSE", true
	case pg.BoolTestType_IS_UNKNOWN:
		test, clause = "unknown", "IS UNKNOWN"
	default:
		test, clause, neg = "unknown", "IS NOT UNKNOWN", true
	}
	arg, err := ec.bindBool(t.Arg, clause)
	if err != nil {
		return nil, err
	}
	return &plan.IsBool{Arg: arg, Test: test, Negated: neg}, nil
}

// typeCast binds CAST(x AS t) and x::t.
func (ec *exprCtx) typeCast(c *pg.TypeCast) (plan.Expr, error) {
	to, err := typeOf(c.TypeName)
	if err != nil {
		return nil, err
	}
	if a := c.Arg.GetAArrayExpr(); a != nil && to.ID.IsArray() {
		// ARRAY[...]::t[] converts the elements to t, and types ARRAY[].
		return ec.arrayConstructor(a, to)
	}
	arg, err := ec.bind(c.Arg)
	if err != nil {
		return nil, err
	}
	out, err := ec.coerce(arg, to, explicitCoercion)
	if errors.Is(err, errNoCast) {
		loc := c.Location
		if loc < 0 {
			loc = exprLocation(c.Arg)
		}
		return nil, posErr(errs.Newf(errs.CannotCoerce, "cannot cast type %s to %s", arg.Type(), to), loc)
	}
	return out, err
}

// TypeOf resolves a type name as a column definition or a cast writes it,
// with its modifiers and array brackets.
func TypeOf(tn *pg.TypeName) (types.Type, error) { return typeOf(tn) }

// typeOf resolves a type name with its modifiers.
func typeOf(tn *pg.TypeName) (types.Type, error) {
	if tn == nil {
		return types.Type{}, errs.New(errs.Internal, "missing type name")
	}
	if tn.Setof || tn.PctType {
		return types.Type{}, notSupported(tn.Location, "type name form is not supported")
	}
	var names []string
	for _, n := range tn.Names {
		names = append(names, n.GetString_().GetSval())
	}
	var mods []int32
	for _, m := range tn.Typmods {
		k := m.GetAConst()
		if k == nil || k.GetIval() == nil {
			return types.Type{}, posErr(errs.New(errs.SyntaxError,
				"type modifiers must be simple constants or identifiers"), tn.Location)
		}
		mods = append(mods, k.GetIval().Ival)
	}
	t, err := types.TypeByName(names, mods)
	if err != nil {
		return types.Type{}, posErr(err, tn.Location)
	}
	if len(tn.ArrayBounds) > 0 {
		// PostgreSQL ignores the bounds and the number of brackets:
		// int[3] and int[][] are both integer[].
		if t.ID.IsArray() || !types.HasArrayType(t.ID) {
			return types.Type{}, posErr(errs.Newf(errs.UndefinedObject, "could not find array type for data type %s", t), tn.Location)
		}
		t = types.ArrayType(t)
	}
	return t, nil
}

// common converts es to their common type, as PostgreSQL's
// select_common_type and coerce_to_common_type do for context (CASE,
// COALESCE, ...). locs are the expressions' positions.
func (ec *exprCtx) common(context string, es []plan.Expr, locs []int32) ([]plan.Expr, types.Type, error) {
	ts := make([]types.Type, len(es))
	for i, e := range es {
		ts[i] = e.Type()
	}
	t, err := types.CommonType(context, ts)
	if err != nil {
		return nil, types.Type{}, posErr(err, mismatchLoc(ts, locs))
	}
	out := make([]plan.Expr, len(es))
	for i, e := range es {
		c, err := ec.coerce(e, t, implicitCoercion)
		if errors.Is(err, errNoCast) {
			return nil, types.Type{}, posErr(errs.Newf(errs.DatatypeMismatch,
				"%s could not convert type %s to %s", context, e.Type(), t), locs[i])
		}
		if err != nil {
			return nil, types.Type{}, err
		}
		out[i] = c
	}
	return out, t, nil
}

// mismatchLoc is the position of the first expression whose type differs
// from the first typed one's, where PostgreSQL reports a failed type
// resolution.
func mismatchLoc(ts []types.Type, locs []int32) int32 {
	first := types.Unknown
	for i, t := range ts {
		switch {
		case t.ID == types.Unknown:
		case first == types.Unknown:
			first = t.ID
		case t.ID != first:
			return locs[i]
		}
	}
	return firstLoc(locs)
}

func firstLoc(locs []int32) int32 {
	for _, l := range locs {
		if l >= 0 {
			return l
		}
	}
	return -1
}

// caseExpr binds searched and simple CASE; a simple CASE becomes a
// searched one comparing the argument with each WHEN value by "=".
func (ec *exprCtx) caseExpr(c *pg.CaseExpr) (plan.Expr, error) {
	var arg plan.Expr
	if c.Arg != nil {
		var err error
		if arg, err = ec.bind(c.Arg); err != nil {
			return nil, err
		}
		arg = ec.resolveUnknown(arg)
	}
	var conds []plan.Expr
	var results []plan.Expr
	var locs []int32
	// The default result comes first, as PostgreSQL resolves it first.
	var def plan.Expr
	defLoc := c.Location
	if c.Defresult != nil {
		var err error
		if def, err = ec.bind(c.Defresult); err != nil {
			return nil, err
		}
		defLoc = exprLocation(c.Defresult)
	} else {
		def = &plan.Const{Val: types.Null, Typ: types.Of(types.Unknown)}
	}
	for _, n := range c.Args {
		w := n.GetCaseWhen()
		var cond plan.Expr
		var err error
		if arg != nil {
			v, err := ec.bind(w.Expr)
			if err != nil {
				return nil, err
			}
			eq, err := ec.binaryOp("=", arg, v, w.Location)
			if err != nil {
				return nil, err
			}
			if cond, err = ec.toBool(eq, "CASE/WHEN", w.Location); err != nil {
				return nil, err
			}
		} else if cond, err = ec.bindBool(w.Expr, "CASE/WHEN"); err != nil {
			return nil, err
		}
		r, err := ec.bind(w.Result)
		if err != nil {
			return nil, err
		}
		conds = append(conds, cond)
		results = append(results, r)
		locs = append(locs, exprLocation(w.Result))
	}
	all, t, err := ec.common("CASE", append([]plan.Expr{def}, results...), append([]int32{defLoc}, locs...))
	if err != nil {
		return nil, err
	}
	out := &plan.Case{Typ: t}
	for i := range conds {
		out.Whens = append(out.Whens, plan.When{Cond: conds[i], Result: all[i+1]})
	}
	if c.Defresult != nil {
		out.Else = all[0]
	}
	return out, nil
}

func (ec *exprCtx) coalesce(c *pg.CoalesceExpr) (plan.Expr, error) {
	es, locs, err := ec.bindList(c.Args)
	if err != nil {
		return nil, err
	}
	args, t, err := ec.common("COALESCE", es, locs)
	if err != nil {
		return nil, err
	}
	return &plan.Coalesce{Args: args, Typ: t}, nil
}

// bindList binds each expression of ns, returning their positions too.
func (ec *exprCtx) bindList(ns []*pg.Node) ([]plan.Expr, []int32, error) {
	es := make([]plan.Expr, len(ns))
	locs := make([]int32, len(ns))
	for i, n := range ns {
		e, err := ec.bind(n)
		if err != nil {
			return nil, nil, err
		}
		es[i], locs[i] = e, exprLocation(n)
	}
	return es, locs, nil
}

// minMax binds GREATEST and LEAST: NULL arguments are ignored, and the
// result is NULL only when every argument is.
func (ec *exprCtx) minMax(m *pg.MinMaxExpr) (plan.Expr, error) {
	name, context := "greatest", "GREATEST"
	if m.Op == pg.MinMaxOp_IS_LEAST {
		name, context = "least", "LEAST"
	}
	es, locs, err := ec.bindList(m.Args)
	if err != nil {
		return nil, err
	}
	args, t, err := ec.common(context, es, locs)
	if err != nil {
		return nil, err
	}
	if _, err := types.ResolveBinary("<", t, t); err != nil {
		return nil, posErr(errs.Newf(errs.UndefinedFunction,
			"could not identify a comparison function for type %s", t), m.Location)
	}
	return &plan.Func{Name: name, Args: args, Typ: t, NonStrict: true, Fn: extremeFn(name == "greatest")}, nil
}
