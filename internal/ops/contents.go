package ops

import (
	"context"

	"github.com/rockstream/rockstream/internal/errs"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// An operator's contents are the sum of every output delta it has emitted
// since its state was empty: what it would emit in one step from no state
// over the whole of its input so far. A circuit whose operator state is
// kept across a change of the query above that operator (CREATE OR
// REPLACE MATERIALIZED VIEW) reads them to fill the operators that are
// new, without recomputing the kept operator or anything below it.
//
// Only the operators whose contents are a function of their state alone
// say what they are: an aggregate's groups (each live group's output row
// is in its state). A windowed aggregate forgets the groups of closed
// windows while its output keeps them; a join's contents would be the
// join of its arrangements. Those, and the others, are recomputed.

// HasContents reports whether Contents can read op's contents from its
// state.
func HasContents(op Operator) bool {
	switch op.(type) {
	case *Aggregate, *FinalAggregate:
		return true
	}
	return false
}

// Contents returns op's contents, read from its state in st, consolidated;
// it fails for an operator HasContents refuses.
func Contents(ctx context.Context, st state.Store, op Operator) (zset.Batch, error) {
	switch o := op.(type) {
	case *Aggregate:
		return o.contents(ctx, st)
	case *FinalAggregate:
		return o.contents(ctx, st)
	}
	return nil, errs.Newf(errs.Internal, "operator %T cannot read its contents from its state", op)
}

// contents returns one row per live group, as the group's last step
// emitted it (for an aggregate without GROUP BY, its one row once it has
// stepped).
func (a *Aggregate) contents(ctx context.Context, st state.Store) (zset.Batch, error) {
	a.rows.bind(ctx)
	global := len(a.groupBy) == 0
	ng := len(a.groupBy)
	var out zset.Batch
	var ferr error
	n := 0
	for b := range zset.Buckets {
		p := a.groupPrefix.at(b)
		err := st.Scan(p, state.PrefixEnd(p), func(_, raw []byte) bool {
			if ferr = Interrupted(ctx, n); ferr != nil {
				return false
			}
			n++
			srow, err := zset.DecodeRow(raw)
			if err != nil {
				ferr = err
				return false
			}
			if len(srow) < ng+1 {
				ferr = corrupt("aggregate group")
				return false
			}
			gvals, count := srow[:ng], srow[ng].Int()
			for i := range a.aggs {
				s := &a.aggs[i]
				if len(srow) < s.off+s.fields() {
					ferr = corrupt("aggregate group")
					return false
				}
				if ferr = s.load(&a.accs[i], srow[s.off:s.off+s.fields()]); ferr != nil {
					return false
				}
			}
			if count <= 0 && !global {
				return true
			}
			row, err := a.output(gvals)
			if err != nil {
				ferr = err
				return false
			}
			out = append(out, zset.Entry{Row: row, Weight: 1})
			return true
		})
		if err == nil {
			err = ferr
		}
		if err != nil {
			return nil, err
		}
	}
	// An aggregate without GROUP BY that never stepped has emitted
	// nothing yet and has no state: its contents are empty.
	return zset.Consolidate(out)
}
