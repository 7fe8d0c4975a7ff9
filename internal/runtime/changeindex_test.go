package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rockstream/rockstream/internal/storage"
)

// TestChangeIndexMatchesScan drives views through random epochs on a
// durable store (inserts, updates and deletes, statements that fail,
// transaction blocks with savepoints rolled back, views dropped and
// created again, trims to a short retention horizon, and reopens with
// another number of workers) and checks after each step that the
// change-log index is exactly what a scan of every bucket finds, and
// that readChanges and lastChange through it return exactly what they
// return scanning all 256 buckets.
func TestChangeIndexMatchesScan(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 11))
	const retention = 20
	open := func(workers int) *Engine {
		st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog, Durability: storage.Relaxed})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := Open(st, Options{ChangeLogRetention: retention, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	eng := open(1)
	run := sqlRunner(t)
	s := eng.NewSession()
	run(s, "CREATE TABLE t (k int PRIMARY KEY, g int, v int)")
	views := map[string]string{
		// routed by its group key: an epoch touches the buckets of the
		// groups it changes
		"groups": "SELECT g, sum(v) AS s, count(*) AS n FROM t GROUP BY g",
		// routed by the whole row
		"rows": "SELECT k, v FROM t WHERE v % 3 <> 0",
		// one row, one bucket
		"total": "SELECT count(*) AS n, sum(v) AS s FROM t",
	}
	names := []string{"groups", "rows", "total"}
	for _, n := range names {
		run(s, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, views[n]))
	}
	check := func(step int) {
		t.Helper()
		eng.mu.RLock()
		defer eng.mu.RUnlock()
		cr := currentReader{eng.mu.store, eng}
		frontier := eng.mu.epoch
		for _, v := range eng.mu.cat.matviewsInOrder() {
			want, err := scanBucketEpochs(eng.mu.store, v.id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := eng.logs.lookup(eng.mu.store, v.id)
			if err != nil {
				t.Fatal(err)
			}
			if *got != *want {
				t.Fatalf("step %d, view %s: index %v, store %v", step, v.name, got.after(0), want.after(0))
			}
			gl, gok, err := lastChange(cr, v.id)
			if err != nil {
				t.Fatal(err)
			}
			wl, wok, err := lastChange(eng.mu.store, v.id)
			if err != nil {
				t.Fatal(err)
			}
			if gl != wl || gok != wok {
				t.Fatalf("step %d, view %s: lastChange %d %v, scanning %d %v", step, v.name, gl, gok, wl, wok)
			}
			afters := []uint64{frontier - 1, uint64(rng.IntN(int(frontier) + 1))}
			if step%16 == 0 {
				afters = append(afters, 0, frontier)
			}
			for _, after := range afters {
				for _, upTo := range []uint64{frontier, after + uint64(rng.IntN(5))} {
					got, err := readChanges(cr, v.id, after, upTo)
					if err != nil {
						t.Fatal(err)
					}
					want, err := scanChanges(eng.mu.store, v.id, after, upTo, everyBucket)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("step %d, view %s, (%d, %d]: index read %d changes, scan %d", step, v.name, after, upTo, len(got), len(want))
					}
				}
			}
		}
	}
	exec := func(sql string) {
		// Statements may fail (a duplicate key): a failed statement
		// leaves nothing of its writes.
		_, _ = s.Exec(ctx, sql, nil)
	}
	for step := 0; step < 260; step++ {
		k := rng.IntN(40)
		switch r := rng.IntN(20); {
		case r < 8:
			exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d)", k, rng.IntN(6), rng.IntN(50)))
		case r < 11:
			exec(fmt.Sprintf("UPDATE t SET v = v + %d WHERE k %% 7 = %d", rng.IntN(5)+1, k%7))
		case r < 14:
			exec(fmt.Sprintf("DELETE FROM t WHERE k %% 5 = %d", k%5))
		case r < 15:
			// Several rows in one epoch, over many buckets.
			exec(fmt.Sprintf("INSERT INTO t SELECT k + 100, k %% 9, k FROM generate_series(%d, %d) AS k ON CONFLICT (k) DO UPDATE SET v = excluded.v + 1", k, k+rng.IntN(60)))
		case r < 16:
			run(s, "BEGIN")
			exec(fmt.Sprintf("INSERT INTO t VALUES (%d, 1, 1) ON CONFLICT (k) DO NOTHING", k+200))
			run(s, "SAVEPOINT a")
			exec(fmt.Sprintf("UPDATE t SET g = g + 1 WHERE k %% 3 = %d", k%3))
			run(s, "SELECT count(*) FROM groups") // carries the block's changes to the views
			if rng.IntN(2) == 0 {
				run(s, "ROLLBACK TO SAVEPOINT a")
			}
			run(s, "COMMIT")
		case r < 17:
			n := names[rng.IntN(len(names))]
			if rng.IntN(2) == 0 {
				// Dropped in the epoch that changed it.
				run(s, "BEGIN")
				exec(fmt.Sprintf("DELETE FROM t WHERE k = %d", k))
				run(s, "SELECT count(*) FROM "+n)
				run(s, "DROP MATERIALIZED VIEW "+n)
				run(s, "COMMIT")
			} else {
				run(s, "DROP MATERIALIZED VIEW "+n)
			}
			run(s, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, views[n]))
		case r < 18:
			s.Close()
			if err := eng.Close(); err != nil {
				t.Fatal(err)
			}
			eng = open(1 + rng.IntN(4))
			s = eng.NewSession()
		default:
			// Epochs that change no view: the trim epochs come sooner.
			run(s, "CREATE TABLE IF NOT EXISTS pad (x int)")
			exec(fmt.Sprintf("INSERT INTO pad VALUES (%d)", k))
		}
		check(step)
	}
	if eng.Epoch() < 3*trimEvery {
		t.Fatalf("only %d epochs: the test trims no log", eng.Epoch())
	}
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
}
