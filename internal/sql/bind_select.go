package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
)

// target is one entry of a query's target list. Junk entries are values
// ORDER BY needs that are not output columns; they always follow the
// output columns.
type target struct {
	expr plan.Expr
	name string
	junk bool
}

// sortItem is one ORDER BY key: a target-list entry and its direction.
type sortItem struct {
	idx        int
	desc       bool
	nullsFirst bool
}

// selectStmt binds a simple SELECT in PostgreSQL's order of analysis:
// FROM, the target list, WHERE, HAVING, ORDER BY, GROUP BY, DISTINCT,
// LIMIT; then checks grouping and builds the plan.
func (st *bindState) selectStmt(sel *pg.SelectStmt, opts queryOpts, env *cteEnv) (plan.Node, error) {
	tree, sc, err := st.fromClause(sel.FromClause, env)
	if err != nil {
		return nil, err
	}
	wins, err := st.windowClause(sel.WindowClause)
	if err != nil {
		return nil, err
	}
	outerWins := st.wins
	st.wins = wins
	defer func() { st.wins = outerWins }()
	aggs := &aggCollector{}
	ec := &exprCtx{st: st, sc: sc, kind: kindSelect, aggs: aggs, env: env, sub: opts.sub}
	tl, err := st.targetList(ec, sel.TargetList)
	if err != nil {
		return nil, err
	}
	if opts.resolveUnknowns {
		for _, t := range tl {
			t.expr = ec.resolveOutput(t.expr)
		}
	}
	var where, having plan.Expr
	if sel.WhereClause != nil {
		if where, err = ec.in(kindWhere, nil).bindBool(sel.WhereClause, "WHERE"); err != nil {
			return nil, err
		}
	}
	if sel.HavingClause != nil {
		if having, err = ec.in(kindHaving, aggs).bindBool(sel.HavingClause, "HAVING"); err != nil {
			return nil, err
		}
	}
	sorts, err := st.sortClause(ec.in(kindOrderBy, aggs), &tl, sel.SortClause, false)
	if err != nil {
		return nil, err
	}
	keys, sets, grouped, err := st.groupClause(ec.in(kindGroupBy, nil), tl, sel.GroupClause, sel.GroupDistinct)
	if err != nil {
		return nil, err
	}
	distinctOn, err := st.distinctOnClause(ec, &tl, sorts, sel)
	if err != nil {
		return nil, err
	}
	distinct, err := st.distinctClause(ec, tl, sorts, sel)
	if err != nil {
		return nil, err
	}
	if err := ec.bindNamedWindows(wins); err != nil {
		return nil, err
	}
	userGrouped := grouped
	grouped = grouped || having != nil || len(aggs.calls) > 0 || len(aggs.groupings) > 0

	// A subquery's conditions on the query around it are its
	// correlation, joined by the query that holds it; conditions holding
	// subqueries are joined after the FROM clause is planned.
	conj := conjuncts(where)
	var corr []plan.Expr
	if opts.sub != nil {
		if conj, corr, err = splitCorrelated(conj); err != nil {
			return nil, err
		}
	}
	plain, links := splitSubLinks(conj)
	node, perm := st.planTree(tree, plain)
	outer := func(e plan.Expr) (plan.Expr, error) { return remapExpr(e, perm), nil }
	if node, err = st.linkFilter(node, links, outer); err != nil {
		return nil, err
	}
	if grouped {
		// A correlated subquery's inner sides of its equalities are more
		// group keys, ahead of its own.
		corrKeys, rebuild, err := correlationKeys(corr)
		if err != nil {
			return nil, err
		}
		if len(corr) > 0 && having != nil && !userGrouped {
			return nil, notSupported(-1, "HAVING in a correlated subquery without GROUP BY is not supported yet")
		}
		if sets != nil && len(corr) > 0 {
			return nil, notSupported(-1, "GROUPING SETS, ROLLUP and CUBE in a correlated subquery are not supported")
		}
		allKeys := append(append([]plan.Expr(nil), corrKeys...), keys...)
		agg := &plan.Aggregate{Input: node}
		for _, k := range allKeys {
			agg.GroupBy = append(agg.GroupBy, remapExpr(k, perm))
			agg.Cols = append(agg.Cols, plan.Column{Name: exprName(k), Type: k.Type()})
		}
		if err := st.directOverGroups(aggs.calls, allKeys, agg.Cols); err != nil {
			return nil, err
		}
		for _, c := range aggs.calls {
			c = remapAggCall(c, perm)
			agg.Aggs = append(agg.Aggs, c)
			agg.Cols = append(agg.Cols, plan.Column{Name: aggName(c), Type: c.Type})
		}
		if len(corrKeys) > 0 {
			if err := st.groupedCorrelation(opts.sub, agg, rebuild, keys, tl, having, aggs.calls, userGrouped); err != nil {
				return nil, err
			}
		}
		outer = func(e plan.Expr) (plan.Expr, error) { return st.overAggregate(e, allKeys, agg.Cols) }
		node = agg
		if sets != nil {
			var cols []plan.Column
			if node, cols, err = st.groupingSetsPlan(agg.Input, perm, allKeys, aggs.calls, aggs.groupings, sets); err != nil {
				return nil, err
			}
			groupingCol := len(allKeys) + len(aggs.calls)
			outer = func(e plan.Expr) (plan.Expr, error) { return st.overGroups(e, allKeys, cols, groupingCol) }
		}
		if having != nil {
			plainHaving, linkHaving := splitSubLinks(conjuncts(having))
			for i, c := range plainHaving {
				if plainHaving[i], err = outer(c); err != nil {
					return nil, err
				}
			}
			if node, err = st.linkFilter(pushFilter(node, plainHaving), linkHaving, outer); err != nil {
				return nil, err
			}
		}
	} else if opts.sub != nil {
		for _, c := range corr {
			opts.sub.conds = append(opts.sub.conds, remapExpr(c, perm))
		}
	}
	var lp *linkPlanner
	for _, t := range tl {
		if !hasSubLinks(t.expr) {
			if t.expr, err = outer(t.expr); err != nil {
				return nil, err
			}
			continue
		}
		if lp == nil {
			lp = newLinkPlanner(st, node, outer)
		}
		if t.expr, err = lp.replace(t.expr); err != nil {
			return nil, err
		}
	}
	if lp != nil {
		node = lp.node
	}
	if node, err = st.planWindows(node, wins, tl, outer); err != nil {
		return nil, err
	}
	if node, err = selectUnnest(node, tl); err != nil {
		return nil, err
	}
	if opts.sub != nil {
		if node, err = applySubqueryDistinctOn(node, tl, distinctOn, sorts, opts.sub); err != nil {
			return nil, err
		}
		return st.finishSubquery(node, sc, tl, distinct, distinctOn != nil, sorts, sel, opts.sub)
	}
	node, _ = applyDistinctOn(node, tl, distinctOn, sorts, nil)
	return st.finishQuery(node, sc, tl, distinct, sorts, sel, opts)
}

