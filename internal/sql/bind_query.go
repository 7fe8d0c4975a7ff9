package sql

import (
	"errors"
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// queryOpts says where a query is bound.
type queryOpts struct {
	// top is true for the statement's own query: its ORDER BY, LIMIT and
	// OFFSET become Sort and Limit. Elsewhere (subqueries, views, CTEs,
	// set-operation branches) a relation has no order: ORDER BY is checked
	// and dropped, unless LIMIT or OFFSET picks rows by it (a TopK).
	top bool
	// resolveUnknowns makes Unknown-typed output columns text, as
	// PostgreSQL does for every SELECT except set-operation branches and
	// INSERT sources, whose context decides the type.
	resolveUnknowns bool
	// sub, for the query of a subquery in an expression, receives the
	// bound subquery (its plan, select list and correlation) instead of
	// a plan with the select list projected.
	sub *subquery
}

// query binds any SelectStmt.
func (st *bindState) query(sel *pg.SelectStmt, opts queryOpts, env *cteEnv) (plan.Node, error) {
	if sel.WithClause != nil {
		var err error
		if env, err = st.withClause(sel.WithClause, env); err != nil {
			return nil, err
		}
	}
	if sel.IntoClause != nil {
		return nil, notSupported(-1, "SELECT INTO is not supported")
	}
	if len(sel.LockingClause) > 0 {
		return nil, notSupported(-1, "SELECT FOR UPDATE/SHARE is not supported")
	}
	var node plan.Node
	var err error
	sub := opts.sub
	switch {
	case sel.Op == pg.SetOperation_SETOP_UNION || sel.Op == pg.SetOperation_SETOP_INTERSECT || sel.Op == pg.SetOperation_SETOP_EXCEPT:
		opts.sub = nil
		node, err = st.setOperation(sel, opts, env)
	case len(sel.ValuesLists) > 0:
		opts.sub = nil
		node, err = st.valuesStmt(sel, opts, env)
	default:
		return st.selectStmt(sel, opts, env)
	}
	if err == nil && sub != nil {
		// Not correlated (its references out were refused): the plan's
		// columns are the subquery's.
		fillSubquery(sub, node)
	}
	return node, err
}

// finishQuery puts a target list over input and adds DISTINCT, ORDER BY
// and LIMIT/OFFSET.
func (st *bindState) finishQuery(input plan.Node, sc *Scope, tl []*target, distinct bool, sorts []sortItem, sel *pg.SelectStmt, opts queryOpts) (plan.Node, error) {
	count, offset, err := st.limitOffset(sel, sc)
	if err != nil {
		return nil, err
	}
	if !opts.top && count < 0 && offset == 0 {
		sorts = nil
	}
	hidden := false
	for _, s := range sorts {
		hidden = hidden || tl[s.idx].junk
	}
	var exprs []plan.Expr
	var cols []plan.Column
	visible := 0
	for _, t := range tl {
		if t.junk && !hidden {
			continue
		}
		if !t.junk {
			visible++
		}
		exprs = append(exprs, t.expr)
		cols = append(cols, plan.Column{Name: t.name, Type: t.expr.Type()})
	}
	node := project(input, exprs, cols)
	if distinct {
		node = &plan.Distinct{Input: node}
	}
	node = orderAndLimit(node, cols, sorts, count, offset, opts.top)
	if hidden {
		var keep []plan.Expr
		for i := 0; i < visible; i++ {
			keep = append(keep, &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type})
		}
		node = &plan.Project{Input: node, Exprs: keep, Cols: cols[:visible]}
	}
	return node, nil
}

// project returns a Project of exprs over input, or input itself when the
// projection would change nothing. A Project over a Project is merged into
// one when that computes no expression twice.
func project(input plan.Node, exprs []plan.Expr, cols []plan.Column) plan.Node {
	if inner, ok := input.(*plan.Project); ok {
		if merged, ok := composeProjections(inner, exprs); ok {
			input, exprs = inner.Input, merged
		}
	}
	input = dropUnreadRowNumber(input, exprs)
	in := input.Columns()
	if len(in) == len(exprs) {
		same := true
		for i, e := range exprs {
			c, ok := e.(*plan.ColRef)
			if !ok || c.Index != i || in[i] != cols[i] {
				same = false
				break
			}
		}
		if same {
			return input
		}
	}
	return &plan.Project{Input: input, Exprs: exprs, Cols: cols}
}

