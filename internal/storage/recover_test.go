package storage

import (
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// deviceFault fails writes of files: none (faultOff), those of MANIFEST
// files (faultManifest), or all of them, as a failing or full device
// does (faultAll).
type deviceFault struct{ mode atomic.Int32 }

const (
	faultOff int32 = iota
	faultManifest
	faultAll
)

func (f *deviceFault) MaybeError(op errorfs.Op) error {
	if op.Kind.ReadOrWrite() != errorfs.OpIsWrite || op.Kind == errorfs.OpFileClose {
		return nil
	}
	switch f.mode.Load() {
	case faultManifest:
		if strings.Contains(op.Path, "MANIFEST-") {
			return errorfs.ErrInjected
		}
	case faultAll:
		return errorfs.ErrInjected
	}
	return nil
}

func (f *deviceFault) String() string { return "deviceFault" }

// TestManifestWriteFailure fails the MANIFEST write of a background
// flush, which Pebble treats as fatal. The process goes on (the test
// would end otherwise): the flush reports the failure instead of hanging,
// the DB stops and says so in Health, reads and writes are refused while
// the fault lasts with log lines bounded, not one per call; once the
// fault clears the DB reopens itself without a restart, holding every
// acknowledged epoch, and takes new commits; a restart finds them all.
func TestManifestWriteFailure(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fault := &deviceFault{}
	logs := &countingHandler{n: map[string]int{}}
	db, err := Open(Options{FS: errorfs.Wrap(mem, fault), Dir: "db", Logger: slog.New(logs), CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for e := 1; e <= 5; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	fault.mode.Store(faultManifest)
	writeEpoch(t, db, 6)
	commit(t, db) // the log takes it; the MANIFEST is not written
	done := make(chan error, 1)
	go func() { done <- db.Flush() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Flush did not return after its MANIFEST write failed")
	}
	if err == nil || !errors.Is(err, ErrFailed) || errs.CodeOf(err) != errs.IOError {
		t.Fatalf("Flush with a failing MANIFEST = %v", err)
	}
	t.Log(err)
	if h := db.Health(); h == nil || !errors.Is(h, ErrFailed) {
		t.Fatalf("Health after a MANIFEST failure = %v", h)
	}
	// The device goes on failing.
	fault.mode.Store(faultAll)
	before := logs.total()
	deadline := time.Now().Add(1500 * time.Millisecond)
	calls := 0
	for time.Now().Before(deadline) {
		if _, _, err := db.Get([]byte("frontier")); !errors.Is(err, ErrFailed) {
			t.Fatalf("Get while the MANIFEST fails = %v", err)
		}
		if err := db.Set([]byte("x"), nil); !errors.Is(err, ErrFailed) {
			t.Fatalf("Set while the MANIFEST fails = %v", err)
		}
		calls++
		time.Sleep(time.Millisecond)
	}
	// A few recovery attempts, spaced out, each at most a couple of lines.
	if n := logs.total() - before; n > 20 {
		t.Fatalf("%d refused calls logged %d lines: %v", calls, n, logs.n)
	}

	fault.mode.Store(faultOff)
	if err := db.Recover(); err != nil {
		t.Fatalf("Recover after the fault cleared: %v", err)
	}
	if db.Health() != nil || db.Recoveries() != 1 {
		t.Fatalf("after Recover: Health %v, %d recoveries", db.Health(), db.Recoveries())
	}
	checkEpochs(t, db, 6)
	for e := 7; e <= 9; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	if err := db.Flush(); err != nil {
		t.Fatalf("Flush after recovery: %v", err)
	}
	checkEpochs(t, db, 9)
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := closeWithin(t, db); err != nil {
		t.Fatalf("Close after recovery: %v", err)
	}
	checkEpochs(t, openAt(t, crashed, "db", Sync), 9)
	checkEpochs(t, openAt(t, mem, "db", Sync), 9)
}

// Reads recover a stopped DB by themselves once the fault clears: no call
// to Recover is needed.
func TestRecoverOnRead(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fault := &deviceFault{}
	db := openAt(t, errorfs.Wrap(mem, fault), "db", Sync)
	for e := 1; e <= 3; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	fault.mode.Store(faultManifest)
	if err := db.Flush(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Flush with a failing MANIFEST = %v", err)
	}
	fault.mode.Store(faultOff)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, err := db.Get([]byte("frontier"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reads did not recover the DB: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkEpochs(t, db, 3)
	writeEpoch(t, db, 4)
	commit(t, db)
	checkEpochs(t, db, 4)
}

// A recovery tried while only the MANIFEST still fails gets stuck in
// Pebble's open, whose replay flush cannot finish: Recover returns an
// error at once instead of waiting for it, and a later one, once the
// fault has cleared, recovers.
func TestRecoverWhileManifestFails(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fault := &deviceFault{}
	db := openAt(t, errorfs.Wrap(mem, fault), "db", Sync)
	for e := 1; e <= 3; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	fault.mode.Store(faultManifest)
	if err := db.Flush(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Flush with a failing MANIFEST = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Recover() }()
	select {
	case err := <-done:
		if err == nil || !errors.Is(err, ErrFailed) {
			t.Fatalf("Recover while the MANIFEST fails = %v", err)
		}
		t.Log(err)
		// The wedged instance and the open stuck in Pebble are left
		// behind.
		if n := db.recov.abandoned; n != 2 {
			t.Fatalf("%d instances abandoned, want 2", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Recover did not return while the MANIFEST fails")
	}
	fault.mode.Store(faultOff)
	if err := db.Recover(); err != nil {
		t.Fatalf("Recover after the fault cleared: %v", err)
	}
	checkEpochs(t, db, 3)
	writeEpoch(t, db, 4)
	commit(t, db)
	if err := closeWithin(t, db); err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, openAt(t, mem, "db", Sync), 4)
}

// Readers keep reading (and taking snapshots) while the DB fails and
// recovers under them: each read either succeeds, seeing a whole epoch,
// or fails with the error of the stopped DB or of a closed snapshot;
// nothing panics or races (under -race), and the DB ends up working.
func TestRecoverUnderConcurrentReads(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fault := &deviceFault{}
	db := openAt(t, errorfs.Wrap(mem, fault), "db", Sync)
	for e := 1; e <= 3; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	stop := make(chan struct{})
	errc := make(chan error, 4)
	for r := range 4 {
		go func() {
			for {
				select {
				case <-stop:
					errc <- nil
					return
				default:
				}
				var n int
				var err error
				if r%2 == 0 {
					err = db.Scan([]byte("e"), []byte("f"), func(k, v []byte) bool { n++; return true })
				} else {
					var s *Snapshot
					if s, err = db.Snapshot(); err == nil {
						err = s.Scan([]byte("e"), []byte("f"), func(k, v []byte) bool { n++; return true })
						_ = s.Close()
					}
				}
				if err != nil && !errors.Is(err, ErrFailed) && !errors.Is(err, ErrClosed) {
					errc <- err
					return
				}
				if err == nil && n%20 != 0 {
					errc <- errors.New("a scan saw part of an epoch")
					return
				}
			}
		}()
	}
	for round := range 3 {
		fault.mode.Store(faultManifest)
		writeEpoch(t, db, 4+round)
		commit(t, db)
		if err := db.Flush(); !errors.Is(err, ErrFailed) {
			t.Fatalf("round %d: Flush with a failing MANIFEST = %v", round, err)
		}
		fault.mode.Store(faultOff)
		deadline := time.Now().Add(10 * time.Second)
		for db.Recover() != nil {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no recovery: %v", round, db.Recover())
			}
			time.Sleep(10 * time.Millisecond)
		}
		checkEpochs(t, db, 4+round)
	}
	close(stop)
	for range 4 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if n := db.Recoveries(); n != 3 {
		t.Fatalf("%d recoveries, want 3", n)
	}
}

// Health checks recover a stopped DB that nothing else calls (an idle
// server whose /health is polled).
func TestRecoverOnHealth(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fault := &deviceFault{}
	db := openAt(t, errorfs.Wrap(mem, fault), "db", Sync)
	writeEpoch(t, db, 1)
	commit(t, db)
	fault.mode.Store(faultManifest)
	if err := db.Flush(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Flush with a failing MANIFEST = %v", err)
	}
	fault.mode.Store(faultAll)
	if h := db.Health(); !errors.Is(h, ErrFailed) {
		t.Fatalf("Health while the device fails = %v", h)
	}
	fault.mode.Store(faultOff)
	deadline := time.Now().Add(10 * time.Second)
	for db.Health() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("health checks did not recover the DB: %v", db.Health())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if db.Recoveries() != 1 {
		t.Fatalf("%d recoveries", db.Recoveries())
	}
	checkEpochs(t, db, 1)
}

// A flush that keeps failing (its table cannot be written, as on a disk
// another process filled) is retried by Pebble at once, without end: the
// retries are slowed down, so that they do not spin, and the log gets a
// line per interval, not one per retry.
func TestFailingFlushDoesNotSpin(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var creates atomic.Int64
	var failing atomic.Bool
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failing.Load() && strings.HasSuffix(op.Path, ".sst") && op.Kind == errorfs.OpCreate {
			creates.Add(1)
			return errorfs.ErrInjected
		}
		return nil
	}))
	logs := &countingHandler{n: map[string]int{}}
	db, err := Open(Options{FS: fs, Dir: "db", Logger: slog.New(logs), CacheBytes: 8 << 20, Durability: Relaxed})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		failing.Store(false)
		_ = closeWithin(t, db)
	}()
	for e := 1; e <= 3; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	failing.Store(true)
	done := make(chan error, 1)
	go func() { done <- db.Flush() }() // waits for the flush, which keeps failing
	time.Sleep(2 * time.Second)
	n := creates.Load()
	failing.Store(false)
	if n == 0 {
		t.Fatal("the flush never tried to write its table")
	}
	if n > 40 {
		t.Fatalf("the failing flush was retried %d times in 2 s", n)
	}
	if l := logs.n["storage background error"]; l > 2 {
		t.Fatalf("%d retries logged %d lines", n, l)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Flush once tables can be written: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Flush did not finish once tables could be written")
	}
	t.Logf("%d tries in 2 s", n)
	checkEpochs(t, db, 3)
}
