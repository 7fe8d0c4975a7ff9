package storage

import (
	"errors"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// Commits of unknown outcome. When the fsync of the write-ahead log fails
// in a Commit, the batch was written to the log but the device did not
// confirm it: it may be on the disk or not (after a failed fsync Linux may
// drop the dirty pages without writing them, or may have written them
// already). Pebble cannot go on, so the DB stops as after any failed log
// write, and the Commit fails with CommitOutcomeUnknown (SQLSTATE 08007)
// instead of saying that nothing was applied. The reopen then decides, as
// PostgreSQL's crash restart after a PANIC on a failed fsync does: it
// replays whatever the log holds, and accepts files that hold either the
// acknowledged commits alone or those and the uncertain batch, whole
// (Pebble replays a batch whole or not at all). Whatever it finds is made
// durable by the reopen (the replayed log is flushed to tables), so the
// outcome does not change afterwards. Files holding anything else keep the
// DB stopped, as before.

// ErrOutcomeUnknown is wrapped by the error of a Commit whose outcome is
// unknown: the batch is wholly applied or not at all once the DB has
// recovered, and reading the store then tells which.
var ErrOutcomeUnknown = errors.New("storage: the outcome of the commit is unknown")

// logSyncWatch is a file system that records, in its instance, a failed
// sync of a write-ahead-log file: the commit that sees Pebble's fatal path
// then knows that its batch reached the log.
type logSyncWatch struct {
	vfs.FS
	inst *pebbleInstance
}

func isLogFile(name string) bool { return strings.HasSuffix(name, ".log") }

func (w logSyncWatch) watch(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !isLogFile(name) {
		return f, err
	}
	return watchedLog{File: f, inst: w.inst}, nil
}

func (w logSyncWatch) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := w.FS.Create(name, c)
	return w.watch(name, f, err)
}

func (w logSyncWatch) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := w.FS.ReuseForWrite(old, name, c)
	return w.watch(name, f, err)
}

func (w logSyncWatch) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := w.FS.OpenReadWrite(name, c, opts...)
	return w.watch(name, f, err)
}

// watchedLog is a write-ahead-log file whose failed syncs are recorded.
type watchedLog struct {
	vfs.File
	inst *pebbleInstance
}

func (f watchedLog) note(err error) error {
	if err != nil {
		f.inst.logSyncFailed.Store(true)
	}
	return err
}

func (f watchedLog) Sync() error     { return f.note(f.File.Sync()) }
func (f watchedLog) SyncData() error { return f.note(f.File.SyncData()) }

func (f watchedLog) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.note(err)
}

// failUncertain stops the DB after the commit of batch (n writes, up to
// sequence number last, writing epoch) failed in the log's fsync, records
// the batch as uncertain for the reopen, and returns the Commit's error.
func (d *DB) failUncertain(n uint32, last uint64, epoch uint64, hasEpoch bool, cause error) error {
	d.mu.Lock()
	if !hasEpoch {
		epoch = d.mu.committed.Epoch
	}
	if last > d.mu.uncertain.Seq {
		d.mu.uncertain = Claim{Seq: last, Epoch: epoch}
	}
	d.mu.Unlock()
	stopped := d.stop("syncing the write-ahead log for a commit", cause)
	return &codedError{
		err: errs.Newf(errs.CommitOutcomeUnknown,
			"could not fsync the write-ahead log of %s: %s; the outcome of this commit (%d writes) is unknown: it is either wholly applied or not at all. The storage stopped and reopens itself from its files once the device works again; read the data then to see which",
			d.dir, causeText(cause), n).(*errs.Error),
		cause: errors.Join(cause, ErrOutcomeUnknown),
		extra: errors.Join(ErrFailed, stopped),
	}
}

// acceptable returns the claim a reopened DB holds when its files reach
// sequence number seq: the acknowledged commits (committed), or those and
// the batch of unknown outcome (uncertain, when there is one).
func acceptable(seq uint64, committed, uncertain Claim) (Claim, bool) {
	switch {
	case seq == committed.Seq:
		return committed, true
	case uncertain.Seq != 0 && seq == uncertain.Seq:
		return uncertain, true
	}
	return Claim{}, false
}
