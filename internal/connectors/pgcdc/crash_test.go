package pgcdc

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/instance"
)

// The crash test re-executes the test binary as a child that runs a
// durable engine with a postgres source and is killed with SIGKILL at
// random moments while upstream transactions commit, as
// internal/crashtest does for the engine's own writes.
const (
	envCrashDir = "PGCDC_CRASH_DIR"
	envCrashDSN = "PGCDC_CRASH_DSN"
)

const crashTables = `CREATE TABLE acct (id int PRIMARY KEY, bal numeric, note text);
	CREATE TABLE events (k int, v int)`

// crashViews are the materialized views the child maintains over the
// replicated tables, each compared at the end with its query run upstream:
// an aggregate, and a join of the two tables with a grouped count.
var crashViews = [][2]string{
	{"acct_totals", "SELECT count(*) AS n, sum(bal) AS total, count(note) AS notes FROM acct"},
	{"events_per_acct", "SELECT a.id, count(*) AS n, sum(e.k) AS ks FROM acct a JOIN events e ON e.v = a.id GROUP BY a.id"},
}

// TestCrashChild is the child: it opens the engine, creates the tables
// and the source on first run, and replicates until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("runs as the child of TestCrashKill")
	}
	eng, err := instance.Open(instance.Options{Storage: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := eng.NewSession()
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS acct (id int PRIMARY KEY, bal numeric, note text)",
		"CREATE TABLE IF NOT EXISTS events (k int, v int)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS " + crashViews[0][0] + " AS " + crashViews[0][1],
		"CREATE MATERIALIZED VIEW IF NOT EXISTS " + crashViews[1][0] + " AS " + crashViews[1][1],
		fmt.Sprintf("CREATE SOURCE IF NOT EXISTS crash FROM POSTGRES (connection = '%s', slot = 'crash_slot') FOR TABLES (acct, events)", os.Getenv(envCrashDSN)),
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	connectors.Start(eng, connectors.Options{MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	fmt.Println("child ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
}

// TestCrashKill kills the replicating process at least 20 times while
// upstream transactions commit. After every kill the slot must not be
// acknowledged past the progress the engine committed and the views must
// equal their recomputation; at the end the tables must equal upstream's
// exactly (nothing lost, nothing doubled) and the views PostgreSQL's
// answer to their queries over the upstream tables.
func TestCrashKill(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	u := newUpstream(t, "crash_slot")
	u.exec(crashTables)
	u.exec(`ALTER TABLE events REPLICA IDENTITY FULL`)
	u.exec(`INSERT INTO acct SELECT g, 100, repeat('x', g) FROM generate_series(1, 50) g`)
	dir := t.TempDir()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	wconn, err := pgconn.Connect(context.Background(), u.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close(context.Background())

	writer, stopWriter := context.WithCancel(context.Background())
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		rng := rand.New(rand.NewSource(seed + 1))
		for i := 0; writer.Err() == nil; i++ {
			a, b := rng.Intn(60)+1, rng.Intn(60)+1
			q := fmt.Sprintf(`BEGIN;
				INSERT INTO acct VALUES (%[1]d, 0, 'new') ON CONFLICT (id) DO UPDATE SET bal = acct.bal - 1;
				UPDATE acct SET bal = bal + 1 WHERE id = %[2]d;
				INSERT INTO events VALUES (%[3]d, %[1]d), (%[3]d, %[2]d);
				DELETE FROM events WHERE k = %[4]d AND v %% 2 = 0;
				COMMIT`, a, b, i, i-5)
			if i%97 == 0 {
				q = `DELETE FROM acct WHERE id > 55`
			}
			if _, err := wconn.Exec(context.Background(), q).ReadAll(); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()

	const kills = 20
	var last pglogrepl.LSN
	advanced := 0
	for k := 0; k < kills; k++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashDSN+"="+u.dsn)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+rng.Intn(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if p := checkAfterKill(t, u, dir); p > last {
			last = p
			advanced++
		}
	}
	t.Logf("%d kills, the committed progress advanced across %d of them, to %s", kills, advanced, last)
	stopWriter()
	<-writerDone

	eng, err := instance.Open(instance.Options{Storage: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := newRS(t, eng)
	defer r.close()
	pairs := append(same("acct"), same("events")...)
	for _, v := range crashViews {
		pairs = append(pairs, "SELECT * FROM "+v[0], v[1])
	}
	caughtUp(t, u, r, "crash", pairs...)
	checkFlushed(t, u, r, "crash", "crash_slot")
}

// checkAfterKill opens the killed child's store and compares its progress
// with the slot's acknowledged position.
func checkAfterKill(t *testing.T, u *upstream, dir string) pglogrepl.LSN {
	t.Helper()
	eng, err := instance.Open(instance.Options{Storage: dir})
	if err != nil {
		t.Fatalf("reopening after a kill: %v", err)
	}
	defer eng.Close()
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	raw, err := eng.SourceProgress("crash")
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := DecodeProgress(raw)
	if err != nil {
		t.Fatal(err)
	}
	rows := u.query("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'crash_slot'")
	if !ok || len(rows) == 0 {
		return 0 // killed before the snapshot committed
	}
	flushed := u.slotFlushed("crash_slot")
	if flushed > p.LSN {
		t.Fatalf("slot confirmed %s, past the committed %s", flushed, p.LSN)
	}
	return p.LSN
}
