package sql

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// This file binds subqueries in expressions (EXISTS, IN, op ANY/ALL and
// scalar subqueries) and decorrelates them into joins.
//
// A subquery is bound with the scope of the query around it as its outer
// scope: a name it does not have resolves there, as an outerRef. Outer
// references are accepted in the subquery's own WHERE clause (and select
// list); each WHERE conjunct that has one is a correlation condition,
// taken out of the subquery's plan and kept over the subquery's row. The
// expression holding the subquery gets a subLink in its place.
//
// When the query around it is planned, each subLink becomes a join of the
// query's plan (left) with the subquery's plan (right) on the correlation
// conditions, whose equalities are keys and the rest the residual:
//
//   - EXISTS, IN and op ANY as a WHERE conjunct: a semi-join (the ANY
//     comparison is one more join condition); NOT EXISTS, NOT IN and op
//     ALL: an anti-join, whose mark follows PostgreSQL's NULL rules.
//   - the same anywhere else in an expression: a mark join, whose mark
//     column replaces the subLink;
//   - a scalar subquery: a left join marked SingleMatch, so that a second
//     row for one outer row fails with 21000, whose right column replaces
//     the subLink.
//
// A subquery with aggregates correlates by equality only: its inner sides
// become extra GROUP BY keys, and the join matches the outer row with its
// group. Without GROUP BY such a subquery returns one row even for an
// empty group (count(*) is 0 there, not NULL), which the left join
// rebuilds from a marker column.

// outerScope is the name space of the queries around a subquery,
// innermost first.
type outerScope struct {
	sc     *Scope
	parent *outerScope
}

// outerRef is a reference from a subquery to a column of the query around
// it: Expr is over that query's FROM row. It exists only while the
// subquery is bound and decorrelated.
type outerRef struct {
	expr plan.Expr
}

func (o *outerRef) Type() types.Type { return o.expr.Type() }
func (o *outerRef) String() string   { return "outer(" + o.expr.String() + ")" }
func (o *outerRef) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.New(errs.Internal, "outer reference evaluated outside its subquery")
}

// subCol is column idx of a subquery's select list, in the comparison of
// x op ANY/ALL (subquery) before the subquery is joined.
type subCol struct {
	idx int
	typ types.Type
}

func (c *subCol) Type() types.Type { return c.typ }
func (c *subCol) String() string   { return fmt.Sprintf("subquery.#%d", c.idx) }
func (c *subCol) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.New(errs.Internal, "subquery column evaluated outside its join")
}

// linkKind is the kind of a subLink.
type linkKind uint8

const (
	linkExists linkKind = iota
	linkAny
	linkAll
	linkScalar
)

// subLink stands for a subquery in an expression until the query around
// it is planned.
type subLink struct {
	kind linkKind
	sub  *subquery
	// test is the comparison of ANY/ALL over the outer query's bound row
	// and the subquery's columns (subCol).
	test plan.Expr
	typ  types.Type
	loc  int32
}

func (l *subLink) Type() types.Type { return l.typ }
func (l *subLink) String() string   { return "(subquery)" }
func (l *subLink) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.New(errs.Internal, "subquery evaluated before it was planned")
}

// subquery is a bound subquery in an expression: its plan and, over that
// plan's row, its select list and its correlation conditions.
type subquery struct {
	node   plan.Node
	values []plan.Expr // the select list; may hold outerRefs
	names  []string    // the select list's column names
	// conds are the correlation conditions, over node's row and outerRefs.
	conds []plan.Expr
	// implicitGroup is set for a correlated subquery with aggregates and
	// no GROUP BY: it returns one row for every outer row, over an empty
	// group when the outer row has none. empty, when not nil, is then
	// its select list over an empty group (count(*) is 0); when nil, its
	// select list over NULLs for every aggregate gives that value.
	implicitGroup bool
	empty         []plan.Expr
	// distinctResidual is set for SELECT DISTINCT with correlation
	// conditions other than inner = outer: the rows matching one outer
	// row are not distinct by the select list alone.
	distinctResidual bool
	// exists is set for the subquery of EXISTS, which only counts rows:
	// a LIMIT of at least one row changes nothing.
	exists bool
}

