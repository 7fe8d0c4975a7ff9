package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/state"
)

// opStateKeys counts the keys of view name's operator state, by
// operator id.
func opStateKeys(t *testing.T, eng *Engine, name string) map[int]int {
	t.Helper()
	eng.mu.RLock()
	defer eng.mu.RUnlock()
	prefix := relPrefix(nsOpState, eng.mu.cat.lookup(name).id)
	keys := map[int]int{}
	err := eng.mu.store.Scan(prefix, state.PrefixEnd(prefix), func(k, _ []byte) bool {
		id, _ := diff.OperatorOf(prefix, k)
		keys[id]++
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestLookupJoinKeepsNoArrangement checks that a join that reads a table
// by key writes no arrangement of it: the view's state is the other
// input's arrangement alone, on 1 and on 3 workers, while a view built
// with arrangements on both sides holds the table's rows a second time.
func TestLookupJoinKeepsNoArrangement(t *testing.T) {
	for _, workers := range []int{1, 3} {
		for _, lookups := range []bool{true, false} {
			t.Run(fmt.Sprintf("workers=%d/lookups=%v", workers, lookups), func(t *testing.T) {
				const query = "SELECT f.id, d.name FROM fact f JOIN dim d ON f.k = d.id"
				total, got, adhoc := lookupWorkload(t, workers, lookups, query)
				want := 50 // fact's rows, arranged by k
				if !lookups {
					want += 1000 // and dim's
				}
				if total != want {
					t.Fatalf("view state has %d keys, want %d", total, want)
				}
				if got != adhoc {
					t.Fatalf("view:\n%s\nad hoc:\n%s", got, adhoc)
				}
			})
		}
	}
}

// lookupWorkload opens an engine on workers, with circuit lookups on or
// off, loads dim (1,000 rows) and fact (50 rows, 10 of them after the
// view), creates the view j as query, updates dim and runs changes. It
// returns the number of j's operator-state keys, and j's rows and
// query's, both ordered by their first column.
func lookupWorkload(t *testing.T, workers int, lookups bool, query string, changes ...string) (keys int, view, adhoc string) {
	t.Helper()
	ctx := context.Background()
	defer func(old bool) { disableCircuitLookups = old }(disableCircuitLookups)
	disableCircuitLookups = !lookups
	eng, err := Open(NewMemoryStore(), Options{Workers: workers, ParallelMinRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := eng.NewSession()
	for _, q := range append([]string{
		"CREATE TABLE dim (id int PRIMARY KEY, name text)",
		"CREATE TABLE fact (id int PRIMARY KEY, k int, x int)",
		"INSERT INTO dim SELECT i, 'n' || i FROM generate_series(1, 1000) i",
		"INSERT INTO fact SELECT i, i * 7 % 1200, i FROM generate_series(1, 40) i",
		"CREATE MATERIALIZED VIEW j AS " + query,
		"INSERT INTO fact SELECT i, i * 7 % 1200, i FROM generate_series(41, 50) i",
		"UPDATE dim SET name = 'x' WHERE id < 100",
	}, changes...) {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, n := range opStateKeys(t, eng, "j") {
		keys += n
	}
	view = resultText(s.Exec(ctx, "SELECT * FROM j ORDER BY 1", nil))
	adhoc = resultText(s.Exec(ctx, query+" ORDER BY 1", nil))
	return keys, view, adhoc
}

// TestLookupJoinAcrossRestart reopens an engine, on another number of
// workers, over a view that reads a table by key, and keeps maintaining
// it: the rebuilt circuit reads the table as the first did, the view
// equals the batch evaluation of its query, and AS OF EPOCH returns its
// contents as they were before the restart.
func TestLookupJoinAcrossRestart(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	const query = "SELECT f.id, d.name, f.x FROM fact f JOIN dim d ON f.k = d.id"
	exec := func(s *Session, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := s.Exec(ctx, q, nil); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	check := func(s *Session) string {
		t.Helper()
		got := resultText(s.Exec(ctx, "SELECT * FROM j", nil))
		if want := resultText(s.Exec(ctx, query, nil)); got != want {
			t.Fatalf("view:\n%s\nad hoc:\n%s", got, want)
		}
		return got
	}
	e1, err := Open(st, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s1 := e1.NewSession()
	exec(s1, "CREATE TABLE dim (id int PRIMARY KEY, name text)",
		"CREATE TABLE fact (id int PRIMARY KEY, k int, x int)",
		"INSERT INTO dim VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO fact VALUES (10, 1, 100), (11, 2, 110), (12, 3, 120)",
		"CREATE MATERIALIZED VIEW j AS "+query,
		"INSERT INTO dim VALUES (3, 'c')")
	before := check(s1)
	epoch := e1.Epoch()
	s1.Close()
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}

	e2, err := Open(st, Options{Workers: 3, ParallelMinRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2 := e2.NewSession()
	if total := len(opStateKeys(t, e2, "j")); total != 1 {
		t.Fatalf("view state is in %d operators, want the fact side's arrangement alone", total)
	}
	exec(s2, "BEGIN", "UPDATE dim SET name = 'B' WHERE id = 2", "INSERT INTO fact VALUES (13, 2, 130)",
		"DELETE FROM dim WHERE id = 1", "COMMIT",
		"UPDATE fact SET k = 1 WHERE id = 12", "INSERT INTO dim VALUES (1, 'A')")
	check(s2)
	if got := resultText(s2.Exec(ctx, fmt.Sprintf("SELECT * FROM j AS OF EPOCH %d", epoch), nil)); got != before {
		t.Fatalf("AS OF EPOCH %d:\n%s\nwant:\n%s", epoch, got, before)
	}
}

// TestLookupJoinOfAppendOnlyTableArrangesUnmatchedRows checks that a join
// reading an append-only table by its primary key arranges only the rows
// of its other input whose key had no table row when they came (a row
// under such a key never changes or goes, so the table's delta never
// probes for it again), on the left and on the right of the join, on 1
// and 3 workers and across a restart: the view's state holds the
// unmatched rows alone, and the view equals its query while the table's
// missing keys arrive and the other input's rows, matched or arranged
// before their key came, are updated and deleted.
func TestLookupJoinOfAppendOnlyTableArrangesUnmatchedRows(t *testing.T) {
	for _, workers := range []int{1, 3} {
		for _, query := range []string{
			"SELECT f.id, f.x, d.name FROM fact f JOIN dim d ON f.k = d.id WHERE d.name <> 'n7'",
			"SELECT f.id, f.x, d.name FROM dim d JOIN fact f ON d.id = f.k",
		} {
			t.Run(fmt.Sprintf("workers=%d/%s", workers, query[strings.Index(query, "FROM"):]), func(t *testing.T) {
				ctx := context.Background()
				st := NewMemoryStore()
				eng, err := Open(st, Options{Workers: workers, ParallelMinRows: 1})
				if err != nil {
					t.Fatal(err)
				}
				defer func() { eng.Close() }()
				s := eng.NewSession()
				exec := func(qs ...string) {
					t.Helper()
					for _, q := range qs {
						if _, err := s.Exec(ctx, q, nil); err != nil {
							t.Fatalf("%s: %v", q, err)
						}
					}
				}
				check := func(wantKeys int) {
					t.Helper()
					if got, want := resultText(s.Exec(ctx, "SELECT * FROM j", nil)), resultText(s.Exec(ctx, query, nil)); got != want {
						t.Fatalf("view:\n%s\nad hoc:\n%s", got, want)
					}
					if wantKeys < 0 {
						return
					}
					total := 0
					for _, n := range opStateKeys(t, eng, "j") {
						total += n
					}
					if total != wantKeys {
						t.Fatalf("view state has %d keys, want %d (fact's rows whose key had no dim row)", total, wantKeys)
					}
				}
				exec("CREATE TABLE dim (id int PRIMARY KEY, name text) APPEND ONLY",
					"CREATE TABLE fact (id int PRIMARY KEY, k int, x int)",
					"INSERT INTO dim SELECT i, 'n' || i FROM generate_series(1, 100) i",
					// 40 rows, those with k > 100 (k = 105, 112, …) without a dim row.
					"INSERT INTO fact SELECT i, i * 7 % 150, i FROM generate_series(1, 40) i",
					"CREATE MATERIALIZED VIEW j AS "+query)
				unmatched := func(from, to, dims int) int {
					n := 0
					for i := from; i <= to; i++ {
						if k := i * 7 % 150; k == 0 || k > dims {
							n++
						}
					}
					return n
				}
				want := unmatched(1, 40, 100)
				check(want)
				exec("INSERT INTO fact SELECT i, i * 7 % 150, i FROM generate_series(41, 60) i")
				want += unmatched(41, 60, 100)
				check(want)
				// Half the missing keys arrive; in one transaction with
				// rows of fact on them and on keys still missing.
				exec("BEGIN", "INSERT INTO dim SELECT i, 'n' || i FROM generate_series(101, 125) i",
					"INSERT INTO fact SELECT i, i * 7 % 150, i FROM generate_series(61, 80) i", "COMMIT")
				want += unmatched(61, 80, 125)
				check(want)
				// Rows matched on arrival, rows arranged before their key
				// came, and rows still unmatched change and go.
				exec("UPDATE fact SET x = x + 1000 WHERE id % 3 = 0",
					"DELETE FROM fact WHERE id % 5 = 0",
					"UPDATE fact SET k = 140 WHERE id % 7 = 0")
				check(-1)
				if _, err := s.Exec(ctx, "DELETE FROM dim WHERE id = 1", nil); err == nil {
					t.Fatal("DELETE from an append-only table succeeded")
				}
				s.Close()
				if err := eng.Close(); err != nil {
					t.Fatal(err)
				}
				if eng, err = Open(st, Options{Workers: 4 - workers, ParallelMinRows: 1}); err != nil {
					t.Fatal(err)
				}
				s = eng.NewSession()
				check(-1)
				exec("INSERT INTO dim SELECT i, 'n' || i FROM generate_series(126, 150) i",
					"INSERT INTO dim VALUES (0, 'zero')",
					"INSERT INTO fact SELECT i, i * 7 % 150, i FROM generate_series(81, 100) i")
				check(-1)
				s.Close()
			})
		}
	}
}
