package sql

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// GROUPING SETS, ROLLUP and CUBE group one input several ways at once.
// PostgreSQL expands a GROUP BY clause into a list of grouping sets (the
// cross product of its items, ROLLUP and CUBE spelled out); the result is
// the UNION ALL, over the sets, of the input grouped by that set's keys,
// with the keys outside the set NULL and GROUPING(...) a per-set constant.
// The plan is exactly that: one Aggregate per set over the same input,
// each under a Project that fills in the missing keys and the GROUPING
// values, all under one Union. Each Aggregate is maintained on its own,
// so every aggregate function works (min and max under deletes, DISTINCT,
// ordered-set aggregates), at the cost of one group state per set.

// maxGroupingSets is PostgreSQL's limit on the expanded grouping sets.
const maxGroupingSets = 4096

// groupingSets is a GROUP BY clause with grouping sets: each set lists,
// in ascending order, the indexes of the group keys it groups by.
type groupingSets struct {
	sets [][]int
}

// groupingRef stands for a GROUPING(args) call of the query being bound,
// its arguments bound over the FROM row. Like aggRef it exists only while
// the query is bound: grouping replaces it by a constant (plain GROUP BY)
// or by a column of the grouping sets' Union.
type groupingRef struct {
	idx  int
	args []plan.Expr
	loc  int32
}

func (g *groupingRef) Type() types.Type { return types.Of(types.Int4) }
func (g *groupingRef) String() string   { return fmt.Sprintf("grouping#%d", g.idx) }
func (g *groupingRef) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.New(errs.Internal, "GROUPING evaluated outside its Aggregate")
}

// groupingFunc binds GROUPING(args), which is allowed where aggregates are.
func (ec *exprCtx) groupingFunc(g *pg.GroupingFunc) (plan.Expr, error) {
	if ec.aggs == nil {
		msg := "grouping operations are not allowed in " + ec.kind.where()
		switch ec.kind {
		case kindAggArg:
			msg = "aggregate function calls cannot be nested"
		case kindScalar:
			msg = "grouping operations are not allowed here"
		}
		return nil, posErr(errs.New(errs.GroupingError, msg), g.Location)
	}
	if len(g.Args) > 31 {
		return nil, posErr(errs.New(errs.TooManyArguments, "GROUPING must have fewer than 32 arguments"), g.Location)
	}
	ref := &groupingRef{idx: len(ec.aggs.groupings), loc: g.Location}
	argCtx := ec.in(kindAggArg, nil)
	for _, a := range g.Args {
		e, err := argCtx.bind(a)
		if err != nil {
			return nil, err
		}
		ref.args = append(ref.args, e)
	}
	ec.aggs.groupings = append(ec.aggs.groupings, ref)
	return ref, nil
}

// groupingValue computes GROUPING(args) for the grouping set set (nil for
// a plain GROUP BY): bit i, counting from the last argument, is set when
// argument i is not grouped by the set.
func (st *bindState) groupingValue(g *groupingRef, keys []plan.Expr, set []int, plain bool) (int32, error) {
	var v int32
	for _, a := range g.args {
		idx := -1
		for i, k := range keys {
			if exprEqual(a, k) {
				idx = i
				break
			}
		}
		if idx < 0 {
			return 0, posErr(errs.New(errs.GroupingError,
				"arguments to GROUPING must be grouping expressions of the associated query level"), exprLocationOf(st, a, g.loc))
		}
		v <<= 1
		if !plain && !slices.Contains(set, idx) {
			v |= 1
		}
	}
	return v, nil
}

// exprLocationOf is the statement position of a bound column reference,
// or def.
func exprLocationOf(st *bindState, e plan.Expr, def int32) int32 {
	if c, ok := e.(*plan.ColRef); ok {
		if loc, ok := st.locs[c]; ok {
			return loc
		}
	}
	return def
}

// groupingItemSets expands one item of a GROUP BY clause into its list of
// grouping sets, binding its expressions into keys (the query's group keys
// so far, which it extends). top is true for an item of the clause itself.
func (st *bindState) groupingItemSets(ec *exprCtx, tl []*target, keys *[]plan.Expr, n *pg.Node) ([][]int, error) {
	gs := n.GetGroupingSet()
	if gs == nil {
		set, err := st.groupingElement(ec, tl, keys, n)
		if err != nil {
			return nil, err
		}
		return [][]int{set}, nil
	}
	switch gs.Kind {
	case pg.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]int{nil}, nil
	case pg.GroupingSetKind_GROUPING_SET_SIMPLE:
		var set []int
		for _, c := range gs.Content {
			s, err := st.groupingElement(ec, tl, keys, c)
			if err != nil {
				return nil, err
			}
			set = unionSet(set, s)
		}
		return [][]int{set}, nil
	case pg.GroupingSetKind_GROUPING_SET_ROLLUP, pg.GroupingSetKind_GROUPING_SET_CUBE:
		var elems [][]int
		for _, c := range gs.Content {
			s, err := st.groupingElement(ec, tl, keys, c)
			if err != nil {
				return nil, err
			}
			elems = append(elems, s)
		}
		if gs.Kind == pg.GroupingSetKind_GROUPING_SET_ROLLUP {
			// ROLLUP (e1, ..., en) is the sets (e1, ..., en), ..., (e1), ().
			var out [][]int
			for i := len(elems); i >= 0; i-- {
				var set []int
				for _, e := range elems[:i] {
					set = unionSet(set, e)
				}
				out = append(out, set)
			}
			return out, nil
		}
		if len(elems) > 12 {
			return nil, posErr(errs.New(errs.TooManyColumns, "CUBE is limited to 12 elements"), gs.Location)
		}
		// CUBE (e1, ..., en) is every subset of its elements.
		var out [][]int
		for mask := (1 << len(elems)) - 1; mask >= 0; mask-- {
			var set []int
			for i, e := range elems {
				if mask&(1<<i) != 0 {
					set = unionSet(set, e)
				}
			}
			out = append(out, set)
		}
		return out, nil
	case pg.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]int
		for _, c := range gs.Content {
			sets, err := st.groupingItemSets(ec, tl, keys, c)
			if err != nil {
				return nil, err
			}
			out = append(out, sets...)
			if len(out) > maxGroupingSets {
				return nil, tooManyGroupingSets()
			}
		}
		return out, nil
	}
	return nil, notSupported(gs.Location, "grouping set kind %s is not supported", gs.Kind)
}

