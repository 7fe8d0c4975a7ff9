package sql

import (
	"fmt"
	"slices"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// aggRef stands for the result of aggregate call idx of the query being
// bound. It exists only while a query is bound: grouping replaces it by a
// column of the Aggregate node, so it never reaches a finished plan.
type aggRef struct {
	idx  int
	typ  types.Type
	name string
}

func (a *aggRef) Type() types.Type { return a.typ }
func (a *aggRef) String() string   { return fmt.Sprintf("%s#%d", a.name, a.idx) }
func (a *aggRef) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.New(errs.Internal, "aggregate reference evaluated outside its Aggregate")
}

// children returns the direct subexpressions of e, in a fixed order that
// withChildren accepts back.
func children(e plan.Expr) []plan.Expr { return plan.Children(e) }

// withChildren returns a copy of e with its subexpressions replaced by
// kids (as children returned them).
func withChildren(e plan.Expr, kids []plan.Expr) plan.Expr {
	switch e := e.(type) {
	case *plan.BinOp:
		return &plan.BinOp{Op: e.Op, Left: kids[0], Right: kids[1]}
	case *plan.UnaryOp:
		return &plan.UnaryOp{Op: e.Op, Arg: kids[0]}
	case *plan.Cast:
		return &plan.Cast{Arg: kids[0], Typ: e.Typ, Explicit: e.Explicit, Zone: e.Zone}
	case *plan.And:
		return &plan.And{Args: kids}
	case *plan.Or:
		return &plan.Or{Args: kids}
	case *plan.Not:
		return &plan.Not{Arg: kids[0]}
	case *plan.IsNull:
		return &plan.IsNull{Arg: kids[0], Negated: e.Negated}
	case *plan.IsDistinct:
		return &plan.IsDistinct{Eq: e.Eq, Left: kids[0], Right: kids[1], Negated: e.Negated}
	case *plan.IsBool:
		return &plan.IsBool{Arg: kids[0], Test: e.Test, Negated: e.Negated}
	case *plan.Case:
		c := &plan.Case{Typ: e.Typ}
		for i := range e.Whens {
			c.Whens = append(c.Whens, plan.When{Cond: kids[2*i], Result: kids[2*i+1]})
		}
		if e.Else != nil {
			c.Else = kids[len(kids)-1]
		}
		return c
	case *plan.Coalesce:
		return &plan.Coalesce{Args: kids, Typ: e.Typ}
	case *plan.NullIf:
		return &plan.NullIf{Eq: e.Eq, Left: kids[0], Right: kids[1]}
	case *plan.InList:
		return &plan.InList{Eq: e.Eq, Arg: kids[0], List: kids[1:], Negated: e.Negated}
	case *plan.Func:
		f := *e
		f.Args = kids
		return &f
	}
	return e
}

// transform rewrites e top-down: f is called on every node before its
// children; when it reports done, its result replaces the node and the
// children are not visited. Unchanged subtrees are shared, not copied.
func transform(e plan.Expr, f func(plan.Expr) (plan.Expr, bool, error)) (plan.Expr, error) {
	if e == nil {
		return nil, nil
	}
	r, done, err := f(e)
	if err != nil || done {
		return r, err
	}
	kids := children(e)
	if len(kids) == 0 {
		return e, nil
	}
	var changed bool
	out := make([]plan.Expr, len(kids))
	for i, k := range kids {
		nk, err := transform(k, f)
		if err != nil {
			return nil, err
		}
		out[i] = nk
		changed = changed || nk != k
	}
	if !changed {
		return e, nil
	}
	return withChildren(e, out), nil
}

// mapColRefs replaces every column reference of e by f's result.
func mapColRefs(e plan.Expr, f func(*plan.ColRef) plan.Expr) plan.Expr {
	out, _ := transform(e, func(x plan.Expr) (plan.Expr, bool, error) {
		if c, ok := x.(*plan.ColRef); ok {
			return f(c), true, nil
		}
		return nil, false, nil
	})
	return out
}

// shiftExpr moves every column reference of e by delta.
func shiftExpr(e plan.Expr, delta int) plan.Expr {
	if delta == 0 {
		return e
	}
	return mapColRefs(e, func(c *plan.ColRef) plan.Expr {
		return &plan.ColRef{Index: c.Index + delta, Name: c.Name, Typ: c.Typ}
	})
}

