package sql

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
)

// joinTree is a FROM clause after binding and before its joins are
// planned: leaves are relations (already planned), inner nodes are joins
// with their conditions. Its row is the concatenation of its leaves' rows
// in FROM order; every expression bound over the FROM clause refers to
// that row.
type joinTree struct {
	leaf        plan.Node // non-nil for a leaf
	kind        plan.JoinKind
	left, right *joinTree
	on          []plan.Expr // conjuncts over left's row then right's
	width       int
	// unnest, when set, makes the node unnest over left (right is nil);
	// its row is left's followed by unnest's columns.
	unnest *unnestTree
}

// fromItem is one bound FROM item: its tree, the scope items it brings,
// and its own column list (what * over it and USING see).
type fromItem struct {
	tree *joinTree
	ns   []*nsItem
	cols []nsCol
}

// fromClause binds a FROM list; a comma is a cross join. An empty FROM is
// one empty row.
func (st *bindState) fromClause(items []*pg.Node, env *cteEnv) (*joinTree, *Scope, error) {
	if len(items) == 0 {
		return &joinTree{leaf: &plan.Values{Rows: [][]plan.Expr{{}}}}, &Scope{}, nil
	}
	var acc *fromItem
	for _, n := range items {
		if rf, fc := unnestFunction(n); rf != nil {
			// unnest may read the items before it.
			u, err := st.unnestItem(acc, rf, fc)
			if err != nil {
				return nil, nil, err
			}
			acc = u
			continue
		}
		if rs := lateralSubselect(n); rs != nil && acc != nil {
			// A LATERAL subquery may read the items before it.
			l, err := st.lateralJoin(acc, rs, plan.InnerJoin, nil, env)
			if err != nil {
				return nil, nil, err
			}
			acc = l
			continue
		}
		if j := n.GetJoinExpr(); j != nil && acc != nil {
			it, ok, err := st.joinAfterComma(acc, j, env)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				acc = it
				continue
			}
		}
		it, err := st.fromItem(n, env)
		if err != nil {
			return nil, nil, err
		}
		if acc == nil {
			acc = it
			continue
		}
		if err := checkConflicts(acc.ns, it.ns, fromLocation(n)); err != nil {
			return nil, nil, err
		}
		lw := acc.tree.width
		acc = &fromItem{
			tree: &joinTree{kind: plan.InnerJoin, left: acc.tree, right: it.tree, width: lw + it.tree.width},
			ns:   append(append([]*nsItem(nil), acc.ns...), shiftItems(it.ns, lw)...),
			cols: append(append([]nsCol(nil), acc.cols...), shiftCols(it.cols, lw)...),
		}
	}
	return acc.tree, &Scope{items: acc.ns}, nil
}

func shiftItems(items []*nsItem, delta int) []*nsItem {
	out := make([]*nsItem, len(items))
	for i, it := range items {
		out[i] = it.shifted(delta)
	}
	return out
}

// fromLocation is the position of a FROM item, for messages.
func fromLocation(n *pg.Node) int32 {
	switch x := n.Node.(type) {
	case *pg.Node_RangeVar:
		return x.RangeVar.Location
	case *pg.Node_JoinExpr:
		return fromLocation(x.JoinExpr.Larg)
	}
	return -1
}

// fromItem binds one FROM item.
func (st *bindState) fromItem(n *pg.Node, env *cteEnv) (*fromItem, error) {
	switch x := n.Node.(type) {
	case *pg.Node_RangeVar:
		return st.rangeVar(x.RangeVar, env)
	case *pg.Node_RangeSubselect:
		return st.subselect(x.RangeSubselect, env)
	case *pg.Node_JoinExpr:
		return st.joinExpr(x.JoinExpr, env)
	case *pg.Node_RangeFunction:
		if rf, fc := unnestFunction(n); rf != nil {
			// The left side of a JOIN: nothing before it to read.
			return st.unnestItem(nil, rf, fc)
		}
		return st.rangeFunction(x.RangeFunction, env)
	case *pg.Node_RangeTableSample:
		return nil, notSupported(x.RangeTableSample.Location, "TABLESAMPLE is not supported")
	case *pg.Node_RangeTableFunc:
		return nil, notSupported(x.RangeTableFunc.Location, "XMLTABLE is not supported")
	case *pg.Node_JsonTable:
		return nil, notSupported(x.JsonTable.Location, "JSON_TABLE is not supported yet")
	}
	return nil, notSupported(-1, "FROM item %s is not supported yet", nodeName(n))
}

