package runtime

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
)

// splitReadSchema has a relation of every storage order: a table keyed by
// a composite primary key, one keyed by its whole row (with duplicates),
// an append-only table in arrival order, a grouped view routed by its
// group and a view routed by its whole row.
var splitReadSchema = []string{
	"CREATE TABLE pk (a int, b int, v text, PRIMARY KEY (a, b))",
	"CREATE TABLE bag (a int, v text)",
	"CREATE TABLE log (a int, v text) APPEND ONLY",
	"CREATE MATERIALIZED VIEW grp AS SELECT a, count(*) AS n, max(v) AS m FROM bag GROUP BY a",
	"CREATE MATERIALIZED VIEW rows AS SELECT v, a FROM pk",
}

// splitReadQueries read the relations by key ranges that visit every
// bucket (the routing key is not fixed), one range or several.
var splitReadQueries = map[string]string{
	"pk":  "SELECT * FROM pk WHERE a >= 10 AND a < 200",
	"grp": "SELECT * FROM grp WHERE a BETWEEN 10 AND 100",
	"bag": "SELECT * FROM bag WHERE a IN (3, 7, 11)",
}

// TestSplitReadsAreTheSame checks that reading a relation whole, and by
// key ranges over every bucket, returns the same batch in the same order
// on 1, 2, 3 and 8 workers, split whatever the relation's size or only
// when it is large, as the read on one goroutine does.
func TestSplitReadsAreTheSame(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		eng := OpenMemory()
		defer eng.Close()
		s := eng.NewSession()
		ctx := context.Background()
		exec := func(q string) {
			if _, err := s.Exec(ctx, q, nil); err != nil {
				rt.Fatalf("%s: %v", q, err)
			}
		}
		for _, q := range splitReadSchema {
			exec(q)
		}
		n := rapid.IntRange(0, 1500).Draw(rt, "rows")
		span := rapid.IntRange(1, 400).Draw(rt, "span")
		var pk, bag []string
		for i := range n {
			a := rapid.IntRange(0, span).Draw(rt, "a")
			v := fmt.Sprintf("'v%d'", rapid.IntRange(0, 9).Draw(rt, "v"))
			pk = append(pk, fmt.Sprintf("(%d, %d, %s)", a, i, v))
			bag = append(bag, fmt.Sprintf("(%d, %s)", a, v))
		}
		if n > 0 {
			exec("INSERT INTO pk VALUES " + strings.Join(pk, ", "))
			exec("INSERT INTO bag VALUES " + strings.Join(bag, ", "))
			exec("INSERT INTO log VALUES " + strings.Join(bag, ", "))
		}
		eng.mu.RLock()
		defer eng.mu.RUnlock()
		for _, name := range []string{"pk", "bag", "log", "grp", "rows"} {
			o := eng.mu.cat.lookup(name)
			want, err := readRelation(ctx, eng.mu.store, o)
			if err != nil {
				rt.Fatal(err)
			}
			if len(want) == 0 && n > 0 {
				rt.Fatalf("%s: no rows read", name)
			}
			var ranges []keyRange
			if q, ok := splitReadQueries[name]; ok {
				tree, err := pgparse.Parse(q)
				if err != nil {
					rt.Fatal(err)
				}
				p, err := newBinder(eng.mu.cat, nil, nil).Query(tree.Stmts[0].Stmt)
				if err != nil {
					rt.Fatal(err)
				}
				var found bool
				if ranges, found = scanRanges(o, scanUses(p)[name]); !found {
					rt.Fatalf("%s: no key ranges", q)
				}
			}
			var wantRanges []any
			if ranges != nil {
				rows, err := readKeyRanges(ctx, eng.mu.store, o, ranges, serialRead)
				if err != nil {
					rt.Fatal(err)
				}
				wantRanges = append(wantRanges, rows)
			}
			for _, w := range []int{1, 2, 3, 8} {
				for _, minRows := range []int{0, 1, 1000} {
					par := diff.Parallelism{Workers: w, MinRows: minRows}
					got, err := readRelationOn(ctx, eng.mu.store, o, par)
					if err != nil {
						rt.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						rt.Fatalf("%s on %d workers (min %d): %d rows differ from the serial read's %d", name, w, minRows, len(got), len(want))
					}
					if ranges == nil {
						continue
					}
					rows, err := readKeyRanges(ctx, eng.mu.store, o, ranges, par)
					if err != nil {
						rt.Fatal(err)
					}
					if !reflect.DeepEqual([]any{rows}, wantRanges) {
						rt.Fatalf("%s on %d workers (min %d): %d rows differ from the serial read's", splitReadQueries[name], w, minRows, len(rows))
					}
				}
			}
		}
	})
}

// TestSplitReadStops checks that a read split between workers stops with
// its context's error when the context has ended.
func TestSplitReadStops(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE t (a int PRIMARY KEY, v text)",
		"INSERT INTO t SELECT g, 'x' FROM generate_series(1, 20000) g",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	eng.mu.RLock()
	defer eng.mu.RUnlock()
	o := eng.mu.cat.lookup("t")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, w := range []int{1, 2, 3, 8} {
		_, err := readRelationOn(cctx, eng.mu.store, o, diff.Parallelism{Workers: w})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("on %d workers: %v, want %v", w, err, context.Canceled)
		}
	}
}
