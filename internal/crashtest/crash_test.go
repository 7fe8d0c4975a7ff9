//go:build unix

package crashtest

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/oracle"
)

var (
	flagKills    = flag.Int("crashtest.kills", 50, "how many times TestCrashRecovery kills and restarts the writer process")
	flagSeed     = flag.Uint64("crashtest.seed", 0, "seed of the workload and kill timing; 0 picks one from the clock")
	flagMaxDelay = flag.Duration("crashtest.maxdelay", 1200*time.Millisecond, "the longest a writer process runs before it is killed")
	flagKeep     = flag.Bool("crashtest.keep", false, "keep the test directory even when the test passes")
)

// The child process is the test binary itself, told by these variables to
// run the writer instead of the tests.
const (
	envChild = "ROCKSTREAM_CRASHTEST_CHILD" // the test directory
	envSeed  = "ROCKSTREAM_CRASHTEST_SEED"
	envRun   = "ROCKSTREAM_CRASHTEST_RUN"
)

func TestMain(m *testing.M) {
	if root := os.Getenv(envChild); root != "" {
		err := runChild(root)
		fmt.Fprintf(os.Stderr, "crashtest writer process: %v\n", err)
		os.Exit(3)
	}
	// The checks open the store after every kill; its start-up lines would
	// bury the test's output.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}

// runChild is the writer process: it opens the store, completes the
// schema, and runs the workload until it is killed. It returns only on a
// failure.
func runChild(root string) error {
	seed, err := strconv.ParseUint(os.Getenv(envSeed), 10, 64)
	if err != nil {
		return err
	}
	run, err := strconv.Atoi(os.Getenv(envRun))
	if err != nil {
		return err
	}
	go exitWithParent()
	j, err := openJournal(filepath.Join(root, "journal"))
	if err != nil {
		return err
	}
	// Each run steps the views on the next of the test's worker counts,
	// splitting every step: the store must recover whatever the number
	// that wrote it.
	ws := oracle.TestWorkers()
	db, err := rockstream.Open(rockstream.Options{Storage: filepath.Join(root, "db"), CacheBytes: 16 << 20,
		Workers: ws[run%len(ws)], ParallelMinRows: 1})
	if err != nil {
		return fmt.Errorf("opening the store: %w", err)
	}
	if err := j.append(record{T: recOpen, Run: run, Epoch: db.Epoch()}, true); err != nil {
		return err
	}
	ctx := context.Background()
	if err := createSchema(ctx, db, func(i int) { fmt.Printf("ddl %d\n", i) }); err != nil {
		return err
	}
	var parts [slots]*partition
	for w := range parts {
		parts[w] = newPartition()
	}
	if _, err := readPartitions(ctx, db, &parts); err != nil {
		return err
	}
	if err := j.append(record{T: recReady, Run: run}, true); err != nil {
		return err
	}
	fmt.Println("ready")
	err = runWorkload(ctx, db, j, parts, seed, run)
	if err == nil {
		err = errors.New("the workload stopped")
	}
	return err
}

// exitWithParent ends the writer process if the test that started it has
// gone, so that no writer outlives a test run.
func exitWithParent() {
	parent := os.Getppid()
	for {
		time.Sleep(200 * time.Millisecond)
		if os.Getppid() != parent {
			os.Exit(0)
		}
	}
}

// TestCrashRecovery kills a writer process with SIGKILL at random moments,
// restarts it on the same directory, and checks the recovered store after
// every kill (see the package documentation).
func TestCrashRecovery(t *testing.T) {
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	root, err := os.MkdirTemp("", "rockstream-crashtest-")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	v := newVerifier(root)
	c := &crasher{root: root, seed: seed, rng: rng, maxDelay: *flagMaxDelay}
	start := time.Now()
	var checking time.Duration
	for kill := 1; kill <= *flagKills; kill++ {
		err := c.crashOnce(kill, v.present)
		if err == nil {
			t0 := time.Now()
			err = v.check(context.Background())
			checking += time.Since(t0)
		}
		if err != nil {
			t.Fatalf("crash test failed at kill %d of %d (%s)\n  seed: %d\n  directory (kept): %s\n  reproduce: go test ./internal/crashtest/ -run 'TestCrashRecovery$' -crashtest.seed=%d -crashtest.kills=%d -crashtest.maxdelay=%v\n%v",
				kill, *flagKills, c.last, seed, root, seed, *flagKills, *flagMaxDelay, err)
		}
	}
	s := v.stats
	t.Logf("%d kills in %v (checks %v; %d while creating the schema, %d while opening the store), %d transactions acknowledged, %d in doubt at a kill found committed and %d not, %d rolled back or failed as intended, %d epochs, seed %d",
		*flagKills, time.Since(start).Round(time.Millisecond), checking.Round(time.Millisecond), c.ddl, c.early, s.acked, s.doubtApplied, s.doubtLost, s.nacked, v.epoch, seed)
	if *flagKeep {
		t.Logf("directory: %s", root)
		return
	}
	os.RemoveAll(root)
}

// crasher starts writer processes and kills them.
type crasher struct {
	root     string
	seed     uint64
	rng      *rand.Rand
	maxDelay time.Duration
	// startup is how long the last writer took to become ready.
	startup time.Duration
	early   int    // kills before the writer was ready
	ddl     int    // kills aimed at a CREATE of the schema
	last    string // what the last kill did
}

// crashOnce starts writer run n, kills it at a random moment and waits
// for it to die. It fails if the writer dies by itself or never becomes
// ready. present is how many relations of the schema the store holds.
func (c *crasher) crashOnce(n, present int) error {
	c.last = fmt.Sprintf("writer run %d, not killed yet", n)
	logPath := filepath.Join(c.root, "writer.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashRecovery$")
	cmd.Env = append(os.Environ(), envChild+"="+c.root, envSeed+"="+strconv.FormatUint(c.seed, 10), envRun+"="+strconv.Itoa(n))
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	// The writer prints "ddl i" before the i-th statement of the schema
	// and "ready" once the workload starts: a dozen lines in all.
	lines := make(chan string, 64)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		exited <- cmd.Wait()
	}()
	died := func(err error) error {
		out, _ := os.ReadFile(logPath)
		return fmt.Errorf("the writer process exited by itself (%v) before it was killed:\n%s", err, out)
	}
	// await reads the writer's lines until want; it reports false if the
	// timer fires first.
	await := func(want string, timer <-chan time.Time) (bool, error) {
		for {
			select {
			case err := <-exited:
				return false, died(err)
			case l := <-lines:
				if l == "ready" {
					c.startup = time.Since(started)
				}
				if l == want {
					return true, nil
				}
			case <-timer:
				return false, nil
			}
		}
	}

	switch {
	case n <= 3 && present < len(schema):
		// While the schema is incomplete, the first runs are killed
		// during one of its CREATE statements; the first run, half the
		// time, during the very first.
		i := present + c.rng.IntN(len(schema)-present)
		if n == 1 && c.rng.IntN(2) == 0 {
			i = 0
		}
		if ok, err := await(fmt.Sprintf("ddl %d", i), time.After(time.Minute)); !ok {
			return c.stuck(cmd, exited, err)
		}
		delay := time.Duration(c.rng.Int64N(int64(2 * time.Millisecond)))
		time.Sleep(delay)
		c.ddl++
		c.last = fmt.Sprintf("writer killed %v after it started creating %s", delay, schema[i].name)
	case c.rng.IntN(7) == 0:
		// While the writer opens the store and recovers.
		window := c.startup
		if window == 0 {
			window = 30 * time.Millisecond
		}
		delay := time.Duration(c.rng.Int64N(int64(window) + 1))
		ready, err := await("ready", time.After(delay))
		if err != nil {
			return err
		}
		if !ready {
			c.early++
		}
		c.last = fmt.Sprintf("writer killed %v after its start (ready: %v)", delay, ready)
	default:
		// Mid-burst: often soon after the writers start, otherwise later.
		if ok, err := await("ready", time.After(time.Minute)); !ok {
			return c.stuck(cmd, exited, err)
		}
		delay := time.Duration(c.rng.Int64N(int64(c.maxDelay) + 1))
		if c.rng.IntN(2) == 0 {
			delay /= 8
		}
		if _, err := await("", time.After(delay)); err != nil {
			return err
		}
		c.last = fmt.Sprintf("writer killed %v after it became ready", delay)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	err = <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
		out, _ := os.ReadFile(logPath)
		return fmt.Errorf("the writer process ended with %v, not by the kill:\n%s", err, out)
	}
	return nil
}

// stuck ends a writer that did not reach the point it was awaited at.
func (c *crasher) stuck(cmd *exec.Cmd, exited chan error, err error) error {
	if err != nil {
		return err
	}
	cmd.Process.Kill()
	<-exited
	out, _ := os.ReadFile(filepath.Join(c.root, "writer.log"))
	return fmt.Errorf("the writer process did not get through its start within a minute:\n%s", out)
}
