package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/zset"
)

// writeFunc is one statement's writes: it runs against st (an overlay of
// the epoch being built) and returns the catalog after the statement, or
// nil when the statement left the catalog alone.
type writeFunc func(st state.Store, w *epochWrite) (*catalog, error)

// epochWrite is an epoch being built: its number, the overlay holding its
// writes over the committed store, the catalog as of its last statement,
// and the next change-log sequence number of each view it changed.
//
// A transaction block defers its views: its table changes collect in
// pending and reach the materialized views in one step at COMMIT (or
// before a read), so that the views see only the block's net change and a
// state in the middle of the block that a view's query could not evaluate
// is no error when the block repairs it before COMMIT.
type epochWrite struct {
	epoch  uint64
	ov     *state.Overlay
	cat    *catalog
	logSeq map[uint64]uint64

	deferViews bool
	pending    map[string]zset.Batch
	// stepAll makes a flush step every materialized view, touched or
	// not, and outbox holds the rows for other members' buckets (both
	// shard mode's, shard.go).
	stepAll bool
	outbox  []outboxRow

	// now reads the engine's clock the first time a temporal filter
	// steps in the epoch, and clock holds what it read (temporal.go); nil
	// where the epoch has no time of its own (the stored clock stands).
	now   func() time.Time
	clock time.Time
}

// flush carries the block's pending table changes through its views.
// When a view fails, nothing of the flush is kept and the changes stay
// pending.
func (w *epochWrite) flush(ctx context.Context) error {
	if len(w.pending) == 0 && !w.stepAll {
		return nil
	}
	deltas := make(map[string]zset.Batch, len(w.pending))
	for name, d := range w.pending {
		c, err := zset.Consolidate(d)
		if err != nil {
			return err
		}
		if len(c) > 0 {
			deltas[name] = c
		}
	}
	sub := state.NewOverlay(w.ov)
	if err := propagatePending(ctx, sub, w, deltas); err != nil {
		sub.Discard()
		return err
	}
	if err := sub.Commit(); err != nil {
		return err
	}
	w.pending = nil
	return nil
}

// run applies one statement to the epoch, keeping its writes only when it
// succeeds.
func (w *epochWrite) run(fn writeFunc) error {
	sov := state.NewOverlay(w.ov)
	cat, err := fn(sov, w)
	if err != nil {
		sov.Discard()
		return err
	}
	if err := sov.Commit(); err != nil {
		return err
	}
	if cat != nil {
		w.cat = cat
	}
	return nil
}

// beginEpochLocked starts an epoch over the committed state. The caller
// holds the write token, so nothing else commits until the epoch ends.
func (e *Engine) beginEpoch() (*epochWrite, error) {
	if err := e.recoverStore(); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.mu.failed != nil {
		return nil, e.mu.failed
	}
	return &epochWrite{
		epoch:  e.mu.epoch + 1,
		ov:     state.NewOverlay(e.mu.store),
		cat:    e.mu.cat,
		logSeq: map[uint64]uint64{},
		now:    e.now,
	}, nil
}

