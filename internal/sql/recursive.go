package sql

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// WITH RECURSIVE follows PostgreSQL's parse analysis (parse_cte.c): every
// query of the list sees every other one; the queries are ordered so that
// none reads a later one (a cycle between different queries is mutual
// recursion, not implemented); a query that reads itself must have the
// form non-recursive-term UNION [ALL] recursive-term and read itself
// exactly once, in its recursive term, outside subqueries in expressions,
// the nullable side of outer joins, INTERSECT and EXCEPT, and not at a
// query level that aggregates. Its column types are those of the
// non-recursive term (an untyped literal there is text), which the union
// with the recursive term must not change.
//
// A recursive query binds to a plan.Recursive whose Step reads a
// plan.WorkingTable; like every WITH query it is bound again at each
// reference.

// withRecursive binds a WITH RECURSIVE list.
func (st *bindState) withRecursive(w *pg.WithClause, env *cteEnv) (*cteEnv, error) {
	var defs []*pg.CommonTableExpr
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		if c == nil {
			return nil, notSupported(w.Location, "this WITH item is not supported")
		}
		for _, d := range defs {
			if d.Ctename == c.Ctename {
				return nil, posErr(errs.Newf(errs.DuplicateAlias, "WITH query name %q specified more than once", c.Ctename), c.Location)
			}
		}
		defs = append(defs, c)
	}
	for _, c := range defs {
		if c.Ctequery.GetSelectStmt() == nil {
			return nil, notSupported(c.Location, "data-modifying statements in WITH are not supported")
		}
		if c.SearchClause != nil || c.CycleClause != nil {
			return nil, notSupported(c.Location, "SEARCH and CYCLE are not supported")
		}
	}
	order, recursive, err := sortWithItems(defs)
	if err != nil {
		return nil, err
	}
	for _, i := range order {
		if recursive[i] {
			if err := checkRecursion(defs[i]); err != nil {
				return nil, err
			}
		}
	}
	// Every query sees every other one.
	entries := make([]*cteEnv, len(defs))
	head := env
	for i, c := range defs {
		entries[i] = &cteEnv{parent: head, name: c.Ctename, def: c, recursive: recursive[i], scope: st.outer}
		head = entries[i]
	}
	for _, e := range entries {
		e.outer = head
	}
	for _, i := range order {
		if _, _, err := st.cteQuery(entries[i]); err != nil {
			return nil, err
		}
	}
	return head, nil
}

// sortWithItems orders a WITH RECURSIVE list so that no query reads a
// later one, as PostgreSQL's TopologicalSort does, and reports which
// queries read themselves.
func sortWithItems(defs []*pg.CommonTableExpr) (order []int, recursive []bool, err error) {
	n := len(defs)
	deps := make([]map[int]bool, n)
	recursive = make([]bool, n)
	for i, c := range defs {
		deps[i] = map[int]bool{}
		refs := &cteRefs{names: defs}
		refs.walk(c.Ctequery)
		for j := range refs.found {
			if j == i {
				recursive[i] = true
			} else {
				deps[i][j] = true
			}
		}
	}
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	for i := 0; i < n; i++ {
		j := i
		for j < n && len(deps[items[j]]) > 0 {
			j++
		}
		if j == n {
			return nil, nil, notSupported(defs[items[i]].Location, "mutual recursion between WITH items is not implemented")
		}
		items[i], items[j] = items[j], items[i]
		for k := i + 1; k < n; k++ {
			delete(deps[items[k]], items[i])
		}
	}
	return items, recursive, nil
}

// cteRefs finds the references to the queries of one WITH list in a
// query, skipping names that an inner WITH captures.
type cteRefs struct {
	names []*pg.CommonTableExpr
	inner [][]string // the names of the enclosing inner WITH lists
	found map[int]bool
}

func (r *cteRefs) captured(name string) bool {
	for _, l := range r.inner {
		for _, n := range l {
			if n == name {
				return true
			}
		}
	}
	return false
}

func (r *cteRefs) walk(m proto.Message) {
	if absent(m) {
		return
	}
	if rf, ok := m.(*pg.RangeFunction); ok {
		if rv := windowSource(rf); rv != nil {
			m = rv
		}
	}
	switch x := m.(type) {
	case *pg.RangeVar:
		if x.Schemaname != "" || r.captured(x.Relname) {
			return
		}
		for i, c := range r.names {
			if c.Ctename == x.Relname {
				if r.found == nil {
					r.found = map[int]bool{}
				}
				r.found[i] = true
			}
		}
		return
	case *pg.SelectStmt:
		if w := x.WithClause; w != nil {
			withScope(&r.inner, w, r.walk, func() { walkChildren(x, r.walk) })
			return
		}
	case *pg.WithClause:
		return // walked under its SelectStmt
	}
	walkChildren(m, r.walk)
}

