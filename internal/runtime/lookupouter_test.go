package runtime

import (
	"context"
	"fmt"
	"testing"
)

// lookupOuterQueries are views whose outer, semi-, anti- or mark join
// reads the table dim by key (ops/lookupouter.go).
var lookupOuterQueries = []string{
	"SELECT f.id, d.name FROM fact f LEFT JOIN dim d ON f.k = d.id",
	"SELECT f.id, d.name FROM dim d RIGHT JOIN fact f ON f.k = d.id",
	"SELECT f.id FROM fact f WHERE EXISTS (SELECT 1 FROM dim d WHERE d.id = f.k)",
	"SELECT f.id FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.id = f.k AND d.name <> 'x')",
	"SELECT f.id, EXISTS (SELECT 1 FROM dim d WHERE d.id = f.k) AS known FROM fact f",
}

// TestLookupOuterJoinKeepsNoArrangement checks that an outer, semi- or
// anti-join that reads a table by key keeps the preserved input's
// arrangement alone, without match counts or the table's rows or
// counts, on 1 and 3 workers, and that the view equals its query.
func TestLookupOuterJoinKeepsNoArrangement(t *testing.T) {
	for qi, query := range lookupOuterQueries {
		for _, workers := range []int{1, 3} {
			for _, lookups := range []bool{true, false} {
				t.Run(fmt.Sprintf("q%d/workers=%d/lookups=%v", qi, workers, lookups), func(t *testing.T) {
					total, got, adhoc := lookupWorkload(t, workers, lookups, query,
						"DELETE FROM dim WHERE id % 3 = 0",
						"INSERT INTO dim SELECT i, 'm' || i FROM generate_series(1001, 1100) i")
					if want := 50; lookups && total != want { // fact's rows, arranged by k
						t.Fatalf("view state has %d keys, want %d", total, want)
					} else if !lookups && total <= 50+500 {
						t.Fatalf("view state has %d keys, want fact's rows and dim's", total)
					}
					if got != adhoc {
						t.Fatalf("view:\n%s\nad hoc:\n%s", got, adhoc)
					}
				})
			}
		}
	}
}

// TestLookupOuterJoinAcrossRestart reopens an engine, on another number
// of workers, over views whose LEFT and anti-joins read a table by key,
// and keeps maintaining them: the rebuilt circuits read the table as the
// first did, and the views equal their queries.
func TestLookupOuterJoinAcrossRestart(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	queries := []string{lookupOuterQueries[0], lookupOuterQueries[3]}
	exec := func(s *Session, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := s.Exec(ctx, q, nil); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	check := func(s *Session) {
		t.Helper()
		for i, q := range queries {
			got := resultText(s.Exec(ctx, fmt.Sprintf("SELECT * FROM j%d ORDER BY 1", i), nil))
			if want := resultText(s.Exec(ctx, q+" ORDER BY 1", nil)); got != want {
				t.Fatalf("view %s:\n%s\nad hoc:\n%s", q, got, want)
			}
		}
	}
	e1, err := Open(st, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s1 := e1.NewSession()
	exec(s1, "CREATE TABLE dim (id int PRIMARY KEY, name text)",
		"CREATE TABLE fact (id int PRIMARY KEY, k int, x int)",
		"INSERT INTO dim VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO fact VALUES (10, 1, 100), (11, 2, 110), (12, 3, 120), (14, NULL, 1)")
	for i, q := range queries {
		exec(s1, fmt.Sprintf("CREATE MATERIALIZED VIEW j%d AS %s", i, q))
	}
	exec(s1, "INSERT INTO dim VALUES (3, 'c')")
	check(s1)
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
	for i := range queries {
		if total := len(opStateKeys(t, e2, fmt.Sprintf("j%d", i))); total != 1 {
			t.Fatalf("view state is in %d operators, want the fact side's arrangement alone", total)
		}
	}
	exec(s2, "BEGIN", "UPDATE dim SET name = 'x' WHERE id = 2", "INSERT INTO fact VALUES (13, 2, 130)",
		"DELETE FROM dim WHERE id = 1", "COMMIT",
		"UPDATE fact SET k = 1 WHERE id = 12", "INSERT INTO dim VALUES (1, 'A')")
	check(s2)
}
