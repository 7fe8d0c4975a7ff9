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
// the TopK's columns.
func applyDistinctOn(node plan.Node, tl []*target, on []int, sorts []sortItem) plan.Node {
	if on == nil {
		return node
	}
	exprs := make([]plan.Expr, len(tl))
	cols := make([]plan.Column, len(tl))
	for i, t := range tl {
		exprs[i] = t.expr
		cols[i] = plan.Column{Name: t.name, Type: t.expr.Type()}
	}
	in := project(node, exprs, cols)
	ref := func(i int) *plan.ColRef { return &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type} }
	isOn := map[int]bool{}
	var partition []plan.Expr
	for _, i := range on {
		isOn[i] = true
		partition = append(partition, ref(i))
	}
	var keys []plan.SortKey
	for _, s := range sorts {
		if !isOn[s.idx] {
			keys = append(keys, plan.SortKey{Expr: ref(s.idx), Desc: s.desc, NullsFirst: s.nullsFirst})
		}
	}
	for i, t := range tl {
		t.expr = ref(i)
	}
	return plan.NewTopK(in, partition, keys, 1, 0, "")
}