// outerReference makes the reference, from the subquery being bound, to
// expression e of the query depth levels out.
func (ec *exprCtx) outerReference(e plan.Expr, depth int, name string, loc int32) (plan.Expr, error) {
	if p, ok := ec.applyReference(e, depth); ok {
		return p, nil
	}
	switch {
	case depth > 1:
		return nil, notSupported(loc, "a reference to %s, a column of a query %d levels out, is not supported", name, depth)
	case ec.kind != kindWhere && ec.kind != kindSelect:
		return nil, notSupported(loc, "correlated references in %s of a subquery are not supported", ec.kind.where())
	case ec.sub == nil:
		return nil, notSupported(loc, "a correlated reference to %s inside a subquery in FROM, a set operation, VALUES or WITH is not supported", name)
	}
	r := &outerRef{expr: e}
	ec.st.locs[r] = loc
	return r, nil
}

// subLink binds a subquery in an expression.
func (ec *exprCtx) subLink(sl *pg.SubLink) (plan.Expr, error) {
	loc := sl.Location
	// Over unnest of the row's own array, ARRAY and EXISTS are functions
	// of the row.
	// When they read more of the row around them than unnest's argument,
	// they may still be evaluated per row.
	switch sl.SubLinkType {
	case pg.SubLinkType_ARRAY_SUBLINK:
		if e, ok, err := ec.arrayOverUnnest(sl); ok || err != nil {
			if rewritten, aerr := arraySubquery(sl); err != nil && aerr == nil {
				return ec.perRowOr(rewritten, linkScalar, err)
			}
			return e, err
		}
	case pg.SubLinkType_EXISTS_SUBLINK:
		if e, ok, err := ec.existsOverUnnest(sl); ok || err != nil {
			if err != nil {
				return ec.perRowOr(sl, linkExists, err)
			}
			return e, err
		}
	}
	if msg := ec.st.noSubLinks; msg != "" {
		ec.st.sawSubLink = true
		return nil, notSupported(loc, "%s", msg)
	}
	switch ec.kind {
	case kindWhere, kindSelect, kindHaving:
	default:
		return nil, notSupported(loc, "subqueries in %s are not supported yet", ec.kind.where())
	}
	var kind linkKind
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		kind = linkExists
	case pg.SubLinkType_ANY_SUBLINK:
		kind = linkAny
	case pg.SubLinkType_ALL_SUBLINK:
		kind = linkAll
	case pg.SubLinkType_EXPR_SUBLINK:
		kind = linkScalar
	case pg.SubLinkType_ARRAY_SUBLINK:
		rewritten, err := arraySubquery(sl)
		if err != nil {
			return nil, err
		}
		sl, kind = rewritten, linkScalar
	case pg.SubLinkType_ROWCOMPARE_SUBLINK:
		return ec.rowCompareSubLink(sl)
	default:
		return nil, notSupported(loc, "this kind of subquery is not supported")
	}
	l, err := ec.decorrelatedSubLink(sl, kind, loc)
	if err != nil {
		// A subquery the joins cannot carry may still be evaluated per row.
		return ec.perRowOr(sl, kind, err)
	}
	return l, nil
}

// perRowOr binds sl for per-row evaluation when err, the error of binding
// it otherwise, is an unsupported construct and the query may evaluate
// subqueries per row; it returns err when it cannot.
func (ec *exprCtx) perRowOr(sl *pg.SubLink, kind linkKind, err error) (plan.Expr, error) {
	if errs.CodeOf(err) == errs.FeatureNotSupported {
		if e, ok, aerr := ec.applySubLink(sl, kind); ok && aerr == nil {
			return e, nil
		}
	}
	return nil, err
}

