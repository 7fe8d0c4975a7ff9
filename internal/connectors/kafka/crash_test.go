//go:build unix

package kafka

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/runtime"
)

var flagKills = flag.Int("kafkacrash.kills", 20, "how many times TestCrashExactlyOnce kills the engine process")

// The child process is this test binary, told by these variables to run
// an engine with a Kafka source and sink until it is killed.
const (
	envCrashDir     = "ROCKSTREAM_KAFKACRASH_DIR"
	envCrashBrokers = "ROCKSTREAM_KAFKACRASH_BROKERS"
)

// runCrashChildIfAsked runs the crash test's engine process, and never
// returns, when the environment says this process is one.
func runCrashChildIfAsked() {
	if dir := os.Getenv(envCrashDir); dir != "" {
		err := runCrashChild(dir, os.Getenv(envCrashBrokers))
		fmt.Fprintf(os.Stderr, "kafka crash child: %v\n", err)
		os.Exit(3)
	}
}

// crashSchema is what the engine process defines (IF NOT EXISTS, so
// that every run can run it): the tables and views of the workload, a
// Debezium source of the accounts, a JSON source of the groups with an
// error table, and a Debezium sink of the totals into a topic that does
// not exist before the sink creates it.
func crashSchema() []string {
	s := []string{crashAccountsRS, crashGroups}
	for _, v := range crashViews {
		s = append(s, "CREATE MATERIALIZED VIEW "+v)
	}
	return append(s,
		"CREATE SOURCE IF NOT EXISTS acct_in FROM KAFKA (brokers = 'BROKERS', topic = 'cdc', format = 'debezium', max_batch = 50) INTO acct",
		"CREATE SOURCE IF NOT EXISTS grp_in FROM KAFKA (brokers = 'BROKERS', topic = 'grp', format = 'json', max_batch = 7, error_table = 'grp_errors') INTO grp_names",
		"CREATE SINK IF NOT EXISTS totals_out FROM totals INTO KAFKA (brokers = 'BROKERS', topic = 'out', format = 'debezium', key = 'grp', partitions = 3)",
	)
}

func openCrashEngine(dir, brokers string) (*runtime.Engine, *connectors.Manager, error) {
	eng, err := instance.Open(instance.Options{Storage: dir, CacheBytes: 8 << 20})
	if err != nil {
		return nil, nil, err
	}
	s := eng.NewSession()
	defer s.Close()
	for _, q := range crashSchema() {
		_, err := s.Exec(context.Background(), strings.ReplaceAll(q, "BROKERS", brokers), nil)
		var e *errs.Error
		if err != nil && !(errors.As(err, &e) && e.Code == errs.DuplicateTable) {
			eng.Close()
			return nil, nil, err
		}
	}
	return eng, connectors.Start(eng, connectors.Options{MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}), nil
}

func runCrashChild(dir, brokers string) error {
	go exitWithParent()
	_, _, err := openCrashEngine(dir, brokers)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	select {}
}

// exitWithParent ends the child if the test that started it has gone.
func exitWithParent() {
	parent := os.Getppid()
	for {
		time.Sleep(200 * time.Millisecond)
		if os.Getppid() != parent {
			os.Exit(0)
		}
	}
}

