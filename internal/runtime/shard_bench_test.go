package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/proccpu"
)

// BenchmarkShardInsert measures what shard mode costs a write: one
// INSERT of 1,000 new rows into a table with a view grouped into 100
// groups, on one node and on 2 and 3 shard-mode engines in this process
// (each statement on every shard at once, the shards meeting on a
// loopback mesh), and, as the peer, PostgreSQL's INSERT of the same rows
// into the same table (no view: PostgreSQL keeps none up to date).
// cpu-ms/op is the CPU time per statement (this process's, all shards
// together; PostgreSQL's backend's, at 10 ms resolution); ns/op is the
// statement's wall time.
func BenchmarkShardInsert(b *testing.B) {
	const rows = 1000
	setup := []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"CREATE MATERIALIZED VIEW agg AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g",
	}
	insert := func(i int) string {
		var sb strings.Builder
		sb.WriteString("INSERT INTO t VALUES ")
		for r := range rows {
			if r > 0 {
				sb.WriteString(", ")
			}
			k := i*rows + r
			fmt.Fprintf(&sb, "(%d, %d, %d)", k, k%100, k%7)
		}
		return sb.String()
	}
	b.Run("single", func(b *testing.B) {
		eng := OpenMemory()
		b.Cleanup(func() { eng.Close() })
		s := eng.NewSession()
		for _, stmt := range setup {
			if _, err := s.Exec(context.Background(), stmt, nil); err != nil {
				b.Fatal(err)
			}
		}
		stmts := make([]string, b.N)
		for i := range stmts {
			stmts[i] = insert(i)
		}
		b.ResetTimer()
		start := processCPU(b)
		for i := range b.N {
			if _, err := s.Exec(context.Background(), stmts[i], nil); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start)
	})
	b.Run("postgres", func(b *testing.B) {
		pgtest.Require(b)
		ctx := context.Background()
		pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(b, "shardbench"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pgc.Close(context.Background()) })
		if _, err := pgc.Exec(ctx, setup[0]).ReadAll(); err != nil {
			b.Fatal(err)
		}
		stmts := make([]string, b.N)
		for i := range stmts {
			stmts[i] = insert(i)
		}
		used := func() time.Duration {
			d, err := proccpu.UsedBy(int(pgc.PID()))
			if err != nil {
				b.Fatal(err)
			}
			return d
		}
		b.ResetTimer()
		start := used()
		for i := range b.N {
			if _, err := pgc.Exec(ctx, stmts[i]).ReadAll(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(used()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	})
	for _, n := range []int{2, 3} {
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) {
			c := newShardCluster(b, n, false)
			for _, stmt := range setup {
				for _, err := range c.execErrs(stmt) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			stmts := make([]string, b.N)
			for i := range stmts {
				stmts[i] = insert(i)
			}
			b.ResetTimer()
			start := processCPU(b)
			for i := range b.N {
				for _, err := range c.execErrs(stmts[i]) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			reportCPU(b, start)
		})
	}
}
