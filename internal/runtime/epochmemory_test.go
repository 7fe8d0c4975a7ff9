package runtime

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestChunkedPropagationMatchesPostgres: with chunks of 7 rows, large
// table changes taken through aggregates, joins, a view over a view and
// DISTINCT leave the views PostgreSQL's plain views show, after an
// INSERT ... SELECT, a transaction block of several writes and a DELETE;
// the change log shows that the insert was in fact chunked.
func TestChunkedPropagationMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	defer SetEpochChunkRows(7)()
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "chunked"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgc.Close(ctx) })
	eng := OpenMemory()
	t.Cleanup(func() { eng.Close() })
	s := eng.NewSession()
	views := map[string]string{
		"by_g":     "SELECT g, count(*) c, sum(v) s FROM t GROUP BY g",
		"joined":   "SELECT d.name, count(*) c, max(t.v) m FROM t JOIN d ON t.g = d.g GROUP BY d.name",
		"over":     "SELECT c, count(*) n FROM by_g GROUP BY c",
		"residues": "SELECT DISTINCT v % 5 r, g FROM t",
	}
	for _, q := range []string{
		"CREATE TABLE t (id int PRIMARY KEY, g int, v int)",
		"CREATE TABLE d (g int PRIMARY KEY, name text)",
		"INSERT INTO d SELECT i, 'n' || i FROM generate_series(0, 40) i",
	} {
		mustBoth(t, s, pgc, q)
	}
	for _, name := range []string{"by_g", "joined", "over", "residues"} {
		mustExec(t, s, "CREATE MATERIALIZED VIEW "+name+" AS "+views[name])
		if _, err := pgc.Exec(ctx, "CREATE VIEW "+name+" AS "+views[name]).ReadAll(); err != nil {
			t.Fatal(err)
		}
	}
	check := func() {
		t.Helper()
		for name := range views {
			spillCompare(t, s, pgc, "SELECT * FROM "+name, false)
		}
	}
	before := eng.Epoch()
	mustBoth(t, s, pgc, "INSERT INTO t SELECT i, i % 50, i % 13 FROM generate_series(1, 1000) i")
	check()
	// The insert went through by_g in chunks: stepped at once it would
	// log one insertion for each of the 50 groups; in 143 chunks of 7
	// rows each group's row is replaced as its count grows.
	changes, _, err := eng.Changes("by_g", before)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) <= 2*50 {
		t.Errorf("by_g logged %d changes for the 1,000-row insert: it was not taken through the view in chunks", len(changes))
	}
	for _, q := range []string{
		"BEGIN",
		"INSERT INTO t SELECT i, i % 37, i % 11 FROM generate_series(1001, 1300) i",
		"INSERT INTO d SELECT i, 'm' || i FROM generate_series(41, 60) i",
		"UPDATE t SET v = v + 1 WHERE id % 3 = 0",
		"COMMIT",
	} {
		mustBoth(t, s, pgc, q)
	}
	check()
	mustBoth(t, s, pgc, "DELETE FROM t WHERE id % 4 = 1")
	check()
}