// dropUnreadRowNumber returns input without its row-number column when
// input is a TopK that numbers its rows and exprs do not read the number
// (the number bounded the rows, ROW_NUMBER() ... <= k, and is not
// selected). The same rows are kept; left unnumbered, a change of one row's
// rank no longer renumbers, retracts and re-inserts, every row ranked after
// it.
func dropUnreadRowNumber(input plan.Node, exprs []plan.Expr) plan.Node {
	t, ok := input.(*plan.TopK)
	if !ok || !t.RowNumber {
		return input
	}
	rn := len(t.Cols) - 1
	for _, e := range exprs {
		if slices.Contains(colRefIndexes(e), rn) {
			return input
		}
	}
	out := *t
	out.RowNumber, out.Cols = false, t.Cols[:rn:rn]
	return &out
}

// limitOffset evaluates LIMIT and OFFSET, which must be constant (a
// parameter's value is read now). count is -1 when there is no limit.
func (st *bindState) limitOffset(sel *pg.SelectStmt, sc *Scope) (count, offset int64, err error) {
	if sel.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return 0, 0, notSupported(exprLocation(sel.LimitCount), "FETCH FIRST ... WITH TIES is not supported yet")
	}
	count, err = st.limitValue(sel.LimitCount, sc, kindLimit, "LIMIT")
	if err != nil {
		return 0, 0, err
	}
	offset, err = st.limitValue(sel.LimitOffset, sc, kindOffset, "OFFSET")
	if err != nil {
		return 0, 0, err
	}
	if offset < 0 {
		offset = 0
	}
	return count, offset, nil
}

func (st *bindState) limitValue(n *pg.Node, sc *Scope, kind exprKind, clause string) (int64, error) {
	if n == nil {
		return -1, nil
	}
	loc := exprLocation(n)
	ec := &exprCtx{st: st, sc: sc, kind: kind}
	e, err := ec.bind(n)
	if err != nil {
		return 0, err
	}
	if hasColRefs(e) {
		return 0, posErr(errs.Newf(errs.InvalidColumnRef, "argument of %s must not contain variables", clause), loc)
	}
	e2, err := ec.coerce(e, types.Of(types.Int8), implicitCoercion)
	if errors.Is(err, errNoCast) {
		return 0, posErr(errs.Newf(errs.DatatypeMismatch, "argument of %s must be type bigint, not type %s", clause, e.Type()), loc)
	}
	if err != nil {
		return 0, err
	}
	v, err := e2.Eval(nil)
	if err != nil {
		return 0, posErr(err, loc)
	}
	if v.IsNull() {
		return -1, nil
	}
	if v.Int() < 0 {
		code := errs.InvalidLimitCount
		if clause == "OFFSET" {
			code = errs.InvalidOffsetCount
		}
		return 0, posErr(errs.Newf(code, "%s must not be negative", clause), loc)
	}
	return v.Int(), nil
}