// rangeVar binds a named relation: a CTE, a table, a materialized view or
// an inline view.
func (st *bindState) rangeVar(rv *pg.RangeVar, env *cteEnv) (*fromItem, error) {
	if rv.Catalogname != "" {
		// The session's own database may be named.
		if db, ok := st.b.Cat.(interface{ DatabaseName() string }); !ok || db.DatabaseName() != rv.Catalogname {
			return nil, notSupported(rv.Location, "cross-database references are not implemented: \"%s.%s.%s\"",
				rv.Catalogname, rv.Schemaname, rv.Relname)
		}
	}
	if rv.Schemaname == "" {
		if cte := env.lookup(rv.Relname); cte != nil {
			node, cols, err := st.cteQuery(cte)
			if err != nil {
				return nil, err
			}
			return leafItem(node, cols, rv.Alias, rv.Relname)
		}
	}
	name := rv.Relname
	if rv.Schemaname != "" {
		name = rv.Schemaname + "." + rv.Relname
	}
	rel := st.b.Cat.Relation(name)
	if rel == nil {
		return nil, posErr(errs.Newf(errs.UndefinedTable, "relation %q does not exist", name), rv.Location)
	}
	var node plan.Node
	cols := append([]plan.Column(nil), rel.Cols...)
	switch rel.Kind {
	case Table, MaterializedView:
		node = &plan.Scan{Relation: rel.Name, Cols: cols, AppendOnly: rel.AppendOnly, Unique: rel.Unique}
	case View:
		var err error
		if node, err = st.expandView(rel, rv.Location); err != nil {
			return nil, err
		}
		// The view's stored column names, the bound query's types.
		for i, c := range node.Columns() {
			cols[i].Type = c.Type
		}
	default:
		return nil, posErr(errs.Newf(errs.WrongObjectType, "%q cannot be read", name), rv.Location)
	}
	it, err := leafItem(node, cols, rv.Alias, rv.Relname)
	if err == nil && rel.SystemCols > 0 {
		markSystemCols(it, rel.SystemCols)
	}
	return it, err
}

// markSystemCols marks the last n columns of a relation's FROM item as
// system columns.
func markSystemCols(it *fromItem, n int) {
	for _, ns := range it.ns {
		for i := max(len(ns.cols)-n, 0); i < len(ns.cols); i++ {
			ns.cols[i].system = true
		}
	}
	for i := max(len(it.cols)-n, 0); i < len(it.cols); i++ {
		it.cols[i].system = true
	}
}

// leafItem makes the FROM item of a planned relation with output columns
// cols, named by alias when given (with its column aliases) or by name.
func leafItem(node plan.Node, cols []plan.Column, alias *pg.Alias, name string) (*fromItem, error) {
	ref, hidden := name, ""
	if alias != nil {
		ref = alias.Aliasname
		if ref != name {
			hidden = name
		}
		var err error
		if cols, err = renameColumns(cols, alias.Colnames, ref); err != nil {
			return nil, err
		}
	}
	item := relationItem(ref, hidden, cols)
	return &fromItem{
		tree: &joinTree{leaf: node, width: len(cols)},
		ns:   []*nsItem{item},
		cols: item.cols,
	}, nil
}

// renameColumns applies a column alias list (which may name fewer
// columns than there are).
func renameColumns(cols []plan.Column, names []*pg.Node, rel string) ([]plan.Column, error) {
	if len(names) == 0 {
		return cols, nil
	}
	if len(names) > len(cols) {
		return nil, errs.Newf(errs.InvalidColumnRef, "table %q has %d columns available but %d columns specified",
			rel, len(cols), len(names))
	}
	out := append([]plan.Column(nil), cols...)
	for i, n := range names {
		out[i].Name = n.GetString_().GetSval()
	}
	return out, nil
}

