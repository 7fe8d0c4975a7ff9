package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/storage"
)

// TestInsertedRowsMatchPostgres: rows inserted into views are written
// as weight merges, without reading the stored row first (applyDelta).
// Insert-only views over a table receiving the same rows again and again
// (within one statement, across the statements of a block, across
// epochs, split between workers) equal PostgreSQL's, with 1 and 3
// workers, in memory and on disk across a restart; AS OF EPOCH reads an
// earlier epoch's rows, and a subscription's changes add up to the view.
func TestInsertedRowsMatchPostgres(t *testing.T) {
	for _, durable := range []bool{false, true} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("durable=%v/workers=%d", durable, workers), func(t *testing.T) {
				checkInsertedRows(t, durable, workers)
			})
		}
	}
}

func checkInsertedRows(t *testing.T, durable bool, workers int) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *Engine {
		opts := Options{Workers: workers, ParallelMinRows: 2}
		var st Store = NewMemoryStore()
		if durable {
			var err error
			st, err = storage.Open(storage.Options{Dir: filepath.Join(dir, "db"), Logger: quietLog, EpochKey: FrontierKey()})
			if err != nil {
				t.Fatal(err)
			}
		}
		eng, err := Open(st, opts)
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	eng := open()
	defer func() { eng.Close() }()
	pgc := oracleConn(t, "weightmerge")
	s := eng.NewSession()
	mustBoth(t, s, pgc, "CREATE TABLE t (a int, b text)")
	queries := []string{
		"SELECT a, b FROM t WHERE a % 2 = 0",
		// A self-join: a row inserted n times is in the view n² times.
		"SELECT t.b, u.b AS c FROM t JOIN t AS u ON t.a = u.a",
		"SELECT a FROM t UNION ALL SELECT a + 1 FROM t",
	}
	names := createViewsBoth(t, s, pgc, queries)
	o := &joinOracle{t: t, s: s, pg: pgc, views: names, queries: queries}
	var reads []string
	for _, n := range names {
		reads = append(reads, "SELECT * FROM "+n)
	}
	subscribed := mustExec(t, s, "SUBSCRIBE v0 WITH (SNAPSHOT false)")
	sub := subscribed.Subscription
	defer sub.Close()
	folded := &subscriptionState{rows: map[string]int64{}}

	o.step([]string{"INSERT INTO t VALUES (2, 'x'), (2, 'x'), (4, 'y'), (3, 'z'), (2, 'x')"})
	o.step([]string{"INSERT INTO t VALUES (2, 'x')", "INSERT INTO t VALUES (2, 'x'), (6, 'w')", "INSERT INTO t VALUES (6, 'w')"})
	o.step([]string{"INSERT INTO t SELECT g % 7 * 2, 'r' || (g % 5) FROM generate_series(1, 300) AS g"})
	earlier := eng.Epoch()
	want, err := o.theirs(reads)
	if err != nil {
		t.Fatal(err)
	}
	o.step([]string{"INSERT INTO t SELECT g % 7 * 2, 'r' || (g % 5) FROM generate_series(1, 300) AS g"})
	// Retractions read the stored weight; the same rows inserted again
	// afterwards in the same transaction.
	o.step([]string{"DELETE FROM t WHERE a = 2", "INSERT INTO t VALUES (2, 'x'), (2, 'x')"})
	o.step([]string{"INSERT INTO t VALUES (8, 'v')", "DELETE FROM t WHERE a = 8", "INSERT INTO t VALUES (8, 'v'), (8, 'v')"})
	checkAsOf := func() {
		t.Helper()
		for i, q := range reads {
			if got := o.ours(fmt.Sprintf("%s AS OF EPOCH %d", q, earlier)); !slices.Equal(got, want[i]) {
				t.Errorf("%s AS OF EPOCH %d:\n  %s\nwant\n  %s", q, earlier, strings.Join(got, "\n  "), strings.Join(want[i], "\n  "))
			}
		}
	}
	checkAsOf()
	now := viewContents(t, s, "v0")
	for !equalCounts(folded.rows, now) {
		rows, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("the subscription's changes add up to %v, the view is %v: %v", folded.rows, now, err)
		}
		folded.apply(t, rows, subscribed.Columns)
	}
	if !durable {
		return
	}
	sub.Close()
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng = open()
	o.s = eng.NewSession()
	o.same(reads...)
	checkAsOf()
	o.step([]string{"INSERT INTO t VALUES (2, 'x'), (4, 'y'), (4, 'y')"})
	o.step([]string{"INSERT INTO t SELECT g % 7 * 2, 'r' || (g % 5) FROM generate_series(1, 100) AS g"})
}
