package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/storage"
)

// TestReadsWhileStoreStopped runs the engine on a Pebble store whose
// device starts failing every write of a file (the storage's recovery
// probe included, so it stays stopped until the fault clears): the
// statement that hits the failure fails and so do later writes, but
// sessions reading concurrently keep getting the table and the view as of
// the last acknowledged commit, never the failed insert, and Stats says
// reads are served. Once the device works, writes resume without a
// restart and the view equals its recomputation. The identity file is
// spared: its writes are synced in the background, and a failed one needs
// a restart whichever commit it was for.
func TestReadsWhileStoreStopped(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && op.Kind != errorfs.OpFileClose &&
			!strings.HasSuffix(op.Path, storage.IdentityFile) {
			return errorfs.ErrInjected
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
	defer e.Close()
	s := e.NewSession()
	defer s.Close()
	query := func(s *Session, q string) (string, error) {
		res, err := s.Exec(ctx, q, nil)
		if err != nil {
			return "", err
		}
		return formatRows(res), nil
	}
	must := func(q string) {
		t.Helper()
		if _, err := query(s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must("CREATE TABLE t (k int PRIMARY KEY, g int)")
	must("CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n, max(k) AS top FROM t GROUP BY g")
	for k := 1; k <= 5; k++ {
		must(fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", k, k%2))
	}
	const rows, view = "1\n2\n3\n4\n5\n", "0|2|4\n1|3|5\n"

	fault.On()
	if _, err := query(s, "INSERT INTO t VALUES (6, 0)"); err == nil {
		t.Fatal("insert on a failing device succeeded")
	}
	var wg sync.WaitGroup
	errc := make(chan error, 3)
	for range 3 {
		r := e.NewSession()
		defer r.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for end := time.Now().Add(time.Second); time.Now().Before(end); {
				got, err := query(r, "SELECT k FROM t ORDER BY k")
				if err == nil && got != rows {
					err = fmt.Errorf("table read %q, want %q", got, rows)
				}
				if err == nil {
					if got, err = query(r, "SELECT g, n, top FROM v ORDER BY g"); err == nil && got != view {
						err = fmt.Errorf("view read %q, want %q", got, view)
					}
				}
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	for range 10 {
		if _, err := query(s, "INSERT INTO t VALUES (7, 0)"); err == nil {
			t.Fatal("a write succeeded while the device fails")
		}
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatalf("read while the device fails: %v", err)
	}
	if stats := e.Stats(); stats.StorageProblem == "" || !stats.StorageReadsServed {
		t.Fatalf("Stats while the device fails: problem %q, reads served %v", stats.StorageProblem, stats.StorageReadsServed)
	}

	fault.Off()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := query(s, "INSERT INTO t VALUES (8, 0)"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("writes did not resume after the fault cleared: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, err := query(s, "SELECT k FROM t ORDER BY k"); err != nil || got != "1\n2\n3\n4\n5\n8\n" {
		t.Fatalf("rows after recovery: %q, %v", got, err)
	}
	if err := e.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}
