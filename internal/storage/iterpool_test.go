package storage

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// scanValue returns the value under key k read by a Scan of [k, k+1).
func scanValue(t *testing.T, db *DB, k []byte) (v uint64, found bool) {
	t.Helper()
	hi := append(append([]byte(nil), k...), 0)
	err := db.Scan(k, hi, func(_, val []byte) bool {
		v, found = binary.BigEndian.Uint64(val), true
		return true
	})
	if err != nil {
		t.Errorf("Scan: %v", err)
	}
	return v, found
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// TestKeptIteratorSeesEveryCommit: Scan keeps its iterators between
// reads, yet a read after a Commit sees it: a set, an overwrite, a
// delete, a delete of a range, for keys read before and keys not; and a
// Snapshot taken before keeps reading what it saw.
func TestKeptIteratorSeesEveryCommit(t *testing.T) {
	db := openMem(t)
	commit := func(op func() error) {
		t.Helper()
		if err := op(); err != nil {
			t.Fatal(err)
		}
		if err := db.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	commit(func() error { return db.Set([]byte("a"), u64(1)) })
	snap, err := db.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	for round := uint64(2); round < 50; round++ {
		// Two reads first, so that the second takes the iterator the
		// first kept.
		for range 2 {
			if v, _ := scanValue(t, db, []byte("a")); v != round-1 {
				t.Fatalf("round %d: a = %d before the commit, want %d", round, v, round-1)
			}
		}
		commit(func() error { return db.Set([]byte("a"), u64(round)) })
		if v, _ := scanValue(t, db, []byte("a")); v != round {
			t.Fatalf("round %d: a = %d after the commit, want %d", round, v, round)
		}
		k := []byte(fmt.Sprintf("b%03d", round))
		if _, found := scanValue(t, db, k); found {
			t.Fatalf("round %d: %s found before it was written", round, k)
		}
		commit(func() error { return db.Set(k, u64(round)) })
		if v, found := scanValue(t, db, k); !found || v != round {
			t.Fatalf("round %d: %s = %d, %v after its commit", round, k, v, found)
		}
		if round%2 == 0 {
			commit(func() error { return db.Delete(k) })
		} else {
			commit(func() error { return db.DeleteRange(k, append(k, 0)) })
		}
		if _, found := scanValue(t, db, k); found {
			t.Fatalf("round %d: %s found after its delete", round, k)
		}
	}
	var old uint64
	if err := snap.Scan([]byte("a"), []byte("b"), func(_, v []byte) bool { old = binary.BigEndian.Uint64(v); return true }); err != nil {
		t.Fatal(err)
	}
	if old != 1 {
		t.Errorf("snapshot reads a = %d, want 1", old)
	}
}

// TestKeptIteratorsAcrossGoroutines: readers on many goroutines, each
// read starting after the writer's Commit of a value returned, always
// see that value or a later one (run under -race too). ScanReverse and
// scans the callback ends early share the kept iterators.
func TestKeptIteratorsAcrossGoroutines(t *testing.T) {
	db := openAt(t, vfs.NewMem(), "db", Relaxed)
	key := []byte("k")
	var acked atomic.Uint64
	const commits = 400
	var wg sync.WaitGroup
	done := make(chan struct{})
	for r := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				want := acked.Load()
				var got uint64
				read := func(_, v []byte) bool { got = binary.BigEndian.Uint64(v); return false }
				var err error
				if r%2 == 0 {
					err = db.Scan(nil, nil, read)
				} else {
					err = db.ScanReverse(key, []byte("l"), read)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if got < want {
					t.Errorf("read %d after the commit of %d was acknowledged", got, want)
					return
				}
			}
		}()
	}
	for i := uint64(1); i <= commits; i++ {
		if err := db.Set(key, u64(i)); err != nil {
			t.Fatal(err)
		}
		if err := db.Commit(); err != nil {
			t.Fatal(err)
		}
		acked.Store(i)
	}
	close(done)
	wg.Wait()
	if v, _ := scanValue(t, db, key); v != commits {
		t.Errorf("last read %d, want %d", v, commits)
	}
}

// TestKeptIteratorsClosedWithDB: iterators kept by reads are closed
// with the DB (Pebble refuses to close with iterators open), and the
// pool keeps at most maxPooledIters.
func TestKeptIteratorsClosedWithDB(t *testing.T) {
	db, err := Open(Options{Dir: "db", FS: vfs.NewMem(), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("a"), u64(1)); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(); err != nil {
		t.Fatal(err)
	}
	// Nested scans hold many iterators at once.
	var nest func(depth int)
	nest = func(depth int) {
		if depth == 0 {
			return
		}
		if err := db.Scan(nil, nil, func(_, _ []byte) bool { nest(depth - 1); return true }); err != nil {
			t.Fatal(err)
		}
	}
	nest(maxPooledIters + 8)
	db.iters.mu.Lock()
	kept := len(db.iters.mu.free)
	db.iters.mu.Unlock()
	if kept != maxPooledIters {
		t.Errorf("kept %d iterators, want %d", kept, maxPooledIters)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close with kept iterators: %v", err)
	}
}