// walkChildren calls fn for every message directly inside m, looking
// through the Node wrappers of pg_query's tree.
func walkChildren(m proto.Message, fn func(proto.Message)) {
	m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				fn(unwrapNode(l.Get(i).Message().Interface()))
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			fn(unwrapNode(v.Message().Interface()))
		}
		return true
	})
}

// absent reports whether m is no message at all (a nil field).
func absent(m proto.Message) bool { return m == nil || !m.ProtoReflect().IsValid() }

// unwrapNode returns the message a pg.Node wraps (m itself otherwise).
func unwrapNode(m proto.Message) proto.Message {
	n, ok := m.(*pg.Node)
	if !ok {
		return m
	}
	var inner proto.Message = n
	n.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() == protoreflect.MessageKind {
			inner = v.Message().Interface()
		}
		return false
	})
	return inner
}

// recursionContext is where a recursive reference stands.
type recursionContext uint8

const (
	recursionOK recursionContext = iota
	recursionNonRecursiveTerm
	recursionSublink
	recursionOuterJoin
	recursionIntersect
	recursionExcept
)

var recursionMessages = [...]string{
	recursionNonRecursiveTerm: "recursive reference to query %q must not appear within its non-recursive term",
	recursionSublink:          "recursive reference to query %q must not appear within a subquery",
	recursionOuterJoin:        "recursive reference to query %q must not appear within an outer join",
	recursionIntersect:        "recursive reference to query %q must not appear within INTERSECT",
	recursionExcept:           "recursive reference to query %q must not appear within EXCEPT",
}

// checkRecursion checks that a query reading itself is well formed, as
// PostgreSQL's checkWellFormedRecursion does, with its messages.
func checkRecursion(c *pg.CommonTableExpr) error {
	sel := c.Ctequery.GetSelectStmt()
	if sel.Op != pg.SetOperation_SETOP_UNION {
		return posErr(errs.Newf(errs.InvalidRecursion,
			"recursive query %q does not have the form non-recursive-term UNION [ALL] recursive-term", c.Ctename), c.Location)
	}
	chk := &recursionCheck{name: c.Ctename, ctx: recursionNonRecursiveTerm}
	chk.walk(sel.Larg)
	if chk.err != nil {
		return chk.err
	}
	chk = &recursionCheck{name: c.Ctename, ctx: recursionOK}
	chk.walk(sel.Rarg)
	if chk.err != nil {
		return chk.err
	}
	switch {
	case len(sel.SortClause) > 0:
		return notSupported(exprLocation(sel.SortClause[0].GetSortBy().GetNode()), "ORDER BY in a recursive query is not implemented")
	case sel.LimitOffset != nil:
		return notSupported(exprLocation(sel.LimitOffset), "OFFSET in a recursive query is not implemented")
	case sel.LimitCount != nil:
		return notSupported(exprLocation(sel.LimitCount), "LIMIT in a recursive query is not implemented")
	case len(sel.LockingClause) > 0:
		return notSupported(-1, "FOR UPDATE/SHARE in a recursive query is not implemented")
	}
	return nil
}

// recursionCheck walks one term of a recursive query.
type recursionCheck struct {
	name  string
	ctx   recursionContext
	inner [][]string
	refs  int
	// levelRefs counts the references of the query level being walked.
	levelRefs int
	err       error
}

func (r *recursionCheck) captured(name string) bool {
	for _, l := range r.inner {
		for _, n := range l {
			if n == name {
				return true
			}
		}
	}
	return false
}

func (r *recursionCheck) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// isSelfRef reports whether rv reads the recursive query itself.
func (r *recursionCheck) isSelfRef(rv *pg.RangeVar) bool {
	return rv.Schemaname == "" && rv.Relname == r.name && !r.captured(rv.Relname)
}

