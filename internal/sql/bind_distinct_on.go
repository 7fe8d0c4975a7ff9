package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
)

// isDistinctOn reports whether sel is SELECT DISTINCT ON (...).
func isDistinctOn(sel *pg.SelectStmt) bool {
	return len(sel.DistinctClause) > 0 && sel.DistinctClause[0] != nil && sel.DistinctClause[0].Node != nil
}

// distinctOnClause binds the expressions of DISTINCT ON (...) as ORDER BY
// binds its items (an output column's name or position, else an
// expression, added to the target list as a junk entry when it is not an
// output column), and checks them against ORDER BY as PostgreSQL does: the
// ORDER BY items that are DISTINCT ON expressions must come first. It
// returns the target-list entries, or nil without DISTINCT ON.
func (st *bindState) distinctOnClause(ec *exprCtx, tl *[]*target, sorts []sortItem, sel *pg.SelectStmt) ([]int, error) {
	if !isDistinctOn(sel) {
		return nil, nil
	}
	oc := ec.in(kindOrderBy, ec.aggs)
	var idxs []int
	locOf := map[int]int32{}
	for _, n := range sel.DistinctClause {
		i, err := st.orderTarget(oc, tl, n, false)
		if err != nil {
			return nil, err
		}
		(*tl)[i].expr = oc.resolveUnknown((*tl)[i].expr)
		if _, dup := locOf[i]; !dup {
			idxs = append(idxs, i)
			locOf[i] = exprLocation(n)
		}
	}
	mismatch := func(i int) error {
		return posErr(errs.New(errs.InvalidColumnRef,
			"SELECT DISTINCT ON expressions must match initial ORDER BY expressions"), locOf[i])
	}
	skipped := false
	inSorts := map[int]bool{}
	for _, s := range sorts {
		if _, on := locOf[s.idx]; !on {
			skipped = true
			continue
		}
		if skipped {
			return nil, mismatch(s.idx)
		}
		inSorts[s.idx] = true
	}
	for _, i := range idxs {
		if !inSorts[i] && skipped {
			return nil, mismatch(i)
		}
	}
	return idxs, nil
}

// applyDistinctOn keeps, of each group of rows with equal DISTINCT ON
// values, the first by the ORDER BY items that follow them: a TopK of one
// row per partition over the target list (junk entries included). Rows
// that ORDER BY does not order apart are ordered by their whole row, where
// PostgreSQL may keep any of them. The target list is rewritten to read
// the TopK's columns. carry are more expressions over node's row, kept as
// columns after the target list's and added to the partition (a
// subquery's correlation); the TopK's columns for them are returned.
func applyDistinctOn(node plan.Node, tl []*target, on []int, sorts []sortItem, carry []plan.Expr) (plan.Node, []plan.Expr) {
	if on == nil {
		return node, carry
	}
	exprs := make([]plan.Expr, len(tl), len(tl)+len(carry))
	cols := make([]plan.Column, len(tl), len(tl)+len(carry))
	for i, t := range tl {
		exprs[i] = t.expr
		cols[i] = plan.Column{Name: t.name, Type: t.expr.Type()}
	}
	for _, c := range carry {
		exprs = append(exprs, c)
		cols = append(cols, plan.Column{Name: exprName(c), Type: c.Type()})
	}
	in := project(node, exprs, cols)
	ref := func(i int) *plan.ColRef { return &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type} }
	isOn := map[int]bool{}
	var partition []plan.Expr
	for _, i := range on {
		isOn[i] = true
		partition = append(partition, ref(i))
	}
	var carried []plan.Expr
	for k := range carry {
		carried = append(carried, ref(len(tl)+k))
	}
	partition = append(partition, carried...)
	var keys []plan.SortKey
	for _, s := range sorts {
		if !isOn[s.idx] {
			keys = append(keys, plan.SortKey{Expr: ref(s.idx), Desc: s.desc, NullsFirst: s.nullsFirst})
		}
	}
	for i, t := range tl {
		t.expr = ref(i)
	}
	return plan.NewTopK(in, partition, keys, 1, 0, ""), carried
}