// expandView binds an inline view's query for one reference to it.
func (st *bindState) expandView(rel *Relation, loc int32) (plan.Node, error) {
	for _, v := range st.views {
		if v == rel.Name {
			return nil, posErr(errs.Newf(errs.InvalidObjectDef,
				"infinite recursion detected in rules for relation %q", rel.Name), loc)
		}
	}
	if len(st.views) >= maxViewDepth {
		return nil, posErr(errs.Newf(errs.ProgramLimitExceeded, "views nested too deeply at %q", rel.Name), loc)
	}
	sel, err := selectOf(rel.Query)
	if err != nil {
		return nil, err
	}
	st.views = append(st.views, rel.Name)
	// A view sees only its own names, never those of a query around the
	// subquery it is read in.
	outer := st.outer
	st.outer = nil
	if rel.Cat != nil {
		cat := st.b.Cat
		st.b.Cat = rel.Cat
		defer func() { st.b.Cat = cat }()
	}
	node, err := st.query(sel, queryOpts{resolveUnknowns: true}, nil)
	st.outer = outer
	st.views = st.views[:len(st.views)-1]
	if err != nil {
		// Positions inside the view's text mean nothing to the reader's
		// statement; the outermost view is named instead.
		var e *errs.Error
		if errors.As(err, &e) {
			c := *e
			c.Position = 0
			if len(st.views) == 0 && c.Code != errs.ProgramLimitExceeded && c.Code != errs.InvalidObjectDef {
				c.Message += " (in view " + rel.Name + ")"
			}
			return nil, posErr(&c, loc)
		}
		return nil, err
	}
	if len(node.Columns()) != len(rel.Cols) {
		return nil, errs.Newf(errs.Internal, "view %q returns %d columns but is declared with %d",
			rel.Name, len(node.Columns()), len(rel.Cols))
	}
	return node, nil
}

// subselect binds a subquery in FROM.
func (st *bindState) subselect(rs *pg.RangeSubselect, env *cteEnv) (*fromItem, error) {
	// A LATERAL subquery that has no FROM items before it to read (or
	// reads none of them, across a RIGHT or FULL join) is an ordinary
	// subquery; the others are joined by lateralJoin.
	sel := rs.Subquery.GetSelectStmt()
	if sel == nil {
		return nil, notSupported(-1, "this subquery in FROM is not supported")
	}
	if rs.Alias == nil {
		return nil, errs.New(errs.SyntaxError, "subquery in FROM must have an alias")
	}
	node, err := st.query(sel, queryOpts{resolveUnknowns: true}, env)
	if err != nil {
		return nil, err
	}
	return leafItem(node, node.Columns(), rs.Alias, rs.Alias.Aliasname)
}

// joinExpr binds an explicit JOIN.
func (st *bindState) joinExpr(j *pg.JoinExpr, env *cteEnv) (*fromItem, error) {
	l, err := st.fromItem(j.Larg, env)
	if err != nil {
		return nil, err
	}
	return st.joinOnto(l, j, env)
}