// TestCrashExactlyOnce kills an engine process running two Kafka sources
// and a Kafka sink with SIGKILL at random moments while records keep
// arriving, restarting it each time. Then a clean run catches up, and:
//
//   - the tables and both views equal PostgreSQL's answers over the same
//     records, applied once each, in order (crash_workload_test.go says
//     why a duplicate or a loss would show), and the error table holds
//     exactly the records PostgreSQL refused;
//   - every view equals its recomputation;
//   - the sink's topic, read with read_committed and folded by key,
//     equals the totals view, with no change delivered twice (the fold
//     fails on a duplicate).
func TestCrashExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test runs processes for tens of seconds")
	}
	began := time.Now()
	ref := newPGReference(t, crashAccountsPG, crashGroups, "CREATE VIEW "+crashViews[0], "CREATE VIEW "+crashViews[1])
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "cdc"), kfake.SeedTopics(1, "grp"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := strings.Join(c.ListenAddrs(), ",")
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)

	// The producer writes the records over most of the kills, in small
	// bursts, and keeps them for PostgreSQL.
	const accountRecords = 3000
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var accounts, groups []*kgo.Record
	produced := make(chan error, 1)
	go func() {
		w := newCrashWorkload(rand.New(rand.NewPCG(seed, 2)))
		for len(accounts) < accountRecords {
			var recs []*kgo.Record
			for i := 0; i < 20 && len(accounts) < accountRecords; i++ {
				r := w.account()
				accounts = append(accounts, r)
				recs = append(recs, r)
			}
			r := w.group()
			groups = append(groups, r)
			recs = append(recs, r)
			if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
				produced <- err
				return
			}
			time.Sleep(70 * time.Millisecond)
		}
		produced <- nil
	}()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for kill := 0; kill < *flagKills; kill++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envCrashDir+"="+filepath.Join(dir, "db"), envCrashBrokers+"="+brokers)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			t.Fatalf("run %d: the engine process exited: %v\n%s", kill, err, out.String())
		case <-time.After(time.Duration(300+rng.IntN(1200)) * time.Millisecond):
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d kills done after %v; %d account and %d group records produced", *flagKills, time.Since(began).Round(time.Millisecond), len(accounts), len(groups))

	// PostgreSQL applies the same records, in the order produced.
	var batch []string
	for _, r := range accounts {
		sql, err := crashAccounts.debeziumSQL(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, sql)
	}
	if err := ref.exec(strings.Join(batch, ";\n")); err != nil {
		t.Fatalf("PostgreSQL refused an account change: %v", err)
	}
	var refused []string
	for i, r := range groups {
		err := ref.applyJSON(crashGroupTab, r.Value)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			refused = append(refused, fmt.Sprintf("%d,%s", i, pgErr.Message))
		} else if err != nil {
			t.Fatal(err)
		}
	}
	checks := append(append([]string(nil), crashChecks...), `SELECT "offset", error FROM grp_errors`)
	want := make([]string, len(checks))
	for i, q := range crashChecks {
		want[i] = sortedLines(ref.query(q))
	}
	want[len(checks)-1] = sortedLines(strings.Join(refused, "\n"))

	// A last, clean run catches up.
	eng, mgr, err := openCrashEngine(filepath.Join(dir, "db"), brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		mgr.Close()
		eng.Close()
	}()
	h := &harness{t: t, eng: eng}
	got := make([]string, len(checks))
	equal := func() bool {
		for i, q := range checks {
			if got[i] = sortedLines(h.query(q)); got[i] != want[i] {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(30 * time.Second); !equal(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			for i, q := range checks {
				if got[i] != want[i] {
					t.Errorf("%s:\n%s", q, lineDiff(got[i], want[i]))
				}
			}
			t.Fatalf("RockStream does not reach PostgreSQL's answers\n%s", h.query("SELECT name, state, records, errors, last_error FROM rockstream_catalog.sources"))
		}
	}
	t.Logf("caught up after %v: %d accounts, %d rows in named, %d rejected group records",
		time.Since(began).Round(time.Millisecond), strings.Count(want[0], "\n")+1, strings.Count(want[3], "\n")+1, len(refused))
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}

	// Fold the sink's topic: a create of a present key, or an update or
	// delete whose before is not the current row, is a duplicate or a
	// loss.
	totals := want[2]
	deadline := time.Now().Add(30 * time.Second)
	var folded string
	for time.Now().Before(deadline) {
		recs := consumeCommitted(t, c.ListenAddrs(), "out", 1<<30, 2*time.Second)
		folded, err = foldDebezium(recs, []string{"grp", "n", "total"})
		if err != nil {
			t.Fatal(err)
		}
		if folded == totals {
			t.Logf("done after %v", time.Since(began).Round(time.Millisecond))
			return
		}
	}
	t.Fatalf("the sink topic folds to\n%s\nthe view is\n%s", folded, totals)
}
