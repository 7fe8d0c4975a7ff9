package storage

import (
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Reads while the DB is stopped. After a failed write-ahead-log write or
// fsync, or a failed MANIFEST write, the DB takes no writes until it
// reopens (recover.go), but it keeps serving reads, exactly at the last
// acknowledged commit: Get, Scan, ScanReverse and Snapshot read a Pebble
// snapshot of the stopped instance taken when that commit was applied.
//
// A plain read of the stopped instance would not do: Pebble publishes a
// batch (makes it visible to reads) before it reports its log write or
// fsync failed, so the failed batch, never acknowledged, is visible in
// its memtable. So every Commit, once Pebble applied its batch and before
// any other commit may reach Pebble (commits are serialized by
// acknowledged.commit), replaces the snapshot by one at that commit's
// sequence number, labelled with the commit's claim. While the DB is
// stopped the snapshot is read only if its claim is the claim of the last
// acknowledged commit; it is not when a commit could not replace it, nor
// when the instance is wedged (a background goroutine of it stopped inside
// Pebble), nor while a recovery replaces the instance, nor once a recovery
// attempt has let go of the instance: reads are refused then, as writes
// are. A read through the stopped instance that fails is refused too.
// With Relaxed durability a log write can fail after its Commit returned:
// those commits were acknowledged, and reads of the stopped DB show them
// though the files may not hold them.

// acknowledged is the snapshot at the last acknowledged commit.
type acknowledged struct {
	// commit serializes a commit's Apply with the replacement of the
	// snapshot, so that no later batch is visible in it.
	commit sync.Mutex
	// life is held shared by the reads through the snapshot and
	// exclusively to replace or close it.
	life sync.RWMutex
	cur  atomic.Pointer[ackSnapshot]
	// retired are the snapshots cur replaced, oldest first, whose DB
	// references are dropped together (retireBatch): Pebble looks for
	// compactions whenever its earliest snapshot goes, which for every
	// commit would cost more than the commit. Guarded by life.
	retired []*ackSnapshot
}

// retireBatch is how many replaced snapshots are kept before they are
// closed, newest first, so that only the last close makes Pebble look for
// compactions. They pin the versions of at most that many commits.
const retireBatch = 32

// ackSnapshot is a Pebble snapshot at the commit of claim. It is closed
// when its last reference goes: the DB's, and one per Snapshot handed out
// while the DB is stopped.
type ackSnapshot struct {
	snap  *pebble.Snapshot
	claim Claim
	refs  atomic.Int32
}

func (a *ackSnapshot) unref() {
	if a.refs.Add(-1) == 0 {
		_ = a.snap.Close()
	}
}

// acknowledge replaces the snapshot by one of the current instance at
// the commit of claim, which the instance has just applied; d.ack.commit
// must be held. The old snapshot is kept (and then no longer matches the
// acknowledged claim) while reads use it or once the DB is stopped: the
// stopped instance is then touched only by the recovery.
func (d *DB) acknowledge(claim Claim) {
	if !d.ack.life.TryLock() {
		return
	}
	defer d.ack.life.Unlock()
	if d.failed.Load() != nil {
		return
	}
	d.replaceAcknowledged(claim)
}

// replaceAcknowledged replaces the snapshot by one of the current
// instance, which must hold exactly the commits of claim. d.ack.life must
// be held, or no read may use the snapshot.
func (d *DB) replaceAcknowledged(claim Claim) {
	a := &ackSnapshot{snap: d.db.NewSnapshot(), claim: claim}
	a.refs.Store(1)
	if old := d.ack.cur.Swap(a); old != nil {
		d.ack.retired = append(d.ack.retired, old)
	}
	if len(d.ack.retired) >= retireBatch {
		d.closeRetired()
	}
}

// closeRetired drops the DB's references to the replaced snapshots,
// newest first. d.ack.life must be held, or no read may use them.
func (d *DB) closeRetired() {
	for i := len(d.ack.retired) - 1; i >= 0; i-- {
		d.ack.retired[i].unref()
		d.ack.retired[i] = nil
	}
	d.ack.retired = d.ack.retired[:0]
}

// dropAcknowledged closes the DB's reference to the snapshot (when the
// instance is not wedged; a wedged one's is abandoned with it). No read
// may be using it: the DB is closing, or a recovery has drained the calls.
func (d *DB) dropAcknowledged(wedged bool) {
	d.ack.life.Lock()
	defer d.ack.life.Unlock()
	old := d.ack.cur.Swap(nil)
	if wedged {
		d.ack.retired = nil
		return
	}
	d.closeRetired()
	if old != nil {
		old.unref()
	}
}

// servable returns the snapshot reads of a stopped DB are served from,
// or nil when they are refused. d.ack.life must be held shared.
func (d *DB) servable() *ackSnapshot {
	if d.failed.Load() == nil || d.closed.Load() || d.swapping.Load() {
		return nil
	}
	if inst := d.inst.Load(); inst == nil || inst.wedged.Load() {
		return nil
	}
	a := d.ack.cur.Load()
	if a == nil {
		return nil
	}
	d.mu.Lock()
	ok := a.claim == d.mu.committed
	d.mu.Unlock()
	if !ok {
		return nil
	}
	return a
}

// whileServable runs fn with the snapshot reads of a stopped DB are
// served from, or nil when they are refused; the snapshot stays open
// until fn returns.
func (d *DB) whileServable(fn func(a *ackSnapshot)) {
	d.inflight.Add(1)
	defer d.inflight.Add(-1)
	d.ack.life.RLock()
	defer d.ack.life.RUnlock()
	fn(d.servable())
}

// read runs fn against the committed data: the current instance, or, when
// the DB is stopped, the snapshot at the last acknowledged commit while
// reads are served. A read of the stopped DB that is refused, or whose
// read through the stopped instance fails, returns the error that stopped
// the DB.
func (d *DB) read(fn func(r pebbleReader) error) error {
	err := d.enter()
	if err == nil {
		defer d.exit()
		return fn(d.db)
	}
	if d.failed.Load() == nil {
		return err
	}
	served := false
	d.whileServable(func(a *ackSnapshot) {
		if a == nil {
			return
		}
		if rerr := fn(a.snap); rerr != nil {
			if ok, n := d.bgErrors.allow(); ok {
				d.log.Warn("storage refused a read of the stopped database", "err", causeText(rerr), "suppressed", n)
			}
			return
		}
		served = true
	})
	if !served {
		return err
	}
	return nil
}

// readsServed reports whether a stopped DB serves reads.
func (d *DB) readsServed() (served bool) {
	d.whileServable(func(a *ackSnapshot) { served = a != nil })
	return served
}

// stoppedSnapshot returns a Snapshot of a stopped DB at the last
// acknowledged commit, or nil when reads are refused.
func (d *DB) stoppedSnapshot() (s *Snapshot) {
	d.whileServable(func(a *ackSnapshot) {
		if a == nil {
			return
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.mu.snapshots == nil {
			return
		}
		a.refs.Add(1)
		s = &Snapshot{db: d, snap: a.snap, shared: a}
		d.mu.snapshots[s] = struct{}{}
	})
	return s
}
