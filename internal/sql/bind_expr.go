package sql

import (
	"errors"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// exprKind is the clause an expression is bound in; it decides whether
// aggregates are allowed and names the clause in messages.
type exprKind uint8

const (
	kindSelect exprKind = iota
	kindWhere
	kindJoinOn
	kindHaving
	kindGroupBy
	kindOrderBy
	kindValues
	kindLimit
	kindOffset
	kindFilter
	kindAggArg
	kindScalar
)

// where names the clause for "... in <where> are not supported" messages.
func (k exprKind) where() string {
	switch k {
	case kindSelect:
		return "the select list"
	case kindWhere:
		return "WHERE"
	case kindJoinOn:
		return "JOIN conditions"
	case kindHaving:
		return "HAVING"
	case kindGroupBy:
		return "GROUP BY"
	case kindOrderBy:
		return "ORDER BY"
	case kindValues:
		return "VALUES"
	case kindLimit:
		return "LIMIT"
	case kindOffset:
		return "OFFSET"
	case kindFilter:
		return "FILTER"
	case kindAggArg:
		return "aggregate arguments"
	}
	return "expressions"
}

// exprCtx binds expressions of one clause over one scope.
type exprCtx struct {
	st   *bindState
	sc   *Scope
	kind exprKind
	// aggs collects aggregate calls; nil where aggregates are not allowed.
	aggs *aggCollector
	// env is the WITH queries visible to subqueries of the expression.
	env *cteEnv
	// sub, at the level of a subquery in an expression (EXISTS, IN, a
	// scalar subquery), receives the subquery's correlation; nil
	// elsewhere.
	sub *subquery
}

// in returns a context for another clause over the same scope.
func (ec *exprCtx) in(kind exprKind, aggs *aggCollector) *exprCtx {
	return &exprCtx{st: ec.st, sc: ec.sc, kind: kind, aggs: aggs, env: ec.env, sub: ec.sub}
}

// bind binds one expression.
func (ec *exprCtx) bind(n *pg.Node) (plan.Expr, error) {
	if n == nil || n.Node == nil {
		return nil, errs.New(errs.Internal, "missing expression")
	}
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		return ec.columnRef(x.ColumnRef)
	case *pg.Node_AConst:
		return ec.constant(x.AConst)
	case *pg.Node_ParamRef:
		return ec.st.param(x.ParamRef.Number, x.ParamRef.Location)
	case *pg.Node_AExpr:
		return ec.aExpr(x.AExpr)
	case *pg.Node_BoolExpr:
		return ec.boolExpr(x.BoolExpr)
	case *pg.Node_NullTest:
		return ec.nullTest(x.NullTest)
	case *pg.Node_BooleanTest:
		return ec.booleanTest(x.BooleanTest)
	case *pg.Node_TypeCast:
		return ec.typeCast(x.TypeCast)
	case *pg.Node_FuncCall:
		return ec.funcCall(x.FuncCall)
	case *pg.Node_CaseExpr:
		return ec.caseExpr(x.CaseExpr)
	case *pg.Node_CoalesceExpr:
		return ec.coalesce(x.CoalesceExpr)
	case *pg.Node_MinMaxExpr:
		return ec.minMax(x.MinMaxExpr)
	case *pg.Node_SubLink:
		return ec.subLink(x.SubLink)
	case *pg.Node_SqlvalueFunction:
		if e, ok, err := ec.sqlValueSystemFunction(x.SqlvalueFunction); ok {
			return e, err
		}
		if e, ok, err := ec.clockValueFunction(x.SqlvalueFunction); ok {
			return e, err
		}
		return nil, sqlValueFunction(x.SqlvalueFunction)
	case *pg.Node_RowExpr:
		return nil, notSupported(x.RowExpr.Location, "row values are not supported outside comparisons, IN lists, BETWEEN and IS [NOT] NULL")
	case *pg.Node_AArrayExpr:
		return ec.arrayConstructor(x.AArrayExpr, types.Of(types.Unknown))
	case *pg.Node_AIndirection:
		return ec.indirection(x.AIndirection)
	case *pg.Node_CollateClause:
		return ec.collate(x.CollateClause)
	case *pg.Node_GroupingFunc:
		return ec.groupingFunc(x.GroupingFunc)
	case *pg.Node_SetToDefault:
		return nil, posErr(errs.New(errs.SyntaxError, "DEFAULT is not allowed in this context"), x.SetToDefault.Location)
	case *pg.Node_XmlExpr, *pg.Node_XmlSerialize:
		return nil, notSupported(exprLocation(n), "XML functions are not supported")
	case *pg.Node_JsonObjectConstructor, *pg.Node_JsonArrayConstructor, *pg.Node_JsonArrayQueryConstructor,
		*pg.Node_JsonObjectAgg, *pg.Node_JsonArrayAgg, *pg.Node_JsonParseExpr, *pg.Node_JsonScalarExpr,
		*pg.Node_JsonSerializeExpr, *pg.Node_JsonFuncExpr, *pg.Node_JsonIsPredicate:
		return nil, notSupported(exprLocation(n), "SQL/JSON functions are not supported yet")
	}
	return nil, notSupported(exprLocation(n), "expression %s is not supported yet", nodeName(n))
}

