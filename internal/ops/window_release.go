package ops

import (
	"context"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// WindowReleaser is implemented by operators that can release the state
// of event-time windows closed by a watermark.
type WindowReleaser interface {
	// ReleaseClosed drops the state of every window that ended at or
	// before watermark, a time of column column of relation relation
	// before which no row of the relation will ever be inserted, updated
	// or deleted again. It changes no output: the windows' rows stay in
	// the view, only the state that would update them goes.
	ReleaseClosed(st state.Store, relation string, column int, watermark types.Value) error
}

// WindowedAggregate is an Aggregate grouped by an event-time window (a
// window_start or window_end of TUMBLE or HOP, computed from a stored
// relation's column by filters and projections only). Once a relation's
// watermark passes a window's end, no row of that window can change any
// more, so the state of its groups can go.
//
// Besides the Aggregate's own state it keeps an index of its live groups
// by window end,
//
//	prefix(group) | 'w' | EncodeKey(window end) | EncodeKey(group values) → empty
//
// (in the bucket of its group, as the rest of the group's state), so that
// releasing the closed windows is one range scan per bucket.
type WindowedAggregate struct {
	*Aggregate
	source   string // the relation the windows are computed from
	timeCol  int    // its time column
	boundCol int    // the group value holding the window bound
	// offset turns the bound into the window's end: 0 for window_end,
	// the window size for window_start.
	offset types.Value
	plus   *types.Operator
	index  *bucketed
	key    []byte
	end    []byte
}

// NewWindowedAggregate wraps agg, whose group value boundCol is a window
// start (isStart) or end of windows of size microseconds over column
// timeCol of relation source. Its index lives under prefix, agg's prefix.
func NewWindowedAggregate(prefix Prefix, agg *Aggregate, source string, timeCol, boundCol int, isStart bool, size int64) (*WindowedAggregate, error) {
	if boundCol < 0 || boundCol >= len(agg.groupBy) {
		return nil, errs.New(errs.Internal, "window bound is not a group key")
	}
	t := agg.groupBy[boundCol].Type()
	plus, err := types.ResolveBinary("+", types.Of(t.ID), types.Of(types.Interval))
	if err != nil {
		return nil, err
	}
	w := &WindowedAggregate{
		Aggregate: agg, source: source, timeCol: timeCol, boundCol: boundCol, plus: plus,
		offset: micros(0), index: prefix.With('w').expand(),
	}
	if isStart {
		w.offset = micros(size)
	}
	return w, nil
}

// Step implements Operator: the Aggregate's step, then the index of live
// groups follows the groups the output adds and removes.
func (w *WindowedAggregate) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	out, err := w.Aggregate.Step(ctx, st, in)
	if err != nil || len(out) == 0 {
		return out, err
	}
	ng := len(w.groupBy)
	live := map[string]bool{}
	for _, e := range out {
		if e.Weight > 0 {
			live[string(zset.EncodeKey(nil, e.Row[:ng]...))] = true
		}
	}
	for _, e := range out {
		gkey := zset.EncodeKey(nil, e.Row[:ng]...)
		if e.Weight < 0 && live[string(gkey)] {
			continue // updated, not removed
		}
		if err := w.indexKey(e.Row[w.boundCol], gkey); err != nil {
			return nil, err
		}
		if e.Weight > 0 {
			err = st.Set(w.key, nil)
		} else {
			err = st.Delete(w.key)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// indexKey sets w.key to the index key of the group gkey whose window
// bound is bound.
func (w *WindowedAggregate) indexKey(bound types.Value, gkey []byte) error {
	end, err := w.plus.Eval(bound, w.offset)
	if err != nil {
		return err
	}
	w.key = append(zset.EncodeKey(append(w.key[:0], w.index.of(gkey)...), end), gkey...)
	return nil
}

// ReleaseClosed implements WindowReleaser.
func (w *WindowedAggregate) ReleaseClosed(st state.Store, relation string, column int, watermark types.Value) error {
	if relation != w.source || column != w.timeCol || watermark.IsNull() {
		return nil
	}
	// Every index key up to and including the watermark's, in every
	// bucket.
	var closed [][]byte
	for b := range zset.Buckets {
		index := w.index.at(b)
		upTo := zset.EncodeKey(append(w.key[:0], index...), watermark)
		w.end = zset.KeyPrefixEnd(w.end[:0], upTo)
		if err := st.Scan(index, w.end, func(k, _ []byte) bool {
			closed = append(closed, append([]byte(nil), k...))
			return true
		}); err != nil {
			return err
		}
	}
	for _, k := range closed {
		_, gkey, err := zset.DecodeKeyValue(k[w.index.plen():])
		if err != nil {
			return corrupt("window index key")
		}
		if err := w.releaseGroup(st, gkey); err != nil {
			return err
		}
		if err := st.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// releaseGroup deletes all of one group's state.
func (w *WindowedAggregate) releaseGroup(st state.Store, gkey []byte) error {
	a := w.Aggregate
	if err := st.Delete(append(append([]byte(nil), a.groupPrefix.of(gkey)...), gkey...)); err != nil {
		return err
	}
	var prefixes [][]byte
	for i := range a.aggs {
		if a.aggs[i].arranged {
			prefixes = append(prefixes, append(append([]byte(nil), a.aggs[i].prefix.of(gkey)...), gkey...))
		}
		if a.aggs[i].modePrefix != nil {
			prefixes = append(prefixes, append(append([]byte(nil), a.aggs[i].modePrefix.of(gkey)...), gkey...))
		}
	}
	if a.repPrefix != nil {
		prefixes = append(prefixes, append(append(append([]byte(nil), a.repPrefix.of(gkey)...), gkey...), repSep))
	}
	for _, p := range prefixes {
		if err := deleteUnder(st, p); err != nil {
			return err
		}
	}
	return nil
}

// deleteUnder deletes every key that starts with prefix.
func deleteUnder(st state.Store, prefix []byte) error {
	var keys [][]byte
	if err := st.Scan(prefix, state.PrefixEnd(prefix), func(k, _ []byte) bool {
		keys = append(keys, append([]byte(nil), k...))
		return true
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := st.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
