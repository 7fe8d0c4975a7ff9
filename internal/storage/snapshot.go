package storage

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
)

// Snapshot is a consistent read-only view of a DB as of the moment it was
// taken: commits that land later are not seen, however long the reads
// take. It holds back the deletion of the data it sees, so close it when
// done. A Snapshot is safe for concurrent use.
type Snapshot struct {
	db     *DB
	snap   *pebble.Snapshot
	closed atomic.Bool
	// shared is the snapshot at the last acknowledged commit that snap
	// is, for a Snapshot of a stopped DB (stopped.go); nil otherwise.
	shared *ackSnapshot
}

var _ state.Reader = (*Snapshot)(nil)

// Snapshot returns a Snapshot of the committed data. While the DB is
// stopped after a failed write it is one at the last acknowledged commit,
// as long as reads are served (see stopped.go).
func (d *DB) Snapshot() (*Snapshot, error) {
	if err := d.enter(); err != nil {
		if d.failed.Load() != nil {
			if s := d.stoppedSnapshot(); s != nil {
				return s, nil
			}
		}
		return nil, err
	}
	defer d.exit()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.snapshots == nil {
		return nil, ErrClosed
	}
	s := &Snapshot{db: d, snap: d.db.NewSnapshot()}
	d.mu.snapshots[s] = struct{}{}
	return s, nil
}

// readable starts a read of the snapshot, which then must call
// s.db.exit; a snapshot closed by Close, by its DB's Close or by its DB's
// recovery from a failure fails with ErrClosed.
func (s *Snapshot) readable() error {
	s.db.inflight.Add(1)
	if s.closed.Load() || s.db.closed.Load() {
		s.db.inflight.Add(-1)
		return ErrClosed
	}
	return nil
}

// Get implements state.Reader.
func (s *Snapshot) Get(key []byte) ([]byte, bool, error) {
	if err := s.readable(); err != nil {
		return nil, false, err
	}
	defer s.db.exit()
	return s.db.get(s.snap, key)
}

// Scan implements state.Reader.
func (s *Snapshot) Scan(lo, hi []byte, fn func(key, value []byte) bool) error {
	if err := s.readable(); err != nil {
		return err
	}
	defer s.db.exit()
	return s.db.scan(s.snap, lo, hi, false, fn)
}

// ScanReverse implements state.Reader.
func (s *Snapshot) ScanReverse(lo, hi []byte, fn func(key, value []byte) bool) error {
	if err := s.readable(); err != nil {
		return err
	}
	defer s.db.exit()
	return s.db.scan(s.snap, lo, hi, true, fn)
}

// Close releases the snapshot. Closing twice is a no-op.
func (s *Snapshot) Close() error {
	s.db.mu.Lock()
	if s.db.mu.snapshots != nil {
		delete(s.db.mu.snapshots, s)
	}
	s.db.mu.Unlock()
	return s.release()
}

// release closes the Pebble snapshot once.
func (s *Snapshot) release() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	return s.closeSnap()
}

// closeSnap closes the Pebble snapshot, or drops the reference to the
// shared one.
func (s *Snapshot) closeSnap() error {
	if s.shared != nil {
		s.shared.unref()
		return nil
	}
	if err := s.snap.Close(); err != nil {
		return wrapf(errs.Internal, err, "storage: closing a snapshot of %s", s.db.dir)
	}
	return nil
}
