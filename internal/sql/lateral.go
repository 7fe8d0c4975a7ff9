package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// LATERAL subqueries in FROM. A LATERAL subquery may read the columns of
// the FROM items before it; it is bound exactly as a subquery in an
// expression (subquery.go), with those items' scope as its outer scope,
// and decorrelated the same way: its correlation conditions (the WHERE
// conjuncts that read the items before it) become the conditions of a
// join of those items (left) with the subquery's plan (right), and its
// select list becomes expressions over the joined row, which may read
// both sides (SELECT t.a + u.b). So
//
//	FROM t, LATERAL (SELECT u.x FROM u WHERE u.k = t.k) s
//
// is the join t ⋈ u on u.k = t.k, maintained as every join is. A
// subquery with aggregates groups by the inner sides of its equalities
// inner = outer: without GROUP BY it returns one row for every outer row
// (count(*) is 0 for an outer row without matches), which a left join
// rebuilds from a marker column. ORDER BY ... LIMIT k in such a subquery
// keeps k rows per value of those inner sides (a TopK partitioned by
// them), the common top-k-per-group shape.
//
// CROSS JOIN LATERAL and a comma are inner joins; JOIN LATERAL ... ON adds
// its ON conditions to the join; LEFT JOIN LATERAL ... ON pads the outer
// rows with no matching row with NULLs, so a select-list value computed
// from the outer row is NULL there too (a marker column tells). RIGHT and
// FULL joins cannot carry a LATERAL reference, as in PostgreSQL.
//
// What the joins cannot carry fails at bind time with 0A000 naming it:
// correlation in a LIMIT, in ORDER BY of a subquery with LIMIT, in
// GROUP BY, in a set operation or a VALUES with ORDER BY or LIMIT (a plain
// VALUES list is a per-row flat map, lateral_values.go), or by conditions other than
// inner = outer under aggregates, DISTINCT or LIMIT.

// lateralSubselect returns n as a LATERAL subquery in FROM, or nil.
func lateralSubselect(n *pg.Node) *pg.RangeSubselect {
	if rs := n.GetRangeSubselect(); rs != nil && rs.Lateral {
		return rs
	}
	return nil
}

// bindLateral binds the query of a LATERAL subquery with left's scope as
// its outer scope.
func (st *bindState) bindLateral(left *fromItem, rs *pg.RangeSubselect, env *cteEnv) (*subquery, error) {
	sel := rs.Subquery.GetSelectStmt()
	if sel == nil {
		return nil, notSupported(-1, "this subquery in FROM is not supported")
	}
	if rs.Alias == nil {
		return nil, errs.New(errs.SyntaxError, "subquery in FROM must have an alias")
	}
	sel, err := lateralValues(sel)
	if err != nil {
		return nil, err
	}
	saved := st.outer
	st.outer = &outerScope{sc: &Scope{items: left.ns}, parent: saved}
	defer func() { st.outer = saved }()
	sub := &subquery{}
	if _, err := st.query(sel, queryOpts{resolveUnknowns: true, sub: sub}, env); err != nil {
		return nil, err
	}
	return sub, nil
}

// correlated reports whether the bound subquery reads the query around it.
func (sub *subquery) correlated() bool {
	if len(sub.conds) > 0 {
		return true
	}
	for _, v := range sub.values {
		if hasOuterRefs(v) {
			return true
		}
	}
	return false
}