// valuesStmt binds a VALUES list: each column takes the common type of
// its entries.
func (st *bindState) valuesStmt(sel *pg.SelectStmt, opts queryOpts, env *cteEnv) (plan.Node, error) {
	ec := &exprCtx{st: st, sc: emptyScope, kind: kindValues}
	var rows [][]plan.Expr
	var locs [][]int32
	for _, l := range sel.ValuesLists {
		items := l.GetList().GetItems()
		row, rowLocs, err := ec.bindList(items)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return nil, posErr(errs.New(errs.SyntaxError, "VALUES lists must all be the same length"), firstLoc(rowLocs))
		}
		rows = append(rows, row)
		locs = append(locs, rowLocs)
	}
	width := len(rows[0])
	cols := make([]plan.Column, width)
	insertSource := !opts.resolveUnknowns && opts.top && len(sel.SortClause) == 0 &&
		sel.LimitCount == nil && sel.LimitOffset == nil
	for c := 0; c < width; c++ {
		cols[c] = plan.Column{Name: fmt.Sprintf("column%d", c+1), Type: rows[0][c].Type()}
		if insertSource {
			// Each entry is converted to its target column on its own.
			continue
		}
		col := make([]plan.Expr, len(rows))
		colLocs := make([]int32, len(rows))
		for r := range rows {
			col[r], colLocs[r] = rows[r][c], locs[r][c]
		}
		conv, t, err := ec.common("VALUES", col, colLocs)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			rows[r][c] = conv[r]
		}
		cols[c].Type = t
	}
	values := &plan.Values{Rows: rows, Cols: cols}
	item := relationItem("*VALUES*", "", cols)
	sc := &Scope{items: []*nsItem{item}}
	var tl []*target
	for i, c := range item.cols {
		tl = append(tl, &target{expr: &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}, name: c.name})
	}
	sorts, err := st.sortClause(&exprCtx{st: st, sc: sc, kind: kindOrderBy}, &tl, sel.SortClause, false)
	if err != nil {
		return nil, err
	}
	return st.finishQuery(values, sc, tl, false, sorts, sel, opts)
}

// setOperation binds UNION, INTERSECT and EXCEPT [ALL] with its ORDER BY
// and LIMIT.
func (st *bindState) setOperation(sel *pg.SelectStmt, opts queryOpts, env *cteEnv) (plan.Node, error) {
	node, err := st.setTree(sel, env, true)
	if err != nil {
		return nil, err
	}
	cols := node.Columns()
	item := &nsItem{colsVisible: true}
	var tl []*target
	for i, c := range cols {
		ref := &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type}
		item.cols = append(item.cols, nsCol{name: c.Name, expr: ref})
		tl = append(tl, &target{expr: ref, name: c.Name})
	}
	ec := &exprCtx{st: st, sc: &Scope{items: []*nsItem{item}}, kind: kindOrderBy}
	sorts, err := st.sortClause(ec, &tl, sel.SortClause, true)
	if err != nil {
		return nil, err
	}
	return st.finishQuery(node, ec.sc, tl, false, sorts, sel, opts)
}

// setTree binds one node of a set-operation tree. The root's WITH, ORDER
// BY and LIMIT belong to the whole statement; a parenthesized branch with
// its own is bound as a subquery.
func (st *bindState) setTree(sel *pg.SelectStmt, env *cteEnv, root bool) (plan.Node, error) {
	leaf := sel.Op != pg.SetOperation_SETOP_UNION && sel.Op != pg.SetOperation_SETOP_INTERSECT &&
		sel.Op != pg.SetOperation_SETOP_EXCEPT
	if leaf || (!root && (sel.WithClause != nil || len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil)) {
		return st.query(sel, queryOpts{}, env)
	}
	opName := setOpName(sel.Op)
	l, err := st.setTree(sel.Larg, env, false)
	if err != nil {
		return nil, err
	}
	r, err := st.setTree(sel.Rarg, env, false)
	if err != nil {
		return nil, err
	}
	lc, rc := l.Columns(), r.Columns()
	if len(lc) != len(rc) {
		return nil, errs.Newf(errs.SyntaxError, "each %s query must have the same number of columns", opName)
	}
	cols := make([]plan.Column, len(lc))
	for i := range lc {
		t, err := types.CommonType(opName, []types.Type{lc[i].Type, rc[i].Type})
		if err != nil {
			return nil, err
		}
		cols[i] = plan.Column{Name: lc[i].Name, Type: t}
	}
	ec := &exprCtx{st: st, sc: emptyScope}
	toCommon := func(i int, e plan.Expr) (plan.Expr, error) {
		out, err := ec.coerce(e, cols[i].Type, implicitCoercion)
		if errors.Is(err, errNoCast) {
			return nil, errs.Newf(errs.DatatypeMismatch, "%s could not convert type %s to %s", opName, e.Type(), cols[i].Type)
		}
		return out, err
	}
	if l, err = st.convertOutputs(l, withNames(cols, lc), toCommon); err != nil {
		return nil, err
	}
	if r, err = st.convertOutputs(r, withNames(cols, rc), toCommon); err != nil {
		return nil, err
	}
	if !sel.All {
		if err := columnsNeedEquality(cols); err != nil {
			return nil, err
		}
	}
	if sel.Op != pg.SetOperation_SETOP_UNION {
		return setOpNode(sel, l, r, cols), nil
	}
	if sel.All {
		ins := append(unionInputs(l, false), unionInputs(r, false)...)
		return &plan.Union{Ins: ins, Cols: cols}, nil
	}
	ins := append(unionInputs(l, true), unionInputs(r, true)...)
	return &plan.Distinct{Input: &plan.Union{Ins: ins, Cols: cols}}, nil
}

