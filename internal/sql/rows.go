package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// Row constructors ((a, b), ROW(a, b)) are bound where PostgreSQL's
// parser expands them into expressions over their fields: comparisons
// (make_row_comparison_op), IS [NOT] DISTINCT FROM, [NOT] IN lists,
// BETWEEN and IS [NOT] NULL. A row value itself (in a select list, as a
// function argument) is a composite type the engine does not have, and
// stays unsupported.

// rowFields binds the fields of n when it is a row constructor.
func (ec *exprCtx) rowFields(n *pg.Node) ([]plan.Expr, bool, error) {
	row := n.GetRowExpr()
	if row == nil {
		return nil, false, nil
	}
	fields := make([]plan.Expr, len(row.Args))
	for i, a := range row.Args {
		if a.GetRowExpr() != nil {
			return nil, true, notSupported(exprLocation(a), "nested row constructors are not supported")
		}
		e, err := ec.bind(a)
		if err != nil {
			return nil, true, err
		}
		fields[i] = e
	}
	return fields, true, nil
}

// isRow reports whether n is a row constructor.
func isRow(n *pg.Node) bool { return n != nil && n.GetRowExpr() != nil }

// rowOperand is one side of a comparison that may be a row: its fields
// when it is a row constructor, else its value.
type rowOperand struct {
	fields []plan.Expr
	value  plan.Expr
	row    bool
}

func (ec *exprCtx) rowOperand(n *pg.Node) (rowOperand, error) {
	fields, ok, err := ec.rowFields(n)
	if err != nil {
		return rowOperand{}, err
	}
	if ok {
		return rowOperand{fields: fields, row: true}, nil
	}
	v, err := ec.bind(n)
	return rowOperand{value: v}, err
}

// typeName is the operand's type as PostgreSQL's messages name it.
func (o rowOperand) typeName() string {
	if o.row {
		return "record"
	}
	return o.value.Type().String()
}

// compareOperands binds l op r, either side possibly a row.
func (ec *exprCtx) compareOperands(op string, l, r rowOperand, loc int32) (plan.Expr, error) {
	switch {
	case l.row && r.row:
		return ec.rowCompare(op, l.fields, r.fields, loc)
	case l.row || r.row:
		return nil, posErr(errs.Newf(errs.UndefinedFunction, "operator does not exist: %s %s %s",
			l.typeName(), op, r.typeName()), loc)
	}
	return ec.binaryOp(op, l.value, r.value, loc)
}