// lateralJoin binds LATERAL (subquery) joined by kind (InnerJoin for a
// comma and CROSS JOIN) to left, the FROM items before it, with the ON
// condition quals (nil for none).
func (st *bindState) lateralJoin(left *fromItem, rs *pg.RangeSubselect, kind plan.JoinKind, quals *pg.Node, env *cteEnv) (*fromItem, error) {
	sub, err := st.bindLateral(left, rs, env)
	if err != nil {
		return nil, err
	}
	if sub.distinctResidual {
		return nil, notSupported(-1, "SELECT DISTINCT in a LATERAL subquery correlated by conditions other than inner = outer is not supported")
	}
	lw := left.tree.width
	implicit := sub.implicitGroup
	treeKind := kind
	if implicit {
		// One row for every outer row: the empty group's for those
		// without a match.
		treeKind = plan.LeftJoin
	}
	needMarker := false
	if treeKind == plan.LeftJoin {
		if implicit {
			needMarker = sub.empty != nil
		} else {
			for _, v := range sub.values {
				if _, bare := v.(*plan.ColRef); !bare {
					needMarker = true
				}
			}
		}
	}
	right, p := prune(sub, true, needMarker)
	rcols := right.Columns()
	overJoin := func(e plan.Expr) plan.Expr {
		out, _ := transform(e, func(x plan.Expr) (plan.Expr, bool, error) {
			switch x := x.(type) {
			case *outerRef:
				return x.expr, true, nil
			case *plan.ColRef:
				return &plan.ColRef{Index: x.Index + lw, Name: x.Name, Typ: x.Typ}, true, nil
			}
			return nil, false, nil
		})
		return out
	}
	var on []plan.Expr
	for _, c := range p.conds {
		on = append(on, overJoin(c))
	}
	var marker plan.Expr
	if needMarker {
		m := len(rcols) - 1
		marker = &plan.ColRef{Index: lw + m, Name: rcols[m].Name, Typ: rcols[m].Type}
	}
	names := sub.names
	if n := len(rs.Alias.Colnames); n > 0 {
		if n > len(names) {
			return nil, errs.Newf(errs.InvalidColumnRef, "table %q has %d columns available but %d columns specified",
				rs.Alias.Aliasname, len(names), n)
		}
		names = append([]string(nil), names...)
		for i, c := range rs.Alias.Colnames {
			names[i] = c.GetString_().GetSval()
		}
	}
	cols := make([]nsCol, len(p.values))
	for i, v := range p.values {
		val := overJoin(v)
		_, bare := v.(*plan.ColRef)
		switch {
		case needMarker && implicit:
			val = &plan.Case{Whens: []plan.When{{Cond: &plan.IsNull{Arg: marker}, Result: sub.empty[i]}}, Else: val, Typ: val.Type()}
		case needMarker && !bare:
			val = &plan.Case{Whens: []plan.When{{Cond: &plan.IsNull{Arg: marker}, Result: nullOf(val.Type())}}, Else: val, Typ: val.Type()}
		}
		cols[i] = nsCol{name: names[i], expr: val}
	}
	item := &nsItem{name: rs.Alias.Aliasname, relVisible: true, colsVisible: true, cols: cols}
	if err := checkConflicts(left.ns, []*nsItem{item}, -1); err != nil {
		return nil, err
	}
	width := lw + len(rcols)
	tree := &joinTree{kind: treeKind, left: left.tree, right: &joinTree{leaf: right, width: len(rcols)}, on: on, width: width}
	ns := append(append([]*nsItem(nil), left.ns...), item)
	if quals != nil {
		ec := &exprCtx{st: st, sc: &Scope{items: ns}, kind: kindJoinOn}
		cond, err := ec.bindBool(quals, "JOIN/ON")
		if err != nil {
			return nil, err
		}
		cs := conjuncts(cond)
		switch {
		case len(cs) == 0:
			// ON true.
		case !implicit:
			tree.on = append(tree.on, cs...)
		case kind == plan.InnerJoin:
			// Every outer row has its one row: ON filters the pairs,
			// as a join with a single empty row does.
			tree = &joinTree{kind: plan.InnerJoin, left: tree, right: &joinTree{leaf: unitRow(), width: 0}, on: cs, width: width}
		default:
			// LEFT JOIN of one row per outer row: where ON does not
			// hold, that row is NULLs.
			for i, c := range cols {
				cols[i].expr = &plan.Case{Whens: []plan.When{{Cond: andOf(cs), Result: c.expr}}, Else: nullOf(c.expr.Type()), Typ: c.expr.Type()}
			}
		}
	}
	return &fromItem{tree: tree, ns: ns, cols: append(append([]nsCol(nil), left.cols...), cols...)}, nil
}

