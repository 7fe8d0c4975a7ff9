package storage

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// walFault returns an injector, off until toggled on, that fails the
// given operations on write-ahead-log files. Faults are confined to the
// log: Pebble treats a failed MANIFEST write in a background flush as
// fatal to the process, which a test cannot survive.
func walFault(kinds ...errorfs.OpKind) *errorfs.Toggle {
	return &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if slices.Contains(kinds, op.Kind) && strings.HasSuffix(op.Path, ".log") {
			return errorfs.ErrInjected
		}
		return nil
	})}
}

// writeEpoch adds epoch e's writes to the pending batch: 20 keys and the
// frontier, as the engine writes them in one batch per epoch.
func writeEpoch(t *testing.T, db *DB, e int) {
	t.Helper()
	for i := range 20 {
		set(t, db, fmt.Sprintf("e%03d-%02d", e, i), strings.Repeat("x", 100))
	}
	set(t, db, "frontier", strconv.Itoa(e))
}

// checkEpochs checks that db holds exactly epochs 1..want, each whole, and
// the frontier of the last.
func checkEpochs(t *testing.T, db *DB, want int) {
	t.Helper()
	perEpoch := map[int]int{}
	if err := db.Scan([]byte("e"), []byte("f"), func(k, v []byte) bool {
		e, err := strconv.Atoi(string(k[1:4]))
		if err != nil {
			t.Fatalf("key %q", k)
		}
		perEpoch[e]++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for e := 1; e <= want; e++ {
		if perEpoch[e] != 20 {
			t.Fatalf("epoch %d has %d of its 20 keys", e, perEpoch[e])
		}
	}
	if len(perEpoch) != want {
		t.Fatalf("store holds %d epochs (%v), want %d", len(perEpoch), perEpoch, want)
	}
	f, ok := get(t, db, "frontier")
	if want == 0 {
		if ok {
			t.Fatalf("frontier %q in an empty store", f)
		}
		return
	}
	if f != strconv.Itoa(want) {
		t.Fatalf("frontier = %q, want %d", f, want)
	}
}

// closeWithin closes db, failing the test if Close does not return.
func closeWithin(t *testing.T, db *DB) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after a failed commit")
		return nil
	}
}

// TestCommitFaults makes the write-ahead log's writes or fsyncs fail in
// the middle of a run of epochs. The failing Commit returns an IOError and
// the DB refuses further use while the fault lasts (it cannot even open a
// new log); after a crash (only synced data kept) the reopened DB holds
// exactly the epochs whose Commit returned nil. Once the fault clears, the
// DB recovers in the process: it reopens itself with every acknowledged
// epoch and takes new commits. A failed write leaves nothing of the batch
// in the log, and its Commit says nothing was applied (58030). A failed
// fsync leaves the batch in the log, where the device may or may not have
// it: its Commit says the outcome is unknown (08007), and the reopen
// accepts the batch whole (as here: the file system keeps what was not
// synced) or absent (as after the crash).
func TestCommitFaults(t *testing.T) {
	for _, c := range []struct {
		name    string
		kinds   []errorfs.OpKind
		unknown bool
	}{
		{"fsync", []errorfs.OpKind{errorfs.OpFileSync, errorfs.OpFileSyncData}, true},
		{"write", []errorfs.OpKind{errorfs.OpFileWrite}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			fault := walFault(append(c.kinds, errorfs.OpCreate, errorfs.OpReuseForWrite)...)
			db := openAt(t, errorfs.Wrap(mem, fault), "db", Sync)
			for e := 1; e <= 5; e++ {
				writeEpoch(t, db, e)
				commit(t, db)
			}
			fault.On()
			writeEpoch(t, db, 6)
			err := db.Commit()
			if err == nil {
				t.Fatalf("Commit succeeded though the log's %s failed", c.name)
			}
			crashed := mem.CrashClone(vfs.CrashCloneCfg{})
			wantState, wantText := "58030", "restart"
			if c.unknown {
				wantState, wantText = "08007", "outcome of this commit (21 writes) is unknown"
			}
			if errs.SQLState(err) != wantState || !errors.Is(err, ErrFailed) || errors.Is(err, ErrOutcomeUnknown) != c.unknown {
				t.Fatalf("Commit error %q: code %q, ErrFailed %v", err, errs.CodeOf(err), errors.Is(err, ErrFailed))
			}
			if !strings.Contains(err.Error(), "injected error") || !strings.Contains(err.Error(), wantText) {
				t.Fatalf("Commit error does not say what failed and what to do: %q", err)
			}
			t.Log(err)
			if db.Err() == nil {
				t.Fatal("Err() = nil after a failed commit")
			}
			// Stopped while the fault lasts: no writes, and here no reads
			// either: the device fails only the log, so the recovery
			// attempt the Get starts passes its probe and lets go of the
			// stopped instance before its new log fails (a device that
			// fails every write keeps reads served: stopped_test.go).
			if _, _, err := db.Get([]byte("frontier")); !errors.Is(err, ErrFailed) {
				t.Fatalf("Get after failure = %v", err)
			}
			if err := db.Set([]byte("x"), nil); !errors.Is(err, ErrFailed) {
				t.Fatalf("Set after failure = %v", err)
			}
			if err := db.Commit(); !errors.Is(err, ErrFailed) {
				t.Fatalf("Commit after failure = %v", err)
			}
			if _, err := db.Snapshot(); !errors.Is(err, ErrFailed) {
				t.Fatalf("Snapshot after failure = %v", err)
			}
			if err := db.Recover(); !errors.Is(err, ErrFailed) {
				t.Fatalf("Recover while the fault lasts = %v", err)
			}
			checkEpochs(t, openAt(t, crashed, "db", Sync), 5)

			fault.Off()
			if err := db.Recover(); err != nil {
				t.Fatalf("Recover after the fault cleared: %v", err)
			}
			if db.Err() != nil || db.Health() != nil || db.Recoveries() != 1 {
				t.Fatalf("after Recover: Err %v, Health %v, %d recoveries", db.Err(), db.Health(), db.Recoveries())
			}
			last := 5
			if c.unknown {
				last = 6 // the file system kept the batch it did not sync
			}
			checkEpochs(t, db, last)
			// What the reopen found is durable: a crash now keeps it.
			checkEpochs(t, openAt(t, mem.CrashClone(vfs.CrashCloneCfg{}), "db", Sync), last)
			for e := last + 1; e <= 8; e++ {
				writeEpoch(t, db, e)
				commit(t, db)
			}
			checkEpochs(t, db, 8)
			crashed = mem.CrashClone(vfs.CrashCloneCfg{})
			if err := closeWithin(t, db); err != nil {
				t.Fatalf("Close after recovery: %v", err)
			}
			checkEpochs(t, openAt(t, crashed, "db", Sync), 8)
			checkEpochs(t, openAt(t, mem, "db", Sync), 8)
		})
	}
}

