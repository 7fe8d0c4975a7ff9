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
// ratio is measured on the same machine at the same moment. Besides wall
// time they report the server's CPU time, the steadier measure on a
// shared machine:
//
//	go test -run XXX -bench 'BenchmarkBulkInsert|BenchmarkCopyBinary' -benchtime 20x ./internal/gateway/
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
	// conn connects to a fresh server (RockStream) or database
	// (PostgreSQL) and returns a function reading the server's CPU time:
	// for RockStream, which runs in this process, the process's (the
	// client's encoding included); for PostgreSQL, the backend's.
	conn func(b *testing.B) (*pgx.Conn, func() time.Duration)
	view bool
}

func ingestTargets() []ingestTarget {
	return []ingestTarget{
		{name: "rockstream", view: true, conn: func(b *testing.B) (*pgx.Conn, func() time.Duration) {
			return startServer(b, Config{}).connect(b, pgx.QueryExecModeCacheStatement), proccpu.Used
		}},
		{name: "postgres", conn: func(b *testing.B) (*pgx.Conn, func() time.Duration) {
			pgtest.Require(b)
			ctx := context.Background()
			cfg, err := pgx.ParseConfig(pgtest.NewDatabase(b, "ingest"))
			if err != nil {
				b.Fatal(err)
			}
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close(context.Background()) })
			var pid int
			if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
				b.Fatal(err)
			}
			return c, func() time.Duration {
				d, err := proccpu.UsedBy(pid)
				if err != nil {
					b.Fatal(err)
				}
				return d
			}
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
			c, cpu := target.conn(b)
			ingestSetup(b, c, target.view, ingestRows)
			stmts := insertTexts("t", b.N, ingestRows, func(id int) (int, int) { return id % ingestGroups, id % 997 })
			timeStatements(b, c, cpu, stmts)
		})
	}
}

// BenchmarkCopyBinary measures a binary COPY of 1M rows into the empty
// table: into RockStream with the view ("rockstream/view") and without it
// ("rockstream/noview"), and into PostgreSQL's table (no view). Each
// iteration is one COPY into a fresh table; rows/s is the throughput and
// rows/server-cpu-s the rows per second of server CPU, RockStream's
// including the pgx client's encoding, which the PostgreSQL run reports
// alone (client-cpu-ms/1M-rows):
//
//	go test -run XXX -bench BenchmarkCopyBinary -benchtime 3x ./internal/gateway/
func BenchmarkCopyBinary(b *testing.B) {
	targets := ingestTargets()
	noview := targets[0]
	noview.view = false
	for _, target := range []struct {
		name string
		ingestTarget
	}{{"rockstream/view", targets[0]}, {"rockstream/noview", noview}, {"postgres", targets[1]}} {
		b.Run(target.name, func(b *testing.B) {
			c, serverCPU := target.conn(b)
			ctx := context.Background()
			var copying, cpu, client time.Duration
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				for _, s := range []string{"DROP MATERIALIZED VIEW IF EXISTS per_grp", "DROP TABLE IF EXISTS t"} {
					if target.name == "postgres" && strings.Contains(s, "VIEW") {
						continue
					}
					if _, err := c.Exec(ctx, s); err != nil {
						b.Fatal(err)
					}
				}
				ingestSetup(b, c, target.view, 0)
				b.StartTimer()
				t0, c0, p0 := time.Now(), serverCPU(), proccpu.Used()
				if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "grp", "amount"}, ingestSource(0, ingestRows)); err != nil {
					b.Fatal(err)
				}
				copying += time.Since(t0)
				cpu += serverCPU() - c0
				client += proccpu.Used() - p0
			}
			b.StopTimer()
			var got int64
			if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&got); err != nil {
				b.Fatal(err)
			}
			if got != ingestRows {
				b.Fatalf("the table has %d rows, want %d", got, ingestRows)
			}
			if target.view {
				var n int64
				if err := c.QueryRow(ctx, "SELECT sum(n)::bigint FROM per_grp").Scan(&n); err != nil {
					b.Fatal(err)
				}
				if n != ingestRows {
					b.Fatalf("the view counts %d rows, want %d", n, ingestRows)
				}
			}
			b.ReportMetric(float64(ingestRows*b.N)/copying.Seconds(), "rows/s")
			b.ReportMetric(float64(ingestRows*b.N)/cpu.Seconds(), "rows/server-cpu-s")
			if target.name == "postgres" {
				// This process is pgx alone: what the RockStream figures
				// include besides the server.
				b.ReportMetric(float64(client.Milliseconds())/float64(b.N)*1e6/ingestRows, "client-cpu-ms/1M-rows")
			}
		})
	}
}

