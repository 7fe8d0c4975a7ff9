package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Freshness tokens: every commit tells the session the epoch it is
// visible at (LastCommitEpoch, which the gateway reports as the
// ParameterStatus rockstream_commit_epoch and SHOW
// rockstream.last_commit_epoch shows), and SET rockstream.min_epoch = n
// makes the session's statements wait until the commit frontier covers
// n before they read. A token taken from one connection and set on
// another gives read-your-writes across connections (and, in a cluster,
// across gateways).
//
// The epoch a commit is visible at is the epoch that holds its writes.
// A transaction that wrote nothing (only reads, or writes that changed
// no row) is visible at the last committed epoch when it ended: each of
// its reads saw that epoch or an earlier one, so a session that waits for
// it reads at least what the transaction read.

// LastCommitEpoch returns the epoch the session's last commit is visible
// at; 0 before its first commit.
func (s *Session) LastCommitEpoch() uint64 { return s.lastCommit }

// showLastCommitEpoch answers SHOW rockstream.last_commit_epoch.
func (s *Session) showLastCommitEpoch() *Result {
	return &Result{
		Columns: []Column{{Name: "rockstream.last_commit_epoch", Type: types.Of(types.Text)}},
		Rows:    []zset.Row{{types.MakeText(strconv.FormatUint(s.lastCommit, 10))}},
		Tag:     "SHOW",
	}
}

// noteCommit records that the session's transaction committed, visible
// at epoch at.
func (s *Session) noteCommit(at uint64) { s.lastCommit = at }

// noteWrite records that the open transaction wrote through the group
// committer in a commit visible at epoch at.
func (t *txn) noteWrite(at uint64) { t.visibleAt = max(t.visibleAt, at) }

// visibleEpoch returns the epoch a transaction that committed no epoch of
// its own is visible at: that of its autocommit writes, else the frontier.
func (s *Session) visibleEpoch() uint64 {
	if s.txn != nil && s.txn.visibleAt != 0 {
		return s.txn.visibleAt
	}
	return s.eng.obs.epoch.Load()
}

// awaitMinEpoch waits until the engine's commit frontier covers the
// session's rockstream.min_epoch, when it is set. It waits on the
// engine's commit notification, and stops when ctx ends (the statement
// timeout, a cancel request, the client's disconnection) or the engine
// shuts down. A transaction block that holds the write token cannot
// wait: nothing commits until it ends.
func (s *Session) awaitMinEpoch(ctx context.Context) error {
	want := s.resolved().minEpoch
	if want == 0 || s.eng.obs.epoch.Load() >= want {
		return nil
	}
	if s.txn != nil && s.txn.w != nil {
		return errs.Newf(errs.ActiveTransaction,
			"cannot wait for epoch %d (rockstream.min_epoch): the frontier is at epoch %d, and this transaction block holds the write lock, so nothing commits before it ends",
			want, s.eng.obs.epoch.Load())
	}
	return s.eng.awaitEpoch(ctx, want)
}

// awaitEpoch waits until epoch want is committed.
func (e *Engine) awaitEpoch(ctx context.Context, want uint64) error {
	for {
		at, next := e.CommitWait()
		if at >= want {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return epochWaitError(ctx, want, e.obs.epoch.Load())
		case <-e.stop:
			return errs.New(errs.AdminShutdown, "the engine is shutting down")
		}
	}
}

// epochWaitError is the error of a wait for epoch want that ctx ended
// with the frontier at epoch at: the statement's cancellation, with a
// detail naming both epochs.
func epochWaitError(ctx context.Context, want, at uint64) error {
	err := canceled(ctx)
	var ce *canceledError
	var cause *errs.Error
	if errors.As(err, &ce) && errors.As(ce.cause, &cause) && cause.Detail == "" {
		withDetail := *cause
		withDetail.Detail = fmt.Sprintf("Waiting for epoch %d (rockstream.min_epoch); the commit frontier is at epoch %d.", want, at)
		ce.cause = &withDetail
	}
	return err
}