// TestRandomLogFaults fails write-ahead-log writes and syncs at random and
// crashes at the first failed Commit: every acknowledged epoch survives,
// and nothing else.
func TestRandomLogFaults(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			random := errorfs.Randomly(0.05, seed)
			fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
				if !strings.HasSuffix(op.Path, ".log") {
					return nil
				}
				switch op.Kind {
				case errorfs.OpFileWrite, errorfs.OpFileSync, errorfs.OpFileSyncData:
					if random.Evaluate(op) {
						return errorfs.ErrInjected
					}
				}
				return nil
			})}
			db := openAt(t, errorfs.Wrap(mem, fault), "db", Sync)
			fault.On()
			acked := 0
			for e := 1; e <= 200; e++ {
				writeEpoch(t, db, e)
				if err := db.Commit(); err != nil {
					if !errors.Is(err, ErrFailed) {
						t.Fatalf("epoch %d: %v", e, err)
					}
					break
				}
				acked = e
			}
			if acked == 200 {
				t.Skip("no fault was injected")
			}
			crashed := mem.CrashClone(vfs.CrashCloneCfg{})
			fault.Off()
			_ = closeWithin(t, db)
			checkEpochs(t, openAt(t, crashed, "db", Sync), acked)
			t.Logf("%d epochs acknowledged before the first failed commit", acked)
		})
	}
}

// With Relaxed durability a failed log write does not fail the Commit
// that made it (nothing waits for the write); it comes to light at the
// next sync, here a Flush. A crash then keeps a prefix of the acknowledged
// epochs, each whole.
func TestRelaxedLogFault(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fault := walFault(errorfs.OpFileWrite)
	db := openAt(t, errorfs.Wrap(mem, fault), "db", Relaxed)
	for e := 1; e <= 5; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	fault.On()
	for e := 6; e <= 8; e++ {
		writeEpoch(t, db, e)
		if err := db.Commit(); err != nil {
			t.Logf("epoch %d: %v", e, err)
			break
		}
	}
	err := db.Flush()
	if !errors.Is(err, ErrFailed) || errs.CodeOf(err) != errs.IOError {
		t.Fatalf("Flush after failed log writes = %v", err)
	}
	t.Log(err)
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	fault.Off()
	if err := closeWithin(t, db); err != nil {
		t.Logf("Close: %v", err)
	}
	re := openAt(t, crashed, "db", Relaxed)
	f, _ := get(t, re, "frontier")
	n, _ := strconv.Atoi(f)
	if n < 5 || n > 8 {
		t.Fatalf("frontier %d after crash; epochs 1-5 were flushed and at most 8 acknowledged", n)
	}
	checkEpochs(t, re, n)
}