// withNames returns cols (types) under names' names.
func withNames(cols, names []plan.Column) []plan.Column {
	out := make([]plan.Column, len(cols))
	for i := range cols {
		out[i] = plan.Column{Name: names[i].Name, Type: cols[i].Type}
	}
	return out
}

// unionInputs flattens nested unions: the inputs of a UNION ALL branch
// join the parent's inputs, and under a distinct UNION any branch's
// DISTINCT is redundant too (distinct(distinct(a) + b) = distinct(a + b)).
func unionInputs(n plan.Node, distinct bool) []plan.Node {
	if d, ok := n.(*plan.Distinct); ok && distinct {
		n = d.Input
	}
	if u, ok := n.(*plan.Union); ok {
		var out []plan.Node
		for _, in := range u.Ins {
			out = append(out, unionInputs(in, distinct)...)
		}
		return out
	}
	return []plan.Node{n}
}

// convertOutputs converts the output columns of n with conv and gives
// them cols' names and types. A top Project or Values is converted in
// place (so that Unknown literals are parsed as their target type);
// otherwise a Project is added when anything changes.
func (st *bindState) convertOutputs(n plan.Node, cols []plan.Column, conv func(int, plan.Expr) (plan.Expr, error)) (plan.Node, error) {
	switch x := n.(type) {
	case *plan.Project:
		p := &plan.Project{Input: x.Input, Cols: append([]plan.Column(nil), cols...)}
		for i, e := range x.Exprs {
			c, err := conv(i, e)
			if err != nil {
				return nil, err
			}
			p.Exprs = append(p.Exprs, c)
		}
		return project(p.Input, p.Exprs, p.Cols), nil
	case *plan.Values:
		v := &plan.Values{Cols: append([]plan.Column(nil), cols...)}
		for _, row := range x.Rows {
			out := make([]plan.Expr, len(row))
			for i, e := range row {
				c, err := conv(i, e)
				if err != nil {
					return nil, err
				}
				out[i] = c
			}
			v.Rows = append(v.Rows, out)
		}
		return v, nil
	}
	in := n.Columns()
	exprs := make([]plan.Expr, len(in))
	for i, c := range in {
		e, err := conv(i, &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type})
		if err != nil {
			return nil, err
		}
		exprs[i] = e
	}
	return project(n, exprs, cols), nil
}

// composeProjections rewrites exprs (over inner's output) into expressions
// over inner's input. It declines when an inner column that is not a plain
// column reference would be computed more than once.
func composeProjections(inner *plan.Project, exprs []plan.Expr) ([]plan.Expr, bool) {
	uses := make([]int, len(inner.Exprs))
	for _, e := range exprs {
		for _, i := range colRefIndexes(e) {
			uses[i]++
		}
	}
	for i, n := range uses {
		if _, ok := inner.Exprs[i].(*plan.ColRef); !ok && n > 1 {
			return nil, false
		}
	}
	out := make([]plan.Expr, len(exprs))
	for i, e := range exprs {
		out[i] = mapColRefs(e, func(c *plan.ColRef) plan.Expr { return inner.Exprs[c.Index] })
	}
	return out, true
}