// finishSubquery completes a subquery in an expression: its plan, its
// select list over the plan's row and its correlation conditions go to
// sub. SELECT DISTINCT becomes a Distinct of the select list and the
// columns the correlation reads; LIMIT and OFFSET a TopK per outer row
// (lateralLimit). distinctOn says DISTINCT ON was applied to node.
func (st *bindState) finishSubquery(node plan.Node, sc *Scope, tl []*target, distinct, distinctOn bool, sorts []sortItem, sel *pg.SelectStmt, sub *subquery) (plan.Node, error) {
	count, offset, err := st.limitOffset(sel, sc)
	if err != nil {
		return nil, err
	}
	if (count >= 0 || offset > 0) && !(sub.exists && count != 0 && offset == 0) {
		if node, err = lateralLimit(node, tl, sorts, count, offset, sub, distinct || distinctOn); err != nil {
			return nil, posErr(err, exprLocation(sel.LimitCount))
		}
	}
	sub.values, sub.names = sub.values[:0], sub.names[:0]
	for _, t := range tl {
		if !t.junk {
			sub.values = append(sub.values, t.expr)
			sub.names = append(sub.names, t.name)
		}
	}
	if distinct {
		var exprs []plan.Expr
		var cols []plan.Column
		for i, v := range sub.values {
			if hasOuterRefs(v) {
				return nil, notSupported(-1, "SELECT DISTINCT with correlated references in the select list is not supported")
			}
			exprs = append(exprs, v)
			cols = append(cols, plan.Column{Name: tl[i].name, Type: v.Type()})
		}
		carried, carriedCols, conds, residual := carryCorrelation(sub.conds, node.Columns(), len(exprs))
		exprs, cols = append(exprs, carried...), append(cols, carriedCols...)
		node = &plan.Distinct{Input: project(node, exprs, cols)}
		for i, v := range sub.values {
			sub.values[i] = &plan.ColRef{Index: i, Name: cols[i].Name, Typ: v.Type()}
		}
		sub.conds = conds
		sub.distinctResidual = sub.distinctResidual || residual
	}
	sub.node = node
	return node, nil
}