// beginBlock takes the write token for a transaction block and starts its
// epoch.
func (e *Engine) beginBlock(ctx context.Context) (*epochWrite, error) {
	select {
	case e.writeToken <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	w, err := e.beginEpoch()
	if err != nil {
		<-e.writeToken
		return nil, err
	}
	w.deferViews = true
	return w, nil
}

// commitEpoch makes an epoch durable and visible: its writes, the frontier
// and the catalog revision go to the store as one atomic commit, and only
// then do readers see the new catalog and epoch. An epoch that changed
// nothing is dropped, except in shard mode, where every member commits
// every statement's epoch so that their epoch numbers agree. The caller
// holds the write token.
func (e *Engine) commitEpoch(w *epochWrite) error {
	if w.ov.Len() == 0 && w.cat == e.mu.cat && e.shard == nil {
		return nil
	}
	start := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mu.failed != nil {
		w.ov.Discard()
		return e.mu.failed
	}
	if err := writeFrontier(w.ov, w.epoch, w.cat); err != nil {
		w.ov.Discard()
		return err
	}
	var trimmed map[uint64]uint64
	if w.epoch%trimEvery == 0 {
		var err error
		if trimmed, err = trimChangeLogs(w.ov, w.cat, w.epoch, e.opts.ChangeLogRetention, e.logs); err != nil {
			w.ov.Discard()
			return err
		}
	}
	written := writtenRelations(w.ov)
	logged := loggedBuckets(w.ov, w.epoch)
	if err := w.ov.Commit(); err != nil {
		e.mu.store.Abort()
		if errors.Is(err, state.ErrWeightOverflow) {
			// A row's count left int64 while the epoch's weight merges
			// were added to the store: the commit took back what it had
			// written, so the store is the last epoch's and stays open.
			w.ov.Discard()
			return err
		}
		return e.failCommit(err)
	}
	if err := e.mu.store.Commit(); err != nil {
		return e.failCommit(err)
	}
	e.cache.changed(written, w.epoch)
	e.logs.committed(w.epoch, logged, trimmed, e.mu.cat, w.cat)
	e.mu.cat = w.cat
	e.mu.epoch = w.epoch
	close(e.mu.committed)
	e.mu.committed = make(chan struct{})
	e.obs.committed(w.epoch, time.Since(start))
	return nil
}

// failCommit reports a failed commit. The store dropped the epoch's
// writes, but after a failed sync the durable state is unknown until the
// store is reopened, so the engine refuses further writes until the store
// has recovered (recoverStore). When the store says the commit's outcome
// is unknown (its log's fsync failed), so does the error: the epoch is
// then wholly there or not at all once the store has reopened.
func (e *Engine) failCommit(err error) error {
	if errs.CodeOf(err) == errs.DiskFull && !errors.Is(err, storage.ErrFailed) {
		// The store refused the epoch before writing any of it (the disk
		// is full): the durable state is the last epoch, and a later
		// commit may succeed once space is freed.
		return err
	}
	e.mu.failed = errs.Newf(errs.IOError, "the storage failed to commit epoch %d and the engine accepts no writes until the storage has reopened itself (once the condition clears), or a restart recovers from the last durable epoch: %v", e.mu.epoch+1, err)
	if errors.Is(err, storage.ErrOutcomeUnknown) {
		return fmt.Errorf("commit of epoch %d failed: %w", e.mu.epoch+1, err)
	}
	return fmt.Errorf("commit failed, nothing of the transaction was applied: %w", err)
}

// writeRequest is an autocommit statement waiting for the group committer.
type writeRequest struct {
	ctx  context.Context
	fn   writeFunc
	done chan error
	// epoch is the epoch the request's writes are visible at, set before
	// a nil error is sent on done.
	epoch uint64
	// state is requestQueued until either the committer takes the
	// request to run it (requestTaken) or its statement, canceled while
	// it waited, withdraws it (requestWithdrawn); whoever moves it first
	// decides.
	state atomic.Int32
}

// The states of a writeRequest.
const (
	requestQueued int32 = iota
	requestTaken
	requestWithdrawn
)

// submit runs an autocommit statement through the group committer and
// returns once the epoch holding it is durable (or the statement failed).
func (e *Engine) submit(ctx context.Context, fn writeFunc) error {
	_, err := e.submitAt(ctx, fn)
	return err
}

// submitAt is submit, returning the epoch the statement's writes are
// visible at: the epoch holding them, or the frontier when the group's
// epoch changed nothing.
func (e *Engine) submitAt(ctx context.Context, fn writeFunc) (uint64, error) {
	r := &writeRequest{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case e.queue <- r:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-e.stop:
		return 0, errs.New(errs.AdminShutdown, "the engine is shutting down")
	}
	// A statement canceled while it waits withdraws from the queue and
	// returns at once. Once the committer has taken it, its outcome is
	// awaited even if ctx ends (the statement's evaluation stops soon
	// after): returning early would leave the caller not knowing whether
	// it committed.
	select {
	case err := <-r.done:
		return r.epoch, err
	case <-ctx.Done():
		if r.state.CompareAndSwap(requestQueued, requestWithdrawn) {
			return 0, ctx.Err()
		}
		err := <-r.done
		return r.epoch, err
	}
}

// runCommitter is the group committer: it takes the autocommit statements
// waiting in the queue, runs each in turn against one epoch (a failed
// statement is dropped alone), commits the epoch once, and answers all of
// them.
func (e *Engine) runCommitter() {
	defer close(e.stopped)
	for {
		var first *writeRequest
		select {
		case first = <-e.queue:
		case <-e.stop:
			e.drainQueue()
			return
		}
		e.writeToken <- struct{}{}
		batch := []*writeRequest{first}
	more:
		for len(batch) < e.opts.MaxGroup {
			select {
			case r := <-e.queue:
				batch = append(batch, r)
			default:
				break more
			}
		}
		e.runGroup(batch)
		<-e.writeToken
	}
}

func (e *Engine) runGroup(batch []*writeRequest) {
	w, err := e.beginEpoch()
	if err != nil {
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	results := make([]error, len(batch))
	for i, r := range batch {
		if !r.state.CompareAndSwap(requestQueued, requestTaken) {
			results[i] = r.ctx.Err() // withdrawn: nobody waits for it
			continue
		}
		if err := r.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if e.shard != nil {
			// One statement, alone in its epoch (Options.MaxGroup).
			if results[i] = e.runShardStatement(r.ctx, w, e.guarded(r.fn)); results[i] != nil {
				w.ov.Discard()
				r.epoch = e.obs.epoch.Load()
				r.done <- results[i]
				return
			}
			continue
		}
		results[i] = w.run(e.guarded(r.fn))
	}
	err = e.commitEpoch(w)
	// The committer holds the write token: the frontier is the group's
	// epoch, or the one it found when the group changed nothing.
	at := e.obs.epoch.Load()
	for i, r := range batch {
		if results[i] == nil {
			results[i] = err
		}
		r.epoch = at
		r.done <- results[i]
	}
}

// drainQueue fails the statements still queued at shutdown.
func (e *Engine) drainQueue() {
	for {
		select {
		case r := <-e.queue:
			r.done <- errs.New(errs.AdminShutdown, "the engine is shutting down")
		default:
			return
		}
	}
}