func tooManyGroupingSets() error {
	return errs.Newf(errs.StatementTooComplex, "too many grouping sets present (maximum %d)", maxGroupingSets)
}

// groupingElement binds one element of a grouping set: an expression, or
// a parenthesized list of them (an implicit row), into key indexes.
func (st *bindState) groupingElement(ec *exprCtx, tl []*target, keys *[]plan.Expr, n *pg.Node) ([]int, error) {
	if row := n.GetRowExpr(); row != nil && row.RowFormat == pg.CoercionForm_COERCE_IMPLICIT_CAST {
		var set []int
		for _, a := range row.Args {
			s, err := st.groupingElement(ec, tl, keys, a)
			if err != nil {
				return nil, err
			}
			set = unionSet(set, s)
		}
		return set, nil
	}
	if n.GetGroupingSet() != nil {
		return nil, posErr(errs.New(errs.SyntaxError, "nested grouping sets are only allowed in GROUPING SETS"), exprLocation(n))
	}
	k, err := st.groupKey(ec, tl, n)
	if err != nil {
		return nil, err
	}
	if hasAggRefs(k) {
		return nil, posErr(errs.New(errs.GroupingError, "aggregate functions are not allowed in GROUP BY"), exprLocation(n))
	}
	k = ec.resolveUnknown(k)
	if err := needEquality(k, exprLocation(n)); err != nil {
		return nil, err
	}
	for i, x := range *keys {
		if exprEqual(x, k) {
			return []int{i}, nil
		}
	}
	*keys = append(*keys, k)
	return []int{len(*keys) - 1}, nil
}

// unionSet returns the sorted union of two sorted key sets.
func unionSet(a, b []int) []int {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// crossSets combines the sets of two GROUP BY items: every set of a with
// every set of b.
func crossSets(a, b [][]int) ([][]int, error) {
	if len(a)*len(b) > maxGroupingSets {
		return nil, tooManyGroupingSets()
	}
	var out [][]int
	for _, x := range a {
		for _, y := range b {
			out = append(out, unionSet(x, y))
		}
	}
	return out, nil
}

// distinctSets removes repeated sets, for GROUP BY DISTINCT.
func distinctSets(sets [][]int) [][]int {
	var out [][]int
	for _, s := range sets {
		if !slices.ContainsFunc(out, func(o []int) bool { return slices.Equal(o, s) }) {
			out = append(out, s)
		}
	}
	return out
}

// groupingSetsPlan groups input (over the FROM row, renumbered by perm)
// once per grouping set and unions the results. The Union's columns are
// keys, then calls, then one per GROUPING call of the query level.
func (st *bindState) groupingSetsPlan(input plan.Node, perm []int, keys []plan.Expr, calls []plan.AggCall, groupings []*groupingRef, gs *groupingSets) (plan.Node, []plan.Column, error) {
	for _, c := range calls {
		for _, d := range c.Direct {
			if hasColRefs(d) {
				return nil, nil, notSupported(-1, "direct arguments of %s reading group keys are not supported with GROUPING SETS, ROLLUP or CUBE", c.Func)
			}
		}
	}
	var cols []plan.Column
	for _, k := range keys {
		cols = append(cols, plan.Column{Name: exprName(k), Type: k.Type()})
	}
	for _, c := range calls {
		cols = append(cols, plan.Column{Name: aggName(c), Type: c.Type})
	}
	for _, g := range groupings {
		cols = append(cols, plan.Column{Name: "grouping", Type: g.Type()})
	}
	u := &plan.Union{Cols: cols}
	for _, set := range gs.sets {
		agg := &plan.Aggregate{Input: input}
		pos := make(map[int]int, len(set))
		for j, i := range set {
			pos[i] = j
			agg.GroupBy = append(agg.GroupBy, remapExpr(keys[i], perm))
			agg.Cols = append(agg.Cols, cols[i])
		}
		for i, c := range calls {
			agg.Aggs = append(agg.Aggs, remapAggCall(c, perm))
			agg.Cols = append(agg.Cols, cols[len(keys)+i])
		}
		var exprs []plan.Expr
		for i, k := range keys {
			if j, ok := pos[i]; ok {
				exprs = append(exprs, &plan.ColRef{Index: j, Name: cols[i].Name, Typ: cols[i].Type})
			} else {
				exprs = append(exprs, &plan.Const{Val: types.Null, Typ: k.Type()})
			}
		}
		for i := range calls {
			c := cols[len(keys)+i]
			exprs = append(exprs, &plan.ColRef{Index: len(set) + i, Name: c.Name, Typ: c.Type})
		}
		for _, g := range groupings {
			v, err := st.groupingValue(g, keys, set, false)
			if err != nil {
				return nil, nil, err
			}
			exprs = append(exprs, &plan.Const{Val: types.MakeInt(types.Int4, int64(v)), Typ: g.Type()})
		}
		u.Ins = append(u.Ins, &plan.Project{Input: agg, Exprs: exprs, Cols: cols})
	}
	return u, cols, nil
}
