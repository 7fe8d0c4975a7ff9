package runtime

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The lookup-join oracle test maintains views whose inner joins read a
// keyed table by its primary key (lookupjoin.go) through random
// transactions on 1 and 3 workers, and after every transaction compares
// each view with PostgreSQL, as joinOracle does. Transactions change
// both sides of the joins in one epoch (the fact rows and the looked-up
// rows under the same keys), move primary keys, and delete and insert a
// key in one transaction. The outer, semi-, anti- and mark joins among
// the views read their nullable side by key (ops/lookupouter.go): their
// preserved rows (with duplicates, and NULL keys) flip between padded and
// matched, in and out, as the looked-up rows come and go.

var lookupViews = []string{
	// The keyed table on the right, on the left, behind a filter, with a
	// residual predicate, with a composite key in another order than the
	// join's, and two lookups in one circuit.
	`SELECT f.k, f.x, d.name, d.v FROM fact f JOIN dim d ON f.k = d.id`,
	`SELECT d.id, d.v, f.x FROM dim d JOIN fact f ON d.id = f.k`,
	`SELECT d.name, count(*) AS n, sum(f.x) AS s FROM fact f JOIN dim d ON f.k = d.id WHERE d.v > 1 GROUP BY d.name`,
	`SELECT f.k, d.v FROM fact f JOIN dim d ON f.k = d.id AND f.x < d.v`,
	`SELECT f.x, e.w FROM fact f JOIN dim2 e ON f.a = e.a AND f.b = e.b`,
	`SELECT f.k, d.name, e.w FROM fact f JOIN dim d ON f.k = d.id JOIN dim2 e ON f.a = e.a AND f.b = e.b`,
	`SELECT f.x, d.name FROM (SELECT k, sum(x) AS x FROM fact GROUP BY k) f JOIN dim d ON d.id = f.k`,
	// Read twice: arranged, not looked up.
	`SELECT d1.id, d2.name FROM dim d1 JOIN dim d2 ON d1.v = d2.id`,
	// Only part of the key is joined: arranged.
	`SELECT f.x, e.w FROM fact f JOIN dim2 e ON f.a = e.a`,
	// A LEFT join reads its nullable side by key.
	`SELECT f.k, d.name FROM fact f LEFT JOIN dim d ON f.k = d.id`,
	// A materialized view routed by its group key (v10), looked up by it
	// from a table's side, and from another view's.
	`SELECT k, sum(x) AS sx, count(*) AS n FROM fact GROUP BY k`,
	`SELECT d.id, d.name, s.sx, s.n FROM dim d JOIN v10 s ON d.id = s.k`,
	`SELECT e.a, e.w, s.n FROM v10 s JOIN dim2 e ON s.k = e.w`,
	// Outer joins whose nullable side is looked up: with a residual,
	// mirrored, behind a filter, on a composite key, under an aggregate,
	// as a scalar subquery, and a routed view as the nullable side.
	`SELECT f.k, f.x, d.name, d.v FROM fact f LEFT JOIN dim d ON f.k = d.id AND d.v > f.x`,
	`SELECT d.id, d.v, f.k, f.x FROM dim d RIGHT JOIN fact f ON d.id = f.k`,
	`SELECT f.k, f.x, d.name FROM fact f LEFT JOIN (SELECT * FROM dim WHERE v > 1) d ON f.k = d.id`,
	`SELECT f.x, f.a, e.w FROM fact f LEFT JOIN dim2 e ON f.a = e.a AND f.b = e.b`,
	`SELECT d.name, count(*) AS n, count(d.id) AS m, sum(f.x) AS s FROM fact f LEFT JOIN dim d ON f.k = d.id GROUP BY d.name`,
	`SELECT f.k, f.x, (SELECT d.name FROM dim d WHERE d.id = f.k) AS n FROM fact f`,
	`SELECT d.id, d.name, s.sx FROM dim d LEFT JOIN v10 s ON d.id = s.k`,
	// Semi-, anti- and mark joins whose subquery is looked up.
	`SELECT * FROM fact f WHERE EXISTS (SELECT 1 FROM dim d WHERE d.id = f.k)`,
	`SELECT * FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.id = f.k)`,
	`SELECT * FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.id = f.k AND d.v > f.x)`,
	`SELECT * FROM fact f WHERE f.k IN (SELECT id FROM dim WHERE v > 1)`,
	`SELECT f.x, f.b FROM fact f WHERE (f.a, f.b) IN (SELECT a, b FROM dim2)`,
	`SELECT f.k, f.x, EXISTS (SELECT 1 FROM dim d WHERE d.id = f.k AND d.v < f.x + 1) AS e FROM fact f`,
	`SELECT d.id, d.v FROM dim d WHERE NOT EXISTS (SELECT 1 FROM v10 s WHERE s.k = d.id AND s.n > 1)`,
	// NOT IN and IN in an expression (ANY tests), FULL joins and
	// NULL-safe keys keep their arrangements.
	`SELECT * FROM fact f WHERE f.k NOT IN (SELECT id FROM dim)`,
	`SELECT f.x, f.k IN (SELECT id FROM dim) AS i FROM fact f`,
	`SELECT f.k, d.id FROM fact f FULL JOIN dim d ON f.k = d.id`,
	`SELECT f.x, d.name FROM fact f LEFT JOIN dim d ON f.k IS NOT DISTINCT FROM d.id`,
}