// rowCompare binds the comparison of two rows, as PostgreSQL expands it:
// = is the AND of the fields' equalities, <> the OR of their inequalities,
// and <, <=, >, >= compare the fields left to right, the first pair that
// is not equal deciding (and a NULL in a pair reached making the result
// NULL).
func (ec *exprCtx) rowCompare(op string, l, r []plan.Expr, loc int32) (plan.Expr, error) {
	if len(l) != len(r) {
		return nil, posErr(errs.New(errs.SyntaxError, "unequal number of entries in row expressions"), loc)
	}
	if len(l) == 0 {
		return nil, posErr(errs.New(errs.FeatureNotSupported, "cannot compare rows of zero length"), loc)
	}
	pair := func(op string, i int) (plan.Expr, error) {
		c, err := ec.binaryOp(op, l[i], r[i], loc)
		if err != nil {
			return nil, err
		}
		if c.Op.Result.ID != types.Bool {
			return nil, posErr(errs.Newf(errs.DatatypeMismatch,
				"row comparison operator must yield type boolean, not type %s", c.Op.Result), loc)
		}
		return c, nil
	}
	pairs := func(op string) ([]plan.Expr, error) {
		out := make([]plan.Expr, len(l))
		for i := range l {
			c, err := pair(op, i)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	switch op {
	case "=", "<>":
		cs, err := pairs(op)
		if err != nil {
			return nil, err
		}
		if len(cs) == 1 {
			return cs[0], nil
		}
		if op == "=" {
			return &plan.And{Args: cs}, nil
		}
		return &plan.Or{Args: cs}, nil
	case "<", "<=", ">", ">=":
		strict := op[:1]
		acc, err := pair(op, len(l)-1)
		if err != nil {
			return nil, err
		}
		for i := len(l) - 2; i >= 0; i-- {
			lt, err := pair(strict, i)
			if err != nil {
				return nil, err
			}
			eq, err := pair("=", i)
			if err != nil {
				return nil, err
			}
			acc = &plan.Or{Args: []plan.Expr{lt, &plan.And{Args: []plan.Expr{eq, acc}}}}
		}
		return acc, nil
	}
	if _, err := pairs(op); err != nil {
		return nil, err
	}
	return nil, posErr(errs.Newf(errs.UndefinedFunction, "could not determine interpretation of row comparison operator %s", op), loc)
}

// rowDistinct binds l IS [NOT] DISTINCT FROM r for rows: distinct when
// any pair of fields is.
func (ec *exprCtx) rowDistinct(l, r []plan.Expr, negated bool, loc int32) (plan.Expr, error) {
	if len(l) != len(r) {
		return nil, posErr(errs.New(errs.SyntaxError, "unequal number of entries in row expressions"), loc)
	}
	var arms []plan.Expr
	for i := range l {
		eq, err := ec.binaryOp("=", l[i], r[i], loc)
		if err != nil {
			return nil, err
		}
		arms = append(arms, &plan.IsDistinct{Eq: eq.Op, Left: eq.Left, Right: eq.Right})
	}
	var e plan.Expr = &plan.Or{Args: arms}
	if len(arms) == 1 {
		e = arms[0]
	}
	if negated {
		return &plan.Not{Arg: e}, nil
	}
	return e, nil
}

// rowNullTest binds ROW(...) IS [NOT] NULL: IS NULL when every field is
// NULL, IS NOT NULL when none is (so a row with some NULL fields is
// neither).
func rowNullTest(fields []plan.Expr, negated bool, ec *exprCtx) plan.Expr {
	var arms []plan.Expr
	for _, f := range fields {
		arms = append(arms, &plan.IsNull{Arg: ec.resolveUnknown(f), Negated: negated})
	}
	switch len(arms) {
	case 0:
		return &plan.Const{Val: types.MakeBool(true), Typ: types.Of(types.Bool)}
	case 1:
		return arms[0]
	}
	return &plan.And{Args: arms}
}

// rowBinary binds a binary operator expression with a row constructor on
// a side, for aExpr.
func (ec *exprCtx) rowBinary(op string, a *pg.A_Expr) (plan.Expr, error) {
	if sl := a.Rexpr.GetSubLink(); isRow(a.Lexpr) && sl != nil && sl.SubLinkType == pg.SubLinkType_EXPR_SUBLINK {
		// (a, b) op (SELECT x, y ...), which PostgreSQL's analyzer
		// makes a ROWCOMPARE sublink.
		return ec.rowCompareSubLink(&pg.SubLink{SubLinkType: pg.SubLinkType_ROWCOMPARE_SUBLINK, Testexpr: a.Lexpr,
			OperName: a.Name, Subselect: sl.Subselect, Location: sl.Location})
	}
	l, err := ec.rowOperand(a.Lexpr)
	if err != nil {
		return nil, err
	}
	r, err := ec.rowOperand(a.Rexpr)
	if err != nil {
		return nil, err
	}
	return ec.compareOperands(op, l, r, a.Location)
}

// rowInList binds (a, b) [NOT] IN ((x, y), ...): the OR of row equalities
// (the AND of row inequalities for NOT IN).
func (ec *exprCtx) rowInList(a *pg.A_Expr, items []*pg.Node, not bool) (plan.Expr, error) {
	l, err := ec.rowOperand(a.Lexpr)
	if err != nil {
		return nil, err
	}
	op := "="
	if not {
		op = "<>"
	}
	var arms []plan.Expr
	for _, it := range items {
		r, err := ec.rowOperand(it)
		if err != nil {
			return nil, err
		}
		c, err := ec.compareOperands(op, l, r, a.Location)
		if err != nil {
			return nil, err
		}
		arms = append(arms, c)
	}
	if len(arms) == 1 {
		return arms[0], nil
	}
	if not {
		return &plan.And{Args: arms}, nil
	}
	return &plan.Or{Args: arms}, nil
}

// rowBetween binds BETWEEN with rows, as between does for values.
func (ec *exprCtx) rowBetween(a *pg.A_Expr, bounds []*pg.Node) (plan.Expr, error) {
	arg, err := ec.rowOperand(a.Lexpr)
	if err != nil {
		return nil, err
	}
	lo, err := ec.rowOperand(bounds[0])
	if err != nil {
		return nil, err
	}
	hi, err := ec.rowOperand(bounds[1])
	if err != nil {
		return nil, err
	}
	return expandBetween(a, arg, lo, hi, ec.compareOperands)
}

// rowCompareSubLink binds (a, b) op (SELECT x, y ...) as the row
// comparison of (a, b) with one scalar subquery per column, (SELECT x ...)
// and (SELECT y ...): the same values, since the subquery is
// deterministic, with the same errors (more than one row) and NULLs (no
// row).
func (ec *exprCtx) rowCompareSubLink(sl *pg.SubLink) (plan.Expr, error) {
	loc := sl.Location
	row := sl.Testexpr.GetRowExpr()
	sel := sl.Subselect.GetSelectStmt()
	if row == nil || sel == nil || sel.Op != pg.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 {
		return nil, notSupported(loc, "row comparisons with this subquery are not supported")
	}
	for _, t := range sel.TargetList {
		if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			return nil, notSupported(loc, "row comparisons with SELECT * are not supported; name the columns")
		}
	}
	switch {
	case len(sel.TargetList) > len(row.Args):
		return nil, posErr(errs.New(errs.SyntaxError, "subquery has too many columns"), loc)
	case len(sel.TargetList) < len(row.Args):
		return nil, posErr(errs.New(errs.SyntaxError, "subquery has too few columns"), loc)
	}
	fields := make([]*pg.Node, len(row.Args))
	for i := range row.Args {
		one := proto.Clone(sl).(*pg.SubLink)
		one.SubLinkType, one.Testexpr, one.OperName = pg.SubLinkType_EXPR_SUBLINK, nil, nil
		s := one.Subselect.GetSelectStmt()
		s.TargetList = []*pg.Node{s.TargetList[i]}
		fields[i] = &pg.Node{Node: &pg.Node_SubLink{SubLink: one}}
	}
	op, err := opName(sl.OperName, loc)
	if err != nil {
		return nil, err
	}
	l, err := ec.rowOperand(sl.Testexpr)
	if err != nil {
		return nil, err
	}
	r, err := ec.rowOperand(&pg.Node{Node: &pg.Node_RowExpr{RowExpr: &pg.RowExpr{Args: fields, Location: loc}}})
	if err != nil {
		return nil, err
	}
	return ec.compareOperands(op, l, r, loc)
}
