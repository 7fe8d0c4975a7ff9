package runtime

import (
	"context"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Index lookup joins. When an ad-hoc query joins a scan of a relation S
// (the outer side) with a scan of a relation R on an equality whose R
// side is a column that leads one of R's indexes or R's stored order, R
// is read after S: only the entries of the join keys S's rows (after
// the filters above S's scan) have, one lookup each, instead of all of
// R. The join itself still runs over what is read, so the result is the
// one a full read of R gives, as long as every row of R the join can
// output is read: R must be the side whose unmatched rows the join drops
// (either side of an inner join, the right side of a left join or of a
// semi-join, the left side of a right join), and R must be scanned only
// there, and only when its own conditions do not already bound what is
// read of it (chooseAccess). A lookup is made when S's rows have at most maxLookupKeys
// distinct keys; otherwise R is read as any other relation.

// maxLookupKeys bounds the keys an index lookup join reads one by one.
const maxLookupKeys = 4096

// lookupJoin is one join answered by lookups into its inner relation.
type lookupJoin struct {
	inner      string      // the relation looked up
	innerPreds []plan.Expr // the filters above its scan
	innerCol   int         // its column the join key reads
	outer      string      // the relation whose rows give the keys
	outerPreds []plan.Expr
	outerKey   plan.Expr // the join key over the outer scan's rows
}

// scanUnder returns the scan under n's filters, and the filters'
// predicates; nil when n is not a scan under filters.
func scanUnder(n plan.Node) (*plan.Scan, []plan.Expr) {
	var preds []plan.Expr
	for {
		switch x := n.(type) {
		case *plan.Filter:
			preds = append(preds, x.Pred)
			n = x.Input
		case *plan.Scan:
			return x, preds
		default:
			return nil, nil
		}
	}
}

// findLookupJoins returns the joins of p that can look up their inner
// relation, by inner relation's name: one per relation at most, whose
// outer relation is not looked up itself.
func findLookupJoins(cat *catalog, p plan.Node, uses map[string][][]plan.Expr) map[string]lookupJoin {
	out := map[string]lookupJoin{}
	var visit func(n plan.Node)
	visit = func(n plan.Node) {
		for _, in := range n.Inputs() {
			visit(in)
		}
		j, ok := n.(*plan.Join)
		if !ok || j.Test != nil || len(j.LeftKeys) == 0 {
			return
		}
		ls, lp := scanUnder(j.Left)
		rs, rp := scanUnder(j.Right)
		if ls == nil || rs == nil || ls.Relation == rs.Relation {
			return
		}
		try := func(inner *plan.Scan, innerPreds []plan.Expr, innerKeys []plan.Expr, outer *plan.Scan, outerPreds []plan.Expr, outerKeys []plan.Expr) {
			o := cat.lookup(inner.Relation)
			if o == nil || o.system != nil || len(uses[inner.Relation]) != 1 {
				return
			}
			if chooseAccess(cat, o, uses[inner.Relation], true).ok {
				return // its own conditions bound what is read
			}
			if _, taken := out[inner.Relation]; taken {
				return
			}
			if _, looked := out[outer.Relation]; looked {
				return
			}
			for i, k := range innerKeys {
				if j.NullSafe[i] {
					continue
				}
				c, ok := keyColumn(k)
				if !ok || !comparable(o.cols[c].Type.ID, outerKeys[i].Type().ID) || !leadsAnOrder(cat, o, c) {
					continue
				}
				out[inner.Relation] = lookupJoin{inner: inner.Relation, innerPreds: innerPreds, innerCol: c,
					outer: outer.Relation, outerPreds: outerPreds, outerKey: outerKeys[i]}
				return
			}
		}
		switch j.Kind {
		case plan.InnerJoin:
			try(rs, rp, j.RightKeys, ls, lp, j.LeftKeys)
			try(ls, lp, j.LeftKeys, rs, rp, j.RightKeys)
		case plan.LeftJoin, plan.SemiJoin:
			try(rs, rp, j.RightKeys, ls, lp, j.LeftKeys)
		case plan.RightJoin:
			try(ls, lp, j.LeftKeys, rs, rp, j.RightKeys)
		}
	}
	visit(p)
	for name, lj := range out {
		if _, looked := out[lj.outer]; looked {
			delete(out, name) // its keys would come from a partial read
		}
	}
	return out
}

// leadsAnOrder reports whether column c of o leads o's stored order or
// one of its indexes.
func leadsAnOrder(cat *catalog, o *object, c int) bool {
	if cols := keyColumns(o); len(cols) > 0 && cols[0] == c {
		return true
	}
	for _, ix := range cat.indexesOf(o) {
		if ix.cols[0] == c {
			return true
		}
	}
	return false
}

// lookupKeys returns the distinct non-NULL join keys of the outer rows
// that pass lj's outer filters, and false when there are more than
// maxLookupKeys.
func (lj lookupJoin) lookupKeys(outer zset.Batch) ([]types.Value, bool, error) {
	var keys []types.Value
	seen := map[string]bool{}
	var buf []byte
rows:
	for _, e := range outer {
		for _, p := range lj.outerPreds {
			v, err := p.Eval(e.Row)
			if err != nil || v.IsNull() || !v.Bool() {
				// An error is the query's to report, when the
				// filter runs over the rows read.
				continue rows
			}
		}
		v, err := lj.outerKey.Eval(e.Row)
		if err != nil {
			return nil, false, nil // the join reports it
		}
		if v.IsNull() {
			continue
		}
		buf = zset.EncodeKey(buf[:0], v)
		if seen[string(buf)] {
			continue
		}
		seen[string(buf)] = true
		if keys = append(keys, v); len(keys) > maxLookupKeys {
			return nil, false, nil
		}
	}
	return keys, true, nil
}

// lookupAccess returns how to read o for lj given keys, the outer rows'
// join keys: the ranges of the order (an index, or o's stored order)
// whose conditions, the join key among them, fix the most columns; false
// when no order leads with the join key's column.
func lookupAccess(cat *catalog, o *object, lj lookupJoin, keys []types.Value) (scanAccess, bool) {
	typ := lj.outerKey.Type()
	args := make([]plan.Expr, len(keys))
	for i, k := range keys {
		args[i] = &plan.Const{Val: k, Typ: typ}
	}
	type order struct {
		ix  *index
		ord keyOrder
	}
	var orders []order
	if cols := keyColumns(o); len(cols) > 0 && cols[0] == lj.innerCol {
		orders = append(orders, order{ord: keyOrder{cols: cols, route: o.routeColumns(), prefix: o.rowsPrefix()}})
	}
	for _, ix := range cat.indexesOf(o) {
		if ix.cols[0] == lj.innerCol {
			orders = append(orders, order{ix: ix, ord: ix.order()})
		}
	}
	var best scanAccess
	bestScore := -1
	for _, or := range orders {
		conds := append(findCondsOn(o, or.ord.cols, lj.innerPreds...), keyCond{pos: 0, op: "=", args: args})
		ranges, ok := keyRangesOn(o, or.ord, conds)
		if !ok {
			continue
		}
		if score := condScore(conds); score > bestScore {
			best, bestScore = scanAccess{ix: or.ix, ranges: ranges, ok: true}, score
		}
	}
	return best, bestScore >= 0
}

// readLookup reads the rows of o that lj's join can match with the outer
// rows outer; false when o must be read as any other relation.
func readLookup(ctx context.Context, r state.Reader, cat *catalog, o *object, lj lookupJoin, outer zset.Batch, par diff.Parallelism) (zset.Batch, bool, error) {
	keys, ok, err := lj.lookupKeys(outer)
	if err != nil || !ok {
		return nil, false, err
	}
	acc, ok := lookupAccess(cat, o, lj, keys)
	if !ok {
		return nil, false, nil
	}
	if len(acc.ranges) == 0 {
		return nil, true, nil
	}
	if acc.ix != nil {
		rows, err := readIndexRanges(ctx, r, o, acc.ix, acc.ranges, par)
		return rows, true, err
	}
	rows, err := readKeyRanges(ctx, r, o, acc.ranges, par)
	return rows, true, err
}

// explainLookup describes the lookups of lj into o as EXPLAIN shows them.
func explainLookup(cat *catalog, o *object, lj lookupJoin) []string {
	acc, ok := lookupAccess(cat, o, lj, nil)
	if !ok {
		return nil
	}
	head := "Key Lookup on " + o.name
	switch {
	case acc.ix != nil:
		head = "Index Scan using " + acc.ix.name + " on " + o.name
	case len(o.pk) > 0:
		head = "Index Scan using " + o.name + "_pkey on " + o.name
	}
	label := "Index Cond"
	if acc.ix == nil && len(o.pk) == 0 {
		label = "Key Cond"
	}
	cond := o.cols[lj.innerCol].Name + " = " + lj.outerKey.String()
	return []string{head, "  " + label + ": (" + cond + ")", "  Lookup keys from: " + lj.outer}
}

// readLookups reads the inner relations of lookups into deltas, whose
// outer relations it holds already: by lookups, or as any other relation
// when the outer rows have too many keys.
func readLookups(ctx context.Context, r state.Reader, cat *catalog, lookups map[string]lookupJoin, deltas map[string]zset.Batch, uses map[string][][]plan.Expr) error {
	par := cat.parallelism()
	for name, lj := range lookups {
		o := cat.lookup(name)
		rows, ok, err := readLookup(ctx, r, cat, o, lj, deltas[lj.outer], par)
		if err != nil {
			return err
		}
		if !ok {
			acc := chooseAccess(cat, o, uses[name], true)
			if acc.ix == nil && !acc.ok {
				rows, err = readContentsOn(ctx, r, o, par)
			} else {
				rows, err = readAccess(ctx, r, o, acc, par)
			}
			if err != nil {
				return err
			}
		}
		deltas[name] = rows
	}
	return nil
}
