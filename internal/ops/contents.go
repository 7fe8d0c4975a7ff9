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
// is in its state) and an inner join's pairs (the join of its two
// arrangements). A windowed aggregate forgets the groups of closed
// windows while its output keeps them, a lookup join has one arrangement
// only; those, and the others, are recomputed.

// HasContents reports whether Contents can read op's contents from its
// state.
func HasContents(op Operator) bool {
	switch o := op.(type) {
	case *Aggregate, *FinalAggregate:
		return true
	case *Join:
		return o.lookup == nil
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
	case *Join:
		if o.lookup == nil {
			return o.contents(ctx, st)
		}
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

// contents returns the join of the two arrangements: bucket by bucket,
// each left row arranged probes the right rows of its key, as a step of
// the left rows alone over the right arrangement would.
func (j *Join) contents(ctx context.Context, st state.Store) (zset.Batch, error) {
	j.rows.bind(ctx)
	w := &work{ctx: ctx}
	var out zset.Batch
	plen := j.leftPrefix.plen()
	var arena []byte
	type span struct{ key, end int }
	var spans []span
	var rows []zset.Row
	var weights []int64
	for b := range zset.Buckets {
		p := j.leftPrefix.at(b)
		j.probes, arena, spans, rows, weights = j.probes[:0], arena[:0], spans[:0], rows[:0], weights[:0]
		var ferr error
		err := st.Scan(p, state.PrefixEnd(p), func(k, v []byte) bool {
			if ferr = w.tick(); ferr != nil {
				return false
			}
			_, rest, err := zset.DecodeKey(k[plen:], len(j.leftKeys))
			if err != nil || len(rest) == 0 || rest[0] != rowSep {
				ferr = corrupt("join arrangement")
				return false
			}
			row, err := zset.DecodeRow(rest[1:])
			if err != nil {
				ferr = err
				return false
			}
			weight, _, err := readWeight(v)
			if err != nil {
				ferr = err
				return false
			}
			off := len(arena)
			arena = append(arena, k[:len(k)-len(rest)]...)
			spans = append(spans, span{off, len(arena)})
			rows = append(rows, row)
			weights = append(weights, weight)
			return true
		})
		if err == nil {
			err = ferr
		}
		if err != nil {
			return nil, err
		}
		for i, sp := range spans {
			j.probes = append(j.probes, probe{key: arena[sp.key:sp.end:sp.end], row: rows[i], weight: weights[i]})
		}
		if out, err = j.probe(w, st, out, j.probes, j.leftPrefix, j.rightPrefix, true); err != nil {
			return nil, err
		}
	}
	return zset.Consolidate(out)
}