func remapOrNil(e plan.Expr, perm []int) plan.Expr {
	if e == nil {
		return nil
	}
	return remapExpr(e, perm)
}

// exprName names an Aggregate's group-key column for plan display.
func exprName(e plan.Expr) string {
	if c, ok := e.(*plan.ColRef); ok {
		return c.Name
	}
	return e.String()
}

// aggName renders an aggregate call for plan display.
func aggName(c plan.AggCall) string { return c.String() }

// targetList binds the select list, expanding * and t.*.
func (st *bindState) targetList(ec *exprCtx, items []*pg.Node) ([]*target, error) {
	var tl []*target
	for _, n := range items {
		rt := n.GetResTarget()
		if rt == nil {
			return nil, notSupported(-1, "select-list item %s is not supported", nodeName(n))
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			cols, err := starColumns(ec.sc, cr)
			if err != nil {
				return nil, err
			}
			for _, c := range cols {
				e := mapColRefs(c.expr, func(r *plan.ColRef) plan.Expr {
					cp := *r
					st.locs[&cp] = cr.Location
					return &cp
				})
				tl = append(tl, &target{expr: e, name: c.name})
			}
			continue
		}
		e, err := ec.bind(rt.Val)
		if err != nil {
			return nil, err
		}
		name := rt.Name
		if name == "" {
			name = figureColname(rt.Val)
		}
		tl = append(tl, recordTargets(&target{expr: e, name: name})...)
	}
	if len(tl) > MaxTargetEntries {
		return nil, tooManyTargets()
	}
	return tl, nil
}

// PostgreSQL's limits on columns (MaxTupleAttributeNumber and
// MaxHeapAttributeNumber), with its errors.
const (
	// MaxTargetEntries bounds a query's target list, stars expanded.
	MaxTargetEntries = 1664
	// MaxTableColumns bounds a table's columns.
	MaxTableColumns = 1600
)

func tooManyTargets() error {
	return errs.Newf(errs.TooManyColumns, "target lists can have at most %d entries", MaxTargetEntries)
}

// TooManyTableColumns is the error of a table with more than
// MaxTableColumns columns.
func TooManyTableColumns() error {
	return errs.Newf(errs.TooManyColumns, "tables can have at most %d columns", MaxTableColumns)
}

