package storage

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// failingDevice fails, while on, every write of a file (write) or every
// sync (!write), as a failing device does: the recovery's probe fails
// too, so the DB stays stopped until it is turned off. The identity file
// is spared: its writes are synced in the background, and a failed one
// keeps the DB from recovering without a restart, whichever commit it
// was for.
type failingDevice struct {
	on    atomic.Bool
	write bool
}

func (f *failingDevice) MaybeError(op errorfs.Op) error {
	if !f.on.Load() || strings.HasSuffix(op.Path, IdentityFile) {
		return nil
	}
	switch op.Kind {
	case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		return errorfs.ErrInjected
	case errorfs.OpFileClose:
		return nil
	}
	if f.write && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
		return errorfs.ErrInjected
	}
	return nil
}

func (f *failingDevice) String() string { return "failingDevice" }

// readEpochs reads db (or a snapshot of it) as checkEpochs does and
// returns the epochs it holds whole and the frontier, or an error.
func readEpochs(r interface {
	Get([]byte) ([]byte, bool, error)
	Scan([]byte, []byte, func(k, v []byte) bool) error
	ScanReverse([]byte, []byte, func(k, v []byte) bool) error
}) (perEpoch map[int]int, last int, frontier string, err error) {
	perEpoch = map[int]int{}
	if err := r.Scan([]byte("e"), []byte("f"), func(k, v []byte) bool {
		e, _ := strconv.Atoi(string(k[1:4]))
		perEpoch[e]++
		return true
	}); err != nil {
		return nil, 0, "", err
	}
	if err := r.ScanReverse([]byte("e"), []byte("f"), func(k, v []byte) bool {
		last, _ = strconv.Atoi(string(k[1:4]))
		return false
	}); err != nil {
		return nil, 0, "", err
	}
	v, _, err := r.Get([]byte("frontier"))
	return perEpoch, last, string(v), err
}

// stopAfter commits epochs 1..n to a new DB, then fails its device
// (writes, or syncs only) under the commit of epoch n+1.
func stopAfter(t *testing.T, write bool, n int) (*DB, *failingDevice) {
	t.Helper()
	dev := &failingDevice{write: write}
	db := openAt(t, errorfs.Wrap(vfs.NewCrashableMem(), dev), "db", Sync)
	for e := 1; e <= n; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	dev.on.Store(true)
	writeEpoch(t, db, n+1)
	if err := db.Commit(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Commit on a failing device = %v", err)
	}
	return db, dev
}

// TestReadsWhileStopped fails the device under a commit, its log write
// or its log fsync, and keeps it failing: the Commit fails and writes are
// refused, but Get, Scan, ScanReverse and Snapshot, from concurrent
// readers, keep returning exactly the acknowledged epochs, never the
// failed batch (which Pebble has made visible in its memory), and Degraded
// says reads are served. Once the device works the DB reopens itself with
// every acknowledged epoch (and, after the failed fsync, possibly the
// uncertain batch, whole) and takes commits.
func TestReadsWhileStopped(t *testing.T) {
	for _, c := range []struct {
		name  string
		write bool
	}{{"write", true}, {"fsync", false}} {
		t.Run(c.name, func(t *testing.T) {
			db, dev := stopAfter(t, c.write, 5)

			var wg sync.WaitGroup
			var reads atomic.Int64
			stop := make(chan struct{})
			fail := make(chan string, 8)
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						var r interface {
							Get([]byte) ([]byte, bool, error)
							Scan([]byte, []byte, func(k, v []byte) bool) error
							ScanReverse([]byte, []byte, func(k, v []byte) bool) error
						} = db
						var snap *Snapshot
						if reads.Load()%3 == 0 {
							s, err := db.Snapshot()
							if err != nil {
								fail <- "Snapshot: " + err.Error()
								return
							}
							snap, r = s, s
						}
						perEpoch, last, frontier, err := readEpochs(r)
						if snap != nil {
							_ = snap.Close()
						}
						if err != nil {
							fail <- "read: " + err.Error()
							return
						}
						if len(perEpoch) != 5 || perEpoch[5] != 20 || perEpoch[1] != 20 || last != 5 || frontier != "5" {
							fail <- "read saw " + strconv.Itoa(len(perEpoch)) + " epochs, last " + strconv.Itoa(last) + ", frontier " + frontier
							return
						}
						reads.Add(1)
					}
				}()
			}
			deadline := time.Now().Add(time.Second)
			for time.Now().Before(deadline) {
				if err := db.Set([]byte("x"), nil); !errors.Is(err, ErrFailed) {
					t.Fatalf("Set while the device fails = %v", err)
				}
				if err := db.Commit(); !errors.Is(err, ErrFailed) {
					t.Fatalf("Commit while the device fails = %v", err)
				}
				if g := db.Degraded(); g.Problem == nil || !g.ReadsServed {
					t.Fatalf("Degraded while the device fails = %+v", g)
				}
				time.Sleep(5 * time.Millisecond)
			}
			close(stop)
			wg.Wait()
			select {
			case msg := <-fail:
				t.Fatal(msg)
			default:
			}
			if reads.Load() == 0 {
				t.Fatal("no read was served while the device failed")
			}
			t.Logf("%d reads served while stopped", reads.Load())

			dev.on.Store(false)
			if err := db.Recover(); err != nil {
				t.Fatalf("Recover after the fault cleared: %v", err)
			}
			if g := db.Degraded(); g.Problem != nil {
				t.Fatalf("Degraded after recovery = %+v", g)
			}
			last := 5
			if !c.write {
				last = 6 // the file system kept the batch it did not sync
			}
			checkEpochs(t, db, last)
			for e := last + 1; e <= 8; e++ {
				writeEpoch(t, db, e)
				commit(t, db)
			}
			checkEpochs(t, db, 8)
		})
	}
}

// TestSnapshotOfStoppedDB takes a Snapshot while the DB is stopped and
// keeps it across the recovery: it reads the acknowledged epochs until
// the recovery ends it, and then fails with ErrClosed; closing it after
// is harmless.
func TestSnapshotOfStoppedDB(t *testing.T) {
	db, dev := stopAfter(t, true, 3)
	s, err := db.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot while stopped: %v", err)
	}
	if perEpoch, last, f, err := readEpochs(s); err != nil || len(perEpoch) != 3 || last != 3 || f != "3" {
		t.Fatalf("Snapshot while stopped read %v, last %d, frontier %q, err %v", perEpoch, last, f, err)
	}
	dev.on.Store(false)
	if err := db.Recover(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get([]byte("frontier")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Snapshot of the stopped instance after recovery: Get = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, db, 3)
	writeEpoch(t, db, 4)
	commit(t, db)
	checkEpochs(t, db, 4)
}
