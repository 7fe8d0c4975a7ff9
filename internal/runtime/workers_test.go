package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// workerViews are views of every kind of routing: keyed by a group, a
// join key, a partition and the whole row, and single (no GROUP BY, a
// global LIMIT, a recursive query, a cross join).
var workerViews = []string{
	"CREATE MATERIALIZED VIEW agg AS SELECT g, count(*), sum(v), min(v), max(s), avg(v) FROM t GROUP BY g",
	"CREATE MATERIALIZED VIEW joined AS SELECT u.name, count(*) AS n, sum(t.v) FROM t JOIN u ON t.g = u.g GROUP BY u.name",
	"CREATE MATERIALIZED VIEW total AS SELECT count(*), sum(v), max(v) FROM t",
	"CREATE MATERIALIZED VIEW top AS SELECT id, v FROM t ORDER BY v DESC, id LIMIT 5",
	"CREATE MATERIALIZED VIEW dist AS SELECT DISTINCT g % 3 AS m, s FROM t",
	"CREATE MATERIALIZED VIEW lj AS SELECT u.g, u.name, t.id FROM u LEFT JOIN t ON t.g = u.g",
	"CREATE MATERIALIZED VIEW ranked AS SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY v, id) AS rn FROM t",
	"CREATE MATERIALIZED VIEW missing AS SELECT g FROM t EXCEPT SELECT g FROM u",
	"CREATE MATERIALIZED VIEW semi AS SELECT * FROM u WHERE g IN (SELECT g FROM t WHERE v > 50)",
	"CREATE MATERIALIZED VIEW pairs AS SELECT a.name, b.name AS other FROM u a, u b WHERE a.g < b.g",
	"CREATE MATERIALIZED VIEW reach AS WITH RECURSIVE r(n) AS (SELECT g FROM u UNION SELECT n + 1 FROM r WHERE n < 12) SELECT n, count(*) FROM r GROUP BY n",
	"CREATE MATERIALIZED VIEW above AS SELECT id FROM t WHERE v > (SELECT avg(v) FROM t)",
	// Keyed like t's primary key and like u's whole row: the rows of a
	// large write, split by bucket, stay on their workers.
	"CREATE MATERIALIZED VIEW byid AS SELECT id, count(*), sum(v) FROM t WHERE v >= 0 GROUP BY id",
	"CREATE MATERIALIZED VIEW udist AS SELECT DISTINCT * FROM u",
	// Views over views: each steps after the views it reads, the others
	// of its group beside it.
	"CREATE MATERIALIZED VIEW bigagg AS SELECT g, sum FROM agg WHERE count > 1",
	"CREATE MATERIALIZED VIEW overall AS SELECT count(*), sum(sum) FROM bigagg",
}

// TestWorkersWriteTheSameStore runs one random workload of inserts,
// updates, deletes, transaction blocks and views created part way, on
// engines stepping on 1, 2, 3 and 8 workers (every step split however
// small), and after every statement compares the engines' whole stores
// byte for byte: table rows, view contents, operator state, change logs
// and metadata (the views' rows and change logs written split between
// the workers by bucket after every split step). So every result, view and change log on N workers is the
// one on one worker, and a store does not depend on the number that
// wrote it. Its UPDATEs and DELETEs scan, and some fail on a row whose
// values their error message shows: the error on N workers is the one
// of the first failing row in key order, as on one. Run under -race, it also checks the workers for data races.
func TestWorkersWriteTheSameStore(t *testing.T) { workersWriteTheSameStore(t, 1) }

// TestWorkersWriteTheSameStoreUnsplit is TestWorkersWriteTheSameStore
// with no step or write split between the workers, and every view group
// and every table write taking the concurrent path instead: the views of
// a group step at once (viewgroups.go), and a table's rows are written
// beside its views' steps (tablebeside.go).
func TestWorkersWriteTheSameStoreUnsplit(t *testing.T) {
	defer func(v, b int) { viewsMinRows, besideMinRows = v, b }(viewsMinRows, besideMinRows)
	viewsMinRows, besideMinRows = 1, 1
	workersWriteTheSameStore(t, 1<<30)
}

// TestWorkersWriteTheSameStoreChunked is TestWorkersWriteTheSameStore
// with changes taken through the views in chunks of 7 rows (and
// backfills stepped 11 rows at a time), and only the changes of 30 rows
// or more split: the chunks of a split change, all smaller than that,
// split between the workers too (chunkParallelism), the chunks of a
// change split by bucket each split by the same key.
func TestWorkersWriteTheSameStoreChunked(t *testing.T) {
	defer SetEpochChunkRows(7)()
	defer SetBackfillProgress(11, time.Hour, time.Hour)()
	workersWriteTheSameStore(t, 30)
}

