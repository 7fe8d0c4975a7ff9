package storage

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// Recovery in the process. Pebble cannot go on after a failed
// write-ahead-log write or a failed MANIFEST write: its commit pipeline,
// or its version state, is broken. A restart recovers, since opening
// replays the log; Recover does the same without the restart. The broken
// Pebble instance is fenced the moment it fails (every write of a file
// through it fails), so that nothing it still does in the background can
// change the directory; once the calls under way have left it, it is
// closed (or, when one of its background goroutines stopped inside it,
// abandoned), and a new instance is opened on the same directory, under
// the same directory lock. The new instance is used only if it holds
// exactly the commits acknowledged before the failure, nothing
// acknowledged missing: the failed batch absent, or, when its log fsync
// failed and its outcome was reported unknown, absent or whole
// (uncertain.go). Otherwise the DB stays stopped and a restart is needed
// (which then serves what the files hold, as before).

// pebbleInstance is one open Pebble database of a DB.
type pebbleInstance struct {
	owner *DB
	// fenced makes every write of a file through the instance fail.
	fenced atomic.Bool
	// wedged says that a background goroutine of the instance stopped
	// inside Pebble (see pebbleLogger.Fatalf): closing it would wait for
	// that goroutine forever.
	wedged atomic.Bool
	// logSyncFailed says that a sync of one of its write-ahead-log files
	// failed (uncertain.go).
	logSyncFailed atomic.Bool
}

// errFenced is what a write through a fenced instance fails with.
var errFenced = errors.New("storage: this instance of the database was stopped after a failure; it writes no more files")

// fs returns fs seen through the instance's fence.
func (p *pebbleInstance) fs(fs vfs.FS) vfs.FS {
	return errorfs.Wrap(logSyncWatch{FS: fs, inst: p}, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileClose || op.Kind.ReadOrWrite() != errorfs.OpIsWrite {
			return nil
		}
		if !p.fenced.Load() {
			// Pebble retries a failed flush or compaction at once, without
			// end (on a disk that another process filled, say): for a
			// while after a failure, the retries' outputs are created
			// slowly, so that they do not spin.
			if op.Kind == errorfs.OpCreate && p.owner != nil &&
				time.Now().UnixNano()-p.owner.lastBgError.Load() < int64(retryCalm) {
				time.Sleep(fencedRetry)
			}
			return nil
		}
		switch op.Kind {
		case errorfs.OpCreate, errorfs.OpReuseForWrite, errorfs.OpLink:
			// Pebble retries a failed flush or compaction at once, and
			// each try starts by creating its output: slowed down, the
			// retries of a fenced instance cost no CPU to speak of.
			time.Sleep(fencedRetry)
		}
		return errFenced
	}))
}

// wedge records that a background goroutine of the instance hit Pebble's
// fatal path: the instance is fenced and, if it is the DB's current one,
// the DB stops.
func (p *pebbleInstance) wedge(msg string) {
	p.wedged.Store(true)
	p.fenced.Store(true)
	if d := p.owner; d != nil && d.inst.Load() == p {
		_ = d.stop("a background flush or compaction", fatalError{msg: msg})
	}
}

// recovery is the state of recovery attempts.
type recovery struct {
	mu sync.Mutex
	// next is when the next automatic attempt may run; failures is the
	// count of attempts failed in a row, which spaces them out.
	next     time.Time
	failures int
	// stuck is set when recovery is impossible in this process; then
	// only a restart recovers.
	stuck error
	// abandoned counts the wedged instances left behind.
	abandoned int
	// log limits the lines of failed attempts.
	log logLimiter
}

const (
	// firstRetry and lastRetry bound the wait between automatic attempts.
	firstRetry = 250 * time.Millisecond
	lastRetry  = 30 * time.Second
	// maxAbandoned bounds the wedged instances a process keeps (each holds
	// its memory tables and open files).
	maxAbandoned = 4
	// drainWait bounds how long a recovery waits for the calls using the
	// broken instance to leave it.
	drainWait = 2 * time.Second
	// closeWait bounds how long closing a broken instance may take.
	closeWait = 10 * time.Second
	// fencedRetry is how long a fenced instance's creation of a file
	// takes to fail, and how long a creation waits for a while (retryCalm)
	// after a background job failed.
	fencedRetry = 100 * time.Millisecond
	retryCalm   = time.Second
	// probeFile is written and removed to see whether the directory takes
	// writes again before a recovery reopens it.
	probeFile = "RECOVERY-PROBE"
)

