package rockstream_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
)

// TestWatermarkAndRecursionSurviveRestart reopens a durable instance: a
// table's watermark and late-row count, the released state of closed
// windows, and a view's recursion limit are as they were, and
// maintenance carries on from them.
func TestWatermarkAndRecursionSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := rockstream.Open(rockstream.Options{Storage: dir})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(db *rockstream.DB, sql string) string {
		t.Helper()
		res, err := db.Exec(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var b strings.Builder
		for _, row := range res.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteByte('|')
				}
				if v == nil {
					b.WriteString("NULL")
				} else {
					b.WriteString(*v)
				}
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	s := db.Session()
	for _, q := range []string{
		"CREATE TABLE bids (id int, ts timestamp, price int) WITH (event_time = 'ts', lateness = '10 minutes')",
		"CREATE MATERIALIZED VIEW hourly AS SELECT window_start, count(*) AS n, sum(price) AS total FROM TUMBLE(bids, ts, '1 hour') GROUP BY window_start",
		"CREATE TABLE edges (src int, dst int)",
		"SET rockstream.max_recursion_iterations = 3",
		"CREATE MATERIALIZED VIEW chain AS WITH RECURSIVE c(n, d) AS (SELECT src, 0 FROM edges WHERE src = 1 UNION ALL SELECT e.dst, c.d + 1 FROM c JOIN edges e ON e.src = c.n) SELECT * FROM c",
		"INSERT INTO bids VALUES (1, '2026-03-01 09:30', 5), (2, '2026-03-01 10:20', 7)",
		"INSERT INTO bids VALUES (3, '2026-03-01 09:59', 1)",
		"INSERT INTO edges VALUES (1, 2), (2, 3)",
	} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	lateness := "SELECT watermark, late_rows_dropped FROM rockstream_catalog.lateness"
	if got := exec(db, lateness); got != "2026-03-01 10:10:00+00|1\n" {
		t.Fatalf("before restart: %q", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = rockstream.Open(rockstream.Options{Storage: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := exec(db, lateness); got != "2026-03-01 10:10:00+00|1\n" {
		t.Fatalf("after restart: %q", got)
	}
	// Still late after the restart, and counted on top.
	exec(db, "INSERT INTO bids VALUES (4, '2026-03-01 10:05', 1), (5, '2026-03-01 10:30', 2)")
	if got := exec(db, lateness); got != "2026-03-01 10:20:00+00|2\n" {
		t.Fatalf("after a late insert: %q", got)
	}
	if got := exec(db, "SELECT * FROM hourly ORDER BY window_start"); got != "2026-03-01 09:00:00|1|5\n2026-03-01 10:00:00|2|9\n" {
		t.Fatalf("hourly: %q", got)
	}
	if _, err := db.Exec(ctx, "DELETE FROM bids WHERE id = 1"); err == nil || !strings.Contains(err.Error(), "watermark") {
		t.Fatalf("a row behind the watermark was deleted after the restart: %v", err)
	}
	// The view kept the limit of the session that created it: a fourth
	// iteration fails.
	exec(db, "INSERT INTO edges VALUES (3, 4)")
	if _, err := db.Exec(ctx, "INSERT INTO edges VALUES (4, 5)"); err == nil || !strings.Contains(err.Error(), `materialized view "chain"`) || !strings.Contains(err.Error(), "within 3 iterations") {
		t.Fatalf("recursion limit after restart: %v", err)
	}
	if got := exec(db, "SELECT * FROM chain ORDER BY d"); got != "1|0\n2|1\n3|2\n4|3\n" {
		t.Fatalf("chain: %q", got)
	}
}