func workersWriteTheSameStore(t *testing.T, minRows int) {
	// Every view output of a split step is written split too.
	defer func(v int) { viewWriteMinRows = v }(viewWriteMinRows)
	viewWriteMinRows = 1
	ctx := context.Background()
	counts := []int{1, 2, 3, 8}
	var engines []*Engine
	var sessions []*Session
	for _, n := range counts {
		e, err := Open(NewMemoryStore(), Options{Workers: n, ParallelMinRows: minRows})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		engines = append(engines, e)
		sessions = append(sessions, e.NewSession())
	}
	exec := func(sql string) {
		t.Helper()
		var first string
		for i, s := range sessions {
			res, err := s.Exec(ctx, sql, nil)
			got := fmt.Sprintf("%v %v", errs.SQLState(err), err)
			if err == nil {
				got = fmt.Sprintf("%s %v", res.Tag, res.Rows)
			}
			if i == 0 {
				first = got
			} else if got != first {
				t.Fatalf("%s\non %d workers: %s\non 1 worker: %s", sql, counts[i], got, first)
			}
		}
		want := dumpStore(t, engines[0])
		for i, e := range engines[1:] {
			if got := dumpStore(t, e); got != want {
				t.Fatalf("after %s\nthe store on %d workers differs from the store on 1:\n%s", sql, counts[i+1], firstDifference(want, got))
			}
		}
	}
	exec("CREATE TABLE t (id int PRIMARY KEY, g int, v bigint, s text)")
	exec("CREATE TABLE u (g int, name text)")
	exec("CREATE INDEX ON t (g, v)")
	exec("CREATE INDEX ON u (name)")
	rng := rand.New(rand.NewPCG(1, 2))
	views := 0
	for step := range 8 * (len(workerViews) + 1) {
		if step%8 == 0 && views < len(workerViews) {
			exec(workerViews[views])
			views++
		}
		if step == 20 {
			exec("CREATE INDEX ON joined (n)") // a view's index, built on its rows
		}
		switch rng.IntN(10) {
		case 0, 1:
			var rows []string
			for range 1 + rng.IntN(40) {
				rows = append(rows, fmt.Sprintf("(%d, %d, %d, 's%d')", rng.IntN(400), rng.IntN(12), rng.IntN(100), rng.IntN(5)))
			}
			exec("INSERT INTO t VALUES " + strings.Join(rows, ", ") + " ON CONFLICT (id) DO UPDATE SET v = excluded.v")
		case 2:
			exec(fmt.Sprintf("UPDATE t SET v = v + %d, g = (g + 1) %% 12 WHERE g = %d", rng.IntN(30), rng.IntN(12)))
		case 3:
			exec(fmt.Sprintf("DELETE FROM t WHERE id %% %d = %d", 2+rng.IntN(5), rng.IntN(2)))
		case 4:
			exec(fmt.Sprintf("INSERT INTO u VALUES (%d, 'n%d'), (%d, 'n%d')", rng.IntN(12), rng.IntN(6), rng.IntN(12), rng.IntN(6)))
		case 5:
			exec(fmt.Sprintf("DELETE FROM u WHERE g = %d", rng.IntN(12)))
		case 6:
			exec("BEGIN")
			exec(fmt.Sprintf("INSERT INTO t VALUES (%d, 3, 7, 'b')", 400+step))
			exec(fmt.Sprintf("UPDATE u SET g = g + 1 WHERE name = 'n%d'", rng.IntN(6)))
			exec(fmt.Sprintf("DELETE FROM t WHERE v < %d", rng.IntN(20)))
			exec("COMMIT")
		case 7:
			// The first row in key order whose SET fails names itself
			// in the error.
			exec(fmt.Sprintf("UPDATE t SET v = CASE WHEN v > %d THEN (s || id::text)::bigint ELSE v + 1 END WHERE g <> %d", 60+rng.IntN(50), rng.IntN(12)))
		case 8:
			// So does the first whose WHERE fails.
			exec(fmt.Sprintf("DELETE FROM t WHERE CASE WHEN v > %d THEN (s || id::text)::int > 0 ELSE v %% 5 = %d END", 70+rng.IntN(40), rng.IntN(5)))
		case 9:
			exec(fmt.Sprintf("UPDATE t SET s = NULLIF(s, 's%d') || 'u', v = v %% 97 WHERE id %% 3 = %d RETURNING id, s, v", rng.IntN(5), rng.IntN(3)))
		}
	}
	exec("INSERT INTO t VALUES (1, 1, 1, 'x')") // a duplicate key fails the same way everywhere
	// Split between workers, the first row in order that repeats a key
	// (a stored one, or an earlier row's) names itself.
	exec("INSERT INTO t SELECT i, i % 12, i, 'k' FROM generate_series(1000, 1040) i")
	exec("INSERT INTO t VALUES (2000, 1, 1, 'a'), (2001, 1, 1, 'b'), (2002, 1, 1, 'c'), (2001, 2, 2, 'd'), (1020, 1, 1, 'e')")
	exec("INSERT INTO t VALUES (2000, 1, 1, 'a'), (2001, 1, 1, 'b'), (1030, 1, 1, 'c'), (2001, 2, 2, 'd'), (1020, 1, 1, 'e')")
	exec("INSERT INTO t SELECT i, i % 12, i, 'm' FROM generate_series(2000, 2100) i")
	// An append-only table's rows, split, keep their arrival order.
	exec("CREATE TABLE a (x int, y text) APPEND ONLY")
	exec("CREATE MATERIALIZED VIEW adist AS SELECT DISTINCT * FROM a")
	exec("CREATE MATERIALIZED VIEW agroup AS SELECT y, count(*), min(x) FROM a GROUP BY y")
	exec("CREATE INDEX ON a (y)")
	for i := range 3 {
		exec(fmt.Sprintf("INSERT INTO a SELECT i %% 50, 'y' || (i %% 7) FROM generate_series(%d, %d) i", i*100, i*100+150))
	}
	for _, e := range engines {
		if err := e.VerifyViews(); err != nil {
			t.Fatal(err)
		}
	}
}

// dumpStore renders every key and value of an engine's store.
func dumpStore(t *testing.T, e *Engine) string {
	t.Helper()
	e.mu.RLock()
	defer e.mu.RUnlock()
	var sb strings.Builder
	if err := e.mu.store.Scan(nil, nil, func(k, v []byte) bool {
		fmt.Fprintf(&sb, "%x = %x\n", k, v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// firstDifference shows the first line where two dumps differ.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  1 worker: %s\n  N workers: %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("one dump has %d lines, the other %d", len(al), len(bl))
}
