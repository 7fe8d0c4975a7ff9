package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
)

// TestDiskFullRefusesWritesServesReads runs the engine on a store whose
// disk fills up: writes fail with 53100 and change nothing, reads and
// views are served, Stats reports the storage problem; once space is
// freed, writes go on without a restart.
func TestDiskFullRefusesWritesServesReads(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewMem()
	setAvail := func(avail uint64) {
		mem.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: avail, TotalBytes: 4 << 30, UsedBytes: 4<<30 - avail})
		time.Sleep(300 * time.Millisecond) // past the storage's trust in its last measurement
	}
	setAvail(2 << 30)
	st, err := storage.Open(storage.Options{Dir: "db", FS: mem, EpochKey: FrontierKey(), ReserveBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession()
	defer s.Close()
	exec := func(q string) error {
		_, err := s.Exec(ctx, q, nil)
		return err
	}
	query := func(q string) string {
		t.Helper()
		res, err := s.Exec(ctx, q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return formatRows(res)
	}
	for _, q := range []string{
		"CREATE TABLE t (k int PRIMARY KEY)",
		"CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n FROM t",
		"INSERT INTO t VALUES (1), (2)",
	} {
		if err := exec(q); err != nil {
			t.Fatal(err)
		}
	}
	setAvail(10 << 20)
	for _, q := range []string{"INSERT INTO t VALUES (3)", "DELETE FROM t", "CREATE TABLE u (a int)"} {
		err := exec(q)
		if errs.SQLState(err) != "53100" {
			t.Fatalf("%s on a full disk: %v (SQLSTATE %s), want 53100", q, err, errs.SQLState(err))
		}
	}
	if got := query("SELECT n FROM v"); got != "2\n" {
		t.Fatalf("view on a full disk: %q", got)
	}
	if got := query("SELECT k FROM t ORDER BY k"); got != "1\n2\n" {
		t.Fatalf("table on a full disk: %q", got)
	}
	if p := e.Stats().StorageProblem; p == "" {
		t.Fatal("Stats does not report the full disk")
	}
	setAvail(2 << 30)
	if err := exec("INSERT INTO t VALUES (3)"); err != nil {
		t.Fatalf("insert after space was freed: %v", err)
	}
	if got := query("SELECT n FROM v"); got != "3\n" {
		t.Fatalf("view after space was freed: %q", got)
	}
	if p := e.Stats().StorageProblem; p != "" {
		t.Fatalf("Stats after space was freed: %s", p)
	}
	if err := e.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}
