package loadtest

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/gateway"
	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/pgtest"
)

var (
	pgbenchRun     = flag.Bool("pgbench", false, "run pgbench against RockStream and PostgreSQL and print the results side by side")
	pgbenchTime    = flag.Duration("pgbench.time", 15*time.Second, "how long each pgbench run lasts")
	pgbenchClients = flag.Int("pgbench.clients", 8, "pgbench client connections")
)

// pgbenchScripts are the custom transactions: a single-row insert into a
// table that two views read, and a point read of one of the views. In
// PostgreSQL the views are plain views, which are always fresh as
// RockStream's are; a PostgreSQL materialized view would be stale until
// refreshed.
var pgbenchScripts = []struct{ name, text string }{
	{"insert", "\\set v random(1, 1000)\nINSERT INTO bench_events VALUES (:client_id, :v);\n"},
	{"view point read", "\\set w random(0, 7)\nSELECT n, s FROM bench_per_writer WHERE writer = :w;\n"},
}

const pgbenchSchema = `
CREATE TABLE bench_events (writer int NOT NULL, v int NOT NULL);
CREATE %[1]s bench_per_writer AS SELECT writer, count(*) AS n, sum(v) AS s FROM bench_events GROUP BY writer;
CREATE %[1]s bench_total AS SELECT count(*) AS n, sum(v) AS s FROM bench_events;
`

// TestPgbenchSideBySide runs pgbench's custom scripts against RockStream
// and against PostgreSQL on the same machine and prints transactions/s
// and latency percentiles side by side. It runs only with -pgbench:
//
//	go test ./internal/loadtest -run Pgbench -pgbench -v
//
// Both servers skip fsync (PostgreSQL runs with fsync=off in tests;
// RockStream with relaxed durability), so the comparison is of the engines,
// not of the disk.
func TestPgbenchSideBySide(t *testing.T) {
	if !*pgbenchRun {
		t.Skip("run with -pgbench")
	}
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed (Debian: postgresql-contrib)")
	}
	ctx := context.Background()
	rsPort := startPgbenchServer(t)
	pg, pgDB := pgbenchDatabase(t, "pgbench")

	targets := []struct {
		name, db, view string
		port           int
	}{
		{"RockStream", "rockstream", "MATERIALIZED VIEW", rsPort},
		{"PostgreSQL", pgDB, "VIEW", pg.Port()},
	}
	results := map[string][]pgbenchResult{}
	for _, tg := range targets {
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", tg.port, tg.db))
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range strings.Split(strings.TrimSpace(fmt.Sprintf(pgbenchSchema, tg.view)), ";\n") {
			if _, err := c.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %s: %v", tg.name, stmt, err)
			}
		}
		c.Close(ctx)
		for _, s := range pgbenchScripts {
			r := runPgbench(t, pgbench, tg.port, tg.db, s.text)
			results[tg.name] = append(results[tg.name], r)
		}
	}

	fmt.Printf("\npgbench -M prepared -c %d -j 2 -T %s, per script (the table grows during the insert run)\n", *pgbenchClients, pgbenchTime.String())
	fmt.Printf("%-16s | %10s %8s %8s | %10s %8s %8s\n", "", "RockStream", "", "", "PostgreSQL", "", "")
	fmt.Printf("%-16s | %10s %8s %8s | %10s %8s %8s\n", "script", "tps", "p50 ms", "p99 ms", "tps", "p50 ms", "p99 ms")
	for i, s := range pgbenchScripts {
		rs, pq := results["RockStream"][i], results["PostgreSQL"][i]
		fmt.Printf("%-16s | %10.0f %8.3f %8.3f | %10.0f %8.3f %8.3f\n", s.name, rs.tps, rs.p50, rs.p99, pq.tps, pq.p50, pq.p99)
	}
}

// startPgbenchServer starts a gateway on a durable engine with relaxed
// durability in a temporary directory, for the test's duration, and
// returns its port.
func startPgbenchServer(t *testing.T) int {
	t.Helper()
	eng, err := instance.Open(instance.Options{Storage: t.TempDir(), Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv := gateway.New(eng, gateway.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return ln.Addr().(*net.TCPAddr).Port
}

// pgbenchDatabase creates a database of the harness's PostgreSQL for the
// test and returns the server and the database's name.
func pgbenchDatabase(t *testing.T, name string) (*pgtest.Server, string) {
	t.Helper()
	pg := pgtest.Shared(t)
	dsn := pgtest.NewDatabase(t, name)
	return pg, dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
}

// pgbenchResult is one run's throughput and latency percentiles.
type pgbenchResult struct {
	tps      float64
	p50, p99 float64 // milliseconds
}

// runPgbench runs one script with per-transaction logging and computes the
// percentiles from the log.
func runPgbench(t *testing.T, pgbench string, port int, db, script string) pgbenchResult {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "script.sql")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pgbench, "-n", "-M", "prepared", "-c", strconv.Itoa(*pgbenchClients), "-j", "2",
		"-T", strconv.Itoa(int(pgbenchTime.Seconds())), "-f", file, "-l", "--log-prefix", filepath.Join(dir, "log"),
		"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres", db)
	cmd.Env = append(os.Environ(), "PGPASSWORD=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench: %v\n%s", err, out)
	}
	var tps float64
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "tps = ") {
			tps, _ = strconv.ParseFloat(strings.Fields(line)[2], 64)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "log.*"))
	var lat []float64
	for _, l := range logs {
		f, err := os.Open(l)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// client_id transaction_no time script_no time_epoch time_us
			fields := strings.Fields(sc.Text())
			if len(fields) >= 3 {
				us, _ := strconv.ParseFloat(fields[2], 64)
				lat = append(lat, us/1000)
			}
		}
		f.Close()
	}
	if len(lat) == 0 {
		t.Fatalf("pgbench wrote no transaction log:\n%s", out)
	}
	slices.Sort(lat)
	return pgbenchResult{tps: tps, p50: lat[len(lat)/2], p99: lat[len(lat)*99/100]}
}

func TestMain(m *testing.M) { pgtest.Main(m) }
