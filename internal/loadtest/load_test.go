package loadtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/gateway"
	"github.com/rockstream/rockstream/internal/instance"
)

var (
	duration    = flag.Duration("load.duration", 60*time.Second, "how long the mixed workload runs")
	connections = flag.Int("load.connections", 200, "concurrent client connections")
)

// TestMixedLoad runs writers, readers and subscribers concurrently for
// -load.duration and checks what each observed, then that the server left
// nothing behind.
func TestMixedLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the load test runs for a minute")
	}
	baseGoroutines, baseHeap := settle()

	eng, err := instance.Open(instance.Options{Storage: t.TempDir(), Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := gateway.New(eng, gateway.Config{MaxConnections: *connections + 10})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	dsn := fmt.Sprintf("postgres://load@%s/rockstream?sslmode=disable", ln.Addr())

	ctx := context.Background()
	setup, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE events (id bigint PRIMARY KEY, writer int NOT NULL, v int NOT NULL)",
		"CREATE MATERIALIZED VIEW per_writer AS SELECT writer, count(*) AS n, sum(v) AS s FROM events GROUP BY writer",
		"CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n FROM events",
	} {
		if _, err := setup.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	w := &workload{dsn: dsn, deadline: time.Now().Add(*duration)}
	nSubscribers := max(*connections/10, 1)
	nReaders := max(*connections*3/10, 1)
	nWriters := *connections - nSubscribers - nReaders
	w.acked = make([]atomic.Int64, nWriters)
	w.ids = make([][]int64, nWriters)
	var wg sync.WaitGroup
	errc := make(chan error, *connections)
	start := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errc <- err
			}
		}()
	}
	for i := 0; i < nWriters; i++ {
		start(func() error { return w.writer(i) })
	}
	for i := 0; i < nReaders; i++ {
		start(func() error { return w.reader(i) })
	}
	for i := 0; i < nSubscribers; i++ {
		start(w.subscriber)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Every acknowledged write is there exactly once; nothing else is.
	var want []int64
	for _, ids := range w.ids {
		want = append(want, ids...)
	}
	rows, err := setup.Query(ctx, "SELECT id FROM events")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events holds %d rows, the writers were acknowledged %d", len(got), len(want))
	}
	var total int64
	if err := setup.QueryRow(ctx, "SELECT n FROM total").Scan(&total); err != nil || total != int64(len(want)) {
		t.Fatalf("total view: %d (%v), want %d", total, err, len(want))
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d connections for %v: %d rows written (%.0f/s), %d reads, %d subscription rows",
		*connections, *duration, len(want), float64(len(want))/duration.Seconds(), w.reads.Load(), w.subscribed.Load())
	setup.Close(ctx)

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, gateway.ErrServerClosed) {
		t.Fatalf("Serve returned %v, want ErrServerClosed", err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	// Back to baseline: no goroutine left behind, the heap about as before.
	var goroutines int
	var heap uint64
	for deadline := time.Now().Add(10 * time.Second); ; {
		goroutines, heap = settle()
		if goroutines <= baseGoroutines+2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if goroutines > baseGoroutines+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after shutdown, %d before the server started:\n%s",
			goroutines, baseGoroutines, buf[:runtime.Stack(buf, true)])
	}
	if heap > 2*baseHeap+32<<20 {
		t.Fatalf("heap in use after shutdown is %d MiB, %d MiB before", heap>>20, baseHeap>>20)
	}
}

// settle collects garbage and returns the goroutine count and heap in use.
func settle() (int, uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapInuse
}

// workload is the shared state of the load's clients.
type workload struct {
	dsn      string
	deadline time.Time
	// acked[w] counts writer w's acknowledged rows; ids[w] lists them
	// (written only by writer w).
	acked []atomic.Int64
	ids   [][]int64

	reads, subscribed atomic.Int64
}

