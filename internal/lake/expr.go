package lake

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// expr is a scalar expression of the bounded surface: constants, column
// references, casts, NOW(), comparisons, AND/OR/NOT, IS [NOT] NULL,
// IN (list), BETWEEN and the one scalar subquery DuckLake sends,
// (SELECT MAX(col) FROM table). Anything else is refused when a
// statement is classified.
type expr interface{ String() string }

type (
	// eConst is a literal. A quoted string has type TUnknown until the
	// context gives it one, as in PostgreSQL.
	eConst struct{ v Value }
	// eCol names a column, optionally qualified by a relation name.
	eCol struct{ rel, name string }
	// eSlot is a bound column: relation rel of the scope, column col
	// (-1 for ctid).
	eSlot struct {
		rel, col int
		t        Type
	}
	eCast struct {
		e expr
		t Type
	}
	eNow struct{}
	eCmp struct {
		op   string
		l, r expr
	}
	eBool struct {
		and  bool
		args []expr
	}
	eNot      struct{ e expr }
	eNullTest struct {
		e   expr
		not bool
	}
	eIn struct {
		e    expr
		list []expr
		not  bool
	}
	eBetween struct {
		e, lo, hi expr
		not       bool
	}
	// eMaxSub is (SELECT MAX(col) FROM rel), evaluated once per
	// statement when it is bound.
	eMaxSub struct {
		col string
		rel relRef
	}
)

func (e eConst) String() string {
	switch {
	case e.v.Null:
		return "NULL"
	case e.v.T == TUnknown:
		return "'" + e.v.S + "'"
	}
	return e.v.Text() + "::" + e.v.T.String()
}
func (e eCol) String() string  { return qualifiedName(e.rel, e.name) }
func (e eSlot) String() string { return fmt.Sprintf("$%d.%d", e.rel, e.col) }
func (e eCast) String() string { return "CAST(" + e.e.String() + " AS " + e.t.String() + ")" }
func (eNow) String() string    { return "NOW()" }
func (e eCmp) String() string  { return e.l.String() + " " + e.op + " " + e.r.String() }
func (e eBool) String() string {
	op := " OR "
	if e.and {
		op = " AND "
	}
	parts := make([]string, len(e.args))
	for i, a := range e.args {
		parts[i] = a.String()
	}
	return "(" + strings.Join(parts, op) + ")"
}
func (e eNot) String() string { return "NOT " + e.e.String() }
func (e eNullTest) String() string {
	if e.not {
		return e.e.String() + " IS NOT NULL"
	}
	return e.e.String() + " IS NULL"
}
func (e eIn) String() string {
	parts := make([]string, len(e.list))
	for i, a := range e.list {
		parts[i] = a.String()
	}
	op := " IN ("
	if e.not {
		op = " NOT IN ("
	}
	return e.e.String() + op + strings.Join(parts, ", ") + ")"
}
func (e eBetween) String() string {
	return e.e.String() + " BETWEEN " + e.lo.String() + " AND " + e.hi.String()
}
func (e eMaxSub) String() string { return "(SELECT MAX(" + e.col + ") FROM " + e.rel.String() + ")" }

// relRef names a relation as a statement wrote it.
type relRef struct {
	schema, name string
}

func (r relRef) String() string { return qualifiedName(r.schema, r.name) }

func rangeVarRef(rv *pg.RangeVar) relRef {
	return relRef{schema: rv.Schemaname, name: rv.Relname}
}

