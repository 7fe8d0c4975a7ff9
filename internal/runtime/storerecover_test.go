package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
)

// TestFailedCommitRecoversInProcess runs the engine on a Pebble store
// whose log writes start failing (and no new log can be made): the
// statement that hits the failure gets 58030, later ones are refused
// while the fault lasts; once it clears, writes succeed again without a
// restart, every acknowledged row is there and none of the failed ones,
// views equal their recomputation, and a restart finds the same.
func TestFailedCommitRecoversInProcess(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		switch op.Kind {
		case errorfs.OpFileWrite, errorfs.OpCreate, errorfs.OpReuseForWrite:
			if strings.HasSuffix(op.Path, ".log") {
				return errorfs.ErrInjected
			}
		}
		return nil
	})}
	st, err := storage.Open(storage.Options{Dir: "db", FS: errorfs.Wrap(mem, fault), EpochKey: FrontierKey()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
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
		"CREATE TABLE t (k int PRIMARY KEY, g int)",
		"CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n, max(k) AS top FROM t GROUP BY g",
	} {
		if err := exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for k := 1; k <= 5; k++ {
		if err := exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", k, k%2)); err != nil {
			t.Fatal(err)
		}
	}
	fault.On()
	if err := exec("INSERT INTO t VALUES (6, 0)"); errs.SQLState(err) != "58030" {
		t.Fatalf("insert on a failing log: %v (SQLSTATE %s), want 58030", err, errs.SQLState(err))
	}
	for range 5 {
		if err := exec("INSERT INTO t VALUES (7, 0)"); err == nil {
			t.Fatal("a write succeeded while the log fails")
		}
	}
	if p := e.Stats().StorageProblem; p == "" {
		t.Fatal("Stats does not report the stopped storage")
	}
	fault.Off()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := exec("INSERT INTO t VALUES (8, 0)")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes did not resume after the fault cleared: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := query("SELECT k FROM t ORDER BY k"); got != "1\n2\n3\n4\n5\n8\n" {
		t.Fatalf("rows after recovery:\n%s", got)
	}
	if got := query("SELECT g, n, top FROM v ORDER BY g"); got != "0|3|8\n1|3|5\n" {
		t.Fatalf("view after recovery:\n%s", got)
	}
	if p := e.Stats().StorageProblem; p != "" {
		t.Fatalf("Stats after recovery: %s", p)
	}
	if err := e.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := storage.Open(storage.Options{Dir: "db", FS: mem, EpochKey: FrontierKey()})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := Open(st2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2 := e2.NewSession()
	defer s2.Close()
	res, err := s2.Exec(ctx, "SELECT k FROM t ORDER BY k", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := formatRows(res); got != "1\n2\n3\n4\n5\n8\n" {
		t.Fatalf("rows after a restart:\n%s", got)
	}
	if err := e2.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}
