package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/storage/lossyfs"
)

// lineCounter counts log records.
type lineCounter struct{ n atomic.Int64 }

func (c *lineCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *lineCounter) Handle(context.Context, slog.Record) error {
	c.n.Add(1)
	return nil
}
func (c *lineCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *lineCounter) WithGroup(string) slog.Handler      { return c }

// TestUncertainCommitRecoversInProcess fails the fsync of the write-ahead
// log under an epoch of two rows (and the making of a new log, for a
// while), as a PANIC on a failed fsync does in PostgreSQL, but without
// the process ending: the committing statement gets 08007 (outcome
// unknown); writes are refused while the fault lasts, with a bounded
// number of log lines, and reads see the acknowledged epochs or are
// refused; once it clears the store reopens itself
// from its files and the engine rebuilds its state from them. Then the
// uncertain epoch is wholly there (the device kept it) or wholly absent
// (it lost what was not synced), in the table and the view alike;
// everything acknowledged before is there; the view equals its
// recomputation; the frontier is the store's; another session and a
// subscription opened before the failure go on and see the same state;
// and a restart finds it again.
func TestUncertainCommitRecoversInProcess(t *testing.T) {
	for _, c := range []struct {
		name string
		lost bool // the device drops the unsynced batch
	}{{"applied", false}, {"absent", true}} {
		t.Run(c.name, func(t *testing.T) { testUncertainCommit(t, c.lost) })
	}
}

func testUncertainCommit(t *testing.T, lost bool) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		switch op.Kind {
		case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpCreate, errorfs.OpReuseForWrite:
			if strings.HasSuffix(op.Path, ".log") {
				return errorfs.ErrInjected
			}
		}
		return nil
	})}
	lines := &lineCounter{}
	st, err := storage.Open(storage.Options{Dir: "db", FS: errorfs.Wrap(mem, fault), EpochKey: FrontierKey(),
		Logger: slog.New(lines), CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, reader := e.NewSession(), e.NewSession()
	defer reader.Close()
	exec := func(s *Session, q string) (string, error) {
		res, err := s.Exec(ctx, q, nil)
		if err != nil {
			return "", err
		}
		return formatRows(res), nil
	}
	must := func(s *Session, q string) string {
		t.Helper()
		out, err := exec(s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	must(s, "CREATE TABLE t (k int PRIMARY KEY, g int)")
	must(s, "CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n, max(k) AS top FROM t GROUP BY g")
	for k := 1; k <= 5; k++ {
		must(s, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", k, k%2))
	}
	sub := must(reader, "SELECT g, n, top FROM v ORDER BY g") // warms the relation cache
	if sub != "0|2|4\n1|3|5\n" {
		t.Fatalf("view before the failure:\n%s", sub)
	}
	subRes, err := reader.Exec(ctx, "SUBSCRIBE v", nil)
	if err != nil {
		t.Fatal(err)
	}
	subscription := subRes.Subscription
	defer subscription.Close()
	subState := &subscriptionState{rows: map[string]int64{}}
	before := e.Epoch()
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
	_, err = exec(s, "INSERT INTO t VALUES (6, 0), (7, 1)")
	if errs.SQLState(err) != "08007" || !strings.Contains(err.Error(), "outcome of this commit") {
		t.Fatalf("insert whose fsync failed: %v (SQLSTATE %s), want 08007", err, errs.SQLState(err))
	}
	t.Log(err)
	if lost {
		if err := lossyfs.DropTail(mem, log, synced); err != nil {
			t.Fatal(err)
		}
	}
	// While the fault lasts, writes are refused, with a few log lines,
	// not one per statement. Reads are served at the last acknowledged
	// commit until a recovery attempt lets go of the stopped instance (the
	// device here fails only the log, so the attempt gets that far), and
	// refused after: a read never sees the uncertain epoch.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if out, err := exec(reader, "SELECT count(*) FROM t"); err == nil && out != "5\n" {
				t.Errorf("a read of the stopped storage saw %q rows, want the 5 acknowledged", out)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	linesBefore := lines.n.Load()
	for range 20 {
		if _, err := exec(s, "INSERT INTO t VALUES (9, 0)"); err == nil {
			t.Fatal("a write succeeded while the log's fsync fails")
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	if n := lines.n.Load() - linesBefore; n > 30 {
		t.Fatalf("40 refused statements logged %d lines", n)
	}
	if p := e.Stats().StorageProblem; p == "" {
		t.Fatal("Stats does not report the stopped storage")
	}

	fault.Off()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := exec(s, "INSERT INTO t VALUES (8, 0)")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes did not resume after the fault cleared: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rows, view := "1\n2\n3\n4\n5\n6\n7\n8\n", "0|4|8\n1|4|7\n"
	wantEpoch := before + 2
	if lost {
		rows, view = "1\n2\n3\n4\n5\n8\n", "0|3|8\n1|3|5\n"
		wantEpoch = before + 1
	}
	check := func(when string, e *Engine, s *Session) {
		t.Helper()
		if got := must(s, "SELECT k FROM t ORDER BY k"); got != rows {
			t.Fatalf("%s: rows\n%s want\n%s", when, got, rows)
		}
		if got := must(s, "SELECT g, n, top FROM v ORDER BY g"); got != view {
			t.Fatalf("%s: view\n%s want\n%s", when, got, view)
		}
		if got := must(s, "SELECT g, count(*), max(k) FROM t GROUP BY g ORDER BY g"); got != view {
			t.Fatalf("%s: the view's query over the table\n%s want\n%s", when, got, view)
		}
		if err := e.VerifyViews(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if e.Epoch() != wantEpoch {
			t.Fatalf("%s: epoch %d, want %d", when, e.Epoch(), wantEpoch)
		}
	}
	check("after recovery", e, s)
	check("another session after recovery", e, reader)
	if p := e.Stats().StorageProblem; p != "" {
		t.Fatalf("Stats after recovery: %s", p)
	}
	// The subscription opened before the failure adds up to the view.
	fields := func(line string) string { return strings.Join(strings.Fields(strings.ReplaceAll(line, "|", " ")), " ") }
	want := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(view), "\n") {
		want[fields(line)]++
	}
	seen := func() map[string]int64 {
		out := map[string]int64{}
		for k, n := range subState.rows {
			out[fields(k)] += n
		}
		return out
	}
	for !equalCounts(seen(), want) {
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got, err := subscription.Next(nctx)
		cancel()
		if err != nil {
			t.Fatalf("subscription after recovery: %v (state %v, want %v)", err, subState.rows, want)
		}
		subState.apply(t, got, subRes.Columns)
	}
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := storage.Open(storage.Options{Dir: "db", FS: mem.CrashClone(vfs.CrashCloneCfg{}), EpochKey: FrontierKey(),
		Logger: slog.New(slog.DiscardHandler)})
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
	check("after a crash and restart", e2, s2)
}
