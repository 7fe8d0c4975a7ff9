package rockstream_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
)

// TestStateLargerThanCache keeps views whose state is over ten times the
// storage's block cache (the in-memory working set of a durable
// instance): maintenance and reads go to disk and stay exact.
func TestStateLargerThanCache(t *testing.T) {
	if testing.Short() {
		t.Skip("writes ~15 MB")
	}
	ctx := context.Background()
	dir := t.TempDir()
	const cache = 1 << 20 // 1 MiB
	db, err := rockstream.Open(rockstream.Options{Storage: dir, CacheBytes: cache, Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	payload := strings.Repeat("p", 200)
	for _, s := range []string{
		"CREATE TABLE t (k bigint PRIMARY KEY, g bigint, payload text)",
		// Every row is its own group and its own copy: state ~ table size.
		"CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n, max(payload) AS p FROM t GROUP BY k",
		"CREATE MATERIALIZED VIEW joined AS SELECT a.k, b.payload FROM t a JOIN t b ON a.g = b.k",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, "INSERT INTO t VALUES (1, 1, $1)", payload); err != nil {
		t.Fatal(err)
	}
	rows := int64(1)
	for rows < 1<<14 { // 16384 rows of 200 bytes in the table, both views and their state: >10 MiB
		if _, err := db.Exec(ctx, "INSERT INTO t SELECT k + $1, (k + $1) / 2, payload FROM t", rows); err != nil {
			t.Fatal(err)
		}
		rows *= 2
	}
	if _, err := db.Exec(ctx, "UPDATE t SET g = g + 1 WHERE k % 97 = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "DELETE FROM t WHERE k % 89 = 0"); err != nil {
		t.Fatal(err)
	}
	if err := db.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}
