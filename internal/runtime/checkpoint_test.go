package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
)

// onlineCheckpointViews are the materialized views of the online
// checkpoint test; copy_t holds t's rows, so that t as of an epoch can be
// read from it.
var onlineCheckpointViews = []string{
	"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
	"CREATE TABLE bag (a int, b text)",
	"CREATE MATERIALIZED VIEW copy_t AS SELECT k, g, v FROM t",
	"CREATE MATERIALIZED VIEW groups AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g",
	"CREATE MATERIALIZED VIEW joined AS SELECT t.k, bag.b FROM t JOIN bag ON t.g = bag.a",
	"CREATE MATERIALIZED VIEW bags AS SELECT a, b, count(*) AS n FROM bag GROUP BY a, b",
	"INSERT INTO t SELECT i, i % 5, i FROM generate_series(1, 200) AS i",
	"INSERT INTO bag SELECT i % 7, 'b' || (i % 3) FROM generate_series(1, 50) AS i",
	// Indexes, kept by the writers and restored with the checkpoints.
	"CREATE INDEX ON t (g, v)",
	"CREATE INDEX ON bag (b)",
	"CREATE INDEX ON groups (n)",
}

// rowsOf runs q and returns its rows as text.
func rowsOf(t *testing.T, s *Session, q string) string {
	t.Helper()
	res, err := s.Exec(context.Background(), q, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return formatRows(res)
}

// TestOnlineCheckpoint takes checkpoints of a running engine while
// writers commit, restores each, and compares every table and view of the
// restored store with what the running engine had committed at the
// checkpoint's epoch (read AS OF EPOCH from the views, t through copy_t).
func TestOnlineCheckpoint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng := openEngineIn(t, dir)
	defer eng.Close()
	runAll(t, eng.NewSession(), onlineCheckpointViews)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var commits atomic.Int64
	writerErr := make(chan error, 3)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := eng.NewSession()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := 1000 + w*100000 + i
				stmts := []string{
					fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d)", k, k%5, i),
					fmt.Sprintf("UPDATE t SET v = v + 1 WHERE k = %d", 1+(k%200)),
					fmt.Sprintf("INSERT INTO bag VALUES (%d, 'w%d')", k%7, w),
				}
				if i%4 == 3 {
					stmts = append(stmts, fmt.Sprintf("DELETE FROM t WHERE k = %d", k-2))
				}
				for _, q := range stmts {
					if _, err := s.Exec(ctx, q, nil); err != nil {
						writerErr <- fmt.Errorf("%s: %w", q, err)
						return
					}
					commits.Add(1)
				}
			}
		}()
	}

	url := "file://" + filepath.Join(dir, "bucket")
	type taken struct {
		epoch    uint64
		restored string
	}
	var checkpoints []taken
	for i := range 3 {
		for before := commits.Load(); commits.Load() < before+20; {
			time.Sleep(time.Millisecond)
		}
		keep := 0
		if i == 2 {
			keep = 2
		}
		r, err := eng.Checkpoint(ctx, url, keep, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Restore at once, while the writers go on: the latest
		// checkpoint is the one just taken.
		restored := filepath.Join(dir, fmt.Sprintf("restored-%d", i))
		if err := storage.RestoreCheckpoint(ctx, url, restored, nil); err != nil {
			t.Fatal(err)
		}
		if r.Manifest.Meta["taken"] != "online" || r.Manifest.Epoch == 0 {
			t.Fatalf("checkpoint %d: manifest epoch %d, meta %v", i, r.Manifest.Epoch, r.Manifest.Meta)
		}
		if i == 2 && (r.Pruned == nil || len(r.Pruned.Kept) != 2 || len(r.Pruned.Deleted) != 1) {
			t.Fatalf("KEEP 2 after three checkpoints: %+v", r.Pruned)
		}
		checkpoints = append(checkpoints, taken{r.Manifest.Epoch, restored})
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-writerErr:
		t.Fatal(err)
	default:
	}
	if checkpoints[0].epoch >= checkpoints[2].epoch {
		t.Fatalf("checkpoint epochs %d and %d: the writers committed nothing between them", checkpoints[0].epoch, checkpoints[2].epoch)
	}

	live := eng.NewSession()
	for i, c := range checkpoints {
		rst, err := storage.Open(storage.Options{Dir: c.restored, Logger: quietLog, MustExist: true, EpochKey: FrontierKey()})
		if err != nil {
			t.Fatal(err)
		}
		// The restored views equal their queries over the restored
		// tables, and the indexes their relations.
		if rep, err := Check(rst, true); err != nil || len(rep.Problems) > 0 {
			t.Fatalf("checkpoint %d: check of the restored store: %v %v", i, err, rep)
		}
		reng, err := Open(rst, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := reng.Epoch(); got != c.epoch {
			t.Fatalf("checkpoint %d: restored store is at epoch %d, the manifest says %d", i, got, c.epoch)
		}
		rs := reng.NewSession()
		at := fmt.Sprintf(" AS OF EPOCH %d", c.epoch)
		for _, cmp := range [][2]string{
			{"SELECT k, g, v FROM t ORDER BY k", "SELECT k, g, v FROM copy_t" + at + " ORDER BY k"},
			{"SELECT k, g, v FROM copy_t ORDER BY k", "SELECT k, g, v FROM copy_t" + at + " ORDER BY k"},
			{"SELECT * FROM groups ORDER BY g", "SELECT * FROM groups" + at + " ORDER BY g"},
			{"SELECT * FROM joined ORDER BY k, b", "SELECT * FROM joined" + at + " ORDER BY k, b"},
			{"SELECT a, b, count(*) FROM bag GROUP BY a, b ORDER BY a, b", "SELECT * FROM bags" + at + " ORDER BY a, b"},
			// Read through the restored indexes.
			{"SELECT k, g, v FROM t WHERE g = 3 ORDER BY k", "SELECT k, g, v FROM copy_t WHERE g = 3" + at + " ORDER BY k"},
			{"SELECT b, count(*) FROM bag WHERE b = 'w1' GROUP BY b", "SELECT b, sum(n) FROM bags WHERE b = 'w1' GROUP BY b" + at},
		} {
			got, want := rowsOf(t, rs, cmp[0]), rowsOf(t, live, cmp[1])
			if got != want {
				t.Fatalf("checkpoint %d at epoch %d: restored %q differs from the running engine's %q:\n%s\nwant:\n%s",
					i, c.epoch, cmp[0], cmp[1], head(got), head(want))
			}
		}
		t.Logf("checkpoint %d: epoch %d, %d rows in t", i, c.epoch, strings.Count(rowsOf(t, rs, "SELECT k FROM t"), "\n"))
		if err := reng.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func head(s string) string {
	if lines := strings.SplitN(s, "\n", 11); len(lines) > 10 {
		return strings.Join(lines[:10], "\n") + "\n..."
	}
	return s
}

// TestCheckpointStatement runs CHECKPOINT TO: one row naming the
// checkpoint, refused in a transaction block and by an engine in memory.
func TestCheckpointStatement(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng := openEngineIn(t, dir)
	defer eng.Close()
	s := eng.NewSession()
	runAll(t, s, []string{"CREATE TABLE t (k int)", "INSERT INTO t VALUES (1), (2)"})
	url := "file://" + filepath.Join(dir, "bucket")
	for i := range 3 {
		res, err := s.Exec(ctx, fmt.Sprintf("CHECKPOINT TO '%s' KEEP 2", url), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Tag != "CHECKPOINT" || len(res.Rows) != 1 {
			t.Fatalf("CHECKPOINT TO: tag %q, %d rows", res.Tag, len(res.Rows))
		}
		row := strings.Split(strings.TrimSpace(formatRows(res)), "|")
		wantDeleted := "0"
		if i == 2 {
			wantDeleted = "1"
		}
		if row[1] != fmt.Sprint(eng.Epoch()) || row[5] != wantDeleted {
			t.Fatalf("checkpoint %d: row %v; want epoch %d, %s deleted", i, row, eng.Epoch(), wantDeleted)
		}
	}
	runAll(t, s, []string{"BEGIN"})
	if _, err := s.Exec(ctx, "CHECKPOINT TO '"+url+"'", nil); errs.CodeOf(err) != errs.ActiveTransaction {
		t.Fatalf("CHECKPOINT TO in a block = %v", err)
	}
	runAll(t, s, []string{"ROLLBACK"})
	if _, err := s.Exec(ctx, "CHECKPOINT TO 'ftp://x/y'", nil); errs.CodeOf(err) != errs.InvalidParameterValue {
		t.Fatalf("CHECKPOINT TO an unsupported scheme = %v", err)
	}

	mem, err := Open(NewMemoryStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.NewSession().Exec(ctx, "CHECKPOINT TO '"+url+"'", nil); errs.CodeOf(err) != errs.FeatureNotSupported {
		t.Fatalf("CHECKPOINT TO of an engine in memory = %v", err)
	}
}

// TestCheckpointProgress: CHECKPOINT TO reports its upload in NOTICEs and
// in rockstream_catalog.progress while it runs.
func TestCheckpointProgress(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng := openEngineIn(t, dir)
	defer eng.Close()
	s := eng.NewSession()
	runAll(t, s, []string{"CREATE TABLE t (k int PRIMARY KEY, v text)", "INSERT INTO t SELECT i, repeat('x', 100) FROM generate_series(1, 5000) AS i"})
	defer SetBackfillProgress(backfillChunkRows, 0, 0)()
	watcher := eng.NewSession()
	var notices, seen []string
	s.OnNotice(func(n Notice) {
		notices = append(notices, n.Message)
		seen = append(seen, strings.TrimSpace(rowsOf(t, watcher, "SELECT kind, phase, unit, done > 0, done <= total FROM rockstream_catalog.progress")))
	})
	url := "file://" + filepath.Join(dir, "bucket")
	if _, err := s.Exec(ctx, "CHECKPOINT TO '"+url+"'", nil); err != nil {
		t.Fatal(err)
	}
	if len(notices) < 2 || !strings.HasPrefix(notices[0], "checkpoint to "+url+": ") || !strings.HasSuffix(notices[0], " bytes uploaded") {
		t.Fatalf("notices: %q", notices)
	}
	last := strings.Fields(notices[len(notices)-1])
	if last[3] != last[5] {
		t.Fatalf("the last notice is %q", notices[len(notices)-1])
	}
	if seen[0] != "checkpoint|uploading|bytes|t|t" {
		t.Fatalf("rockstream_catalog.progress during the upload: %q", seen)
	}
	if got := rowsOf(t, watcher, "SELECT count(*) FROM rockstream_catalog.progress"); got != "0\n" {
		t.Fatalf("progress after the checkpoint: %q", got)
	}
}

// openEngineIn opens an engine on a durable store in dir/db.
func openEngineIn(t *testing.T, dir string) *Engine {
	t.Helper()
	st, err := storage.Open(storage.Options{Dir: filepath.Join(dir, "db"), Logger: quietLog, EpochKey: FrontierKey()})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}
