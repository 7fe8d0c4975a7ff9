package runtime

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// sortedRows runs q and returns its rows as text, sorted.
func sortedRows(t *testing.T, s *Session, q string) string {
	t.Helper()
	lines := strings.Split(rowsOf(t, s, q), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// backfillViews are views of every kind of operator, created over data
// already loaded, so that their backfill is chunked.
var backfillViews = []string{
	"SELECT g, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM t GROUP BY g",
	"SELECT count(*) AS n, avg(v) AS a FROM t",
	"SELECT t.k, u.name FROM t JOIN u ON t.g = u.k",
	"SELECT u.k, count(t.k) AS n FROM u LEFT JOIN t ON t.g = u.k GROUP BY u.k",
	"SELECT DISTINCT v % 13 AS r FROM t",
	"SELECT k, v FROM t ORDER BY v DESC, k LIMIT 5",
	"SELECT k, rank() OVER (PARTITION BY g ORDER BY v, k) AS r FROM t WHERE k < 300",
	"SELECT a.k FROM t a JOIN t b ON a.k = b.v WHERE a.g = 1",
	"SELECT v FROM t EXCEPT SELECT k FROM u",
	"SELECT name FROM u WHERE k IN (SELECT g FROM t)",
}

// TestChunkedBackfill creates every view of backfillViews once with the
// backfill in one step and once in chunks of 37 rows: the views' rows and
// change logs are the same, the chunked backfill reports its progress in
// NOTICEs, and another session sees it in rockstream_catalog.progress
// while it runs.
func TestChunkedBackfill(t *testing.T) {
	setup := []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"CREATE TABLE u (k int PRIMARY KEY, name text)",
		"INSERT INTO t SELECT i, i % 7, (i * 37) % 1000 FROM generate_series(1, 1000) AS i",
		"INSERT INTO u SELECT i, 'n' || i FROM generate_series(0, 9) AS i",
		"DELETE FROM t WHERE k % 11 = 0",
	}
	open := func() (*Engine, *Session) {
		eng, err := Open(NewMemoryStore(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := eng.NewSession()
		runAll(t, s, setup)
		return eng, s
	}
	oneEng, one := open()
	chunkedEng, chunked := open()
	watcher := chunkedEng.NewSession()
	var notices []string
	var seen []string
	chunked.OnNotice(func(n Notice) {
		notices = append(notices, n.Severity+" "+n.SQLState+" "+n.Message)
		// The notice comes while the backfill runs: another session
		// sees it in rockstream_catalog.progress.
		seen = append(seen, strings.TrimSpace(rowsOf(t, watcher,
			"SELECT kind, object, phase, done, total, session_id = "+fmt.Sprint(chunked.ID())+" FROM rockstream_catalog.progress")))
	})
	for i, q := range backfillViews {
		v := fmt.Sprintf("v%d", i)
		create := "CREATE MATERIALIZED VIEW " + v + " AS " + q
		runAll(t, one, []string{create})
		notices, seen = nil, nil
		restore := SetBackfillProgress(37, 0, 0)
		runAll(t, chunked, []string{create})
		restore()
		if len(notices) < 2 || !strings.HasPrefix(notices[0], "NOTICE 00000 backfill of "+v+": ") ||
			!strings.HasSuffix(notices[len(notices)-1], " of "+strings.Fields(notices[0])[7]+" rows") {
			t.Fatalf("%s: notices %q", v, notices)
		}
		first := strings.Fields(notices[0])
		if !strings.HasPrefix(seen[0], "backfill|"+v+"|computing|"+first[5]+"|"+first[7]+"|t") {
			t.Fatalf("%s: rockstream_catalog.progress during the backfill: %q (notice %q)", v, seen[0], notices[0])
		}
		for _, r := range []string{"SELECT * FROM " + v, "SELECT count(*) FROM " + v} {
			if got, want := sortedRows(t, chunked, r), sortedRows(t, one, r); got != want {
				t.Fatalf("%s: %s after a chunked backfill:\n%s\nafter one step:\n%s", v, r, head(got), head(want))
			}
		}
		gotLog, _, err := chunkedEng.Changes(v, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantLog, _, err := oneEng.Changes(v, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(gotLog) != len(wantLog) {
			t.Fatalf("%s: the chunked backfill logged %d changes, one step %d", v, len(gotLog), len(wantLog))
		}
	}
	if got := rowsOf(t, watcher, "SELECT count(*) FROM rockstream_catalog.progress"); got != "0\n" {
		t.Fatalf("progress after the backfills: %q", got)
	}
	// The views go on being maintained alike.
	for _, s := range []*Session{one, chunked} {
		runAll(t, s, []string{"UPDATE t SET v = v + 1 WHERE k % 3 = 0", "DELETE FROM u WHERE k = 2", "INSERT INTO t VALUES (5000, 1, 999)"})
	}
	for i := range backfillViews {
		r := fmt.Sprintf("SELECT * FROM v%d", i)
		if got, want := sortedRows(t, chunked, r), sortedRows(t, one, r); got != want {
			t.Fatalf("v%d after changes: chunked\n%s\none step\n%s", i, head(got), head(want))
		}
	}
}

// TestBackfillChunksGrowUnderRevisedGroups: the backfill of an aggregate
// whose groups every chunk revises steps in chunks that grow, as a large
// table change's do (TestChunksGrowUnderRevisedGroups), while that of a
// filter, whose chunks revise nothing, keeps the first chunk's size. One
// NOTICE a chunk counts the steps.
func TestBackfillChunksGrowUnderRevisedGroups(t *testing.T) {
	const rows, groups, first = 64 * 1024, 256, 64
	eng := OpenMemory()
	t.Cleanup(func() { eng.Close() })
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE t (id int PRIMARY KEY, g int, v int)")
	mustExec(t, s, fmt.Sprintf("INSERT INTO t SELECT i, i %% %d, i %% 7 FROM generate_series(1, %d) i", groups, rows))
	var chunks int
	s.OnNotice(func(Notice) { chunks++ })
	defer SetBackfillProgress(first, 0, 0)()
	views := []struct{ name, query string }{
		{"by_g", "SELECT g, count(*) c, sum(v) s FROM t GROUP BY g"},
		{"odd", "SELECT id, v FROM t WHERE v % 2 = 1"},
	}
	steps := map[string]int{}
	for _, v := range views {
		chunks = 0
		mustExec(t, s, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
		steps[v.name] = chunks
		if got, want := viewContents(t, s, v.name), viewContents(t, s, "("+v.query+") q"); !maps.Equal(got, want) {
			t.Errorf("%s differs from its query: %d rows, want %d", v.name, len(got), len(want))
		}
		log, _, err := eng.Changes(v.name, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(viewContents(t, s, v.name)); len(log) != n {
			t.Errorf("%s logged %d changes for its backfill, want one per row, %d", v.name, len(log), n)
		}
	}
	// In chunks of 64 rows the backfill takes 1,024 steps, each revising
	// the 64 groups its rows fall in. Grown to 4,096 rows, at most 64
	// times the first, it takes under 32.
	t.Logf("backfill steps: %v", steps)
	if n := steps["by_g"]; n < 2 || n > 32 {
		t.Errorf("by_g's backfill of %d rows took %d steps, want 2 to 32", rows, n)
	}
	if n, want := steps["odd"], rows/first; n != want {
		t.Errorf("odd's backfill of %d rows took %d steps, want %d chunks of %d", rows, n, want, first)
	}
}