// columnRef resolves a column reference against the scope.
func (ec *exprCtx) columnRef(c *pg.ColumnRef) (plan.Expr, error) {
	var names []string
	for _, f := range c.Fields {
		if f.GetAStar() != nil {
			return nil, notSupported(c.Location, "row references (%s) are not supported here", starName(names))
		}
		names = append(names, f.GetString_().GetSval())
	}
	e, err := lookupName(ec.sc, names, c.Location)
	if err != nil {
		// A name this query does not have may be a column of a query
		// around it (a correlated subquery), as in PostgreSQL: an
		// unqualified name nobody here has, or a qualified one whose
		// relation is not here.
		want := errs.UndefinedColumn
		if len(names) > 1 {
			want = errs.UndefinedTable
		}
		depth := 1
		for o := ec.st.outer; o != nil && errs.CodeOf(err) == want; o, depth = o.parent, depth+1 {
			oe, oerr := lookupName(o.sc, names, c.Location)
			if oerr == nil {
				return ec.outerReference(oe, depth, strings.Join(names, "."), c.Location)
			}
			if errs.CodeOf(oerr) != want {
				return nil, oerr
			}
		}
		if cerr := compositeReference(ec.sc, names, c.Location); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	// Each reference gets its own nodes, so that its position is known.
	return mapColRefs(e, func(r *plan.ColRef) plan.Expr {
		cp := *r
		ec.st.locs[&cp] = c.Location
		return &cp
	}), nil
}

// lookupName resolves a column name of one, two or three parts in sc.
func lookupName(sc *Scope, names []string, loc int32) (plan.Expr, error) {
	switch len(names) {
	case 1:
		return sc.lookupColumn(names[0], loc)
	case 2:
		return sc.lookupQualified(names[0], names[1], loc)
	case 3:
		// schema.relation.column: the relation's FROM item is named by
		// the relation alone.
		return sc.lookupQualified(names[1], names[2], loc)
	case 4:
		return nil, notSupported(loc, "cross-database references are not implemented: %s", strings.Join(names, "."))
	}
	return nil, posErr(errs.Newf(errs.SyntaxError,
		"improper qualified name (too many dotted names): %s", strings.Join(names, ".")), loc)
}

func starName(qual []string) string {
	return strings.Join(append(append([]string(nil), qual...), "*"), ".")
}

// constant binds a literal as PostgreSQL's make_const types it.
func (ec *exprCtx) constant(c *pg.A_Const) (plan.Expr, error) {
	var k *plan.Const
	switch v := c.Val.(type) {
	case nil:
		k = &plan.Const{Val: types.Null, Typ: types.Of(types.Unknown)}
	case *pg.A_Const_Ival:
		k = &plan.Const{Val: types.MakeInt(types.Int4, int64(v.Ival.Ival)), Typ: types.Of(types.Int4)}
	case *pg.A_Const_Fval:
		var err error
		if k, err = numberLiteral(v.Fval.Fval); err != nil {
			return nil, posErr(err, c.Location)
		}
	case *pg.A_Const_Boolval:
		k = &plan.Const{Val: types.MakeBool(v.Boolval.Boolval), Typ: types.Of(types.Bool)}
	case *pg.A_Const_Sval:
		k = &plan.Const{Val: types.MakeText(v.Sval.Sval), Typ: types.Of(types.Unknown), Pos: int(c.Location) + 1}
	case *pg.A_Const_Bsval:
		return nil, notSupported(c.Location, "bit string literals are not supported")
	}
	if c.Isnull {
		k = &plan.Const{Val: types.Null, Typ: types.Of(types.Unknown)}
	}
	ec.st.locs[k] = c.Location
	return k, nil
}

// numberLiteral types a numeric literal that did not fit the parser's
// 32-bit integers: an integer that fits in 32 or 64 bits is int4 or
// int8, anything else numeric.
func numberLiteral(s string) (*plan.Const, error) {
	clean := strings.ReplaceAll(s, "_", "")
	digits, neg := clean, false
	if strings.HasPrefix(digits, "-") {
		digits, neg = digits[1:], true
	} else if strings.HasPrefix(digits, "+") {
		digits = digits[1:]
	}
	base := 10
	if len(digits) > 2 && digits[0] == '0' {
		switch digits[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 10 {
			digits = digits[2:]
		}
	}
	if u, err := strconv.ParseUint(digits, base, 64); err == nil {
		switch {
		case !neg && u <= 1<<31-1, neg && u <= 1<<31:
			n := int64(u)
			if neg {
				n = -n
			}
			return &plan.Const{Val: types.MakeInt(types.Int4, n), Typ: types.Of(types.Int4)}, nil
		case !neg && u <= 1<<63-1, neg && u <= 1<<63:
			n := int64(u)
			if neg {
				n = -n
			}
			return &plan.Const{Val: types.MakeInt(types.Int8, n), Typ: types.Of(types.Int8)}, nil
		}
	}
	if base != 10 {
		return nil, errs.Newf(errs.FeatureNotSupported, "non-decimal literal %s does not fit in bigint", s)
	}
	v, err := types.Parse(types.Of(types.Numeric), clean)
	if err != nil {
		return nil, err
	}
	return &plan.Const{Val: v, Typ: types.Of(types.Numeric)}, nil
}

// coerce converts e to type to under context c, reporting a failed parse
// of a literal at the literal's position. errNoCast is returned unchanged.
func (ec *exprCtx) coerce(e plan.Expr, to types.Type, c coercion) (plan.Expr, error) {
	if out, ok, err := ec.regCoerce(e, to, c); ok {
		return out, err
	}
	ec.st.noteCast(e.Type(), to)
	out, err := coerceExpr(e, to, c, ec.st.setParamType, ec.st.b.Zone)
	loc, ok := ec.st.locs[e]
	if err != nil && !errors.Is(err, errNoCast) && ok {
		err = posErr(err, loc)
	}
	if err == nil && ok {
		ec.st.locs[out] = loc
	}
	return out, err
}

// resolveUnknown gives an Unknown-typed literal the type text, as
// PostgreSQL does where no context decides its type. Parameters stay
// Unknown (their type must come from somewhere else).
func (ec *exprCtx) resolveUnknown(e plan.Expr) plan.Expr {
	if _, ok := e.(*plan.Param); ok || e.Type().ID != types.Unknown {
		return e
	}
	out, err := ec.coerce(e, types.Of(types.Text), implicitCoercion)
	if err != nil {
		return e
	}
	return out
}

// resolveOutput is resolveUnknown for an output column: a parameter with
// no type becomes text too, as PostgreSQL resolves SELECT $1.
func (ec *exprCtx) resolveOutput(e plan.Expr) plan.Expr {
	if e.Type().ID != types.Unknown {
		return e
	}
	out, err := ec.coerce(e, types.Of(types.Text), implicitCoercion)
	if err != nil {
		return e
	}
	return out
}

// bindBool binds a condition and converts it to boolean; clause names it
// in the error ("argument of WHERE must be type boolean, not type integer").
func (ec *exprCtx) bindBool(n *pg.Node, clause string) (plan.Expr, error) {
	e, err := ec.bind(n)
	if err != nil {
		return nil, err
	}
	return ec.toBool(e, clause, exprLocation(n))
}

func (ec *exprCtx) toBool(e plan.Expr, clause string, loc int32) (plan.Expr, error) {
	if e.Type().ID == types.Bool {
		return e, nil
	}
	out, err := ec.coerce(e, types.Of(types.Bool), implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, posErr(errs.Newf(errs.DatatypeMismatch,
			"argument of %s must be type boolean, not type %s", clause, e.Type()), loc)
	}
	return out, err
}

// sqlValueFunction refuses the SQL value functions that are not bound:
// any the binder does not know (CURRENT_TIMESTAMP and the others of the
// clock are bound in clock.go, CURRENT_USER and the session's in
// system.go).
func sqlValueFunction(f *pg.SQLValueFunction) error {
	return notSupported(f.Location, "%s is not supported yet", strings.ToLower(strings.TrimPrefix(f.Op.String(), "SVFOP_")))
}

// exprLocation returns the leftmost statement position of a raw
// expression, as PostgreSQL's exprLocation does, or -1.
func exprLocation(n *pg.Node) int32 {
	if n == nil || n.Node == nil {
		return -1
	}
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		return x.ColumnRef.Location
	case *pg.Node_AConst:
		return x.AConst.Location
	case *pg.Node_ParamRef:
		return x.ParamRef.Location
	case *pg.Node_AExpr:
		return leftmost(x.AExpr.Location, exprLocation(x.AExpr.Lexpr))
	case *pg.Node_BoolExpr:
		loc := x.BoolExpr.Location
		for _, a := range x.BoolExpr.Args {
			loc = leftmost(loc, exprLocation(a))
		}
		return loc
	case *pg.Node_NullTest:
		return leftmost(x.NullTest.Location, exprLocation(x.NullTest.Arg))
	case *pg.Node_BooleanTest:
		return leftmost(x.BooleanTest.Location, exprLocation(x.BooleanTest.Arg))
	case *pg.Node_TypeCast:
		return leftmost(x.TypeCast.Location, exprLocation(x.TypeCast.Arg))
	case *pg.Node_FuncCall:
		loc := x.FuncCall.Location
		for _, a := range x.FuncCall.Args {
			loc = leftmost(loc, exprLocation(a))
		}
		return loc
	case *pg.Node_CaseExpr:
		return x.CaseExpr.Location
	case *pg.Node_CoalesceExpr:
		return x.CoalesceExpr.Location
	case *pg.Node_MinMaxExpr:
		return x.MinMaxExpr.Location
	case *pg.Node_SubLink:
		return leftmost(x.SubLink.Location, exprLocation(x.SubLink.Testexpr))
	case *pg.Node_SqlvalueFunction:
		return x.SqlvalueFunction.Location
	case *pg.Node_RowExpr:
		return x.RowExpr.Location
	case *pg.Node_AArrayExpr:
		return x.AArrayExpr.Location
	case *pg.Node_AIndirection:
		return exprLocation(x.AIndirection.Arg)
	case *pg.Node_CollateClause:
		return leftmost(x.CollateClause.Location, exprLocation(x.CollateClause.Arg))
	case *pg.Node_GroupingFunc:
		return x.GroupingFunc.Location
	case *pg.Node_SetToDefault:
		return x.SetToDefault.Location
	case *pg.Node_List:
		loc := int32(-1)
		for _, a := range x.List.Items {
			loc = leftmost(loc, exprLocation(a))
		}
		return loc
	}
	return -1
}

func leftmost(a, b int32) int32 {
	if a < 0 {
		return b
	}
	if b < 0 || a < b {
		return a
	}
	return b
}
