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

// BenchmarkGather measures reads across shards: a read by key, a
// grouped aggregate and an ordered top 10 over a table of 20,000 rows,
// answered by a Gather over 2 and 3 shard-mode engines in this process,
// by one node holding every row, and, as the peer, by PostgreSQL.
// cpu-ms/op is the CPU time per query (this process's, all shards and
// the gather together; PostgreSQL's backend's, at 10 ms resolution).
func BenchmarkGather(b *testing.B) {
	const rows = 20000
	var data strings.Builder
	for k := range rows {
		fmt.Fprintf(&data, "%d\t%d\t%d\n", k, k%100, k%997)
	}
	const create, load = "CREATE TABLE t (k int PRIMARY KEY, g int, v int)", "COPY t FROM STDIN"
	queries := []struct{ name, q string }{
		{"point", "SELECT v FROM t WHERE k = 7777"},
		{"grouped", "SELECT g, count(*), sum(v) FROM t GROUP BY g"},
		{"top10", "SELECT k, v FROM t ORDER BY v DESC, k LIMIT 10"},
	}
	measure := func(b *testing.B, query func(string) error, cpu func(*testing.B) time.Duration) {
		for _, q := range queries {
			b.Run(q.name, func(b *testing.B) {
				b.ResetTimer()
				start := cpu(b)
				for range b.N {
					if err := query(q.q); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpu(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			})
		}
	}
	ctx := context.Background()
	b.Run("single", func(b *testing.B) {
		eng := OpenMemory()
		b.Cleanup(func() { eng.Close() })
		s := eng.NewSession()
		if _, err := s.Exec(ctx, create, nil); err != nil {
			b.Fatal(err)
		}
		if err := copyIn(s, load, data.String()); err != nil {
			b.Fatal(err)
		}
		measure(b, func(q string) error {
			_, err := s.Exec(ctx, q, nil)
			return err
		}, processCPU)
	})
	b.Run("postgres", func(b *testing.B) {
		pgtest.Require(b)
		pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(b, "gatherbench"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pgc.Close(context.Background()) })
		if _, err := pgc.Exec(ctx, create+"; SET max_parallel_workers_per_gather = 0").ReadAll(); err != nil {
			b.Fatal(err)
		}
		if _, err := pgc.CopyFrom(ctx, strings.NewReader(data.String()), load); err != nil {
			b.Fatal(err)
		}
		if _, err := pgc.Exec(ctx, "ANALYZE t").ReadAll(); err != nil {
			b.Fatal(err)
		}
		measure(b, func(q string) error {
			_, err := pgc.Exec(ctx, q).ReadAll()
			return err
		}, backendCPU(pgc))
	})
	for _, n := range []int{2, 3} {
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) {
			c := newShardCluster(b, n, false)
			c.must(create)
			for i, err := range c.each(func(s *Session, _ *Engine) error { return copyIn(s, load, data.String()) }) {
				if err != nil {
					b.Fatalf("shard %d: %v", i, err)
				}
			}
			g, err := NewGather(c.engines)
			if err != nil {
				b.Fatal(err)
			}
			measure(b, func(q string) error {
				_, _, err := g.Query(ctx, q)
				return err
			}, processCPU)
		})
	}
}

// backendCPU returns the CPU time PostgreSQL's backend of pgc has used.
func backendCPU(pgc *pgconn.PgConn) func(*testing.B) time.Duration {
	return func(b *testing.B) time.Duration {
		d, err := proccpu.UsedBy(int(pgc.PID()))
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
}