// enter starts a call that uses the Pebble instance: it fails when the DB
// is closed or stopped (after trying to recover, at most once per
// interval), and otherwise keeps the instance from being replaced until
// exit.
func (d *DB) enter() error {
	if d.closed.Load() {
		return ErrClosed
	}
	if d.failed.Load() != nil {
		d.maybeRecover()
	}
	d.inflight.Add(1)
	if d.closed.Load() {
		d.inflight.Add(-1)
		return ErrClosed
	}
	if f := d.failed.Load(); f != nil {
		d.inflight.Add(-1)
		return f
	}
	return nil
}

// exit ends a call started by enter or pin.
func (d *DB) exit() { d.inflight.Add(-1) }

// pin starts a call that may use a stopped instance (metrics): it returns
// false while no instance is open or one is being replaced.
func (d *DB) pin() bool {
	d.inflight.Add(1)
	if d.closed.Load() || d.swapping.Load() || d.db == nil {
		d.inflight.Add(-1)
		return false
	}
	return true
}

// drain waits until no call uses the instance, up to wait.
func (d *DB) drain(wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for d.inflight.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// maybeRecover tries to recover a stopped DB, unless an attempt is under
// way or the last one was too recent.
func (d *DB) maybeRecover() {
	if !d.recov.mu.TryLock() {
		return
	}
	defer d.recov.mu.Unlock()
	if time.Now().Before(d.recov.next) {
		return
	}
	_ = d.recoverLocked(drainWait / 8)
}

// Recover reopens a DB that a failed write stopped: a failed write-ahead-
// log write or sync in a commit, or a failed MANIFEST write in a flush or
// compaction. It returns nil when the DB works again, holding exactly the
// commits acknowledged before the failure, or when it was not stopped;
// otherwise the error that still stops it (the condition has not cleared:
// the disk is still full, the device still fails; or the files hold more
// or less than was acknowledged, and only a restart recovers). Calls that
// use a stopped DB try it themselves, at most once per interval.
func (d *DB) Recover() error {
	d.recov.mu.Lock()
	defer d.recov.mu.Unlock()
	return d.recoverLocked(drainWait)
}

func (d *DB) recoverLocked(wait time.Duration) error {
	f := d.failed.Load()
	if f == nil {
		return nil
	}
	if d.recov.stuck != nil {
		return d.recov.stuck
	}
	if d.readOnly || d.lock == nil || d.closed.Load() {
		return f
	}
	// A checkpoint under way keeps the instance; so does a caller holding
	// the lock while it calls in (CreateCheckpoint's Flush).
	if !d.checkpointMu.TryLock() {
		return f
	}
	defer d.checkpointMu.Unlock()
	err := d.reopen(f, wait)
	if err == nil {
		d.recov.failures, d.recov.next = 0, time.Time{}
		return nil
	}
	d.recov.failures++
	d.recov.next = time.Now().Add(min(lastRetry, firstRetry<<min(d.recov.failures, 10)))
	if d.recov.stuck == nil {
		if ok, n := d.recov.log.allow(); ok {
			d.log.Warn("storage could not recover yet; retrying", "err", causeText(err), "attempts", d.recov.failures, "suppressed", n)
		}
	}
	if d.recov.stuck != nil {
		return d.recov.stuck
	}
	return f
}

// reopen replaces the stopped instance by a new one. f is the error that
// stopped the DB.
func (d *DB) reopen(f *codedError, wait time.Duration) error {
	if d.space != nil {
		if err := d.space.check(0); err != nil {
			return err
		}
	}
	if err := d.probe(); err != nil {
		return err
	}
	d.swapping.Store(true)
	defer d.swapping.Store(false)
	if !d.drain(wait) {
		return errors.New("calls are still using the stopped database")
	}
	d.mu.Lock()
	if d.mu.pending != nil {
		d.mu.Unlock()
		// Writes added before the failure wait for their Commit or Abort:
		// dropping them here would let a later Commit apply part of a
		// batch.
		return errors.New("a batch of writes is pending")
	}
	// Snapshots of the stopped instance end with it.
	var snaps []*Snapshot
	for s := range d.mu.snapshots {
		if s.closed.CompareAndSwap(false, true) {
			snaps = append(snaps, s)
		}
		delete(d.mu.snapshots, s)
	}
	committed, uncertain := d.mu.committed, d.mu.uncertain
	d.mu.Unlock()
	if !d.drain(wait) {
		return errors.New("calls are still using the stopped database")
	}
	for _, s := range snaps {
		_ = s.closeSnap()
	}

	if d.db != nil {
		old := d.inst.Load()
		// Reads of the stopped DB end here (stopped.go).
		d.dropAcknowledged(old.wedged.Load())
		d.iters.invalidate(!old.wedged.Load())
		if !d.retire(d.db, old) {
			d.recov.stuck = d.stuckError(f, "the stopped instance did not close")
			return d.recov.stuck
		}
		d.db = nil
	}
	// What the files hold is checked read-only first: a read-write open
	// would make durable a failed batch that reached the log, where a
	// restart after a crash might not have found it. A batch of unknown
	// outcome may be there or not.
	seq, err := d.filesSeq()
	if err != nil {
		return err
	}
	if _, ok := acceptable(seq, committed, uncertain); !ok {
		d.recov.stuck = d.stuckError(f, seqMismatch(seq, committed.Seq))
		return d.recov.stuck
	}
	// Opening replays the log and flushes what it replayed, and Pebble
	// then collects the new tables' statistics in a goroutine, which a
	// failure later in the same open would leave reading a closed file
	// cache (a panic of the process). So the open that replays runs
	// without statistics and is closed again; a second open, with nothing
	// left to replay, collects them.
	found, pdb, inst, err := d.openFound(f, committed, uncertain, false)
	if err != nil {
		return err
	}
	if !d.retire(pdb, inst) {
		d.recov.stuck = d.stuckError(f, "the reopened instance did not close")
		return d.recov.stuck
	}
	if _, pdb, inst, err = d.openFound(f, found, Claim{}, true); err != nil {
		return err
	}
	d.mu.Lock()
	d.mu.committed, d.mu.uncertain = found, Claim{}
	d.mu.Unlock()
	d.db = pdb
	d.inst.Store(inst)
	d.replaceAcknowledged(found)
	d.failed.Store(nil)
	d.recoveries.Add(1)
	outcome := "none"
	if uncertain.Seq != 0 {
		outcome = "absent"
		if found == uncertain {
			outcome = "applied"
		}
	}
	d.log.Info("storage recovered after a failure without a restart; accepting reads and writes",
		"epoch", found.Epoch, "failure", causeText(f), "uncertain_commit", outcome)
	// The reopen flushed what it replayed: the claim is durable.
	return d.recordClaim(found)
}

// openFound opens an instance (collecting table statistics when stats)
// and returns it with the claim it holds, which must be committed or
// uncertain (see acceptable). f is the error that stopped the DB.
func (d *DB) openFound(f *codedError, committed, uncertain Claim, stats bool) (Claim, *pebble.DB, *pebbleInstance, error) {
	pdb, inst, err := d.openInstance(stats)
	if inst != nil && inst.wedged.Load() && pdb == nil {
		// The open itself is stuck in Pebble, holding a reference to the
		// directory lock it will never drop: drop it for it.
		if d.recov.abandoned >= maxAbandoned {
			d.recov.stuck = d.stuckError(f, "reopening failed too often")
			return Claim{}, nil, nil, d.recov.stuck
		}
		d.recov.abandoned++
		_ = d.lock.Close()
	}
	if err != nil {
		return Claim{}, nil, nil, err
	}
	seq := visibleSeq(pdb)
	found, ok := acceptable(seq, committed, uncertain)
	if !ok || inst.wedged.Load() {
		why := seqMismatch(seq, committed.Seq)
		if inst.wedged.Load() {
			why = "the reopened instance failed too"
		}
		if !d.retire(pdb, inst) || !ok {
			d.recov.stuck = d.stuckError(f, why)
			return Claim{}, nil, nil, d.recov.stuck
		}
		return Claim{}, nil, nil, errors.New(why)
	}
	return found, pdb, inst, nil
}

// seqMismatch says why files holding commits up to seq cannot replace a
// DB that acknowledged those up to committed.
func seqMismatch(seq, committed uint64) string {
	if seq > committed {
		return "its files hold the write that failed, which was reported as not committed"
	}
	return fmt.Sprintf("its files hold commits up to sequence number %d where %d were acknowledged", seq, committed)
}

// filesSeq opens the directory read-only (under the DB's lock, no
// instance open) and returns the sequence number its files reach.
func (d *DB) filesSeq() (uint64, error) {
	ro := d.popts.Clone()
	ro.FS = readOnlyFS{d.fs}
	ro.ReadOnly = true
	ro.Lock = d.lock
	ro.Logger = pebbleLogger{l: d.log}
	pdb, err := openPebble(d.dir, ro)
	if err != nil {
		return 0, openError(d.dir, withWALNames(d.fs, d.dir, err))
	}
	seq := visibleSeq(pdb)
	return seq, closeQuietly(pdb)
}

// stuckError is the error of a DB that cannot recover in the process.
func (d *DB) stuckError(f *codedError, why string) error {
	what, _, _ := strings.Cut(f.err.Message, "; the database accepts")
	e := &codedError{
		err: errs.Newf(errs.CodeOf(f),
			"%s; the database accepts no reads or writes and cannot reopen itself (%s): restart rockstream to recover the last durable epoch",
			what, why).(*errs.Error),
		cause: f.cause,
		extra: ErrFailed,
	}
	d.log.Error("storage cannot recover without a restart", "reason", why)
	d.failed.Store(e)
	return e
}

// openInstance opens a read-write Pebble instance on the directory, under
// the DB's directory lock. Opening flushes the write-ahead log it replays
// in a background goroutine and waits for it; when that flush fails its
// MANIFEST write the goroutine ends (see pebbleLogger.Fatalf) and the open
// would wait forever, so openInstance returns then with an error and the
// wedged instance, leaving the open behind, fenced.
func (d *DB) openInstance(stats bool) (*pebble.DB, *pebbleInstance, error) {
	inst := &pebbleInstance{owner: d}
	o := d.popts.Clone()
	o.DisableTableStats = o.DisableTableStats || !stats
	o.FS = inst.fs(d.fs)
	o.Logger = pebbleLogger{l: d.log, inst: inst}
	o.Lock = d.lock
	type result struct {
		pdb *pebble.DB
		err error
	}
	done := make(chan result, 1)
	go func() {
		pdb, err := openPebble(d.dir, o)
		done <- result{pdb, err}
	}()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case r := <-done:
			if r.err != nil {
				// Whatever a half-opened instance left running writes
				// nothing.
				inst.fenced.Store(true)
				return nil, nil, openError(d.dir, withWALNames(d.fs, d.dir, r.err))
			}
			return r.pdb, inst, nil
		case <-t.C:
			if inst.wedged.Load() {
				return nil, inst, wrapf(errs.IOError, nil, "storage: cannot open %s: writing its MANIFEST failed while replaying the write-ahead log", d.dir)
			}
		}
	}
}