// starColumns returns the columns * or t.* stands for.
func starColumns(sc *Scope, cr *pg.ColumnRef) ([]nsCol, error) {
	var qual []string
	for _, f := range cr.Fields[:len(cr.Fields)-1] {
		qual = append(qual, f.GetString_().GetSval())
	}
	switch len(qual) {
	case 0:
		if !sc.hasRelations() {
			return nil, posErr(errs.New(errs.SyntaxError, "SELECT * with no tables specified is not valid"), cr.Location)
		}
		return sc.star(), nil
	case 1:
		it, err := sc.lookupRelation(qual[0], cr.Location)
		if err != nil {
			return nil, err
		}
		return it.cols, nil
	case 2:
		// schema.relation.*: the relation's FROM item is named by the
		// relation alone.
		it, err := sc.lookupRelation(qual[1], cr.Location)
		if err != nil {
			return nil, err
		}
		return it.cols, nil
	}
	return nil, posErr(errs.Newf(errs.SyntaxError, "improper qualified name (too many dotted names): %s",
		starName(qual)), cr.Location)
}

// sortClause binds ORDER BY. A key is an output column (by name or
// position) or an expression over the input; an expression that is not in
// the target list is added to it as a junk entry. For a set operation
// only output columns may be used.
func (st *bindState) sortClause(ec *exprCtx, tl *[]*target, items []*pg.Node, setOp bool) ([]sortItem, error) {
	var out []sortItem
	for _, n := range items {
		sb := n.GetSortBy()
		if sb == nil {
			return nil, notSupported(-1, "ORDER BY item %s is not supported", nodeName(n))
		}
		if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, notSupported(sb.Location, "ORDER BY ... USING is not supported")
		}
		idx, err := st.orderTarget(ec, tl, sb.Node, setOp)
		if err != nil {
			return nil, err
		}
		t := (*tl)[idx]
		t.expr = ec.resolveUnknown(t.expr)
		if err := needOrdering(t.expr, exprLocation(sb.Node)); err != nil {
			return nil, err
		}
		desc, nullsFirst := sortDirection(sb)
		out = append(out, sortItem{idx: idx, desc: desc, nullsFirst: nullsFirst})
	}
	return out, nil
}

// orderTarget finds (or adds) the target-list entry an ORDER BY item
// sorts by: SQL92 rules first (an output column's name, a position), then
// an expression over the input (SQL99).
func (st *bindState) orderTarget(ec *exprCtx, tl *[]*target, n *pg.Node, setOp bool) (int, error) {
	loc := exprLocation(n)
	if name, ok := bareName(n); ok {
		found := -1
		for i, t := range *tl {
			if t.junk || t.name != name {
				continue
			}
			if found >= 0 && !exprEqual((*tl)[found].expr, t.expr) {
				return 0, posErr(errs.Newf(errs.AmbiguousColumn, "ORDER BY %q is ambiguous", name), loc)
			}
			if found < 0 {
				found = i
			}
		}
		if found >= 0 {
			return found, nil
		}
	}
	if c := n.GetAConst(); c != nil {
		return position(*tl, c, "ORDER BY")
	}
	e, err := ec.bind(n)
	if err != nil {
		return 0, err
	}
	for i, t := range *tl {
		if exprEqual(e, t.expr) {
			return i, nil
		}
	}
	if setOp {
		return 0, notSupported(loc, "invalid UNION/INTERSECT/EXCEPT ORDER BY clause: only result column names can be used, not expressions or functions")
	}
	*tl = append(*tl, &target{expr: e, name: "?column?", junk: true})
	return len(*tl) - 1, nil
}

// bareName returns the name of an unqualified column reference.
func bareName(n *pg.Node) (string, bool) {
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetString_() == nil {
		return "", false
	}
	return cr.Fields[0].GetString_().Sval, true
}

// position resolves ORDER BY 2 / GROUP BY 2 to the second output column.
func position(tl []*target, c *pg.A_Const, clause string) (int, error) {
	iv := c.GetIval()
	if iv == nil || c.Isnull {
		return 0, posErr(errs.Newf(errs.SyntaxError, "non-integer constant in %s", clause), c.Location)
	}
	n := 0
	for i, t := range tl {
		if t.junk {
			continue
		}
		n++
		if n == int(iv.Ival) {
			return i, nil
		}
	}
	return 0, posErr(errs.Newf(errs.InvalidColumnRef, "%s position %d is not in select list", clause, iv.Ival), c.Location)
}

