package rockstream_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
)

var restartBytes = flag.Int64("restart.bytes", 0, "build a store of about this many bytes of table data and time its reopening (0: skip)")

// TestRestartTime measures how long reopening a durable instance takes
// once it holds a lot of state: start-up replays only the catalog, so it
// must not grow with the data. Run with -restart.bytes=1073741824 for the
// 1 GB measurement in docs/BENCHMARKS.md.
func TestRestartTime(t *testing.T) {
	if *restartBytes == 0 {
		t.Skip("set -restart.bytes to run")
	}
	ctx := context.Background()
	dir := t.TempDir()
	if d := os.Getenv("KEEPDIR"); d != "" {
		dir = d
	}
	db, err := rockstream.Open(rockstream.Options{Storage: dir, Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.Repeat("x", 1000)
	for _, s := range []string{
		"CREATE TABLE big (k bigint PRIMARY KEY, g int, payload text)",
		"CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n, max(k) AS top FROM big GROUP BY g",
		"CREATE MATERIALIZED VIEW copy AS SELECT k, payload FROM big WHERE g < 5",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, "INSERT INTO big VALUES (1, 1, $1)", payload); err != nil {
		t.Fatal(err)
	}
	built := time.Now()
	rows := int64(1)
	for rows*int64(len(payload)) < *restartBytes {
		if _, err := db.Exec(ctx, "INSERT INTO big SELECT k + $1, (k + $1) % 10, payload FROM big", rows); err != nil {
			t.Fatal(err)
		}
		rows *= 2
	}
	t.Logf("built %d rows (%d MB of payload) in %v", rows, rows*int64(len(payload))>>20, time.Since(built))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	db, err = rockstream.Open(rockstream.Options{Storage: dir})
	if err != nil {
		t.Fatal(err)
	}
	opened := time.Since(start)
	res, err := db.Query(ctx, "SELECT sum(n) FROM per_g")
	if err != nil {
		t.Fatal(err)
	}
	firstRead := time.Since(start)
	t.Logf("reopened in %v; first view read after %v (sum(n) = %s)", opened, firstRead, *res.Rows[0][0])
	if _, err := db.Exec(ctx, "INSERT INTO big VALUES (0, 0, 'after')"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