// remapExpr renumbers the column references of e: column i becomes
// column perm[i].
func remapExpr(e plan.Expr, perm []int) plan.Expr {
	return mapColRefs(e, func(c *plan.ColRef) plan.Expr {
		if perm[c.Index] == c.Index {
			return c
		}
		return &plan.ColRef{Index: perm[c.Index], Name: c.Name, Typ: c.Typ}
	})
}

// walk calls f on every node of e, parents first.
func walk(e plan.Expr, f func(plan.Expr)) {
	if e == nil {
		return
	}
	f(e)
	for _, k := range children(e) {
		walk(k, f)
	}
}

// colRefIndexes returns the input columns e refers to.
func colRefIndexes(e plan.Expr) []int {
	var out []int
	walk(e, func(x plan.Expr) {
		if c, ok := x.(*plan.ColRef); ok {
			out = append(out, c.Index)
		}
	})
	return out
}

// hasColRefs reports whether e reads its input row at all.
func hasColRefs(e plan.Expr) bool { return len(colRefIndexes(e)) > 0 }

// hasAggRefs reports whether e contains an aggregate call.
func hasAggRefs(e plan.Expr) bool {
	found := false
	walk(e, func(x plan.Expr) {
		if _, ok := x.(*aggRef); ok {
			found = true
		}
	})
	return found
}

// exprEqual reports whether a and b are the same expression, as
// PostgreSQL's equal() compares bound expressions (for GROUP BY and ORDER
// BY matching and for merging identical aggregate calls).
func exprEqual(a, b plan.Expr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case *plan.ColRef:
		y, ok := b.(*plan.ColRef)
		return ok && x.Index == y.Index
	case *aggRef:
		y, ok := b.(*aggRef)
		return ok && x.idx == y.idx
	case *winRef:
		y, ok := b.(*winRef)
		return ok && x.idx == y.idx
	case *plan.Const:
		y, ok := b.(*plan.Const)
		return ok && x.Typ == y.Typ && sameValue(x.Val, y.Val)
	case *plan.Param:
		y, ok := b.(*plan.Param)
		return ok && x.N == y.N && x.Typ == y.Typ && x.Values == y.Values // a per-row subquery's parameters are its own
	case *plan.BinOp:
		y, ok := b.(*plan.BinOp)
		if !ok || !sameOp(x.Op, y.Op) {
			return false
		}
	case *plan.UnaryOp:
		y, ok := b.(*plan.UnaryOp)
		if !ok || !sameOp(x.Op, y.Op) {
			return false
		}
	case *plan.Cast:
		y, ok := b.(*plan.Cast)
		if !ok || x.Typ != y.Typ || x.Explicit != y.Explicit {
			return false
		}
	case *plan.And:
		if _, ok := b.(*plan.And); !ok {
			return false
		}
	case *plan.Or:
		if _, ok := b.(*plan.Or); !ok {
			return false
		}
	case *plan.Not:
		if _, ok := b.(*plan.Not); !ok {
			return false
		}
	case *plan.IsNull:
		y, ok := b.(*plan.IsNull)
		if !ok || x.Negated != y.Negated {
			return false
		}
	case *plan.IsDistinct:
		y, ok := b.(*plan.IsDistinct)
		if !ok || x.Negated != y.Negated {
			return false
		}
	case *plan.IsBool:
		y, ok := b.(*plan.IsBool)
		if !ok || x.Negated != y.Negated || x.Test != y.Test {
			return false
		}
	case *plan.Case:
		y, ok := b.(*plan.Case)
		if !ok || x.Typ != y.Typ || len(x.Whens) != len(y.Whens) || (x.Else == nil) != (y.Else == nil) {
			return false
		}
	case *plan.Coalesce:
		y, ok := b.(*plan.Coalesce)
		if !ok || x.Typ != y.Typ {
			return false
		}
	case *plan.NullIf:
		if _, ok := b.(*plan.NullIf); !ok {
			return false
		}
	case *plan.InList:
		y, ok := b.(*plan.InList)
		if !ok || x.Negated != y.Negated {
			return false
		}
	case *plan.Func:
		y, ok := b.(*plan.Func)
		if !ok || x.Name != y.Name || x.Typ != y.Typ {
			return false
		}
	default:
		return false
	}
	ka, kb := children(a), children(b)
	if len(ka) != len(kb) {
		return false
	}
	for i := range ka {
		if !exprEqual(ka[i], kb[i]) {
			return false
		}
	}
	return true
}

