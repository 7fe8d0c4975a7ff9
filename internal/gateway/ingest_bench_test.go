package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/proccpu"
)

// The ingestion benchmarks run the same client work against RockStream
// and against PostgreSQL 15 (the test harness's, fsync off like the
// in-memory RockStream), one after the other in one run, so that their
// ratio is measured on the same machine at the same moment:
//
//	go test -run XXX -bench 'BenchmarkBulkInsert|BenchmarkBinaryCopy' -benchtime 20x ./internal/gateway/
//
// The table holds ingestRows rows (id bigint PRIMARY KEY, grp int, amount
// bigint); RockStream maintains a view of SUM and COUNT per grp over it
// (ingestGroups groups), PostgreSQL has the table alone.
const (
	ingestRows   = 1_000_000
	ingestGroups = 10_000
)

// ingestTarget is one side of the comparison.
type ingestTarget struct {
	name string
	conn func(b *testing.B) *pgx.Conn
	view bool
}

func ingestTargets() []ingestTarget {
	return []ingestTarget{
		{name: "rockstream", view: true, conn: func(b *testing.B) *pgx.Conn {
			return startServer(b, Config{}).connect(b, pgx.QueryExecModeCacheStatement)
		}},
		{name: "postgres", conn: func(b *testing.B) *pgx.Conn {
			pgtest.Require(b)
			cfg, err := pgx.ParseConfig(pgtest.NewDatabase(b, "ingest"))
			if err != nil {
				b.Fatal(err)
			}
			c, err := pgx.ConnectConfig(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close(context.Background()) })
			return c
		}},
	}
}

// ingestSetup creates the table (and on RockStream the view) and loads
// rows rows by binary COPY.
func ingestSetup(b *testing.B, c *pgx.Conn, view bool, rows int) {
	ctx := context.Background()
	stmts := []string{"CREATE TABLE t (id bigint PRIMARY KEY, grp int, amount bigint)"}
	if view {
		stmts = append(stmts, "CREATE MATERIALIZED VIEW per_grp AS SELECT grp, sum(amount) AS total, count(*) AS n FROM t GROUP BY grp")
	}
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	if rows > 0 {
		if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "grp", "amount"}, ingestSource(0, rows)); err != nil {
			b.Fatal(err)
		}
	}
}

// ingestSource yields the rows with ids [from, from+n).
func ingestSource(from, n int) pgx.CopyFromSource {
	i := from - 1
	end := from + n
	vals := make([]any, 3)
	return pgx.CopyFromFunc(func() ([]any, error) {
		if i++; i >= end {
			return nil, nil
		}
		vals[0], vals[1], vals[2] = int64(i), int32(i%ingestGroups), int64(i%997)
		return vals, nil
	})
}

// BenchmarkBulkInsert measures one INSERT of 1,000 literal rows (an
// autocommit statement: one epoch on RockStream) into the 1M-row table.
func BenchmarkBulkInsert(b *testing.B) {
	for _, target := range ingestTargets() {
		b.Run(target.name, func(b *testing.B) {
			c := target.conn(b)
			ingestSetup(b, c, target.view, ingestRows)
			ctx := context.Background()
			stmts := make([]string, b.N)
			for n := range stmts {
				var sb strings.Builder
				sb.WriteString("INSERT INTO t VALUES ")
				for i := 0; i < 1000; i++ {
					id := ingestRows + n*1000 + i
					if i > 0 {
						sb.WriteString(", ")
					}
					fmt.Fprintf(&sb, "(%d, %d, %d)", id, id%ingestGroups, id%997)
				}
				stmts[n] = sb.String()
			}
			b.ResetTimer()
			for _, s := range stmts {
				if _, err := c.Exec(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/insert")
		})
	}
}

// BenchmarkBinaryCopy measures a binary COPY of 1M rows into the empty
// table (with the view on RockStream). Each iteration is one COPY into a
// fresh table; the rows/s metric is the throughput.
func BenchmarkBinaryCopy(b *testing.B) {
	for _, target := range ingestTargets() {
		b.Run(target.name, func(b *testing.B) {
			c := target.conn(b)
			ctx := context.Background()
			var copying time.Duration
			cpu := time.Duration(0)
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				for _, s := range []string{"DROP MATERIALIZED VIEW IF EXISTS per_grp", "DROP TABLE IF EXISTS t"} {
					if !target.view && strings.Contains(s, "VIEW") {
						continue
					}
					if _, err := c.Exec(ctx, s); err != nil {
						b.Fatal(err)
					}
				}
				ingestSetup(b, c, target.view, 0)
				b.StartTimer()
				t0, c0 := time.Now(), proccpu.Used()
				if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "grp", "amount"}, ingestSource(0, ingestRows)); err != nil {
					b.Fatal(err)
				}
				copying += time.Since(t0)
				cpu += proccpu.Used() - c0
			}
			b.ReportMetric(float64(ingestRows*b.N)/copying.Seconds(), "rows/s")
			if target.view {
				// The server runs in this process: its CPU time is the
				// engine's (and the client's encoding).
				b.ReportMetric(float64(ingestRows*b.N)/cpu.Seconds(), "rows/cpu-s")
			}
		})
	}
}