// applySubqueryDistinctOn is applyDistinctOn for a subquery in an
// expression, whose correlation conditions read node's row. Each outer row
// sees the rows of its own matches, so the DISTINCT ON groups are taken
// within the rows that match alike: the partition adds the inner side of
// each correlation equality (inner = outer) and the columns every other
// correlation condition reads, and the conditions are rewritten over the
// TopK's columns. With only equalities that is exactly the per-outer-row
// DISTINCT ON. With other conditions an outer row may match several of
// those groups: EXISTS does not mind (it only asks whether a row is
// left), nor does IN/ANY/ALL when the select list holds only DISTINCT ON
// expressions or functions of them (the set of values is the same); other
// select lists (which row is kept decides their values) and scalar
// subqueries (how many rows are returned decides their error) are
// rejected.
func applySubqueryDistinctOn(node plan.Node, tl []*target, on []int, sorts []sortItem, sub *subquery) (plan.Node, error) {
	if on == nil {
		return node, nil
	}
	carry, _, conds, residual := carryCorrelation(sub.conds, node.Columns(), 0)
	if residual && !sub.exists {
		for _, t := range tl {
			if !t.junk && !overDistinctOn(t.expr, tl, on) {
				return nil, notSupported(-1, "SELECT DISTINCT ON in a subquery correlated by conditions other than equalities is supported only when its select list is computed from the DISTINCT ON expressions")
			}
		}
		sub.distinctResidual = true
	}
	node, carried := applyDistinctOn(node, tl, on, sorts, carry)
	sub.conds = make([]plan.Expr, len(conds))
	for i, c := range conds {
		sub.conds[i] = mapColRefs(c, func(r *plan.ColRef) plan.Expr { return carried[r.Index] })
	}
	return node, nil
}

// overDistinctOn reports whether e is one of the DISTINCT ON expressions
// (entries on of tl), or reads no column but those that are.
func overDistinctOn(e plan.Expr, tl []*target, on []int) bool {
	bare := map[int]bool{}
	for _, i := range on {
		if exprEqual(tl[i].expr, e) {
			return true
		}
		if c, ok := tl[i].expr.(*plan.ColRef); ok {
			bare[c.Index] = true
		}
	}
	for _, c := range colRefIndexes(e) {
		if !bare[c] {
			return false
		}
	}
	return true
}

// carryCorrelation gives the expressions over a subquery's row (of
// columns in) that its correlation conditions conds need once the row is
// narrowed to the select list: the inner side of each equality inner =
// outer, and the columns each other condition reads. It returns them, with
// their columns, and conds rewritten over them as columns numbered from
// base; residual reports a condition other than an equality.
func carryCorrelation(conds []plan.Expr, in []plan.Column, base int) (exprs []plan.Expr, cols []plan.Column, out []plan.Expr, residual bool) {
	index := func(e plan.Expr, col plan.Column) *plan.ColRef {
		for k, x := range exprs {
			if exprEqual(x, e) {
				return &plan.ColRef{Index: base + k, Name: cols[k].Name, Typ: cols[k].Type}
			}
		}
		exprs, cols = append(exprs, e), append(cols, col)
		return &plan.ColRef{Index: base + len(exprs) - 1, Name: col.Name, Typ: col.Type}
	}
	for _, c := range conds {
		if inner, rebuild, ok := correlationKey(c); ok {
			out = append(out, rebuild(index(inner, plan.Column{Name: exprName(inner), Type: inner.Type()})))
			continue
		}
		residual = true
		out = append(out, mapColRefs(c, func(r *plan.ColRef) plan.Expr {
			return index(&plan.ColRef{Index: r.Index, Name: in[r.Index].Name, Typ: in[r.Index].Type}, in[r.Index])
		}))
	}
	return exprs, cols, out, residual
}