// groupClause binds GROUP BY. A bare name is an input column when one
// has that name, else an output column's alias; a number is an output
// column's position; anything else an expression over the input. A
// parenthesized list of expressions is those expressions. grouped is true
// when there is a GROUP BY clause at all (GROUP BY () groups the whole
// input); sets is non-nil when grouping sets (GROUPING SETS, ROLLUP,
// CUBE) group the input more than one way.
func (st *bindState) groupClause(ec *exprCtx, tl []*target, items []*pg.Node, distinct bool) (keys []plan.Expr, sets *groupingSets, grouped bool, err error) {
	if len(items) == 0 {
		return nil, nil, false, nil
	}
	all := [][]int{nil}
	hasSets := false
	for _, n := range items {
		if gs := n.GetGroupingSet(); gs != nil && gs.Kind != pg.GroupingSetKind_GROUPING_SET_EMPTY {
			hasSets = true
		}
		s, err := st.groupingItemSets(ec, tl, &keys, n)
		if err != nil {
			return nil, nil, false, err
		}
		if all, err = crossSets(all, s); err != nil {
			return nil, nil, false, err
		}
	}
	if distinct {
		all = distinctSets(all)
	}
	if !hasSets || len(all) == 1 && len(all[0]) == len(keys) {
		return keys, nil, true, nil
	}
	return keys, &groupingSets{sets: all}, true, nil
}

func (st *bindState) groupKey(ec *exprCtx, tl []*target, n *pg.Node) (plan.Expr, error) {
	loc := exprLocation(n)
	if name, ok := bareName(n); ok {
		_, err := ec.sc.lookupColumn(name, loc)
		switch errs.CodeOf(err) {
		case errs.AmbiguousColumn:
			return nil, err
		case errs.UndefinedColumn, errs.FeatureNotSupported:
			var found *target
			for _, t := range tl {
				if t.junk || t.name != name {
					continue
				}
				if found != nil && !exprEqual(found.expr, t.expr) {
					return nil, posErr(errs.Newf(errs.AmbiguousColumn, "GROUP BY %q is ambiguous", name), loc)
				}
				if found == nil {
					found = t
				}
			}
			if found != nil {
				found.expr = ec.resolveUnknown(found.expr)
				return found.expr, nil
			}
		}
	}
	if c := n.GetAConst(); c != nil {
		i, err := position(tl, c, "GROUP BY")
		if err != nil {
			return nil, err
		}
		tl[i].expr = ec.resolveUnknown(tl[i].expr)
		return tl[i].expr, nil
	}
	return ec.bind(n)
}

// distinctClause checks SELECT DISTINCT (DISTINCT ON is distinctOnClause's):
// ORDER BY may only use output columns.
func (st *bindState) distinctClause(ec *exprCtx, tl []*target, sorts []sortItem, sel *pg.SelectStmt) (bool, error) {
	if len(sel.DistinctClause) == 0 || isDistinctOn(sel) {
		return false, nil
	}
	for _, s := range sorts {
		if tl[s.idx].junk {
			return false, errs.New(errs.InvalidColumnRef, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
		}
	}
	for _, t := range tl {
		t.expr = ec.resolveUnknown(t.expr)
		if err := needEquality(t.expr, -1); err != nil {
			return false, err
		}
	}
	return true, nil
}

// sortDirection reads an ORDER BY item's direction as PostgreSQL does:
// ASC by default, and NULLs sort as larger than any value (last ascending,
// first descending) unless NULLS FIRST or LAST says otherwise.
func sortDirection(sb *pg.SortBy) (desc, nullsFirst bool) {
	desc = sb.SortbyDir == pg.SortByDir_SORTBY_DESC
	nullsFirst = desc
	switch sb.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		nullsFirst = true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		nullsFirst = false
	}
	return desc, nullsFirst
}
