package runtime

import (
	"context"
	"io"
	"sort"
	"sync"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A subscription streams a materialized view's changes from its change
// log. Its rows are (epoch, [progressed,] diff, the view's columns...):
//
//   - the snapshot, when asked for: the view's rows as of the starting
//     epoch, each distinct row once with diff = its count;
//   - then, epoch by epoch in commit order, each epoch's net change to
//     the view: retractions (diff < 0) before insertions, so an UPDATE
//     reads as diff -1 for the old row and +1 for the new;
//   - with PROGRESS, a row (epoch, true, NULL, NULL...) after the
//     snapshot, and whenever the frontier reaches an epoch in which the
//     view did not change: every change up to that epoch has been sent.
//
// An epoch's rows are contiguous and complete before the next epoch's
// begin, so a row of a later epoch, or a progress row, tells a client that
// it has seen every change up to the epoch before.
//
// A subscription runs no goroutine: take reads the change log under the
// engine's read lock and waits on the engine's commit notification.
type subscription struct {
	eng      *Engine
	view     *object
	progress bool
	// last is the epoch up to which changes have been read.
	last    uint64
	pending []zset.Row

	done      chan struct{}
	closeOnce sync.Once
}

// maxSubscriptionBatch bounds the rows one call of Subscription.Next
// returns.
const maxSubscriptionBatch = 1024

// subscriptionColumns returns the columns of a subscription to view.
func subscriptionColumns(view *object, progress bool) []Column {
	cols := []Column{{Name: "epoch", Type: types.Of(types.Int8)}}
	if progress {
		cols = append(cols, Column{Name: "progressed", Type: types.Of(types.Bool)})
	}
	cols = append(cols, Column{Name: "diff", Type: types.Of(types.Int8)})
	return append(cols, outColumns(view.cols)...)
}

// execSubscribe starts a SUBSCRIBE.
func (s *Session) execSubscribe(st ext.Statement) (*Result, error) {
	if s.txn.wrote() {
		// The block holds the write token until it ends, so no epoch
		// could commit while the subscription waits for one.
		return nil, errs.New(errs.FeatureNotSupported, "SUBSCRIBE cannot run in a transaction block that has written; commit the block first")
	}
	if s.eng.shard != nil {
		return nil, unsupportedInShard("SUBSCRIBE")
	}
	st.Name = s.resolveKey(st.Name)
	sub, err := s.eng.subscribe(st)
	if err != nil {
		return nil, err
	}
	return &Result{
		Tag:     "SUBSCRIBE",
		Columns: subscriptionColumns(sub.view, sub.progress),
		Subscription: &Subscription{
			Next:  func(ctx context.Context) ([]zset.Row, error) { return sub.take(ctx, maxSubscriptionBatch) },
			Close: sub.close,
		},
	}, nil
}

func (e *Engine) subscribe(st ext.Statement) (*subscription, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.mu.closed {
		return nil, errs.New(errs.AdminShutdown, "the engine is shutting down")
	}
	o := e.mu.cat.lookup(st.Name)
	switch {
	case o == nil:
		return nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", st.Name)
	case o.kind != sql.MaterializedView:
		return nil, errs.Newf(errs.WrongObjectType, "cannot SUBSCRIBE to %s %q: SUBSCRIBE reads the change log of a materialized view; create one over it", o.kindName(), st.Name)
	}
	frontier := e.mu.epoch
	start := frontier
	if st.HasEpoch {
		if err := e.checkAsOf(st.Epoch, frontier); err != nil {
			return nil, err
		}
		if err := o.existedAt(st.Epoch); err != nil {
			return nil, err
		}
		start = st.Epoch
	}
	sub := &subscription{eng: e, view: o, progress: st.Progress, last: start, done: make(chan struct{})}
	if st.Snapshot {
		snap, err := viewAt(currentReader{e.mu.store, e}, o, start, frontier)
		if err != nil {
			return nil, err
		}
		for _, en := range snap {
			sub.pending = append(sub.pending, sub.row(start, en.Weight, en.Row))
		}
	}
	if sub.progress {
		sub.pending = append(sub.pending, sub.progressRow(start))
	}
	return sub, nil
}

// viewAt returns a materialized view's contents as of epoch at, given
// that frontier is the last committed epoch of r.
func viewAt(r state.Reader, o *object, at, frontier uint64) (zset.Batch, error) {
	cur, err := readRelation(context.Background(), r, o)
	if err != nil || at == frontier {
		return cur, err
	}
	later, err := readChanges(r, o.id, at, frontier)
	if err != nil {
		return nil, err
	}
	for _, c := range later {
		cur = append(cur, zset.Entry{Row: c.Row, Weight: -c.Weight})
	}
	return zset.Consolidate(cur)
}

// row builds a data row of the subscription.
func (sub *subscription) row(epoch uint64, diff int64, r zset.Row) zset.Row {
	out := make(zset.Row, 0, len(r)+3)
	out = append(out, types.MakeInt(types.Int8, int64(epoch)))
	if sub.progress {
		out = append(out, types.MakeBool(false))
	}
	out = append(out, types.MakeInt(types.Int8, diff))
	return append(out, r...)
}

// progressRow builds the row saying that every change up to epoch has
// been sent.
func (sub *subscription) progressRow(epoch uint64) zset.Row {
	out := make(zset.Row, 3+len(sub.view.cols))
	out[0] = types.MakeInt(types.Int8, int64(epoch))
	out[1] = types.MakeBool(true)
	for i := 2; i < len(out); i++ {
		out[i] = types.Null
	}
	return out
}

// take returns up to max rows, waiting until at least one is available,
// and every row committed by then up to max.
// It returns io.EOF once the subscription is closed or the engine closes,
// and ctx's error when ctx ends first.
func (sub *subscription) take(ctx context.Context, max int) ([]zset.Row, error) {
	for len(sub.pending) == 0 {
		select {
		case <-sub.done:
			return nil, io.EOF
		default:
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wait, err := sub.poll()
		if err != nil {
			return nil, err
		}
		if len(sub.pending) > 0 {
			break
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-sub.eng.stop:
			return nil, io.EOF
		case <-sub.done:
			return nil, io.EOF
		}
	}
	// Rows committed since the last poll are there to take as well: a
	// FETCH after the snapshot gets the epochs already committed with it.
	if len(sub.pending) < max {
		if _, err := sub.poll(); err != nil && len(sub.pending) == 0 {
			return nil, err
		} // else the next take polls again and reports the error
	}
	n := len(sub.pending)
	if n > max {
		n = max
	}
	out := sub.pending[:n:n]
	sub.pending = sub.pending[n:]
	return out, nil
}

// poll reads the changes committed since the last poll into pending and
// returns the channel that is closed at the next commit.
func (sub *subscription) poll() (<-chan struct{}, error) {
	e := sub.eng
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.mu.closed {
		return nil, io.EOF
	}
	wait := e.mu.committed
	frontier := e.mu.epoch
	if frontier <= sub.last {
		return wait, nil
	}
	if cur := e.mu.cat.lookup(sub.view.name); cur == nil || cur.id != sub.view.id {
		return nil, errs.Newf(errs.UndefinedTable, "materialized view %q was dropped; the subscription ends", sub.view.name)
	}
	if err := e.checkAsOf(sub.last, frontier); err != nil {
		return nil, errs.Newf(errs.InvalidParameterValue, "the subscription fell behind the change-log horizon: %v", err)
	}
	changes, err := readChanges(currentReader{e.mu.store, e}, sub.view.id, sub.last, frontier)
	if err != nil {
		return nil, err
	}
	lastChanged := uint64(0)
	for i := 0; i < len(changes); {
		j := i
		for j < len(changes) && changes[j].Epoch == changes[i].Epoch {
			j++
		}
		epoch := changes[i].Epoch
		batch := make(zset.Batch, 0, j-i)
		for _, c := range changes[i:j] {
			batch = append(batch, zset.Entry{Row: c.Row, Weight: c.Weight})
		}
		net, err := zset.Consolidate(batch)
		if err != nil {
			return nil, err
		}
		sort.SliceStable(net, func(a, b int) bool { return net[a].Weight < 0 && net[b].Weight > 0 })
		for _, en := range net {
			sub.pending = append(sub.pending, sub.row(epoch, en.Weight, en.Row))
		}
		if len(net) > 0 {
			lastChanged = epoch
		}
		i = j
	}
	if sub.progress && lastChanged != frontier {
		sub.pending = append(sub.pending, sub.progressRow(frontier))
	}
	sub.last = frontier
	return wait, nil
}

// close ends the subscription; a take waiting in another goroutine
// returns io.EOF.
func (sub *subscription) close() {
	sub.closeOnce.Do(func() { close(sub.done) })
}
