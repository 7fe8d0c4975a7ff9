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

// crashSchema is the schema of the crash test: an unkeyed table (so that
// a duplicate record would show as a duplicate row), an aggregate over it,
// the source feeding it and a Debezium sink of the aggregate.
var crashSchema = []string{
	"CREATE TABLE t (id int, grp int, val int)",
	"CREATE MATERIALIZED VIEW v AS SELECT grp, count(*) AS n, sum(val) AS total FROM t GROUP BY grp",
	"CREATE SOURCE IF NOT EXISTS t_in FROM KAFKA (brokers = 'BROKERS', topic = 'in', format = 'csv', max_batch = 50) INTO t",
	"CREATE SINK IF NOT EXISTS v_out FROM v INTO KAFKA (brokers = 'BROKERS', topic = 'out', format = 'debezium', key = 'grp')",
}

func openCrashEngine(dir, brokers string) (*runtime.Engine, *connectors.Manager, error) {
	eng, err := instance.Open(instance.Options{Storage: dir, CacheBytes: 8 << 20})
	if err != nil {
		return nil, nil, err
	}
	s := eng.NewSession()
	defer s.Close()
	for _, q := range crashSchema {
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

// TestCrashExactlyOnce kills an engine process running a Kafka source and
// a Kafka sink with SIGKILL at random moments while records keep arriving,
// restarting it each time. At the end the table holds every produced
// record exactly once, the view equals its recomputation, and the sink's
// topic, read with read_committed and folded by key, equals the view —
// with no change delivered twice (a duplicate would break the fold).
func TestCrashExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test runs processes for tens of seconds")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := strings.Join(c.ListenAddrs(), ",")
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)

	// The producer writes N records over the test's run, in small bursts.
	const total = 3000
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produced := make(chan error, 1)
	go func() {
		for id := 0; id < total; {
			var recs []*kgo.Record
			for i := 0; i < 20 && id < total; i++ {
				recs = append(recs, &kgo.Record{Topic: "in", Key: fmt.Appendf(nil, "%d", id), Value: fmt.Appendf(nil, "%d,%d,%d", id, id%7, id%100)})
				id++
			}
			if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
				produced <- err
				return
			}
			time.Sleep(15 * time.Millisecond)
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
	h.eventually("SELECT count(*), count(DISTINCT id), min(id), max(id), sum(val) FROM t",
		fmt.Sprintf("%d,%d,0,%d,%d", total, total, total-1, total/100*4950))
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	view := sortedLines(h.query("SELECT grp, n, total FROM v"))

	// Fold the sink's topic: a create of a present key, or an update or
	// delete whose "before" is not the current row, is a duplicate or a
	// loss.
	deadline := time.Now().Add(30 * time.Second)
	var folded string
	for time.Now().Before(deadline) {
		recs := consumeCommitted(t, c.ListenAddrs(), "out", 1<<30, 2*time.Second)
		folded, err = foldDebezium(recs, []string{"grp", "n", "total"})
		if err != nil {
			t.Fatal(err)
		}
		if folded == view {
			return
		}
	}
	t.Fatalf("the sink topic folds to\n%s\nthe view is\n%s", folded, view)
}