// TestChunksGrowUnderRevisedGroups: a table change far larger than a
// chunk, through a view of few groups, goes in chunks that grow as the
// view revises its groups, so its change log for the epoch holds a few
// chunks' worth of replaced groups, not one per chunk of the first size;
// a view that only adds rows logs each row once either way. The views
// still equal their queries.
func TestChunksGrowUnderRevisedGroups(t *testing.T) {
	defer SetEpochChunkRows(64)()
	const rows, groups = 64 * 1024, 256
	eng := OpenMemory()
	t.Cleanup(func() { eng.Close() })
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE t (id int PRIMARY KEY, g int, v int)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW by_g AS SELECT g, count(*) c, sum(v) s FROM t GROUP BY g")
	mustExec(t, s, "CREATE MATERIALIZED VIEW odd AS SELECT id, v FROM t WHERE v % 2 = 1")
	before := eng.Epoch()
	mustExec(t, s, fmt.Sprintf("INSERT INTO t SELECT i, i %% %d, i %% 7 FROM generate_series(1, %d) i", groups, rows))
	changes, _, err := eng.Changes("by_g", before)
	if err != nil {
		t.Fatal(err)
	}
	// In chunks of 64 rows the 1,024 chunks would each replace the 64
	// groups their rows fall in: about 130,000 changes. Grown to 4,096
	// rows, at most 64 times the first, the insert takes under 32 chunks.
	t.Logf("by_g logged %d changes", len(changes))
	if max := 32 * 2 * groups; len(changes) > max || len(changes) <= 2*groups {
		t.Errorf("by_g logged %d changes for a %d-row insert, want more than %d (chunked) and at most %d", len(changes), rows, 2*groups, max)
	}
	odd, _, err := eng.Changes("odd", before)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(mustExec(t, s, "SELECT id FROM t WHERE v % 2 = 1").Rows); len(odd) != want {
		t.Errorf("odd logged %d changes, want one per row, %d", len(odd), want)
	}
	for view, query := range map[string]string{
		"by_g": "SELECT g, count(*) c, sum(v) s FROM t GROUP BY g",
		"odd":  "SELECT id, v FROM t WHERE v % 2 = 1",
	} {
		if got, want := viewContents(t, s, view), viewContents(t, s, "("+query+") q"); !maps.Equal(got, want) {
			t.Errorf("%s differs from its query: %d rows, want %d", view, len(got), len(want))
		}
	}
}

func TestChunkSizer(t *testing.T) {
	defer SetEpochChunkRows(100)()
	inserts := func(n int) zset.Batch {
		b := make(zset.Batch, n)
		for i := range b {
			b[i].Weight = 1
		}
		return b
	}
	revised := func(n int) zset.Batch { // −old +new for n groups
		b := inserts(2 * n)
		for i := 0; i < n; i++ {
			b[i].Weight = -1
		}
		return b
	}
	c := newChunkSizer(100, 0, nil)
	for _, step := range []struct {
		name      string
		n         int
		retracted int
		outs      []zset.Batch
		want      int
	}{
		{"only insertions", 100, 0, []zset.Batch{inserts(100)}, 100},
		{"one revised group in 100 rows", 100, 0, []zset.Batch{revised(1)}, 100},
		{"two revised groups in 100 rows", 100, 0, []zset.Batch{revised(2)}, 200},
		{"two in 200", 200, 0, []zset.Batch{revised(2)}, 200},
		{"the chunk's own retractions passed on", 200, 50, []zset.Batch{revised(50)}, 200},
		{"two views", 200, 0, []zset.Batch{revised(2), revised(2)}, 400},
		{"two views", 400, 0, []zset.Batch{revised(7), revised(7)}, 14 * chunkChurnRatio},
		{"many groups", 896, 0, []zset.Batch{revised(896)}, chunkGrowth * 100},
	} {
		if got := c.next(step.n, step.retracted, step.outs); got != step.want {
			t.Fatalf("%s: next chunk of %d rows, want %d", step.name, got, step.want)
		}
	}
	for range 10 {
		c.next(c.rows, 0, []zset.Batch{revised(c.rows)})
	}
	if c.rows != chunkGrowth*100 {
		t.Errorf("grown to %d rows, want at most %d", c.rows, chunkGrowth*100)
	}
	// Under a memory limit a chunk grows to 1/chunkMemoryShare of it.
	row := zset.Row{types.MakeInt(types.Int4, 1), types.MakeInt(types.Int4, 2)}
	limit := 1000 * chunkMemoryShare * epochRowBytes(row)
	c = newChunkSizer(100, limit, row)
	if got := c.next(100, 0, []zset.Batch{revised(100)}); got != 1000 {
		t.Errorf("under a limit for 1,000 rows grown to %d rows", got)
	}
	c = newChunkSizer(100, limit/100, row)
	if got := c.next(100, 0, []zset.Batch{revised(100)}); got != 100 {
		t.Errorf("under a limit for 10 rows grown to %d rows, want chunks of 100 as before", got)
	}
}