// convertExpr turns a parse tree node into an expr, refusing whatever is
// outside the surface.
func convertExpr(n *pg.Node) (expr, error) {
	if n == nil {
		return nil, nil
	}
	switch {
	case n.GetAConst() != nil:
		return convertConst(n.GetAConst())
	case n.GetColumnRef() != nil:
		fields := n.GetColumnRef().Fields
		var parts []string
		for _, f := range fields {
			s := f.GetString_()
			if s == nil {
				return nil, errUnsupported("column reference with *")
			}
			parts = append(parts, s.Sval)
		}
		switch len(parts) {
		case 1:
			return eCol{name: parts[0]}, nil
		case 2:
			return eCol{rel: parts[0], name: parts[1]}, nil
		case 3:
			return eCol{rel: parts[1], name: parts[2]}, nil
		}
		return nil, errUnsupported("column reference " + strings.Join(parts, "."))
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		t, err := convertTypeName(tc.TypeName)
		if err != nil {
			return nil, err
		}
		inner, err := convertExpr(tc.Arg)
		if err != nil {
			return nil, err
		}
		return eCast{e: inner, t: t}, nil
	case n.GetCollateClause() != nil:
		// Text compares bytewise in RockLake (the C collation), which is
		// what COLLATE "C" asks for.
		cc := n.GetCollateClause()
		if name := collationName(cc); name != "C" && name != "default" {
			return nil, errUnsupported("COLLATE " + name)
		}
		return convertExpr(cc.Arg)
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		name := funcName(fc)
		if (name == "now" || name == "pg_catalog.now") && len(fc.Args) == 0 {
			return eNow{}, nil
		}
		return nil, errUnsupported("function " + name + "()")
	case n.GetAExpr() != nil:
		return convertAExpr(n.GetAExpr())
	case n.GetBoolExpr() != nil:
		be := n.GetBoolExpr()
		var args []expr
		for _, a := range be.Args {
			e, err := convertExpr(a)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		switch be.Boolop {
		case pg.BoolExprType_AND_EXPR:
			return eBool{and: true, args: args}, nil
		case pg.BoolExprType_OR_EXPR:
			return eBool{and: false, args: args}, nil
		case pg.BoolExprType_NOT_EXPR:
			return eNot{e: args[0]}, nil
		}
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		e, err := convertExpr(nt.Arg)
		if err != nil {
			return nil, err
		}
		return eNullTest{e: e, not: nt.Nulltesttype == pg.NullTestType_IS_NOT_NULL}, nil
	case n.GetSubLink() != nil:
		return convertSubLink(n.GetSubLink())
	}
	return nil, errUnsupported(fmt.Sprintf("expression %T", n.Node))
}

func collationName(cc *pg.CollateClause) string {
	var parts []string
	for _, p := range cc.Collname {
		if s := p.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		return parts[1]
	}
	return strings.Join(parts, ".")
}

func funcName(fc *pg.FuncCall) string {
	var parts []string
	for _, p := range fc.Funcname {
		if s := p.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	return strings.ToLower(strings.Join(parts, "."))
}

func convertConst(c *pg.A_Const) (expr, error) {
	if c.Isnull {
		return eConst{v: nullOf(TUnknown)}, nil
	}
	switch {
	case c.GetIval() != nil:
		return eConst{v: intOf(TInt4, int64(c.GetIval().Ival))}, nil
	case c.GetFval() != nil:
		s := c.GetFval().Fval
		// An integer too large for int4 arrives as a Float node; PostgreSQL
		// types it int8 when it fits.
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return eConst{v: intOf(TInt8, i)}, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errUnsupported("numeric literal " + s)
		}
		return eConst{v: Value{T: TFloat8, F: f, S: s}}, nil
	case c.GetBoolval() != nil:
		return eConst{v: boolOf(c.GetBoolval().Boolval)}, nil
	case c.GetSval() != nil:
		return eConst{v: textOf(TUnknown, c.GetSval().Sval)}, nil
	}
	return nil, errUnsupported("bit-string literal")
}

func convertTypeName(tn *pg.TypeName) (Type, error) {
	var parts []string
	for _, p := range tn.Names {
		if s := p.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	name := parts[len(parts)-1]
	if len(tn.ArrayBounds) > 0 {
		return TUnknown, errUnsupported("array type " + name + "[]")
	}
	if t, ok := typeFromName(name); ok {
		return t, nil
	}
	return TUnknown, errUnsupported("type " + strings.Join(parts, "."))
}

func opName(ae *pg.A_Expr) string {
	var parts []string
	for _, p := range ae.Name {
		if s := p.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	return strings.Join(parts, ".")
}

func convertAExpr(ae *pg.A_Expr) (expr, error) {
	op := opName(ae)
	l, err := convertExpr(ae.Lexpr)
	if err != nil {
		return nil, err
	}
	switch ae.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		switch op {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
		case "-":
			// Unary minus on a numeric constant.
			if ae.Lexpr == nil {
				r, err := convertExpr(ae.Rexpr)
				if err != nil {
					return nil, err
				}
				if c, ok := r.(eConst); ok && !c.v.Null && isNumber(c.v.T) {
					c.v.I, c.v.F = -c.v.I, -c.v.F
					if c.v.S != "" {
						c.v.S = "-" + c.v.S
					}
					return c, nil
				}
			}
			return nil, errUnsupported("operator -")
		default:
			return nil, errUnsupported("operator " + op)
		}
		if op == "!=" {
			op = "<>"
		}
		r, err := convertExpr(ae.Rexpr)
		if err != nil {
			return nil, err
		}
		return eCmp{op: op, l: l, r: r}, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		list := ae.Rexpr.GetList()
		if list == nil {
			return nil, errUnsupported("IN without a list")
		}
		in := eIn{e: l, not: op == "<>"}
		for _, item := range list.Items {
			e, err := convertExpr(item)
			if err != nil {
				return nil, err
			}
			in.list = append(in.list, e)
		}
		return in, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		list := ae.Rexpr.GetList()
		if list == nil || len(list.Items) != 2 {
			return nil, errUnsupported("BETWEEN")
		}
		lo, err := convertExpr(list.Items[0])
		if err != nil {
			return nil, err
		}
		hi, err := convertExpr(list.Items[1])
		if err != nil {
			return nil, err
		}
		return eBetween{e: l, lo: lo, hi: hi, not: ae.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN}, nil
	}
	return nil, errUnsupported("operator " + op)
}

// convertSubLink accepts only (SELECT MAX(col) FROM [schema.]table).
func convertSubLink(sl *pg.SubLink) (expr, error) {
	sel := sl.Subselect.GetSelectStmt()
	if sl.SubLinkType != pg.SubLinkType_EXPR_SUBLINK || sel == nil || len(sel.TargetList) != 1 ||
		len(sel.FromClause) != 1 || sel.WhereClause != nil || sel.FromClause[0].GetRangeVar() == nil {
		return nil, errUnsupported("subquery")
	}
	fc := sel.TargetList[0].GetResTarget().GetVal().GetFuncCall()
	if fc == nil || funcName(fc) != "max" || len(fc.Args) != 1 || fc.Args[0].GetColumnRef() == nil {
		return nil, errUnsupported("subquery")
	}
	c, err := convertExpr(fc.Args[0])
	if err != nil {
		return nil, err
	}
	return eMaxSub{col: c.(eCol).name, rel: rangeVarRef(sel.FromClause[0].GetRangeVar())}, nil
}

// scopeRel is one relation an expression can name: its name (or alias)
// and its columns.
type scopeRel struct {
	name string
	cols []Column
	// hasCtid says the relation is a stored table, so ctid is a column.
	hasCtid bool
}

// binder resolves names in expressions against a scope, and evaluates
// subqueries through the transaction.
type binder struct {
	scope []scopeRel
	sub   func(eMaxSub) (Value, error)
	now   Value
}

func (b *binder) bind(e expr) (expr, error) {
	switch e := e.(type) {
	case nil:
		return nil, nil
	case eConst:
		return e, nil
	case eNow:
		return eConst{v: b.now}, nil
	case eCol:
		return b.resolve(e)
	case eCast:
		inner, err := b.bind(e.e)
		if err != nil {
			return nil, err
		}
		// Casts of constants are folded now, so that errors in them
		// surface when the statement starts, as in PostgreSQL.
		if c, ok := inner.(eConst); ok {
			v, err := castValue(c.v, e.t, true)
			if err != nil {
				return nil, err
			}
			return eConst{v: v}, nil
		}
		return eCast{e: inner, t: e.t}, nil
	case eCmp:
		l, err := b.bind(e.l)
		if err != nil {
			return nil, err
		}
		r, err := b.bind(e.r)
		if err != nil {
			return nil, err
		}
		l, r, err = unify(l, r)
		if err != nil {
			return nil, err
		}
		return eCmp{op: e.op, l: l, r: r}, nil
	case eBool:
		out := eBool{and: e.and}
		for _, a := range e.args {
			x, err := b.bind(a)
			if err != nil {
				return nil, err
			}
			out.args = append(out.args, x)
		}
		return out, nil
	case eNot:
		x, err := b.bind(e.e)
		return eNot{e: x}, err
	case eNullTest:
		x, err := b.bind(e.e)
		return eNullTest{e: x, not: e.not}, err
	case eIn:
		x, err := b.bind(e.e)
		if err != nil {
			return nil, err
		}
		out := eIn{e: x, not: e.not}
		for _, item := range e.list {
			y, err := b.bind(item)
			if err != nil {
				return nil, err
			}
			_, y, err = unify(x, y)
			if err != nil {
				return nil, err
			}
			out.list = append(out.list, y)
		}
		return out, nil
	case eBetween:
		x, err := b.bind(e.e)
		if err != nil {
			return nil, err
		}
		lo, err := b.bind(e.lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.bind(e.hi)
		if err != nil {
			return nil, err
		}
		if _, lo, err = unify(x, lo); err != nil {
			return nil, err
		}
		if _, hi, err = unify(x, hi); err != nil {
			return nil, err
		}
		return eBetween{e: x, lo: lo, hi: hi, not: e.not}, nil
	case eMaxSub:
		if b.sub == nil {
			return nil, errUnsupported("subquery here")
		}
		v, err := b.sub(e)
		if err != nil {
			return nil, err
		}
		return eConst{v: v}, nil
	}
	return nil, errUnsupported(e.String())
}

func (b *binder) resolve(c eCol) (expr, error) {
	found := -1
	var slot eSlot
	for i, r := range b.scope {
		if c.rel != "" && c.rel != r.name {
			continue
		}
		col := -1
		var t Type
		if c.name == "ctid" && r.hasCtid {
			t = TTid
		} else {
			for j, rc := range r.cols {
				if rc.Name == c.name {
					col, t = j, rc.Type
					break
				}
			}
			if col < 0 {
				continue
			}
		}
		if found >= 0 {
			return nil, errorf("42702", "column reference %q is ambiguous", c.name)
		}
		found = i
		slot = eSlot{rel: i, col: col, t: t}
	}
	if found < 0 {
		if c.rel != "" {
			return nil, errorf(codeUndefinedColumn, "column %s.%s does not exist", c.rel, c.name)
		}
		return nil, errorf(codeUndefinedColumn, "column %q does not exist", c.name)
	}
	return slot, nil
}

// exprType is the type an expression yields, TUnknown for an untyped
// literal.
func exprType(e expr) Type {
	switch e := e.(type) {
	case eConst:
		return e.v.T
	case eSlot:
		return e.t
	case eCast:
		return e.t
	}
	return TBool
}

// unify gives an untyped literal on one side of a comparison the type of
// the other side, as PostgreSQL's operator resolution does.
func unify(l, r expr) (expr, expr, error) {
	lt, rt := exprType(l), exprType(r)
	fix := func(e expr, t Type) (expr, error) {
		c := e.(eConst)
		v, err := castValue(c.v, t, true)
		if err != nil {
			return nil, err
		}
		return eConst{v: v}, nil
	}
	var err error
	switch {
	case lt == TUnknown && rt != TUnknown:
		if _, ok := l.(eConst); ok {
			l, err = fix(l, rt)
		}
	case rt == TUnknown && lt != TUnknown:
		if _, ok := r.(eConst); ok {
			r, err = fix(r, lt)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	lt, rt = exprType(l), exprType(r)
	if lt != TUnknown && rt != TUnknown && !comparable(lt, rt) {
		return nil, nil, errorf("42883", "operator does not exist: %s = %s", types[lt].sql, types[rt].sql)
	}
	return l, r, nil
}

func comparable(a, b Type) bool {
	switch {
	case a == b:
		return true
	case isNumber(a) && isNumber(b):
		return true
	case a.isText() && b.isText():
		return true
	}
	return false
}
