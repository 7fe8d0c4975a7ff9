package runtime

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/state"
)

// TestRelationCacheFollowsCommits reads small relations repeatedly, so
// that their contents come from the relation cache, around every kind of
// change: each read must show exactly what the store holds.
func TestRelationCacheFollowsCommits(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s, other := eng.NewSession(), eng.NewSession()
	read := func(q string) string {
		t.Helper()
		res := mustExec(t, s, q)
		var lines []string
		for _, r := range res.Rows {
			lines = append(lines, strings.ReplaceAll(strings.TrimSuffix(rowLine(r, res.Columns), "\n"), " | ", "|"))
		}
		return strings.Join(lines, ";")
	}
	check := func(q, want string) {
		t.Helper()
		for range 2 { // the second read is served by the cache
			if got := read(q); got != want {
				t.Fatalf("%s = %q, want %q", q, got, want)
			}
		}
	}
	mustExec(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(v) AS s FROM t")
	check("SELECT * FROM total", "0|NULL")
	mustExec(t, other, "INSERT INTO t VALUES (1, 10), (2, 20)")
	check("SELECT * FROM total", "2|30")
	check("SELECT * FROM t ORDER BY k", "1|10;2|20")
	mustExec(t, other, "UPDATE t SET v = v + 1 WHERE k = 1")
	check("SELECT * FROM total", "2|31")
	check("SELECT * FROM t ORDER BY k", "1|11;2|20")

	// A block reads its own writes, which the cache never holds; a
	// rolled-back block leaves the cached contents right.
	mustExec(t, other, "BEGIN")
	mustExec(t, other, "DELETE FROM t WHERE k = 2")
	if got := mustExec(t, other, "SELECT * FROM total").Rows; rowLine(got[0], nil) != "1 | 11\n" {
		t.Fatalf("the block reads %v", got)
	}
	check("SELECT * FROM total", "2|31")
	mustExec(t, other, "ROLLBACK")
	check("SELECT * FROM total", "2|31")

	// An unrelated relation's commits leave a cached entry valid.
	mustExec(t, s, "CREATE TABLE u (x int)")
	mustExec(t, other, "INSERT INTO u VALUES (1)")
	check("SELECT * FROM total", "2|31")

	// A view dropped and created again under its name is a new relation.
	mustExec(t, s, "DROP MATERIALIZED VIEW total")
	mustExec(t, s, "CREATE MATERIALIZED VIEW total AS SELECT max(v) AS m FROM t")
	check("SELECT * FROM total", "20")
	mustExec(t, other, "DELETE FROM t")
	check("SELECT * FROM total", "NULL")
	check("SELECT count(*) FROM t", "0")

	// A relation larger than the cache keeps is read from the store.
	mustExec(t, other, fmt.Sprintf("INSERT INTO t SELECT g, 1 FROM generate_series(1, %d) g", maxCachedRelationRows+1))
	check("SELECT count(*), sum(v) FROM t", fmt.Sprintf("%d|%d", maxCachedRelationRows+1, maxCachedRelationRows+1))
	check("SELECT * FROM total", "1")
}

// TestWrittenRelations lists the relations whose rows an overlay writes,
// from every namespace's keys.
func TestWrittenRelations(t *testing.T) {
	ov := state.NewOverlay(state.NewMemory())
	for _, k := range [][]byte{
		append(relPrefix(nsTableRows, 3), 1, 2),
		append(relPrefix(nsTableRows, 3), 9),
		append(relPrefix(nsTableRows, 300), 1),
		append(relPrefix(nsViewRows, 7), 1),
		append(relPrefix(nsOpState, 8), 1),
		{0x00, 1},
	} {
		if err := ov.Set(k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := ov.Delete(append(relPrefix(nsViewRows, 129), 5)); err != nil {
		t.Fatal(err)
	}
	got := writtenRelations(ov)
	slices.Sort(got)
	if want := []uint64{3, 7, 129, 300}; !slices.Equal(got, want) {
		t.Fatalf("writtenRelations = %v, want %v", got, want)
	}
}
