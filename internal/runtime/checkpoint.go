package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// CheckpointResult is what an online checkpoint uploaded, and what the
// retention that followed it deleted (nil without retention).
type CheckpointResult struct {
	Manifest *storage.Manifest    `json:"manifest"`
	Pruned   *storage.PruneResult `json:"pruned,omitempty"`
}

// Checkpoint uploads a checkpoint of the running engine's store to url
// (storage.CreateCheckpoint) while it keeps serving: an epoch commits in
// one atomic write of the store, so the copy holds exactly the epochs up to
// some epoch E and none of E+1, and E is the manifest's Epoch. Writes keep
// committing while the copy uploads. With keep > 0, only the keep newest
// checkpoints at url are kept afterwards (storage.PruneCheckpoints).
// progress may be nil.
//
// An engine in memory has no store to copy: 0A000.
func (e *Engine) Checkpoint(ctx context.Context, url string, keep int, progress storage.Progress) (*CheckpointResult, error) {
	if keep < 0 {
		return nil, errs.Newf(errs.InvalidParameterValue, "the number of checkpoints to keep must be at least 1, not %d", keep)
	}
	e.mu.RLock()
	store, failed := e.mu.store, e.mu.failed
	e.mu.RUnlock()
	if failed != nil {
		return nil, failed
	}
	db, ok := store.(*storage.DB)
	if !ok {
		return nil, errs.New(errs.FeatureNotSupported, "checkpoints are not supported by an instance in memory: start the server with --storage DIR")
	}
	session := uint64(0)
	if rep, ok := ctx.Value(stmtProgressKey{}).(*progressReporter); ok {
		session = rep.session
	}
	entry := e.progress.start(session, "checkpoint", url, "bytes", "copying")
	defer e.progress.end(entry)
	began := time.Now()
	m, err := storage.CreateCheckpoint(ctx, db, url, map[string]string{"taken": "online"}, &checkpointProgress{entry: entry, next: progress})
	e.checkpoints.record(m, time.Since(began), err)
	if err != nil {
		return nil, err
	}
	res := &CheckpointResult{Manifest: m}
	if keep > 0 {
		if res.Pruned, err = storage.PruneCheckpoints(ctx, url, keep); err != nil {
			return res, err
		}
	}
	return res, nil
}

// execCheckpoint runs CHECKPOINT TO 'url' [KEEP n]: one row describing the
// checkpoint.
func (s *Session) execCheckpoint(ctx context.Context, st ext.Statement) (*Result, error) {
	if s.txn != nil {
		return nil, errs.New(errs.ActiveTransaction, "CHECKPOINT TO cannot run inside a transaction block")
	}
	var notices storage.Progress
	if s.onNotice != nil {
		notices = &checkpointNotices{url: st.Query, notice: func(msg string) {
			s.onNotice(Notice{Severity: "NOTICE", SQLState: "00000", Message: msg})
		}}
	}
	r, err := s.eng.Checkpoint(s.withProgress(ctx), st.Query, st.Keep, notices)
	s.eng.AuditCheckpoint(s.auditRole(), st.Query, r, err)
	if err != nil {
		return nil, err
	}
	m := r.Manifest
	deleted := 0
	if r.Pruned != nil {
		deleted = len(r.Pruned.Deleted)
	}
	res := &Result{Tag: "CHECKPOINT", Columns: []Column{
		{Name: "id", Type: types.Of(types.Text)},
		{Name: "epoch", Type: types.Of(types.Int8)},
		{Name: "files", Type: types.Of(types.Int8)},
		{Name: "uploaded_files", Type: types.Of(types.Int8)},
		{Name: "uploaded_bytes", Type: types.Of(types.Int8)},
		{Name: "deleted_checkpoints", Type: types.Of(types.Int8)},
	}}
	res.Rows = []zset.Row{{
		types.MakeText(m.ID), types.MakeInt(types.Int8, int64(m.Epoch)), types.MakeInt(types.Int8, int64(len(m.Files))),
		types.MakeInt(types.Int8, int64(m.Uploaded.Files)), types.MakeInt(types.Int8, m.Uploaded.Bytes), types.MakeInt(types.Int8, int64(deleted)),
	}}
	return res, nil
}

// checkpointProgress records a checkpoint's upload in
// rockstream_catalog.progress and passes it on to next (when not nil).
type checkpointProgress struct {
	entry *progressEntry
	next  storage.Progress
}

func (p *checkpointProgress) Start(what string, files int, bytes int64) {
	p.entry.phase.Store("uploading")
	p.entry.total.Store(bytes)
	p.entry.updatedNs.Store(time.Now().UnixNano())
	if p.next != nil {
		p.next.Start(what, files, bytes)
	}
}

func (p *checkpointProgress) Advance(files int, bytes int64) {
	p.entry.done.Add(bytes)
	p.entry.updatedNs.Store(time.Now().UnixNano())
	if p.next != nil {
		p.next.Advance(files, bytes)
	}
}

func (p *checkpointProgress) Done(err error) {
	if p.next != nil {
		p.next.Done(err)
	}
}

// checkpointNotices sends a CHECKPOINT TO's progress to the client as
// NOTICEs, as a backfill does: after backfillNoticeAfter, at most one
// every backfillNoticeEvery, and a last one when it was noticed at all.
type checkpointNotices struct {
	url         string
	notice      func(string)
	total, done int64
	started     time.Time
	next        time.Time
	noticed     bool
}

func (p *checkpointNotices) Start(_ string, _ int, bytes int64) {
	p.total, p.started = bytes, time.Now()
	p.next = p.started.Add(backfillNoticeAfter)
}

func (p *checkpointNotices) Advance(_ int, bytes int64) {
	if bytes == 0 {
		return // a file finished; its bytes were reported
	}
	p.done += bytes
	if now := time.Now(); !now.Before(p.next) || (p.noticed && p.done == p.total) {
		p.notice(fmt.Sprintf("checkpoint to %s: %d of %d bytes uploaded", p.url, p.done, p.total))
		p.noticed = true
		p.next = now.Add(backfillNoticeEvery)
	}
}

func (p *checkpointNotices) Done(error) {}

// CheckpointStats counts the online checkpoints since start-up, for the
// server's metrics.
type CheckpointStats struct {
	Succeeded, Failed uint64
	// LastSuccess is when the last successful checkpoint ended (zero
	// before the first), LastEpoch the epoch it holds, LastDuration how
	// long it took, LastUploadedBytes what it sent.
	LastSuccess       time.Time
	LastEpoch         uint64
	LastDuration      time.Duration
	LastUploadedBytes int64
}

// checkpointStats is the engine's CheckpointStats under a lock.
type checkpointStats struct {
	mu struct {
		sync.Mutex
		stats CheckpointStats
	}
}

func (c *checkpointStats) record(m *storage.Manifest, d time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.mu.stats.Failed++
		return
	}
	c.mu.stats.Succeeded++
	c.mu.stats.LastSuccess, c.mu.stats.LastEpoch, c.mu.stats.LastDuration = time.Now(), m.Epoch, d
	c.mu.stats.LastUploadedBytes = m.Uploaded.Bytes
}

// CheckpointStats returns the online checkpoints' counts.
func (e *Engine) CheckpointStats() CheckpointStats {
	e.checkpoints.mu.Lock()
	defer e.checkpoints.mu.Unlock()
	return e.checkpoints.mu.stats
}