// writer inserts rows one at a time and in small transactions, some of
// which it rolls back, recording the rows the server acknowledged.
func (w *workload) writer(n int) error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, w.dsn)
	if err != nil {
		return fmt.Errorf("writer %d: %w", n, err)
	}
	defer c.Close(ctx)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	next := int64(n) << 32
	for i := 0; time.Now().Before(w.deadline); i++ {
		switch {
		case i%10 == 9: // a transaction of three rows, committed or rolled back
			commit := i%20 != 19
			tx, err := c.Begin(ctx)
			if err != nil {
				return fmt.Errorf("writer %d: begin: %w", n, err)
			}
			ids := []int64{next, next + 1, next + 2}
			next += 3
			for _, id := range ids {
				if _, err := tx.Exec(ctx, "INSERT INTO events VALUES ($1, $2, $3)", id, n, rng.IntN(100)); err != nil {
					return fmt.Errorf("writer %d: insert in transaction: %w", n, err)
				}
			}
			if !commit {
				if err := tx.Rollback(ctx); err != nil {
					return fmt.Errorf("writer %d: rollback: %w", n, err)
				}
				continue
			}
			if err := tx.Commit(ctx); err != nil {
				return fmt.Errorf("writer %d: commit: %w", n, err)
			}
			w.ids[n] = append(w.ids[n], ids...)
			w.acked[n].Add(3)
		default:
			id := next
			next++
			if _, err := c.Exec(ctx, "INSERT INTO events VALUES ($1, $2, $3)", id, n, rng.IntN(100)); err != nil {
				return fmt.Errorf("writer %d: insert: %w", n, err)
			}
			w.ids[n] = append(w.ids[n], id)
			w.acked[n].Add(1)
		}
	}
	return nil
}

// reader reads the views and checks that they never go backwards and
// include every write acknowledged before the read began.
func (w *workload) reader(n int) error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, w.dsn)
	if err != nil {
		return fmt.Errorf("reader %d: %w", n, err)
	}
	defer c.Close(ctx)
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	var lastTotal int64
	for time.Now().Before(w.deadline) {
		writer := rng.IntN(len(w.acked))
		floor := w.acked[writer].Load()
		var got int64
		err := c.QueryRow(ctx, "SELECT n FROM per_writer WHERE writer = $1", writer).Scan(&got)
		if errors.Is(err, pgx.ErrNoRows) {
			got, err = 0, nil
		}
		if err != nil {
			return fmt.Errorf("reader %d: %w", n, err)
		}
		if got < floor {
			return fmt.Errorf("reader %d: per_writer shows %d rows of writer %d, which had %d acknowledged before the read", n, got, writer, floor)
		}
		var total int64
		if err := c.QueryRow(ctx, "SELECT n FROM total").Scan(&total); err != nil {
			return fmt.Errorf("reader %d: %w", n, err)
		}
		if total < lastTotal {
			return fmt.Errorf("reader %d: total went back from %d to %d", n, lastTotal, total)
		}
		lastTotal = total
		w.reads.Add(2)
	}
	return nil
}

// subscriber follows the total view through a SUBSCRIBE cursor and checks
// that epochs never go back and the count it reconstructs never shrinks.
func (w *workload) subscriber() error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, w.dsn)
	if err != nil {
		return fmt.Errorf("subscriber: %w", err)
	}
	defer c.Close(ctx)
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "DECLARE c CURSOR FOR SUBSCRIBE total"); err != nil {
		return fmt.Errorf("subscriber: %w", err)
	}
	var lastEpoch, current int64
	for time.Now().Before(w.deadline) {
		rows, err := tx.Query(ctx, "FETCH ALL c WITH (timeout = '1s')")
		if err != nil {
			return fmt.Errorf("subscriber: %w", err)
		}
		// Within an epoch the old count's retraction and the new count's
		// insertion may come in either order: follow the insertions.
		byEpoch := map[int64]int64{}
		var epochs []int64
		for rows.Next() {
			var epoch, diff, n int64
			if err := rows.Scan(&epoch, &diff, &n); err != nil {
				return fmt.Errorf("subscriber: %w", err)
			}
			if epoch < lastEpoch {
				return fmt.Errorf("subscriber: epoch %d after epoch %d", epoch, lastEpoch)
			}
			if diff > 0 {
				if _, ok := byEpoch[epoch]; !ok {
					epochs = append(epochs, epoch)
				}
				byEpoch[epoch] = n
			}
			lastEpoch = epoch
			w.subscribed.Add(1)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("subscriber: %w", err)
		}
		for _, e := range epochs {
			n := byEpoch[e]
			if n < current {
				return fmt.Errorf("subscriber: total went back from %d to %d at epoch %d", current, n, e)
			}
			current = n
		}
	}
	return nil
}