func sameOp(a, b *types.Operator) bool {
	return a == b || (a.Name == b.Name && a.Left == b.Left && a.Right == b.Right && a.Result == b.Result)
}

// sameValue compares two constants' values exactly (same representation),
// which is what matching identical expressions needs.
func sameValue(a, b types.Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() && b.IsNull()
	}
	if a.Kind() != b.Kind() {
		return false
	}
	if a.Kind().IsArray() {
		x, y := a.Elems(), b.Elems()
		da, la := a.ArrayShape()
		db, lb := b.ArrayShape()
		if len(x) != len(y) || !slices.Equal(da, db) || !slices.Equal(la, lb) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	switch a.Kind() {
	case types.Text, types.Bytea:
		return a.Str() == b.Str()
	case types.Numeric:
		return a.Decimal().Cmp(b.Decimal()) == 0 && a.Decimal().Exponent == b.Decimal().Exponent
	case types.Interval:
		return a.Interval() == b.Interval()
	case types.TimeTZ:
		am, az := a.TimeTZ()
		bm, bz := b.TimeTZ()
		return am == bm && az == bz
	case types.Float4, types.Float8:
		x, y := a.Float(), b.Float()
		return x == y || (x != x && y != y)
	}
	return a.Int() == b.Int()
}

// conjuncts splits a predicate into its top-level AND arms, leaving out
// those that are the constant true. An OR whose arms share conjuncts
// gives those conjuncts as arms of their own (factorOr), so that a join
// condition repeated in every arm of an OR becomes a join key.
func conjuncts(e plan.Expr) []plan.Expr {
	if e == nil {
		return nil
	}
	if k, ok := e.(*plan.Const); ok && k.Typ.ID == types.Bool && !k.Val.IsNull() && k.Val.Bool() {
		return nil
	}
	switch x := e.(type) {
	case *plan.And:
		var out []plan.Expr
		for _, a := range x.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	case *plan.Or:
		if common, rest := factorOr(x); len(common) > 0 {
			out := common
			if rest != nil {
				out = append(out, rest)
			}
			return out
		}
	}
	return []plan.Expr{e}
}

// factorOr takes the conjuncts common to every arm out of an OR, as
// PostgreSQL's planner does (find_duplicate_ors): (A AND B) OR (A AND C)
// is A AND (B OR C). It returns the common conjuncts and the OR of what
// remains of the arms, which is nil when some arm had nothing else (A OR
// (A AND B) is A). The laws hold in three-valued logic, so the result is
// the same value, NULL included. TPC-H Q19 is the case in point: its
// join condition is repeated in each arm of an OR.
func factorOr(or *plan.Or) (common []plan.Expr, rest plan.Expr) {
	var arms [][]plan.Expr
	for _, a := range or.Args {
		arms = append(arms, conjuncts(a))
	}
	has := func(list []plan.Expr, e plan.Expr) bool {
		for _, x := range list {
			if exprEqual(x, e) {
				return true
			}
		}
		return false
	}
	for _, c := range arms[0] {
		inAll := !has(common, c)
		for _, arm := range arms[1:] {
			inAll = inAll && has(arm, c)
		}
		if inAll {
			common = append(common, c)
		}
	}
	if len(common) == 0 {
		return nil, nil
	}
	var left []plan.Expr
	for _, arm := range arms {
		var kept []plan.Expr
		for _, c := range arm {
			if !has(common, c) {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			return common, nil
		}
		left = append(left, andOf(kept))
	}
	return common, &plan.Or{Args: left}
}

// andOf joins conjuncts into one predicate (nil for none).
func andOf(cs []plan.Expr) plan.Expr {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	}
	return &plan.And{Args: append([]plan.Expr(nil), cs...)}
}