// lateralJoinExpr binds l JOIN LATERAL (subquery): CROSS, INNER and LEFT
// joins with ON; RIGHT and FULL joins only when the subquery does not
// refer to l (then LATERAL changes nothing), as in PostgreSQL.
func (st *bindState) lateralJoinExpr(l *fromItem, j *pg.JoinExpr, rs *pg.RangeSubselect, env *cteEnv) (*fromItem, bool, error) {
	if j.IsNatural || len(j.UsingClause) > 0 {
		return nil, true, notSupported(-1, "JOIN LATERAL with USING or NATURAL is not supported; write the condition in ON")
	}
	if j.Alias != nil || j.JoinUsingAlias != nil {
		return nil, true, notSupported(-1, "an alias for a JOIN LATERAL is not supported")
	}
	var kind plan.JoinKind
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		kind = plan.InnerJoin
	case pg.JoinType_JOIN_LEFT:
		kind = plan.LeftJoin
	case pg.JoinType_JOIN_RIGHT, pg.JoinType_JOIN_FULL:
		sub, err := st.bindLateral(l, rs, env)
		if err != nil {
			return nil, true, err
		}
		if sub.correlated() {
			e := errs.New(errs.InvalidColumnRef, "invalid reference to FROM-clause entry in a LATERAL subquery").(*errs.Error)
			e.Detail = "The combining JOIN type must be INNER or LEFT for a LATERAL reference."
			return nil, true, e
		}
		// Not correlated: an ordinary join.
		return nil, false, nil
	default:
		return nil, true, notSupported(-1, "join type %s is not supported", j.Jointype)
	}
	it, err := st.lateralJoin(l, rs, kind, j.Quals, env)
	return it, true, err
}

// nullOf is the NULL of type t.
func nullOf(t types.Type) plan.Expr { return &plan.Const{Val: types.Null, Typ: t} }

// unitRow is the relation of one row without columns.
func unitRow() *plan.Values { return &plan.Values{Rows: [][]plan.Expr{{}}} }

// isUnitRow reports whether n is the relation of one row without columns,
// the identity of a cross join.
func isUnitRow(n plan.Node) bool {
	v, ok := n.(*plan.Values)
	return ok && len(v.Rows) == 1 && len(v.Rows[0]) == 0 && len(v.Cols) == 0
}

// lateralLimit makes the plan of a correlated subquery with LIMIT or
// OFFSET (node, with target list tl and ORDER BY sorts) keep, for every
// outer row, the rows of its own matches at those positions: a TopK
// partitioned by the inner sides of the correlation equalities, over
// node's columns followed by the sort keys and those inner sides. The
// correlation conditions are rewritten over the partition's columns; the
// target list keeps reading node's columns, which come first.
func lateralLimit(node plan.Node, tl []*target, sorts []sortItem, count, offset int64, sub *subquery, distinct bool) (plan.Node, error) {
	switch {
	case distinct:
		return nil, notSupported(-1, "LIMIT and OFFSET with DISTINCT or DISTINCT ON in a subquery are not supported")
	case sub.implicitGroup:
		return nil, notSupported(-1, "LIMIT and OFFSET in a correlated subquery with aggregates and no GROUP BY are not supported")
	}
	in := node.Columns()
	var exprs []plan.Expr
	cols := append([]plan.Column(nil), in...)
	for i, c := range in {
		exprs = append(exprs, &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type})
	}
	var keys []plan.SortKey
	for _, s := range sorts {
		e := tl[s.idx].expr
		if hasOuterRefs(e) {
			return nil, notSupported(-1, "ORDER BY a column of the query around a subquery with LIMIT or OFFSET is not supported")
		}
		k, ok := e.(*plan.ColRef)
		if !ok {
			k = &plan.ColRef{Index: len(exprs), Name: exprName(e), Typ: e.Type()}
			exprs = append(exprs, e)
			cols = append(cols, plan.Column{Name: k.Name, Type: k.Typ})
		}
		keys = append(keys, plan.SortKey{Expr: k, Desc: s.desc, NullsFirst: s.nullsFirst})
	}
	carried, carriedCols, conds, residual := carryCorrelation(sub.conds, in, len(exprs))
	if residual {
		return nil, notSupported(-1, "LIMIT and OFFSET in a subquery correlated by conditions other than inner = outer are not supported")
	}
	var partition []plan.Expr
	for k, c := range carriedCols {
		partition = append(partition, &plan.ColRef{Index: len(exprs) + k, Name: c.Name, Typ: c.Type})
	}
	exprs, cols = append(exprs, carried...), append(cols, carriedCols...)
	sub.conds = conds
	return plan.NewTopK(project(node, exprs, cols), partition, keys, count, offset, ""), nil
}