func (r *recursionCheck) walk(m proto.Message) {
	if r.err != nil || absent(m) {
		return
	}
	m = unwrapNode(m)
	if rf, ok := m.(*pg.RangeFunction); ok {
		if rv := windowSource(rf); rv != nil {
			m = rv
		}
	}
	save := r.ctx
	switch x := m.(type) {
	case *pg.RangeVar:
		if !r.isSelfRef(x) {
			return
		}
		if r.ctx != recursionOK {
			r.fail(posErr(errs.Newf(errs.InvalidRecursion, recursionMessages[r.ctx], r.name), x.Location))
			return
		}
		r.refs++
		r.levelRefs++
		if r.refs > 1 {
			r.fail(posErr(errs.Newf(errs.InvalidRecursion, "recursive reference to query %q must not appear more than once", r.name), x.Location))
		}
		return
	case *pg.SelectStmt:
		if w := x.WithClause; w != nil {
			withScope(&r.inner, w, r.walk, func() { r.selectStmt(x) })
			return
		}
		r.selectStmt(x)
		return
	case *pg.WithClause:
		return
	case *pg.JoinExpr:
		outer := func() {
			if save == recursionOK {
				r.ctx = recursionOuterJoin
			}
		}
		switch x.Jointype {
		case pg.JoinType_JOIN_LEFT:
			r.walk(x.Larg)
			outer()
			r.walk(x.Rarg)
		case pg.JoinType_JOIN_RIGHT:
			outer()
			r.walk(x.Larg)
			r.ctx = save
			r.walk(x.Rarg)
		case pg.JoinType_JOIN_FULL:
			outer()
			r.walk(x.Larg)
			r.walk(x.Rarg)
		default:
			r.walk(x.Larg)
			r.walk(x.Rarg)
		}
		r.ctx = save
		r.walk(x.Quals)
		return
	case *pg.SubLink:
		r.ctx = recursionSublink
		r.walk(x.Subselect)
		r.ctx = save
		r.walk(x.Testexpr)
		return
	}
	walkChildren(m, r.walk)
}

// selectStmt walks a SELECT without its WITH clause: under INTERSECT and
// EXCEPT a recursive reference is out of place; at a query level that
// reads the recursive query directly, aggregates are.
func (r *recursionCheck) selectStmt(x *pg.SelectStmt) {
	save := r.ctx
	if save != recursionOK {
		walkChildren(x, r.walk)
		return
	}
	switch x.Op {
	case pg.SetOperation_SETOP_INTERSECT, pg.SetOperation_SETOP_EXCEPT:
		// INTERSECT ALL hides a reference on either side, EXCEPT ALL on
		// either, EXCEPT on its right.
		ctx := recursionIntersect
		if x.Op == pg.SetOperation_SETOP_EXCEPT {
			ctx = recursionExcept
		}
		if x.All {
			r.ctx = ctx
		}
		r.walk(x.Larg)
		if x.Op == pg.SetOperation_SETOP_EXCEPT {
			r.ctx = ctx
		}
		r.walk(x.Rarg)
		r.ctx = save
		for _, n := range x.SortClause {
			r.walk(n)
		}
		r.walk(x.LimitOffset)
		r.walk(x.LimitCount)
		return
	}
	// A reference in this level's FROM (not inside a subquery there, which
	// is a query level of its own) makes it the level that aggregates
	// must not appear in.
	outer := r.levelRefs
	r.levelRefs = 0
	defer func() { r.levelRefs = outer }()
	for _, n := range x.FromClause {
		r.walk(n)
	}
	direct := r.levelRefs > 0
	for _, n := range x.TargetList {
		r.walk(n)
	}
	r.walk(x.WhereClause)
	for _, n := range x.GroupClause {
		r.walk(n)
	}
	r.walk(x.HavingClause)
	for _, n := range x.SortClause {
		r.walk(n)
	}
	for _, n := range x.ValuesLists {
		r.walk(n)
	}
	r.walk(x.LimitOffset)
	r.walk(x.LimitCount)
	r.walk(x.Larg)
	r.walk(x.Rarg)
	if direct && r.err == nil {
		if loc := aggregateLocation(x); loc != -2 {
			r.fail(posErr(errs.New(errs.InvalidRecursion, "aggregate functions are not allowed in a recursive query's recursive term"), loc))
		}
	}
}

// aggregateLocation returns the position of the first aggregate call of a
// query level (in its select list, HAVING or ORDER BY, outside
// subqueries), or -2 when there is none.
func aggregateLocation(x *pg.SelectStmt) int32 {
	loc := int32(-2)
	var find func(m proto.Message)
	find = func(m proto.Message) {
		if loc != -2 || absent(m) {
			return
		}
		switch f := unwrapNode(m).(type) {
		case *pg.SubLink, *pg.SelectStmt:
			return
		case *pg.FuncCall:
			if f.Over == nil {
				_, name := funcName(f.Funcname)
				if aggregateNames[name] || otherAggregates[name] {
					loc = f.Location
					return
				}
			}
		}
		walkChildren(unwrapNode(m), find)
	}
	for _, n := range x.TargetList {
		find(n)
	}
	find(x.HavingClause)
	for _, n := range x.SortClause {
		find(n)
	}
	return loc
}

