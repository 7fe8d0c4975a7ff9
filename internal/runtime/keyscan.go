package runtime

import (
	"bytes"
	"context"
	"slices"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A table's rows are stored under keys that start with the encoding of its
// leading key column: the first primary-key column, or the first column of
// a table without one (keyOf). An UPDATE or DELETE whose WHERE requires
// that column to equal constants (k = c, k IN (c1, c2, ...)) therefore
// finds every row it can change under those constants' key prefixes, and
// reads them instead of the whole table. The WHERE is still evaluated on
// each row read: the prefixes only bound the candidates.

// keyPrefixes returns the sorted, distinct key prefixes under which o
// stores every row that where can keep, and false when where does not
// restrict the leading key column to constants.
func keyPrefixes(o *object, where plan.Expr) ([][]byte, bool) {
	lead := 0
	if len(o.pk) > 0 {
		lead = o.pk[0]
	}
	typ := o.cols[lead].Type.ID
	// Only an = between two values of the column's type qualifies: a
	// cross-type = such as integer = bigint compares values whose keys
	// differ.
	sameType := func(op *types.Operator) bool {
		return op != nil && op.Name == "=" && op.Left.ID == typ && op.Right.ID == typ
	}
	isLead := func(e plan.Expr) bool {
		r, ok := e.(*plan.ColRef)
		return ok && r.Index == lead
	}
	constOf := func(e plan.Expr) (types.Value, bool) {
		c, ok := e.(*plan.Const)
		if !ok || c.Typ.ID != typ {
			return types.Value{}, false
		}
		return c.Val, true
	}
	var vals []types.Value
	found := false
	var visit func(e plan.Expr)
	visit = func(e plan.Expr) {
		if found {
			return
		}
		switch x := e.(type) {
		case *plan.And:
			for _, a := range x.Args {
				visit(a)
			}
		case *plan.BinOp:
			if !sameType(x.Op) {
				return
			}
			l, r := x.Left, x.Right
			if isLead(r) {
				l, r = r, l
			}
			if v, ok := constOf(r); ok && isLead(l) {
				vals, found = []types.Value{v}, true
			}
		case *plan.InList:
			if x.Negated || !sameType(x.Eq) || !isLead(x.Arg) {
				return
			}
			var vs []types.Value
			for _, item := range x.List {
				v, ok := constOf(item)
				if !ok {
					return
				}
				vs = append(vs, v)
			}
			vals, found = vs, true
		}
	}
	visit(where)
	if !found {
		return nil, false
	}
	base := o.rowsPrefix()
	var prefixes [][]byte
	for _, v := range vals {
		if v.IsNull() {
			continue // = NULL keeps no row
		}
		prefixes = append(prefixes, zset.EncodeKey(slices.Clip(base), v))
	}
	slices.SortFunc(prefixes, bytes.Compare)
	return slices.CompactFunc(prefixes, bytes.Equal), true
}

// readCandidates returns the rows of o that where can keep, in key order:
// those under keyPrefixes when where restricts the leading key column,
// else all of them.
func readCandidates(ctx context.Context, st state.Reader, o *object, where plan.Expr) (zset.Batch, error) {
	prefixes, ok := keyPrefixes(o, where)
	if !ok {
		return readRelation(ctx, st, o.rowsPrefix())
	}
	var out zset.Batch
	for _, p := range prefixes {
		rows, err := readRelation(ctx, st, p)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
