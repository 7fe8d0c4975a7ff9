package gateway

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/runtime"
)

// TestBackfillProgressNotices creates a materialized view over enough
// rows for a chunked backfill, with a real client: the progress NOTICEs
// arrive while the statement runs, before its answer, and another
// connection sees the backfill in rockstream_catalog.progress meanwhile.
func TestBackfillProgressNotices(t *testing.T) {
	ts := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	loader := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"INSERT INTO t SELECT i, i % 1000, i FROM generate_series(1, 200000) AS i",
	} {
		if _, err := loader.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer runtime.SetBackfillProgress(5000, 0, 0)()

	var mu sync.Mutex
	var notices []string
	var firstNotice time.Time
	// checker asks, when the first notice arrives, whether the backfill
	// still runs: a notice held back until the answer would find it done.
	checker := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	running := -1
	cfg, err := pgx.ParseConfig(ts.dsn("tester", ""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		if firstNotice.IsZero() {
			firstNotice = time.Now()
			if err := checker.QueryRow(ctx, "SELECT count(*) FROM rockstream_catalog.progress WHERE object = 'per_g'").Scan(&running); err != nil {
				t.Error(err)
			}
		}
		notices = append(notices, n.Severity+" "+n.Code+" "+n.Message)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	watcher := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	seen := make(chan string, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			var object string
			var done, total int64
			err := watcher.QueryRow(ctx, "SELECT object, done, total FROM rockstream_catalog.progress WHERE kind = 'backfill'").Scan(&object, &done, &total)
			if err == nil && done > 0 && done < total {
				seen <- object
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	if _, err := conn.Exec(ctx, "CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g"); err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	close(stop)

	mu.Lock()
	defer mu.Unlock()
	// One notice a chunk: the first of 5,000 rows, the next ones grown
	// (the view's 1,000 groups are revised chunk after chunk), the last
	// at the end.
	if len(notices) < 3 || notices[0] != "NOTICE 00000 backfill of per_g: 5000 of 200000 rows" ||
		notices[len(notices)-1] != "NOTICE 00000 backfill of per_g: 200000 of 200000 rows" ||
		!slices.IsSortedFunc(notices, func(a, b string) int { return noticeDone(a) - noticeDone(b) }) {
		t.Fatalf("%d notices: %s", len(notices), strings.Join(notices, "\n"))
	}
	if running != 1 {
		t.Fatalf("when the first notice arrived, rockstream_catalog.progress held %d rows for the backfill: it had ended", running)
	}
	t.Logf("the first notice came %s before the answer", answered.Sub(firstNotice))
	select {
	case object := <-seen:
		if object != "per_g" {
			t.Fatalf("rockstream_catalog.progress showed %q", object)
		}
	default:
		t.Fatal("another connection never saw the backfill under way in rockstream_catalog.progress")
	}
}

// noticeDone is the rows done of a backfill's progress notice, -1 for
// another notice.
func noticeDone(notice string) int {
	f := strings.Fields(notice)
	if len(f) < 6 {
		return -1
	}
	n, err := strconv.Atoi(f[5])
	if err != nil {
		return -1
	}
	return n
}