// decorrelatedSubLink binds a subquery in an expression as a subLink, to
// be decorrelated into a join when the query around it is planned.
func (ec *exprCtx) decorrelatedSubLink(sl *pg.SubLink, kind linkKind, loc int32) (plan.Expr, error) {
	sub, err := ec.subquery(sl.Subselect, kind == linkExists)
	if err != nil {
		return nil, err
	}
	l := &subLink{kind: kind, sub: sub, typ: types.Of(types.Bool), loc: loc}
	if sub.implicitGroup && kind != linkScalar {
		return nil, notSupported(loc, "EXISTS, IN, ANY and ALL over a correlated subquery with aggregates and no GROUP BY are not supported")
	}
	switch kind {
	case linkScalar:
		if sub.distinctResidual {
			return nil, notSupported(loc, "a scalar subquery with SELECT DISTINCT or DISTINCT ON and correlated conditions other than equalities is not supported")
		}
		if len(sub.values) != 1 {
			return nil, posErr(errs.New(errs.SyntaxError, "subquery must return only one column"), loc)
		}
		l.typ = sub.values[0].Type()
	case linkAny, linkAll:
		if l.test, err = ec.subTest(sl, sub); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// subTest binds the comparison of x op ANY/ALL (subquery) (IN is = ANY)
// between the test expression and the subquery's columns. A row on the
// left, (a, b) IN (SELECT x, y ...), compares column by column: for = and
// <> the row comparison is the AND (<>: the OR) of the columns'.
func (ec *exprCtx) subTest(sl *pg.SubLink, sub *subquery) (plan.Expr, error) {
	loc := sl.Location
	op := "="
	if len(sl.OperName) > 0 {
		var err error
		if op, err = opName(sl.OperName, loc); err != nil {
			return nil, err
		}
	}
	var left []*pg.Node
	if row := sl.Testexpr.GetRowExpr(); row != nil {
		left = row.Args
		if op != "=" && op != "<>" {
			return nil, notSupported(loc, "row comparisons with %s ANY/ALL (subquery) are not supported yet", op)
		}
	} else {
		left = []*pg.Node{sl.Testexpr}
	}
	switch {
	case len(sub.values) > len(left):
		return nil, posErr(errs.New(errs.SyntaxError, "subquery has too many columns"), loc)
	case len(sub.values) < len(left):
		return nil, posErr(errs.New(errs.SyntaxError, "subquery has too few columns"), loc)
	}
	var cmps []plan.Expr
	for i, n := range left {
		x, err := ec.bind(n)
		if err != nil {
			return nil, err
		}
		c, err := ec.binaryOp(op, x, &subCol{idx: i, typ: sub.values[i].Type()}, loc)
		if err != nil {
			return nil, err
		}
		if c.Type().ID != types.Bool {
			return nil, posErr(errs.New(errs.WrongObjectType, "op ANY/ALL (array) requires operator to yield boolean"), loc)
		}
		cmps = append(cmps, c)
	}
	if len(cmps) == 1 {
		return cmps[0], nil
	}
	if op == "<>" {
		return &plan.Or{Args: cmps}, nil
	}
	return &plan.And{Args: cmps}, nil
}

// subquery binds the query of a subquery in an expression, with ec's
// scope as its outer scope.
func (ec *exprCtx) subquery(n *pg.Node, exists bool) (*subquery, error) {
	sel := n.GetSelectStmt()
	if sel == nil {
		return nil, notSupported(-1, "this subquery is not supported")
	}
	st := ec.st
	saved := st.outer
	st.outer = &outerScope{sc: ec.sc, parent: saved}
	defer func() { st.outer = saved }()
	sub := &subquery{exists: exists}
	if _, err := st.query(sel, queryOpts{resolveUnknowns: true, sub: sub}, ec.env); err != nil {
		return nil, err
	}
	return sub, nil
}

// fillSubquery makes a plan bound without correlation (a set operation,
// VALUES) a subquery.
func fillSubquery(sub *subquery, node plan.Node) {
	sub.node = node
	sub.values, sub.names = nil, nil
	for i, c := range node.Columns() {
		sub.values = append(sub.values, &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type})
		sub.names = append(sub.names, c.Name)
	}
}

// hasOuterRefs reports whether e refers to the query around its own.
func hasOuterRefs(e plan.Expr) bool {
	found := false
	walk(e, func(x plan.Expr) {
		if _, ok := x.(*outerRef); ok {
			found = true
		}
	})
	return found
}

// hasSubLinks reports whether e holds a subquery.
func hasSubLinks(e plan.Expr) bool {
	found := false
	walk(e, func(x plan.Expr) {
		if _, ok := x.(*subLink); ok {
			found = true
		}
	})
	return found
}

// splitCorrelated separates the conjuncts of a subquery's WHERE that refer
// to the query around it (its correlation) from the others.
func splitCorrelated(conj []plan.Expr) (local, corr []plan.Expr, err error) {
	for _, c := range conj {
		if !hasOuterRefs(c) {
			local = append(local, c)
			continue
		}
		if hasSubLinks(c) {
			return nil, nil, notSupported(-1, "a correlated condition holding another subquery is not supported")
		}
		corr = append(corr, c)
	}
	return local, corr, nil
}

// splitSubLinks separates the conjuncts that hold subqueries from the
// others.
func splitSubLinks(conj []plan.Expr) (plain, links []plan.Expr) {
	for _, c := range conj {
		if hasSubLinks(c) {
			links = append(links, c)
		} else {
			plain = append(plain, c)
		}
	}
	return plain, links
}

// linkFilter applies conditions holding subqueries (over the query's
// bound row, mapped to node's row by outer) to node.
func (st *bindState) linkFilter(node plan.Node, links []plan.Expr, outer func(plan.Expr) (plan.Expr, error)) (plan.Node, error) {
	if len(links) == 0 {
		return node, nil
	}
	lp := newLinkPlanner(st, node, outer)
	if err := lp.filter(links); err != nil {
		return nil, err
	}
	return lp.node, nil
}

// correlationKeys splits the correlation conditions of an aggregating
// subquery into their inner sides, which become group keys, and the
// functions that rebuild each condition over its key's column.
func correlationKeys(corr []plan.Expr) ([]plan.Expr, []func(plan.Expr) plan.Expr, error) {
	var keys []plan.Expr
	var rebuild []func(plan.Expr) plan.Expr
	for _, c := range corr {
		inner, rb, ok := correlationKey(c)
		if !ok {
			return nil, nil, notSupported(-1, "a subquery with aggregates or GROUP BY may refer to the query around it only in conditions inner = outer")
		}
		keys = append(keys, inner)
		rebuild = append(rebuild, rb)
	}
	return keys, rebuild, nil
}

// groupedCorrelation completes an aggregating correlated subquery whose
// Aggregate agg groups by its correlation keys (the first len(rebuild)
// group keys) and then by its own keys: it checks grouping against its own
// keys only, rebuilds the correlation conditions over the key columns and,
// without GROUP BY, records the select list's value over an empty group.
func (st *bindState) groupedCorrelation(sub *subquery, agg *plan.Aggregate, rebuild []func(plan.Expr) plan.Expr, keys []plan.Expr, tl []*target, having plan.Expr, calls []plan.AggCall, grouped bool) error {
	own := agg.Cols[len(rebuild):]
	for _, t := range tl {
		if hasOuterRefs(t.expr) {
			return notSupported(-1, "correlated references in the select list of a subquery with aggregates are not supported")
		}
		if _, err := st.overAggregate(t.expr, keys, own); err != nil {
			return err
		}
	}
	if having != nil {
		if _, err := st.overAggregate(having, keys, own); err != nil {
			return err
		}
	}
	if !grouped {
		// Over an empty group every aggregate but count is NULL, as in
		// a row the left join pads with NULLs: only a count needs the
		// empty group's value spelled out.
		sub.implicitGroup = true
		counts := false
		for _, t := range tl {
			walk(t.expr, func(x plan.Expr) {
				if a, ok := x.(*aggRef); ok && (calls[a.idx].Func == "count" || calls[a.idx].Hypothetical()) {
					counts = true
				}
			})
		}
		for _, t := range tl {
			if counts && !t.junk {
				sub.empty = append(sub.empty, emptyAggregates(t.expr, calls))
			}
		}
	}
	for i, rb := range rebuild {
		c := agg.Cols[i]
		sub.conds = append(sub.conds, rb(&plan.ColRef{Index: i, Name: c.Name, Typ: c.Type}))
	}
	return nil
}

// correlationKey splits a correlation condition of an aggregating
// subquery, which must be inner = outer (either way round), into its inner
// side (over the subquery's FROM row) and the condition rebuilt over a
// column holding that inner side.
func correlationKey(c plan.Expr) (inner plan.Expr, rebuild func(col plan.Expr) plan.Expr, ok bool) {
	b, isBin := c.(*plan.BinOp)
	if !isBin || b.Op.Name != "=" || b.Op.Result.ID != types.Bool {
		return nil, nil, false
	}
	innerOnly := func(e plan.Expr) bool { return !hasOuterRefs(e) && hasColRefs(e) }
	outerOnly := func(e plan.Expr) bool { return hasOuterRefs(e) && !hasColRefs(e) }
	switch {
	case innerOnly(b.Left) && outerOnly(b.Right):
		return b.Left, func(col plan.Expr) plan.Expr { return &plan.BinOp{Op: b.Op, Left: col, Right: b.Right} }, true
	case outerOnly(b.Left) && innerOnly(b.Right):
		return b.Right, func(col plan.Expr) plan.Expr { return &plan.BinOp{Op: b.Op, Left: b.Left, Right: col} }, true
	}
	return nil, nil, false
}

// emptyAggregates rewrites a select-list expression over an aggregate's
// results into its value over an empty group: count is 0, rank and
// dense_rank WITHIN GROUP 1, percent_rank 0, cume_dist 1, every other
// aggregate NULL.
func emptyAggregates(e plan.Expr, calls []plan.AggCall) plan.Expr {
	out, _ := transform(e, func(x plan.Expr) (plan.Expr, bool, error) {
		a, ok := x.(*aggRef)
		if !ok {
			return nil, false, nil
		}
		switch c := calls[a.idx]; {
		case c.Func == "count":
			return &plan.Const{Val: types.MakeInt(types.Int8, 0), Typ: a.typ}, true, nil
		case c.Hypothetical() && c.Type.ID == types.Int8:
			return &plan.Const{Val: types.MakeInt(types.Int8, 1), Typ: a.typ}, true, nil
		case c.Func == "percent_rank":
			return &plan.Const{Val: types.MakeFloat8(0), Typ: a.typ}, true, nil
		case c.Func == "cume_dist":
			return &plan.Const{Val: types.MakeFloat8(1), Typ: a.typ}, true, nil
		}
		return &plan.Const{Val: types.Null, Typ: a.typ}, true, nil
	})
	return out
}

// linkPlanner joins a query's subqueries to its plan.
type linkPlanner struct {
	st   *bindState
	node plan.Node
	// outer maps an expression over the query's bound row (its FROM row,
	// or for a grouped query's HAVING and select list, the row before
	// grouping) to one over node's row.
	outer func(plan.Expr) (plan.Expr, error)
	// values holds, for each subLink joined as a value (a mark or a
	// scalar subquery), its expression over node's row.
	values map[*subLink]plan.Expr
}

func newLinkPlanner(st *bindState, node plan.Node, outer func(plan.Expr) (plan.Expr, error)) *linkPlanner {
	return &linkPlanner{st: st, node: node, outer: outer, values: map[*subLink]plan.Expr{}}
}

// filter applies conditions that hold subqueries (over the bound row):
// a conjunct that is a subquery test, or its negation, becomes a semi- or
// anti-join; any other is a filter over the subqueries' values.
func (lp *linkPlanner) filter(conj []plan.Expr) error {
	var rest []plan.Expr
	for _, c := range conj {
		l, _ := c.(*subLink)
		negated := false
		if n, ok := c.(*plan.Not); ok {
			l, negated = n.Arg.(*subLink)
		}
		if l == nil || l.kind == linkScalar {
			e, err := lp.replace(c)
			if err != nil {
				return err
			}
			rest = append(rest, e)
			continue
		}
		// EXISTS and ANY are true when their mark is TRUE; ALL is
		// NOT ANY(NOT test): true when that mark is FALSE.
		semi := (l.kind != linkAll) != negated
		if err := lp.join(l, semi); err != nil {
			return err
		}
	}
	if len(rest) > 0 {
		lp.node = &plan.Filter{Input: lp.node, Pred: andOf(rest)}
	}
	return nil
}

// replace maps e, over the bound row and holding subqueries, to an
// expression over node's row, joining each subquery as a value.
func (lp *linkPlanner) replace(e plan.Expr) (plan.Expr, error) {
	e, err := lp.outer(e)
	if err != nil {
		return nil, err
	}
	return transform(e, func(x plan.Expr) (plan.Expr, bool, error) {
		l, ok := x.(*subLink)
		if !ok {
			return nil, false, nil
		}
		v, err := lp.value(l)
		return v, true, err
	})
}

// innerExpr maps an expression of a subquery (over its node's row, with
// outer references) to one over the row of the join of node (width
// columns) with the subquery.
func (lp *linkPlanner) innerExpr(e plan.Expr, width int) (plan.Expr, error) {
	return transform(e, func(x plan.Expr) (plan.Expr, bool, error) {
		switch x := x.(type) {
		case *outerRef:
			o, err := lp.outerOf(x)
			return o, true, err
		case *plan.ColRef:
			return &plan.ColRef{Index: x.Index + width, Name: x.Name, Typ: x.Typ}, true, nil
		}
		return nil, false, nil
	})
}

// outerOf maps an outer reference to an expression over node's row.
func (lp *linkPlanner) outerOf(r *outerRef) (plan.Expr, error) {
	e, err := lp.outer(r.expr)
	if errs.CodeOf(err) == errs.GroupingError {
		loc, ok := lp.st.locs[r]
		if !ok {
			loc = -1
		}
		return nil, posErr(errs.Newf(errs.GroupingError, "subquery uses ungrouped column %q from outer query", r.expr.String()), loc)
	}
	return e, err
}

// test maps l's ANY/ALL comparison to an expression over the row of the
// join of node (width columns) with sub, l's subquery as joined: for ALL
// the negated comparison, whose ANY is the negation of ALL.
func (lp *linkPlanner) test(l *subLink, sub *subquery, width int) (plan.Expr, error) {
	t, err := lp.outer(l.test)
	if err != nil {
		return nil, err
	}
	t, err = transform(t, func(x plan.Expr) (plan.Expr, bool, error) {
		c, ok := x.(*subCol)
		if !ok {
			return nil, false, nil
		}
		v, err := lp.innerExpr(sub.values[c.idx], width)
		return v, true, err
	})
	if err != nil {
		return nil, err
	}
	if l.kind == linkAll {
		t = &plan.Not{Arg: t}
	}
	return t, nil
}

// join adds a semi-join (semi) or anti-join of node with l's subquery.
func (lp *linkPlanner) join(l *subLink, semi bool) error {
	right, sub := prune(l.sub, l.kind != linkExists, false)
	width := len(lp.node.Columns())
	kind := plan.AntiJoin
	if semi {
		kind = plan.SemiJoin
	}
	j := &plan.Join{Kind: kind, Left: lp.node, Right: right, Cols: lp.node.Columns()}
	if err := lp.correlate(j, sub, width); err != nil {
		return err
	}
	if l.kind != linkExists {
		t, err := lp.test(l, sub, width)
		if err != nil {
			return err
		}
		if semi {
			for _, c := range conjuncts(t) {
				addJoinCond(j, c, width)
			}
		} else {
			j.Test = probeTest(t, width)
		}
	}
	lp.node = sinkSemiJoin(j)
	return nil
}

// sinkSemiJoin moves a semi- or anti-join down to the input of the joins
// below it that has every column it reads, as a filter would move: it
// keeps or drops the same rows there, and arranges narrower rows.
func sinkSemiJoin(j *plan.Join) plan.Node {
	width := len(j.Left.Columns())
	reads := func(lo, hi int) bool {
		for _, e := range append([]plan.Expr{j.Residual, j.Test}, j.LeftKeys...) {
			for _, c := range colRefIndexes(e) {
				if c < width && (c < lo || c >= hi) {
					return false
				}
			}
		}
		return true
	}
	switch in := j.Left.(type) {
	case *plan.Filter:
		below := *j
		below.Left = in.Input
		return &plan.Filter{Input: sinkSemiJoin(&below), Pred: in.Pred}
	case *plan.Join:
		lw := len(in.Left.Columns())
		out := *in
		switch {
		case in.Kind != plan.InnerJoin && in.Kind != plan.LeftJoin && in.Kind != plan.RightJoin:
		case in.Kind != plan.RightJoin && reads(0, lw):
			// Right's columns leave the row: the subquery's move down.
			rw := width - lw
			below := *j
			below.Left = in.Left
			below.Cols = in.Left.Columns()
			shift := func(e plan.Expr) plan.Expr {
				return mapColRefs(e, func(c *plan.ColRef) plan.Expr {
					if c.Index < width {
						return c
					}
					return &plan.ColRef{Index: c.Index - rw, Name: c.Name, Typ: c.Typ}
				})
			}
			below.Residual, below.Test = shiftOrNil(below.Residual, shift), shiftOrNil(below.Test, shift)
			out.Left = sinkSemiJoin(&below)
			return &out
		case in.Kind != plan.LeftJoin && reads(lw, width):
			below := *j
			below.Left = in.Right
			below.Cols = in.Right.Columns()
			below.LeftKeys = nil
			for _, k := range j.LeftKeys {
				below.LeftKeys = append(below.LeftKeys, shiftExpr(k, -lw))
			}
			below.Residual, below.Test = shiftOrNil(j.Residual, func(e plan.Expr) plan.Expr { return shiftExpr(e, -lw) }),
				shiftOrNil(j.Test, func(e plan.Expr) plan.Expr { return shiftExpr(e, -lw) })
			out.Right = sinkSemiJoin(&below)
			return &out
		}
	}
	return j
}

func shiftOrNil(e plan.Expr, f func(plan.Expr) plan.Expr) plan.Expr {
	if e == nil {
		return nil
	}
	return f(e)
}

// correlate adds the subquery's correlation conditions to j.
func (lp *linkPlanner) correlate(j *plan.Join, sub *subquery, width int) error {
	for _, c := range sub.conds {
		e, err := lp.innerExpr(c, width)
		if err != nil {
			return err
		}
		addJoinCond(j, e, width)
	}
	return nil
}

// value joins l's subquery to node as a value and returns the value's
// expression over node's row.
func (lp *linkPlanner) value(l *subLink) (plan.Expr, error) {
	if v, ok := lp.values[l]; ok {
		return v, nil
	}
	width := len(lp.node.Columns())
	var v plan.Expr
	if l.kind == linkScalar {
		// An aggregate without GROUP BY and without correlation returns
		// exactly one row: an inner join with it is enough. Otherwise a
		// left join, where a missing row is NULL, or an empty group's
		// value; a marker column (the right input's last) tells a
		// missing row when the value could not.
		one := len(l.sub.conds) == 0 && exactlyOneRow(l.sub.node)
		_, bare := l.sub.values[0].(*plan.ColRef)
		needMarker := !one && (l.sub.empty != nil || (!bare && !l.sub.implicitGroup))
		right, sub := prune(l.sub, true, needMarker)
		j := newJoin(plan.InnerJoin, lp.node, right)
		if !one {
			j.Kind, j.SingleMatch = plan.LeftJoin, true
		}
		if err := lp.correlate(j, sub, width); err != nil {
			return nil, err
		}
		val, err := lp.innerExpr(sub.values[0], width)
		if err != nil {
			return nil, err
		}
		v = val
		if needMarker {
			rc := right.Columns()
			m := len(rc) - 1
			marker := &plan.ColRef{Index: width + m, Name: rc[m].Name, Typ: rc[m].Type}
			var missing plan.Expr = &plan.Const{Val: types.Null, Typ: val.Type()}
			if sub.empty != nil {
				missing = sub.empty[0]
			}
			v = &plan.Case{Whens: []plan.When{{Cond: &plan.IsNull{Arg: marker}, Result: missing}}, Else: val, Typ: val.Type()}
		}
		lp.node = j
	} else {
		right, sub := prune(l.sub, l.kind != linkExists, false)
		cols := append(append([]plan.Column(nil), lp.node.Columns()...), plan.Column{Name: "?mark?", Type: types.Of(types.Bool)})
		j := &plan.Join{Kind: plan.MarkJoin, Left: lp.node, Right: right, Cols: cols}
		if err := lp.correlate(j, sub, width); err != nil {
			return nil, err
		}
		if l.kind != linkExists {
			t, err := lp.test(l, sub, width)
			if err != nil {
				return nil, err
			}
			j.Test = probeTest(t, width)
		}
		v = &plan.ColRef{Index: width, Name: "?mark?", Typ: types.Of(types.Bool)}
		if l.kind == linkAll {
			v = &plan.Not{Arg: v}
		}
		lp.node = j
	}
	lp.values[l] = v
	return v, nil
}

// exactlyOneRow reports whether n always returns exactly one row: an
// aggregate without GROUP BY.
func exactlyOneRow(n plan.Node) bool {
	a, ok := n.(*plan.Aggregate)
	return ok && len(a.GroupBy) == 0
}

// probeTest gives the two sides of an equality test between the left and
// the right input one type, as join keys get, so that the semi-join can
// keep the right input as counts of its values.
func probeTest(t plan.Expr, width int) plan.Expr {
	b, ok := t.(*plan.BinOp)
	if !ok || b.Left.Type().ID == b.Right.Type().ID {
		return t
	}
	l, r, nullSafe, ok := equiKey(t, width)
	if !ok || nullSafe {
		return t
	}
	o, err := types.ResolveBinary("=", l.Type(), r.Type())
	if err != nil || o.Left.ID != l.Type().ID || o.Right.ID != r.Type().ID {
		return t
	}
	return &plan.BinOp{Op: o, Left: l, Right: r}
}

// prune returns a plan of the subquery's columns that its values (when
// needed) and conditions use, and the subquery over that plan's row. With
// marker, the plan ends with a column that is TRUE in every row.
func prune(sub *subquery, values, marker bool) (plan.Node, *subquery) {
	cols := sub.node.Columns()
	used := make([]bool, len(cols))
	mark := func(es []plan.Expr) {
		for _, e := range es {
			for _, i := range colRefIndexes(e) {
				used[i] = true
			}
		}
	}
	mark(sub.conds)
	if values {
		mark(sub.values)
	}
	perm := make([]int, len(cols))
	var exprs []plan.Expr
	var out []plan.Column
	for i, u := range used {
		if u {
			perm[i] = len(exprs)
			exprs = append(exprs, &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type})
			out = append(out, cols[i])
		}
	}
	if marker {
		exprs = append(exprs, &plan.Const{Val: types.MakeBool(true), Typ: types.Of(types.Bool)})
		out = append(out, plan.Column{Name: "?marker?", Type: types.Of(types.Bool)})
	}
	p := &subquery{node: project(sub.node, exprs, out), empty: sub.empty, implicitGroup: sub.implicitGroup}
	for _, c := range sub.conds {
		p.conds = append(p.conds, remapExpr(c, perm))
	}
	if values {
		for _, v := range sub.values {
			p.values = append(p.values, remapExpr(v, perm))
		}
	}
	return p.node, p
}