// joinAfterComma binds a JOIN that follows a comma and whose leftmost
// item is a LATERAL subquery, which may read the items before the comma:
// acc, (LATERAL s JOIN t ON c) is (acc CROSS JOIN LATERAL s) JOIN t ON c,
// the same rows for an inner or left join, since c reads only s and t.
// ok is false when j has another shape (NATURAL, USING or an alias, whose
// columns would then take in acc's, or a RIGHT or FULL join).
func (st *bindState) joinAfterComma(acc *fromItem, j *pg.JoinExpr, env *cteEnv) (*fromItem, bool, error) {
	if j.Alias != nil || j.IsNatural || len(j.UsingClause) > 0 ||
		(j.Jointype != pg.JoinType_JOIN_INNER && j.Jointype != pg.JoinType_JOIN_LEFT) {
		return nil, false, nil
	}
	// The ON conditions may not read the items before the comma (they
	// would here): PostgreSQL's 42P01 for a qualified reference; an
	// unqualified name that an item before the comma has is left to the
	// ordinary binding, which refuses the query.
	if ok, err := onReadsOnlyJoin(acc, j.Quals); !ok || err != nil {
		return nil, err != nil, err
	}
	var l *fromItem
	var err error
	switch lj := j.Larg.GetJoinExpr(); {
	case lateralSubselect(j.Larg) != nil:
		l, err = st.lateralJoin(acc, lateralSubselect(j.Larg), plan.InnerJoin, nil, env)
	case lj != nil:
		var ok bool
		if l, ok, err = st.joinAfterComma(acc, lj, env); !ok {
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	it, err := st.joinOnto(l, j, env)
	return it, true, err
}

// joinOnto binds the explicit JOIN j with l, bound already, as its left
// side.
func (st *bindState) joinOnto(l *fromItem, j *pg.JoinExpr, env *cteEnv) (*fromItem, error) {
	if rf, fc := unnestFunction(j.Rarg); rf != nil {
		return st.joinUnnest(l, j, rf, fc)
	}
	if rs := lateralSubselect(j.Rarg); rs != nil {
		if it, done, err := st.lateralJoinExpr(l, j, rs, env); done {
			return it, err
		}
	}
	r, err := st.fromItem(j.Rarg, env)
	if err != nil {
		return nil, err
	}
	loc := fromLocation(j.Rarg)
	if err := checkConflicts(l.ns, r.ns, loc); err != nil {
		return nil, err
	}
	var kind plan.JoinKind
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		kind = plan.InnerJoin
	case pg.JoinType_JOIN_LEFT:
		kind = plan.LeftJoin
	case pg.JoinType_JOIN_RIGHT:
		kind = plan.RightJoin
	case pg.JoinType_JOIN_FULL:
		kind = plan.FullJoin
	default:
		return nil, notSupported(loc, "join type %s is not supported", j.Jointype)
	}
	lw := l.tree.width
	rns := shiftItems(r.ns, lw)
	rcols := shiftCols(r.cols, lw)
	inner := &Scope{items: append(append([]*nsItem(nil), l.ns...), rns...)}
	ec := &exprCtx{st: st, sc: inner, kind: kindJoinOn}

	var on []plan.Expr
	var merged []nsCol
	lrest, rrest := l.cols, rcols
	using, err := usingNames(j, l.cols, rcols)
	if err != nil {
		return nil, err
	}
	if len(using) > 0 {
		lused := map[int]bool{}
		rused := map[int]bool{}
		for _, name := range using {
			li, err := findUsing(l.cols, name, "left")
			if err != nil {
				return nil, err
			}
			ri, err := findUsing(rcols, name, "right")
			if err != nil {
				return nil, err
			}
			lused[li], rused[ri] = true, true
			lx, rx := l.cols[li].expr, rcols[ri].expr
			eq, err := ec.binaryOp("=", lx, rx, loc)
			if err != nil {
				return nil, err
			}
			cond, err := ec.toBool(eq, "JOIN/USING", loc)
			if err != nil {
				return nil, err
			}
			on = append(on, cond)
			m, err := ec.mergedColumn(kind, lx, rx, loc)
			if err != nil {
				return nil, err
			}
			merged = append(merged, nsCol{name: name, expr: m})
		}
		lrest, rrest = nil, nil
		for i, c := range l.cols {
			if !lused[i] {
				lrest = append(lrest, c)
			}
		}
		for i, c := range rcols {
			if !rused[i] {
				rrest = append(rrest, c)
			}
		}
	}
	if j.Quals != nil {
		cond, err := ec.bindBool(j.Quals, "JOIN/ON")
		if err != nil {
			return nil, err
		}
		on = append(on, conjuncts(cond)...)
	}
	cols := append(append(append([]nsCol(nil), merged...), lrest...), rrest...)
	item := &fromItem{
		tree: &joinTree{kind: kind, left: l.tree, right: r.tree, on: on, width: lw + r.tree.width},
		cols: cols,
	}
	if j.Alias != nil {
		renamed := append([]nsCol(nil), cols...)
		if len(j.Alias.Colnames) > len(cols) {
			return nil, errs.Newf(errs.InvalidColumnRef, "table %q has %d columns available but %d columns specified",
				j.Alias.Aliasname, len(cols), len(j.Alias.Colnames))
		}
		for i, n := range j.Alias.Colnames {
			renamed[i].name = n.GetString_().GetSval()
		}
		item.ns = []*nsItem{{name: j.Alias.Aliasname, relVisible: true, colsVisible: true, cols: renamed}}
		item.cols = renamed
	} else {
		for _, it := range append(append([]*nsItem(nil), l.ns...), rns...) {
			h := *it
			h.colsVisible = false
			item.ns = append(item.ns, &h)
		}
		item.ns = append(item.ns, &nsItem{colsVisible: true, cols: cols})
	}
	if j.JoinUsingAlias != nil {
		item.ns = append(item.ns, &nsItem{name: j.JoinUsingAlias.Aliasname, relVisible: true, cols: merged})
	}
	return item, nil
}

// usingNames returns the USING columns of a join, or for NATURAL the
// column names both sides share (in the left side's order).
func usingNames(j *pg.JoinExpr, lcols, rcols []nsCol) ([]string, error) {
	var names []string
	if j.IsNatural {
		for _, lc := range lcols {
			for _, rc := range rcols {
				if lc.name == rc.name && !lc.system && !rc.system {
					names = append(names, lc.name)
					break
				}
			}
		}
		return dedupe(names), nil
	}
	seen := map[string]bool{}
	for _, n := range j.UsingClause {
		name := n.GetString_().GetSval()
		if seen[name] {
			return nil, errs.Newf(errs.DuplicateColumn, "column name %q appears more than once in USING clause", name)
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, nil
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// findUsing finds the one column called name on one side of a join.
func findUsing(cols []nsCol, name, side string) (int, error) {
	idx := -1
	for i, c := range cols {
		if c.name != name {
			continue
		}
		if idx >= 0 {
			return 0, errs.Newf(errs.AmbiguousColumn, "common column name %q appears more than once in %s table", name, side)
		}
		idx = i
	}
	if idx < 0 {
		return 0, errs.Newf(errs.UndefinedColumn, "column %q specified in USING clause does not exist in %s table", name, side)
	}
	return idx, nil
}

// mergedColumn is the value of a USING column in the join's output, in
// the sides' common type: the left side's for left joins, the right
// side's for right joins, the first non-NULL of both for full joins, and
// for inner joins (where both are equal) the one that needs no conversion.
func (ec *exprCtx) mergedColumn(kind plan.JoinKind, lx, rx plan.Expr, loc int32) (plan.Expr, error) {
	es, t, err := ec.common("JOIN/USING", []plan.Expr{lx, rx}, []int32{loc, loc})
	if err != nil {
		return nil, err
	}
	switch kind {
	case plan.RightJoin:
		return es[1], nil
	case plan.FullJoin:
		return &plan.Coalesce{Args: es, Typ: t}, nil
	case plan.InnerJoin:
		if es[0] != lx && es[1] == rx {
			return es[1], nil
		}
	}
	return es[0], nil
}

// cteEnv is the chain of WITH queries visible at a point of a statement,
// innermost first.
type cteEnv struct {
	parent *cteEnv
	name   string
	def    *pg.CommonTableExpr
	// outer is the environment the CTE's own query is bound in: the
	// queries before it in its WITH and those around it (with RECURSIVE,
	// all the queries of its WITH).
	outer *cteEnv
	// scope is the name space of the queries around the WITH clause when
	// it is inside a subquery in an expression.
	scope *outerScope
	// recursive marks a query of a WITH RECURSIVE that reads itself;
	// working, when set, makes the entry the recursive reference inside
	// such a query's recursive term (recursive.go).
	recursive bool
	working   *plan.WorkingTable
}

func (e *cteEnv) lookup(name string) *cteEnv {
	for ; e != nil; e = e.parent {
		if e.name == name {
			return e
		}
	}
	return nil
}

// withClause binds a WITH list: each query is checked once here and bound
// again, inline, wherever it is referenced (as a view is).
func (st *bindState) withClause(w *pg.WithClause, env *cteEnv) (*cteEnv, error) {
	if w.Recursive {
		return st.withRecursive(w, env)
	}
	seen := map[string]bool{}
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		if c == nil {
			return nil, notSupported(w.Location, "this WITH item is not supported")
		}
		if seen[c.Ctename] {
			return nil, posErr(errs.Newf(errs.DuplicateAlias, "WITH query name %q specified more than once", c.Ctename), c.Location)
		}
		seen[c.Ctename] = true
		if c.Ctequery.GetSelectStmt() == nil {
			return nil, notSupported(c.Location, "data-modifying statements in WITH are not supported")
		}
		if c.SearchClause != nil || c.CycleClause != nil {
			return nil, notSupported(c.Location, "SEARCH and CYCLE are not supported")
		}
		entry := &cteEnv{parent: env, name: c.Ctename, def: c, outer: env, scope: st.outer}
		if _, _, err := st.cteQuery(entry); err != nil {
			return nil, err
		}
		env = entry
	}
	return env, nil
}

// cteQuery binds a WITH query for one reference to it.
func (st *bindState) cteQuery(e *cteEnv) (plan.Node, []plan.Column, error) {
	switch {
	case e.working != nil:
		return e.working, append([]plan.Column(nil), e.working.Cols...), nil
	case e.recursive:
		return st.recursiveQuery(e)
	}
	// A WITH query is bound where it is defined, not inside the
	// subquery that reads it.
	outer := st.outer
	st.outer = e.scope
	node, err := st.query(e.def.Ctequery.GetSelectStmt(), queryOpts{resolveUnknowns: true}, e.outer)
	st.outer = outer
	if err != nil {
		return nil, nil, err
	}
	cols := append([]plan.Column(nil), node.Columns()...)
	if n := len(e.def.Aliascolnames); n > 0 {
		if n > len(cols) {
			return nil, nil, posErr(errs.Newf(errs.InvalidColumnRef,
				"WITH query %q has %d columns available but %d columns specified", e.name, len(cols), n), e.def.Location)
		}
		for i, a := range e.def.Aliascolnames {
			cols[i].Name = a.GetString_().GetSval()
		}
	}
	return node, cols, nil
}

// onReadsOnlyJoin reports whether the ON condition quals names no column
// of acc's items; a reference qualified by one of their names is
// PostgreSQL's 42P01.
func onReadsOnlyJoin(acc *fromItem, quals *pg.Node) (bool, error) {
	if quals == nil {
		return true, nil
	}
	names := map[string]bool{}
	for _, it := range acc.ns {
		if it.name != "" {
			names[it.name] = true
		}
	}
	cols := map[string]bool{}
	for _, c := range acc.cols {
		cols[c.name] = true
	}
	ok := true
	var err error
	var walk func(m proto.Message)
	walk = func(m proto.Message) {
		if !ok || err != nil || absent(m) {
			return
		}
		if cr, isRef := m.(*pg.ColumnRef); isRef {
			var fields []string
			for _, f := range cr.Fields {
				if sv := f.GetString_(); sv != nil {
					fields = append(fields, sv.Sval)
				}
			}
			switch {
			case len(fields) >= 2 && names[fields[len(fields)-2]]:
				err = errs.Newf(errs.UndefinedTable, "invalid reference to FROM-clause entry for table %q", fields[len(fields)-2])
			case len(fields) == 1 && cols[fields[0]]:
				ok = false
			}
			return
		}
		walkChildren(m, walk)
	}
	walk(unwrapNode(quals))
	return ok, err
}