func TestLookupJoinsMatchPostgres(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) { runLookupOracle(t, workers) })
	}
}

func runLookupOracle(t *testing.T, workers int) {
	pgc := oracleConn(t, "lookups")
	eng, err := Open(NewMemoryStore(), Options{Workers: workers, ParallelMinRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := eng.NewSession()
	for _, ddl := range []string{
		"CREATE TABLE dim (id int PRIMARY KEY, name text, v int)",
		"CREATE TABLE dim2 (a int, b bigint, w int, PRIMARY KEY (b, a))",
		"CREATE TABLE fact (k int, a int, b bigint, x int)",
		// Rows before the views: their backfill reads them.
		"INSERT INTO dim VALUES (0, 'p', 1), (1, 'q', 2), (2, 'p', 3)",
		"INSERT INTO dim2 VALUES (0, 0, 5), (1, 0, 6), (1, 1, 7)",
		"INSERT INTO fact VALUES (0, 0, 0, 1), (1, 1, 0, 2), (1, 1, 1, 3), (5, NULL, 1, 4), (NULL, 0, 0, 2)",
	} {
		mustBoth(t, s, pgc, ddl)
	}
	names := createViewsBoth(t, s, pgc, lookupViews)
	// The views that should look up do.
	for i, want := range []string{"lookup dim by (id)", "lookup dim by (id)", "lookup dim by (id)", "lookup dim by (id)",
		"lookup dim2 by (b, a)", "lookup dim2 by (b, a)", "lookup dim by (id)", "", "", "lookup dim by (id)",
		"", "lookup v10 by (k)", "lookup v10 by (k)",
		"join left  on=[f.k = d.id]  residual=(d.v > f.x)  state=arrangement(left by [f.k])  lookup dim by (id)",
		"join right  on=[d.id = f.k]  state=arrangement(right by [f.k])  lookup dim by (id)",
		"lookup dim by (id)", "lookup dim2 by (b, a)", "lookup dim by (id)",
		"single-match  state=arrangement(left by [f.k])  lookup dim by (id)", "lookup v10 by (k)",
		"join semi  on=[f.k = d.id]  state=arrangement(left by [f.k])  lookup dim by (id)",
		"join anti  on=[f.k = d.id]  state=arrangement(left by [f.k])  lookup dim by (id)",
		"lookup dim by (id)", "lookup dim by (id)", "lookup dim2 by (b, a)",
		"join mark  on=[f.k = d.id]  residual=(d.v < (f.x + 1))  state=arrangement(left by [f.k])  lookup dim by (id)",
		"lookup v10 by (k)", "", "", "", ""} {
		got := eng.mu.cat.lookup(names[i]).circuit.Explain()
		if (want == "") != !strings.Contains(got, "lookup ") || want != "" && !strings.Contains(got, want) {
			t.Fatalf("view %s: want %q in its circuit:\n%s", lookupViews[i], want, got)
		}
	}
	o := &joinOracle{t: t, s: s, pg: pgc, views: names, queries: lookupViews}
	o.step([]string{"SELECT 1"})
	rng := rand.New(rand.NewPCG(7, uint64(workers)))
	steps := 150
	if testing.Short() {
		steps = 40
	}
	for range steps {
		var step []string
		for n := 1 + rng.IntN(4); n > 0; n-- {
			step = append(step, lookupDML(rng))
		}
		o.step(step)
	}
}

// lookupDML returns a random statement on fact, dim or dim2 that cannot
// fail: keys collide on purpose and inserts of a present key update it.
func lookupDML(rng *rand.Rand) string {
	small := func() string {
		if rng.IntN(10) == 0 {
			return "NULL"
		}
		return fmt.Sprint(rng.IntN(5))
	}
	key := func() string { return fmt.Sprint(rng.IntN(5)) }
	switch rng.IntN(3) {
	case 0:
		switch rng.IntN(4) {
		case 0, 1:
			return fmt.Sprintf("INSERT INTO fact VALUES (%s, %s, %s, %s), (%s, %s, %s, %s)",
				small(), small(), small(), small(), small(), small(), small(), small())
		case 2:
			return "DELETE FROM fact WHERE k = " + key()
		}
		return fmt.Sprintf("UPDATE fact SET k = %s WHERE x = %s", small(), key())
	case 1:
		switch rng.IntN(5) {
		case 0, 1:
			return fmt.Sprintf("INSERT INTO dim VALUES (%s, '%c', %s) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, name = EXCLUDED.name",
				key(), 'p'+rune(rng.IntN(3)), small())
		case 2:
			return "DELETE FROM dim WHERE id = " + key()
		case 3:
			to := key()
			return fmt.Sprintf("UPDATE dim SET id = %s WHERE id = %s AND NOT EXISTS (SELECT 1 FROM dim WHERE id = %s)", to, key(), to)
		}
		return fmt.Sprintf("UPDATE dim SET v = %s WHERE v = %s", small(), key())
	}
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("INSERT INTO dim2 VALUES (%s, %s, %s) ON CONFLICT (b, a) DO UPDATE SET w = EXCLUDED.w", key(), key(), small())
	case 1:
		return "DELETE FROM dim2 WHERE a = " + key()
	}
	return fmt.Sprintf("UPDATE dim2 SET w = %s WHERE b = %s", small(), key())
}