// probe writes, syncs and removes a small file in the directory: a
// device still full or failing fails it.
func (d *DB) probe() error {
	path := d.fs.PathJoin(d.dir, probeFile)
	f, err := d.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, werr := f.Write(make([]byte, 64<<10))
	if werr == nil {
		werr = f.Sync()
	}
	return errors.Join(werr, f.Close(), d.fs.Remove(path))
}

// retire closes an instance that is no longer used, fenced first; a
// wedged one is abandoned instead, its reference to the directory lock
// dropped for it. It reports false when the instance neither closed nor
// could be abandoned.
func (d *DB) retire(pdb *pebble.DB, inst *pebbleInstance) bool {
	inst.fenced.Store(true)
	if inst.wedged.Load() {
		if d.recov.abandoned >= maxAbandoned {
			return false
		}
		d.recov.abandoned++
		_ = d.lock.Close()
		d.log.Warn("storage abandoned a stopped instance", "abandoned", d.recov.abandoned)
		return true
	}
	done := make(chan struct{})
	go func() {
		_ = closeQuietly(pdb)
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(closeWait):
		return false
	}
}

// Recoveries returns how many times the DB recovered from a failure
// without a restart.
func (d *DB) Recoveries() int64 { return d.recoveries.Load() }

// waitFlushed waits for a flush to finish, or for the instance to wedge
// (the flush will then never finish).
func waitFlushed(done <-chan struct{}, inst *pebbleInstance) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-t.C:
			if inst.wedged.Load() {
				return errors.New("storage: the flush failed in the background")
			}
		}
	}
}

// TryRecover is Recover at most once per interval (the interval grows
// while attempts fail): for callers that would otherwise try at every
// statement. It returns nil when the DB works.
func (d *DB) TryRecover() error {
	if d.failed.Load() == nil {
		return nil
	}
	d.maybeRecover()
	if f := d.failed.Load(); f != nil {
		return f
	}
	return nil
}
