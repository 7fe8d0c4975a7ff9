package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// countingHandler counts log records by message.
type countingHandler struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n[r.Message]++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }
func (h *countingHandler) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := 0
	for _, n := range h.n {
		t += n
	}
	return t
}

// fullDisk is a file system that can run out of space: while full, it
// reports almost no free space and fails every write that would need more
// with ENOSPC, as a full file system does.
type fullDisk struct {
	mem  *vfs.MemFS
	full atomic.Bool
}

func newFullDisk() (*fullDisk, vfs.FS) {
	d := &fullDisk{mem: vfs.NewCrashableMem()}
	d.set(false)
	return d, errorfs.Wrap(d.mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !d.full.Load() {
			return nil
		}
		switch op.Kind {
		case errorfs.OpCreate, errorfs.OpFileWrite, errorfs.OpFilePreallocate, errorfs.OpLink, errorfs.OpReuseForWrite:
			return syscall.ENOSPC
		}
		return nil
	}))
}

func (d *fullDisk) set(full bool) {
	d.full.Store(full)
	avail := uint64(1 << 30)
	if full {
		avail = 1 << 20
	}
	d.mem.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: avail, TotalBytes: 2 << 30, UsedBytes: 2<<30 - avail})
	// Let the guard's last measurement expire, as the time between a
	// disk filling up and the next commit does.
	time.Sleep(spaceRecheck + 20*time.Millisecond)
}

// TestDiskFull fills the disk under a store: commits fail at once with
// 53100 and apply nothing, reads are served, the DB reports itself
// degraded, the log gets one line, not one per refused commit; once space
// is freed writes are accepted again, and after a restart every
// acknowledged epoch is there and none of the refused ones.
func TestDiskFull(t *testing.T) {
	disk, fs := newFullDisk()
	logs := &countingHandler{n: map[string]int{}}
	db, err := Open(Options{FS: fs, Dir: "db", Logger: slog.New(logs), EpochKey: epochKey, ReserveBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	epoch := func(e int) {
		writeEpoch(t, db, e)
		if err := db.Set(epochKey, binary.BigEndian.AppendUint64(nil, uint64(e))); err != nil {
			t.Fatal(err)
		}
	}
	for e := 1; e <= 5; e++ {
		epoch(e)
		commit(t, db)
	}
	disk.set(true)
	linesBefore := logs.total()
	start := time.Now()
	for i := range 100 {
		epoch(6)
		err := db.Commit()
		if errs.CodeOf(err) != errs.DiskFull || errs.SQLState(err) != "53100" ||
			!strings.HasPrefix(err.Error(), "could not extend file: no space left on device") {
			t.Fatalf("commit %d on a full disk: %v (code %s)", i, err, errs.CodeOf(err))
		}
		if i == 0 {
			t.Log(err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("100 refused commits took %s", d)
	}
	if n := logs.total() - linesBefore; n > 2 {
		t.Fatalf("100 refused commits logged %d lines: %v", n, logs.n)
	}
	if db.Err() != nil {
		t.Fatalf("a full disk stopped the DB: %v", db.Err())
	}
	if h := db.Health(); errs.CodeOf(h) != errs.DiskFull {
		t.Fatalf("Health on a full disk = %v", h)
	}
	checkEpochs(t, db, 5)
	if err := db.Flush(); err != nil {
		t.Fatalf("Flush on a full disk: %v", err)
	}

	disk.set(false)
	epoch(6)
	if err := db.Commit(); err != nil {
		t.Fatalf("commit after space was freed: %v", err)
	}
	if h := db.Health(); h != nil {
		t.Fatalf("Health after space was freed = %v", h)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	re, err := Open(Options{FS: fs, Dir: "db", Logger: quietLogger(), EpochKey: epochKey})
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	checkEpochs(t, re, 6)
}

// When the disk fills between the guard's measurement and the write (the
// free space reported is stale), Pebble's log write fails inside its
// commit pipeline, which cannot go on: the DB stops with 53100. While the
// disk stays full it does not reopen; once space is freed it reopens
// itself without a restart, holding exactly the acknowledged epochs, and
// takes new commits. A crash at the failure, and a restart at the end,
// keep every acknowledged epoch.
func TestDiskFullInsideCommit(t *testing.T) {
	disk, fs := newFullDisk()
	db, err := Open(Options{FS: fs, Dir: "db", Logger: quietLogger(), ReserveBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for e := 1; e <= 5; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	disk.full.Store(true) // usage still says there is room
	acked := 5
	for e := 6; e <= 200; e++ {
		writeEpoch(t, db, e)
		err := db.Commit()
		if err == nil {
			acked = e
			continue
		}
		if errs.CodeOf(err) != errs.DiskFull || !errors.Is(err, ErrFailed) {
			t.Fatalf("commit on a full disk: %v (code %s)", err, errs.CodeOf(err))
		}
		t.Log(err)
		break
	}
	if acked == 200 {
		t.Fatal("no commit failed on a full disk")
	}
	crashed := disk.mem.CrashClone(vfs.CrashCloneCfg{})
	if err := db.Recover(); errs.CodeOf(err) != errs.DiskFull || !errors.Is(err, ErrFailed) {
		t.Fatalf("Recover on a full disk = %v", err)
	}
	if h := db.Health(); errs.CodeOf(h) != errs.DiskFull {
		t.Fatalf("Health on a full disk = %v", h)
	}

	disk.set(false)
	if err := db.Recover(); err != nil {
		t.Fatalf("Recover once space was freed: %v", err)
	}
	if h := db.Health(); h != nil {
		t.Fatalf("Health after recovery = %v", h)
	}
	checkEpochs(t, db, acked)
	for e := acked + 1; e <= acked+3; e++ {
		writeEpoch(t, db, e)
		commit(t, db)
	}
	if err := closeWithin(t, db); err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, openAt(t, disk.mem, "db", Sync), acked+3)

	re := openAt(t, crashed, "db", Sync)
	f, _ := get(t, re, "frontier")
	n, _ := strconv.Atoi(f)
	if n != acked && n != acked+1 {
		t.Fatalf("frontier after a crash = %q, %d epochs were acknowledged", f, acked)
	}
	checkEpochs(t, re, n)
}