// BenchmarkJoinedAggregate measures one INSERT of 1,000 orders (one
// statement) into a table of 100,000 orders joined to 10,000 stores and
// grouped by their 100 regions, maintained by RockStream's materialized
// view, by pg_ivm's incrementally maintained view on PostgreSQL when the
// harness's PostgreSQL has the extension (it is skipped otherwise), and,
// for reference, by nothing on PostgreSQL (the table alone).
func BenchmarkJoinedAggregate(b *testing.B) {
	const (
		stores = 10_000
		orders = 100_000
		view   = "SELECT s.region, sum(o.amount) AS total, count(*) AS n FROM orders o JOIN stores s ON o.store = s.store GROUP BY s.region"
	)
	targets := ingestTargets()
	targets = append(targets, ingestTarget{name: "postgres-pg_ivm", view: true, conn: func(b *testing.B) (*pgx.Conn, func() time.Duration) {
		c, cpu := targets[1].conn(b)
		ctx := context.Background()
		var ok bool
		if err := c.QueryRow(ctx, "SELECT count(*) > 0 FROM pg_available_extensions WHERE name = 'pg_ivm'").Scan(&ok); err != nil || !ok {
			b.Skip("the PostgreSQL of the test harness has no pg_ivm extension")
		}
		if _, err := c.Exec(ctx, "CREATE EXTENSION pg_ivm"); err != nil {
			b.Fatal(err)
		}
		return c, cpu
	}})
	for _, target := range targets {
		b.Run(target.name, func(b *testing.B) {
			c, cpu := target.conn(b)
			ctx := context.Background()
			setup := []string{
				"CREATE TABLE stores (store int PRIMARY KEY, region int)",
				"CREATE TABLE orders (id bigint PRIMARY KEY, store int, amount bigint)",
				fmt.Sprintf("INSERT INTO stores SELECT g, g %% 100 FROM generate_series(0, %d) g", stores-1),
			}
			for _, s := range setup {
				if _, err := c.Exec(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
			rows := make([][]any, orders)
			for i := range rows {
				rows[i] = []any{int64(i), int32(i % stores), int64(i % 997)}
			}
			if _, err := c.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"id", "store", "amount"}, pgx.CopyFromRows(rows)); err != nil {
				b.Fatal(err)
			}
			switch {
			case target.name == "postgres-pg_ivm":
				if _, err := c.Exec(ctx, "SELECT pgivm.create_immv('per_region', $1)", view); err != nil {
					b.Fatal(err)
				}
			case target.view:
				if _, err := c.Exec(ctx, "CREATE MATERIALIZED VIEW per_region AS "+view); err != nil {
					b.Fatal(err)
				}
			}
			stmts := insertTexts("orders", b.N, orders, func(id int) (int, int) { return (id * 7) % stores, id % 997 })
			timeStatements(b, c, cpu, stmts)
			if target.view {
				var total, n int64
				if err := c.QueryRow(ctx, "SELECT sum(total)::bigint, sum(n)::bigint FROM per_region").Scan(&total, &n); err != nil {
					b.Fatal(err)
				}
				if want := int64(orders + 1000*b.N); n != want {
					b.Fatalf("the view counts %d orders, want %d", n, want)
				}
			}
		})
	}
}

