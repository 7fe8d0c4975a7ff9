package runtime

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
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
