package sql

import (
	"sort"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// This file plans a bound FROM clause: it pushes WHERE (and inner-join ON)
// conjuncts down to the lowest point that has their columns, turns
// equalities between the two sides of a join into join keys, and orders
// the inputs of a group of inner joins so that each join has a key when
// the query allows it.
//
// Every function returns the plan together with perm: perm[i] is the
// position, in the plan's output row, of column i of the tree's FROM row.
// Expressions bound over the FROM row are renumbered with remapExpr.

// planTree plans t with the conjuncts conj (over t's row) applied.
func (st *bindState) planTree(t *joinTree, conj []plan.Expr) (plan.Node, []int) {
	if t.leaf != nil {
		return pushFilter(t.leaf, conj), identity(t.width)
	}
	if t.unnest != nil {
		return st.planUnnest(t, conj)
	}
	if t.kind == plan.InnerJoin {
		return st.planInner(t, conj)
	}
	return st.planOuter(t, conj)
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// planOuter plans an outer join. Conjuncts that can only remove rows of
// one input without changing which rows of the other find a match move
// into that input: ON conditions on the non-preserved side of a LEFT or
// RIGHT join, and conditions from above on the preserved side. The rest of
// ON stays at the join (keys and residual); the rest from above filters
// its output.
func (st *bindState) planOuter(t *joinTree, conj []plan.Expr) (plan.Node, []int) {
	lw := t.left.width
	var lconj, rconj, on, above []plan.Expr
	for _, c := range t.on {
		switch s := side(c, lw); {
		case t.kind == plan.LeftJoin && s&1 == 0:
			rconj = append(rconj, shiftExpr(c, -lw))
		case t.kind == plan.RightJoin && s&2 == 0:
			lconj = append(lconj, c)
		default:
			on = append(on, c)
		}
	}
	for _, c := range conj {
		switch s := side(c, lw); {
		case t.kind == plan.LeftJoin && s&2 == 0:
			lconj = append(lconj, c)
		case t.kind == plan.RightJoin && s&1 == 0:
			rconj = append(rconj, shiftExpr(c, -lw))
		default:
			above = append(above, c)
		}
	}
	l, lp := st.planTree(t.left, lconj)
	r, rp := st.planTree(t.right, rconj)
	perm := make([]int, t.width)
	copy(perm, lp)
	for i, p := range rp {
		perm[lw+i] = lw + p
	}
	j := newJoin(t.kind, l, r)
	for _, c := range on {
		addJoinCond(j, remapExpr(c, perm), lw)
	}
	var n plan.Node = j
	if len(above) > 0 {
		var cs []plan.Expr
		for _, c := range above {
			cs = append(cs, remapExpr(c, perm))
		}
		n = &plan.Filter{Input: n, Pred: andOf(cs)}
	}
	return n, perm
}

func newJoin(kind plan.JoinKind, l, r plan.Node) *plan.Join {
	cols := append(append([]plan.Column(nil), l.Columns()...), r.Columns()...)
	return &plan.Join{Kind: kind, Left: l, Right: r, Cols: cols}
}

// addJoinCond adds one conjunct over the join's row to j: an equality
// between an expression over the left input and one over the right input
// becomes a key pair, anything else part of the residual.
func addJoinCond(j *plan.Join, c plan.Expr, lw int) {
	if l, r, nullSafe, ok := equiKey(c, lw); ok {
		j.LeftKeys = append(j.LeftKeys, l)
		j.RightKeys = append(j.RightKeys, shiftExpr(r, -lw))
		j.NullSafe = append(j.NullSafe, nullSafe)
		return
	}
	j.Residual = andOf(append(conjuncts(j.Residual), c))
}

// side reports which inputs of a join e reads: bit 1 the left (columns
// below lw), bit 2 the right.
func side(e plan.Expr, lw int) int {
	s := 0
	for _, i := range colRefIndexes(e) {
		if i < lw {
			s |= 1
		} else {
			s |= 2
		}
	}
	return s
}

// equiKey splits "x = y" (or "x IS NOT DISTINCT FROM y") where x reads
// only the left input and y only the right (or the reverse) into a key
// pair of one type. Operands of different types (a cross-type operator
// such as integer = bigint) are cast to their common type, which compares
// the same way.
func equiKey(c plan.Expr, lw int) (l, r plan.Expr, nullSafe, ok bool) {
	var a, b plan.Expr
	switch x := c.(type) {
	case *plan.BinOp:
		if x.Op.Name != "=" || x.Op.Result.ID != types.Bool {
			return nil, nil, false, false
		}
		a, b = x.Left, x.Right
	case *plan.IsDistinct:
		if !x.Negated {
			return nil, nil, false, false
		}
		a, b, nullSafe = x.Left, x.Right, true
	default:
		return nil, nil, false, false
	}
	switch sa, sb := side(a, lw), side(b, lw); {
	case sa == 1 && sb == 2:
	case sa == 2 && sb == 1:
		a, b = b, a
	default:
		return nil, nil, false, false
	}
	if a.Type().ID != b.Type().ID {
		t, err := types.CommonType("JOIN", []types.Type{a.Type(), b.Type()})
		if err != nil || !castAllowed(a.Type().ID, t.ID, implicitCoercion) || !castAllowed(b.Type().ID, t.ID, implicitCoercion) {
			return nil, nil, false, false
		}
		if t.ID == types.TimestampTZ {
			// A timestamp or date meets a timestamptz in the session
			// time zone, which the operator holds and a key would not.
			return nil, nil, false, false
		}
		if a, err = coerceExpr(a, t, implicitCoercion, nil, types.UTCZone); err != nil {
			return nil, nil, false, false
		}
		if b, err = coerceExpr(b, t, implicitCoercion, nil, types.UTCZone); err != nil {
			return nil, nil, false, false
		}
	}
	return a, b, nullSafe, true
}

// planInner plans a group of inner joins (explicit or comma-separated) as
// a left-deep tree. Conjuncts of the group's ON clauses and those pushed
// from above are placed at the lowest point that has their columns: on one
// input as a filter, or at the first join that has both sides as a key or
// residual. The first input stays first; each next input is, in FROM
// order, the first one that an equality connects to those already joined,
// else the first one any condition connects, else the next one.
func (st *bindState) planInner(t *joinTree, conj []plan.Expr) (plan.Node, []int) {
	var leaves []*joinTree
	var offs []int
	var pool []plan.Expr
	var flatten func(x *joinTree, off int)
	flatten = func(x *joinTree, off int) {
		if x.leaf == nil && x.unnest == nil && x.kind == plan.InnerJoin {
			flatten(x.left, off)
			flatten(x.right, off+x.left.width)
			for _, c := range x.on {
				pool = append(pool, shiftExpr(c, off))
			}
			return
		}
		leaves = append(leaves, x)
		offs = append(offs, off)
	}
	flatten(t, 0)
	pool = append(pool, conj...)

	colLeaf := make([]int, t.width)
	for i, lf := range leaves {
		for c := 0; c < lf.width; c++ {
			colLeaf[offs[i]+c] = i
		}
	}
	leavesOf := func(e plan.Expr) []int {
		set := map[int]bool{}
		for _, c := range colRefIndexes(e) {
			set[colLeaf[c]] = true
		}
		out := make([]int, 0, len(set))
		for l := range set {
			out = append(out, l)
		}
		sort.Ints(out)
		return out
	}

	type cond struct {
		e      plan.Expr
		leaves []int
	}
	var top []plan.Expr
	var multi []cond
	leafConj := make([][]plan.Expr, len(leaves))
	for _, c := range pool {
		switch ls := leavesOf(c); len(ls) {
		case 0:
			top = append(top, c)
		case 1:
			leafConj[ls[0]] = append(leafConj[ls[0]], shiftExpr(c, -offs[ls[0]]))
		default:
			multi = append(multi, cond{e: c, leaves: ls})
		}
	}
	nodes := make([]plan.Node, len(leaves))
	perms := make([][]int, len(leaves))
	for i, lf := range leaves {
		nodes[i], perms[i] = st.planTree(lf, leafConj[i])
	}

	// Choose the join order.
	joined := map[int]bool{0: true}
	order := []int{0}
	covered := func(c cond, extra int) bool {
		for _, l := range c.leaves {
			if !joined[l] && l != extra {
				return false
			}
		}
		return true
	}
	connectsByKey := func(c cond, next int) bool {
		var a, b plan.Expr
		switch x := c.e.(type) {
		case *plan.BinOp:
			if x.Op.Name != "=" {
				return false
			}
			a, b = x.Left, x.Right
		case *plan.IsDistinct:
			if !x.Negated {
				return false
			}
			a, b = x.Left, x.Right
		default:
			return false
		}
		onlyJoined := func(ls []int) bool {
			for _, l := range ls {
				if !joined[l] {
					return false
				}
			}
			return len(ls) > 0
		}
		onlyNext := func(ls []int) bool { return len(ls) == 1 && ls[0] == next }
		la, lb := leavesOf(a), leavesOf(b)
		return (onlyJoined(la) && onlyNext(lb)) || (onlyNext(la) && onlyJoined(lb))
	}
	for len(order) < len(leaves) {
		pick := -1
		for pass := 0; pass < 2 && pick < 0; pass++ {
			for i := range leaves {
				if joined[i] {
					continue
				}
				for _, c := range multi {
					if !covered(c, i) || (pass == 0 && !connectsByKey(c, i)) {
						continue
					}
					inC := false
					for _, l := range c.leaves {
						inC = inC || l == i
					}
					if inC {
						pick = i
						break
					}
				}
				if pick >= 0 {
					break
				}
			}
		}
		if pick < 0 {
			for i := range leaves {
				if !joined[i] {
					pick = i
					break
				}
			}
		}
		joined[pick] = true
		order = append(order, pick)
	}

	// Build the left-deep tree in that order.
	pos := make([]int, t.width)
	place := func(leaf, base int) {
		for c, p := range perms[leaf] {
			pos[offs[leaf]+c] = base + p
		}
	}
	first := order[0]
	cur := nodes[first]
	width := leaves[first].width
	place(first, 0)
	in := map[int]bool{first: true}
	applied := make([]bool, len(multi))
	for _, li := range order[1:] {
		in[li] = true
		place(li, width)
		var conds []plan.Expr
		for k, c := range multi {
			if applied[k] {
				continue
			}
			ready := true
			for _, l := range c.leaves {
				ready = ready && in[l]
			}
			if ready {
				applied[k] = true
				conds = append(conds, remapExpr(c.e, pos))
			}
		}
		if isUnitRow(nodes[li]) {
			// A cross join with one empty row changes nothing.
			if len(conds) > 0 {
				cur = &plan.Filter{Input: cur, Pred: andOf(conds)}
			}
			continue
		}
		j := newJoin(plan.InnerJoin, cur, nodes[li])
		for _, c := range conds {
			addJoinCond(j, c, width)
		}
		cur = j
		width += leaves[li].width
	}
	if len(top) > 0 {
		cur = &plan.Filter{Input: cur, Pred: andOf(top)}
	}
	return cur, pos
}