// recursiveQuery binds a WITH query that reads itself for one reference
// to it.
func (st *bindState) recursiveQuery(e *cteEnv) (plan.Node, []plan.Column, error) {
	sel := e.def.Ctequery.GetSelectStmt()
	base, err := st.query(sel.Larg, queryOpts{}, e.outer)
	if err != nil {
		return nil, nil, err
	}
	baseCols := base.Columns()
	if n := len(e.def.Aliascolnames); n > len(baseCols) {
		return nil, nil, posErr(errs.Newf(errs.InvalidColumnRef,
			"WITH query %q has %d columns available but %d columns specified", e.name, len(baseCols), n), e.def.Location)
	}
	// The query's columns: the non-recursive term's, an untyped literal
	// there being text.
	cols := make([]plan.Column, len(baseCols))
	for i, c := range baseCols {
		cols[i] = c
		if c.Type.ID == types.Unknown {
			cols[i].Type = types.Of(types.Text)
		}
		if i < len(e.def.Aliascolnames) {
			cols[i].Name = e.def.Aliascolnames[i].GetString_().GetSval()
		}
	}
	st.recursions++
	work := &plan.WorkingTable{Name: e.name, ID: st.recursions, Cols: cols}
	step, err := st.query(sel.Rarg, queryOpts{}, &cteEnv{parent: e.outer, name: e.name, working: work})
	if err != nil {
		return nil, nil, err
	}
	stepCols := step.Columns()
	if len(stepCols) != len(cols) {
		return nil, nil, posErr(errs.New(errs.SyntaxError, "each UNION query must have the same number of columns"),
			targetLocation(sel.Rarg, 0))
	}
	// As for any UNION: each column's common type, to which both terms
	// are converted; then that type must be the non-recursive term's.
	ec := &exprCtx{st: st, sc: emptyScope}
	common := make([]plan.Column, len(cols))
	for i := range cols {
		t, err := types.CommonType("UNION", []types.Type{baseCols[i].Type, stepCols[i].Type})
		if err != nil {
			return nil, nil, posErr(err, targetLocation(sel.Rarg, i))
		}
		common[i] = plan.Column{Name: cols[i].Name, Type: t}
	}
	conv := func(i int, x plan.Expr) (plan.Expr, error) {
		out, err := ec.coerce(x, common[i].Type, implicitCoercion)
		if errors.Is(err, errNoCast) {
			return nil, errs.Newf(errs.DatatypeMismatch, "UNION could not convert type %s to %s", x.Type(), common[i].Type)
		}
		return out, err
	}
	if base, err = st.convertOutputs(base, common, conv); err != nil {
		return nil, nil, err
	}
	if step, err = st.convertOutputs(step, common, conv); err != nil {
		return nil, nil, err
	}
	for i := range cols {
		if common[i].Type != cols[i].Type {
			return nil, nil, posErr(errs.Newf(errs.DatatypeMismatch,
				"recursive query %q column %d has type %s in non-recursive term but type %s overall",
				e.name, i+1, cols[i].Type, common[i].Type), targetLocation(sel.Larg, i))
		}
	}
	rec := &plan.Recursive{Name: e.name, ID: work.ID, Base: base, Step: step, Distinct: !sel.All, Cols: cols}
	return rec, cols, nil
}

// targetLocation is the position of output column i of a SELECT or
// VALUES, or -1.
func targetLocation(sel *pg.SelectStmt, i int) int32 {
	switch {
	case sel == nil:
	case sel.Op == pg.SetOperation_SETOP_NONE && len(sel.ValuesLists) > 0:
		if items := sel.ValuesLists[0].GetList().GetItems(); i < len(items) {
			return exprLocation(items[i])
		}
	case sel.Op == pg.SetOperation_SETOP_NONE:
		if i < len(sel.TargetList) {
			return exprLocation(sel.TargetList[i].GetResTarget().GetVal())
		}
	default:
		return targetLocation(sel.Larg, i)
	}
	return -1
}

// withScope walks the queries of a WITH list with its names in scope as
// PostgreSQL sees them (RECURSIVE: every name of the list for every query;
// otherwise each query sees the names before it), then runs body with all
// of them in scope. inner is the stack of names that shadow a CTE.
func withScope(inner *[][]string, w *pg.WithClause, walk func(proto.Message), body func()) {
	*inner = append(*inner, nil)
	top := len(*inner) - 1
	if w.Recursive {
		for _, c := range w.Ctes {
			(*inner)[top] = append((*inner)[top], c.GetCommonTableExpr().GetCtename())
		}
	}
	for _, c := range w.Ctes {
		cte := c.GetCommonTableExpr()
		if cte == nil {
			continue
		}
		walk(cte.Ctequery)
		if !w.Recursive {
			(*inner)[top] = append((*inner)[top], cte.Ctename)
		}
	}
	body()
	*inner = (*inner)[:top]
}
