package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

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
}

// TestWorkersWriteTheSameStore runs one random workload of inserts,
// updates, deletes, transaction blocks and views created part way, on
// engines stepping on 1, 2, 3 and 8 workers (every step split however
// small), and after every statement compares the engines' whole stores
// byte for byte: table rows, view contents, operator state, change logs
// and metadata. So every result, view and change log on N workers is the
// one on one worker, and a store does not depend on the number that
// wrote it. Its UPDATEs and DELETEs scan, and some fail on a row whose
// values their error message shows: the error on N workers is the one
// of the first failing row in key order, as on one. Run under -race, it also checks the workers for data races.
func TestWorkersWriteTheSameStore(t *testing.T) {
	ctx := context.Background()
	counts := []int{1, 2, 3, 8}
	var engines []*Engine
	var sessions []*Session
	for _, n := range counts {
		e, err := Open(NewMemoryStore(), Options{Workers: n, ParallelMinRows: 1})
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
	rng := rand.New(rand.NewPCG(1, 2))
	views := 0
	for step := range 120 {
		if step%8 == 0 && views < len(workerViews) {
			exec(workerViews[views])
			views++
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
