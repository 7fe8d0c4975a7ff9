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
	"github.com/rockstream/rockstream/internal/storage/lossyfs"
)

// TestUncertainCommitAbsent fails the log's fsync in a commit and keeps
// failing it (and the making of a new log) for a while, during which the
// device drops the batch it never synced. The Commit says its outcome is
// unknown (08007); the DB refuses reads and writes with a few log lines,
// not one per call; once the device works, it reopens itself without the
// batch, holding every acknowledged epoch, and takes new commits, which a
// crash keeps.
func TestUncertainCommitAbsent(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fault := walFault(errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpCreate, errorfs.OpReuseForWrite)
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
	log, err := lossyfs.NewestLog(mem, "db")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := mem.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	synced := fi.Size()

	fault.On()
	writeEpoch(t, db, 6)
	err = db.Commit()
	if errs.SQLState(err) != "08007" || !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrFailed) {
		t.Fatalf("Commit whose fsync failed = %v (SQLSTATE %s)", err, errs.SQLState(err))
	}
	if fi, _ := mem.Stat(log); fi.Size() <= synced {
		t.Fatalf("the failed batch did not reach the log (%d bytes, %d before)", fi.Size(), synced)
	}
	if err := lossyfs.DropTail(mem, log, synced); err != nil {
		t.Fatal(err)
	}

	before := logs.total()
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if _, _, err := db.Get([]byte("frontier")); !errors.Is(err, ErrFailed) {
			t.Fatalf("Get while the fsync fails = %v", err)
		}
		if err := db.Commit(); !errors.Is(err, ErrFailed) {
			t.Fatalf("Commit while the fsync fails = %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	if n := logs.total() - before; n > 20 {
		t.Fatalf("refused calls logged %d lines: %v", n, logs.n)
	}
	if h := db.Health(); !errors.Is(h, ErrFailed) {
		t.Fatalf("Health while the fsync fails = %v", h)
	}

	fault.Off()
	if err := db.Recover(); err != nil {
		t.Fatalf("Recover after the fault cleared: %v", err)
	}
	if db.Health() != nil || db.Recoveries() != 1 {
		t.Fatalf("after Recover: Health %v, %d recoveries", db.Health(), db.Recoveries())
	}
	checkEpochs(t, db, 5)
	for e := 6; e <= 7; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	checkEpochs(t, db, 7)
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := closeWithin(t, db); err != nil {
		t.Fatalf("Close after recovery: %v", err)
	}
	checkEpochs(t, openAt(t, crashed, "db", Sync), 7)
}

// TestUncertainCommitOnce fails a single fsync of the log: the Commit
// that hit it reports an unknown outcome, the next call reopens the DB
// (no Recover needed), and the batch is there whole, durable across a
// crash, with the identity file's claim (which Open checks) moved to it.
func TestUncertainCommitOnce(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var fails atomic.Int32
	fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if (op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData) && strings.HasSuffix(op.Path, ".log") && fails.Add(1) == 1 {
			return errorfs.ErrInjected
		}
		return nil
	})}
	db := openAt(t, errorfs.Wrap(mem, fault), "db", Sync)
	for e := 1; e <= 3; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	fault.On()
	writeEpoch(t, db, 4)
	if err := db.Commit(); errs.SQLState(err) != "08007" {
		t.Fatalf("Commit whose fsync failed = %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.TryRecover() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("no recovery: %v", db.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkEpochs(t, db, 4)
	writeEpoch(t, db, 5)
	commit(t, db)
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := closeWithin(t, db); err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, openAt(t, crashed, "db", Sync), 5)
}
