package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
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
	// measure runs the setup (its first n statements), then b.N INSERTs
	// through exec, and reports cpu's CPU time per INSERT.
	measure := func(b *testing.B, n int, exec func(stmt string) error, cpu func(*testing.B) time.Duration) {
		for _, stmt := range setup[:n] {
			if err := exec(stmt); err != nil {
				b.Fatal(err)
			}
		}
		stmts := make([]string, b.N)
		for i := range stmts {
			stmts[i] = insert(i)
		}
		b.ResetTimer()
		start := cpu(b)
		for i := range b.N {
			if err := exec(stmts[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpu(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
	b.Run("single", func(b *testing.B) {
		eng := OpenMemory()
		b.Cleanup(func() { eng.Close() })
		s := eng.NewSession()
		measure(b, len(setup), func(stmt string) error {
			_, err := s.Exec(context.Background(), stmt, nil)
			return err
		}, processCPU)
	})
	b.Run("postgres", func(b *testing.B) {
		pgtest.Require(b)
		ctx := context.Background()
		pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(b, "shardbench"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pgc.Close(context.Background()) })
		measure(b, 1, func(stmt string) error {
			_, err := pgc.Exec(ctx, stmt).ReadAll()
			return err
		}, backendCPU(pgc))
	})
	for _, n := range []int{2, 3} {
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) {
			measure(b, len(setup), newShardCluster(b, n, false).execAll, processCPU)
		})
	}
}
