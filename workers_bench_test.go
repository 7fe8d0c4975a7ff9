//go:build unix

package rockstream_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/viewbench"
)

// BenchmarkWorkers measures what the workers share: one large step. Each
// iteration either backfills a materialized view over a 200,000-row
// table (a grouped aggregate, or a join with a 10,000-row table grouped
// by 100 regions), or answers the same query ad hoc, or inserts 100,000
// more rows into the table under the view, on 1, 2 and 4 workers, in
// memory; "view/durable" and "insert/durable" are the backfill and the
// insert on durable storage (a directory of its own, without an fsync
// per epoch), where the epoch's writes are also encoded into the
// store's batch and applied to it.
// ns/op is wall time; cpu-ns/op the process's CPU time, so cpu/wall
// shows how many cores the step kept busy.
//
//	go test -run XXX -bench BenchmarkWorkers -benchtime 5x .
//	go test -run XXX -bench 'BenchmarkWorkers/grouped/insert/durable' -benchtime 5x .
func BenchmarkWorkers(b *testing.B) {
	const rows, stores, inserted = 200_000, 10_000, 100_000
	queries := map[string]string{
		"grouped": "SELECT store, count(*), sum(amount), max(amount) FROM orders GROUP BY store",
		"join":    "SELECT region, count(*), sum(amount) FROM orders JOIN stores USING (store) GROUP BY region",
	}
	for _, name := range []string{"grouped", "join"} {
		for _, kind := range []string{"view", "query", "insert", "view/durable", "insert/durable"} {
			for _, w := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("%s/%s/workers=%d", name, kind, w), func(b *testing.B) {
					ctx := context.Background()
					opts := rockstream.Options{Workers: w}
					kind, durable := strings.CutSuffix(kind, "/durable")
					if durable {
						opts.Storage, opts.Relaxed = b.TempDir(), true
					}
					db, err := rockstream.Open(opts)
					if err != nil {
						b.Fatal(err)
					}
					defer db.Close()
					for _, s := range []string{
						"CREATE TABLE orders (id bigint PRIMARY KEY, store int, amount bigint)",
						"CREATE TABLE stores (store int PRIMARY KEY, region text)",
						"INSERT INTO stores SELECT s, 'r' || (s % 100) FROM generate_series(0, " + fmt.Sprint(stores-1) + ") s",
						"INSERT INTO orders SELECT i, i % " + fmt.Sprint(stores) + ", i % 1000 FROM generate_series(1, " + fmt.Sprint(rows) + ") i",
					} {
						if _, err := db.Exec(ctx, s); err != nil {
							b.Fatal(err)
						}
					}
					if kind == "insert" {
						if _, err := db.Exec(ctx, "CREATE MATERIALIZED VIEW v AS "+queries[name]); err != nil {
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					cpu := viewbench.CPUTime(b)
					start := time.Now()
					for i := range b.N {
						if kind == "insert" {
							lo := rows + 1 + i*inserted
							if _, err := db.Exec(ctx, fmt.Sprintf("INSERT INTO orders SELECT i, i %% %d, i %% 1000 FROM generate_series(%d, %d) i", stores, lo, lo+inserted-1)); err != nil {
								b.Fatal(err)
							}
						} else if kind == "view" {
							if _, err := db.Exec(ctx, "CREATE MATERIALIZED VIEW v AS "+queries[name]); err != nil {
								b.Fatal(err)
							}
							b.StopTimer()
							if _, err := db.Exec(ctx, "DROP MATERIALIZED VIEW v"); err != nil {
								b.Fatal(err)
							}
							b.StartTimer()
						} else if _, err := db.Exec(ctx, queries[name]); err != nil {
							b.Fatal(err)
						}
					}
					_ = start
					b.ReportMetric(float64((viewbench.CPUTime(b)-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}
