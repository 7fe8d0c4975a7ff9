package loadtest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/proccpu"
)

var pgbenchRows = flag.Int("pgbench.rows", 1_000_000, "rows of the large view (and table) TestPgbenchPointReads reads by key")

// TestPgbenchPointReads runs pgbench point reads by key side by side: in
// RockStream, of a materialized view grouped by its key (one row per
// key), at 1,000 rows and at -pgbench.rows; in PostgreSQL, of a table of
// the same rows with a primary key index (the read a PostgreSQL user
// would index). It prints transactions/s, latency percentiles and both
// servers' CPU per read. It runs only with -pgbench:
//
//	go test ./internal/loadtest -run PgbenchPointReads -pgbench -pgbench.time 10s -v
//
// With -pgbench.rt the loads run at the test's own priority and only the
// pgbench runs under SCHED_FIFO (realtime_test.go), so that a view of
// 10,000,000 rows, whose load takes minutes, can be read under real-time
// priority:
//
//	go test -c -o /tmp/loadtest.test ./internal/loadtest
//	/tmp/loadtest.test -test.run PgbenchPointReads -pgbench -pgbench.rt \
//	    -pgbench.rows 10000000 -pgbench.time 6s -test.timeout 40m -test.v
//
// Tables past pgbenchChunk rows are loaded by INSERTs of that many rows
// each, so that no single statement's change holds them all.
func TestPgbenchPointReads(t *testing.T) {
	if !*pgbenchRun {
		t.Skip("run with -pgbench")
	}
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed (Debian: postgresql-contrib)")
	}
	ctx := context.Background()
	rsPort := startPgbenchServer(t)
	pg, pgDB := pgbenchDatabase(t, "pgbench_point")

	sizes := []int{1_000, *pgbenchRows}
	exec := func(port int, db string, stmts ...string) {
		t.Helper()
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", port, db))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		for _, s := range stmts {
			start := time.Now()
			if _, err := c.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			t.Logf("%.1fs  %s", time.Since(start).Seconds(), s)
		}
	}
	for _, n := range sizes {
		var load []string
		for from := 1; from <= n; from += pgbenchChunk {
			load = append(load, fmt.Sprintf("INSERT INTO t%d SELECT g, g %% 100 FROM generate_series(%d, %d) g", n, from, min(n, from+pgbenchChunk-1)))
		}
		start := time.Now()
		exec(rsPort, "rockstream", append([]string{
			fmt.Sprintf("CREATE TABLE t%d (id bigint PRIMARY KEY, x int)", n),
			fmt.Sprintf("CREATE MATERIALIZED VIEW v%d AS SELECT id, count(*) AS n, sum(x) AS s FROM t%d GROUP BY id", n, n),
		}, load...)...)
		t.Logf("RockStream: %d rows loaded in %.1fs", n, time.Since(start).Seconds())
		start = time.Now()
		exec(pg.Port(), pgDB, append(append([]string{fmt.Sprintf("CREATE TABLE t%d (id bigint PRIMARY KEY, x int)", n)}, load...),
			fmt.Sprintf("VACUUM ANALYZE t%d", n))...)
		t.Logf("PostgreSQL: %d rows loaded in %.1fs", n, time.Since(start).Seconds())
	}
	if *pgbenchRT {
		rt := enterRealtime(t, postmasterPID(t, pg))
		defer rt.leave(t)
	}

	type run struct {
		r   pgbenchResult
		cpu time.Duration // RockStream's, per transaction
	}
	results := map[string]run{}
	for _, n := range sizes {
		script := fmt.Sprintf("\\set id random(1, %d)\nSELECT n, s FROM v%d WHERE id = :id;\n", n, n)
		before := proccpu.Used()
		r := runPgbench(t, pgbench, rsPort, "rockstream", script)
		used := proccpu.Used() - before
		results[fmt.Sprint("RockStream", n)] = run{r, time.Duration(float64(used) / (r.tps * pgbenchTime.Seconds()))}
		script = fmt.Sprintf("\\set id random(1, %d)\nSELECT x, 1 FROM t%d WHERE id = :id;\n", n, n)
		pgBefore := postmasterCPU(t, pg)
		r = runPgbench(t, pgbench, pg.Port(), pgDB, script)
		results[fmt.Sprint("PostgreSQL", n)] = run{r, time.Duration(float64(postmasterCPU(t, pg)-pgBefore) / (r.tps * pgbenchTime.Seconds()))}
	}

	fmt.Printf("\npgbench -M prepared -c %d -j 2 -T %s: point reads by key\n", *pgbenchClients, pgbenchTime.String())
	fmt.Printf("%-10s | %-40s | %-40s\n", "rows", "RockStream view: tps, p50, p99, CPU/read", "PostgreSQL indexed table: tps, p50, p99, CPU/read")
	for _, n := range sizes {
		rs, pq := results[fmt.Sprint("RockStream", n)], results[fmt.Sprint("PostgreSQL", n)]
		fmt.Printf("%-10d | %8.0f %7.3fms %7.3fms %8.1fµs | %8.0f %7.3fms %7.3fms %8.1fµs | tps %.2f×, CPU/read %.2f×\n", n,
			rs.r.tps, rs.r.p50, rs.r.p99, micros(rs.cpu), pq.r.tps, pq.r.p50, pq.r.p99, micros(pq.cpu),
			rs.r.tps/pq.r.tps, float64(rs.cpu)/float64(pq.cpu))
	}
	small, large := sizes[0], sizes[len(sizes)-1]
	for _, srv := range []string{"RockStream", "PostgreSQL"} {
		s, l := results[fmt.Sprint(srv, small)], results[fmt.Sprint(srv, large)]
		fmt.Printf("%s, %d rows against %d: tps %.2f×, CPU/read %.2f×, p50 %.2f×\n", srv, large, small,
			l.r.tps/s.r.tps, float64(l.cpu)/float64(s.cpu), l.r.p50/s.r.p50)
	}
}

// pgbenchChunk is the most rows one INSERT of the load writes.
const pgbenchChunk = 1_000_000

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// postmasterCPU returns the CPU time pg's postmaster and its backends that
// have ended have used. pgbench's backends end with its run; the
// postmaster collects their time once it has reaped them, so this waits
// until the count has settled.
func postmasterCPU(t *testing.T, pg *pgtest.Server) time.Duration {
	t.Helper()
	pid := postmasterPID(t, pg)
	last := time.Duration(-1)
	for {
		d, err := proccpu.UsedByTree(pid)
		if err != nil {
			t.Fatal(err)
		}
		if d == last {
			return d
		}
		last = d
		time.Sleep(200 * time.Millisecond)
	}
}

// postmasterPID returns the process id of pg's postmaster.
func postmasterPID(t *testing.T, pg *pgtest.Server) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pg.Dir(), "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