// insertTexts returns n INSERTs of 1,000 rows (id, a, b) each into table,
// the ids counting from first, a and b given by cols.
func insertTexts(table string, n, first int, cols func(id int) (int, int)) []string {
	stmts := make([]string, n)
	for k := range stmts {
		var sb strings.Builder
		sb.WriteString("INSERT INTO " + table + " VALUES ")
		for i := 0; i < 1000; i++ {
			id := first + k*1000 + i
			if i > 0 {
				sb.WriteString(", ")
			}
			x, y := cols(id)
			fmt.Fprintf(&sb, "(%d, %d, %d)", id, x, y)
		}
		stmts[k] = sb.String()
	}
	return stmts
}

// timeStatements runs stmts, one b.N-th of the benchmark each, and
// reports the wall and server CPU time per statement.
func timeStatements(b *testing.B, c *pgx.Conn, cpu func() time.Duration, stmts []string) {
	ctx := context.Background()
	b.ResetTimer()
	c0 := cpu()
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	used := cpu() - c0
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/insert")
	b.ReportMetric(float64(used.Microseconds())/float64(b.N)/1000, "server-cpu-ms/insert")
}

// preparedIngestRows is how many rows one iteration of
// BenchmarkPreparedIngest inserts.
const preparedIngestRows = 10_000

// BenchmarkPreparedIngest measures a prepared INSERT INTO t VALUES ($1,
// $2, $3) with binary parameters (pgx's cached statements) into the empty
// table (with the view on RockStream): "tx" runs one execution per row
// (Bind, Execute, Sync) inside BEGIN ... COMMIT, one transaction per
// iteration; "batch" sends the executions as pgx batches of 1,000
// (pipelined, one implicit transaction per batch). The figure to read is
// server CPU per row; RockStream's includes the pgx client's, which the
// PostgreSQL runs report alone (client-cpu-µs/row).
//
//	go test -run XXX -bench BenchmarkPreparedIngest -benchtime 10x ./internal/gateway/
func BenchmarkPreparedIngest(b *testing.B) {
	const insert = "INSERT INTO t VALUES ($1, $2, $3)"
	modes := []struct {
		name string
		run  func(ctx context.Context, c *pgx.Conn, from int) error
	}{
		{"tx", func(ctx context.Context, c *pgx.Conn, from int) error {
			tx, err := c.Begin(ctx)
			if err != nil {
				return err
			}
			for i := from; i < from+preparedIngestRows; i++ {
				if _, err := tx.Exec(ctx, insert, int64(i), int32(i%ingestGroups), int64(i%997)); err != nil {
					return err
				}
			}
			return tx.Commit(ctx)
		}},
		{"batch", func(ctx context.Context, c *pgx.Conn, from int) error {
			for k := from; k < from+preparedIngestRows; k += 1000 {
				var batch pgx.Batch
				for i := k; i < k+1000; i++ {
					batch.Queue(insert, int64(i), int32(i%ingestGroups), int64(i%997))
				}
				if err := c.SendBatch(ctx, &batch).Close(); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	for _, target := range ingestTargets() {
		for _, mode := range modes {
			b.Run(target.name+"/"+mode.name, func(b *testing.B) {
				c, serverCPU := target.conn(b)
				ingestSetup(b, c, target.view, 0)
				ctx := context.Background()
				b.ResetTimer()
				c0, p0 := serverCPU(), proccpu.Used()
				for n := 0; n < b.N; n++ {
					if err := mode.run(ctx, c, n*preparedIngestRows); err != nil {
						b.Fatal(err)
					}
				}
				used, process := serverCPU()-c0, proccpu.Used()-p0
				b.StopTimer()
				rows := float64(preparedIngestRows * b.N)
				var got int64
				if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&got); err != nil {
					b.Fatal(err)
				}
				if got != int64(rows) {
					b.Fatalf("the table has %d rows, want %.0f", got, rows)
				}
				b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(used.Nanoseconds())/rows/1000, "server-cpu-µs/row")
				if target.name == "postgres" {
					// This process is pgx alone: what the RockStream
					// figure includes besides the server.
					b.ReportMetric(float64(process.Nanoseconds())/rows/1000, "client-cpu-µs/row")
				}
			})
		}
	}
}
