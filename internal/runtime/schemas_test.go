package runtime

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
)

// schemaObjects creates objects in two schemas with the same names, some
// through search_path, and writes rows.
var schemaObjects = []string{
	"CREATE SCHEMA s",
	`CREATE SCHEMA "Odd"`,
	"CREATE TABLE t (a int PRIMARY KEY, b text)",
	"CREATE TABLE s.t (a int, c int)",
	"SET search_path TO s, public",
	"CREATE TABLE u (x int)",
	"CREATE MATERIALIZED VIEW mv AS SELECT a, c FROM t",
	"CREATE VIEW pv AS SELECT a, b FROM public.t",
	"CREATE INDEX ON t (c)",
	"CREATE INDEX named ON public.t (b)",
	`CREATE TABLE "Odd"."T" (k int)`,
	"ALTER TABLE u RENAME TO u2",
	"RESET search_path",
	"INSERT INTO t VALUES (1, 'one'), (2, 'two')",
	"INSERT INTO s.t VALUES (10, 100), (20, 200)",
	"INSERT INTO s.u2 VALUES (7)",
	`INSERT INTO "Odd"."T" VALUES (5)`,
	"COMMENT ON SCHEMA s IS 'kept'",
}

// schemaQuery shows every object of schemaObjects and where it lives.
const schemaQuery = "SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace " +
	"WHERE n.nspname IN ('public', 's', 'Odd') ORDER BY 1, 2"

// schemaRows reads the rows of the objects of schemaObjects.
var schemaRows = []string{
	"SELECT * FROM t ORDER BY a",
	"SELECT * FROM s.t ORDER BY a",
	"SELECT * FROM s.mv ORDER BY a",
	"SELECT * FROM s.pv ORDER BY a",
	"SELECT * FROM s.u2",
	`SELECT * FROM "Odd"."T"`,
	"SELECT a FROM s.t WHERE c = 200",
	"SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname IN ('s', 'Odd') ORDER BY 1",
}

// schemaCatalogWant is what schemaQuery shows after schemaObjects.
const schemaCatalogWant = "Odd|T|r\npublic|named|i\npublic|t|r\npublic|t_pkey|i\ns|mv|m\ns|pv|v\ns|t|r\ns|t_c_idx|i\ns|u2|r\n"

func schemaState(t *testing.T, s *Session) string {
	t.Helper()
	out := rowsOf(t, s, schemaQuery)
	for _, q := range schemaRows {
		out += q + "\n" + rowsOf(t, s, q)
	}
	return out
}

// TestSchemasRecovery reopens an engine and restores a checkpoint of it:
// schemas, the objects in them (created qualified and through
// search_path, renamed, indexed) and their rows come back where they
// were, and what was dropped stays dropped.
func TestSchemasRecovery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(path string) *Engine {
		st, err := storage.Open(storage.Options{Dir: path, Logger: quietLog, EpochKey: FrontierKey()})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := Open(st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	eng := open(filepath.Join(dir, "db"))
	s := eng.NewSession()
	runAll(t, s, schemaObjects)
	runAll(t, s, []string{"CREATE SCHEMA gone", "CREATE TABLE gone.x (a int)", "DROP SCHEMA gone CASCADE", "CREATE SCHEMA empty", "ALTER SCHEMA empty RENAME TO renamed"})
	before := schemaState(t, s)
	if got := rowsOf(t, s, schemaQuery); got != schemaCatalogWant {
		t.Fatalf("objects:\n%s\nwant:\n%s", got, schemaCatalogWant)
	}
	url := "file://" + filepath.Join(dir, "bucket")
	if _, err := eng.Checkpoint(ctx, url, 0, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	eng = open(filepath.Join(dir, "db"))
	s = eng.NewSession()
	if after := schemaState(t, s); after != before {
		t.Fatalf("after reopening:\n%s\nwant:\n%s", after, before)
	}
	if got := rowsOf(t, s, "SELECT nspname FROM pg_namespace WHERE nspname IN ('gone', 'empty', 'renamed')"); got != "renamed\n" {
		t.Fatalf("dropped and renamed schemas after reopening: %q", got)
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	if err := eng.VerifyIndexes(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	restored := filepath.Join(dir, "restored")
	if err := storage.RestoreCheckpoint(ctx, url, restored, nil); err != nil {
		t.Fatal(err)
	}
	eng = open(restored)
	defer eng.Close()
	s = eng.NewSession()
	defer s.Close()
	if got := schemaState(t, s); got != before {
		t.Fatalf("restored from the checkpoint:\n%s\nwant:\n%s", got, before)
	}
}

// TestSchemasTransactional rolls back CREATE SCHEMA, DROP SCHEMA and the
// objects made in a transaction block: none of it happened, also after a
// reopen; a committed block keeps them.
func TestSchemasTransactional(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	eng, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := eng.NewSession()
	runAll(t, s, []string{
		"CREATE SCHEMA kept",
		"CREATE TABLE kept.k (a int)",
		"BEGIN",
		"CREATE SCHEMA temp",
		"CREATE TABLE temp.x (a int)",
		"INSERT INTO temp.x VALUES (1)",
		"DROP SCHEMA kept CASCADE",
		"ROLLBACK",
		"BEGIN",
		"CREATE SCHEMA done",
		"SET LOCAL search_path TO done",
		"CREATE TABLE y (a int)",
		"INSERT INTO y VALUES (2)",
		"COMMIT",
	})
	check := func(s *Session) {
		t.Helper()
		if got := rowsOf(t, s, "SELECT nspname FROM pg_namespace WHERE nspname IN ('kept', 'temp', 'done') ORDER BY 1"); got != "done\nkept\n" {
			t.Fatalf("schemas: %q", got)
		}
		if _, err := s.Exec(ctx, "SELECT * FROM temp.x", nil); errs.SQLState(err) != "42P01" {
			t.Fatalf("a table of the rolled-back schema: %v", err)
		}
		if got := rowsOf(t, s, "SELECT a FROM done.y"); got != "2\n" {
			t.Fatalf("done.y: %q", got)
		}
		if got := rowsOf(t, s, "SELECT count(*) FROM kept.k"); got != "0\n" {
			t.Fatalf("kept.k: %q", got)
		}
		if got := rowsOf(t, s, "SHOW search_path"); got != "\"$user\", public\n" {
			t.Fatalf("search_path after SET LOCAL: %q", got)
		}
	}
	check(s)
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng, err = Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s = eng.NewSession()
	defer s.Close()
	check(s)
}

// TestSystemColumnTableoid reads tableoid, a system column of
// pg_catalog's tables: named it is there, * leaves it out, as in
// PostgreSQL, and views of the catalog have none.
func TestSystemColumnTableoid(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	res, err := s.Exec(context.Background(), "SELECT * FROM pg_namespace n, pg_am a LIMIT 0", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "oid,nspname,nspowner,nspacl,oid,amname,amhandler,amtype" {
		t.Fatalf("SELECT * columns: %s", got)
	}
	if got := rowsOf(t, s, "SELECT DISTINCT a.tableoid, n.tableoid FROM pg_namespace n, pg_am a"); got != "2601|2615\n" {
		t.Fatalf("tableoid: %q", got)
	}
	if _, err := s.Exec(context.Background(), "SELECT tableoid FROM pg_tables", nil); errs.SQLState(err) != "42703" {
		t.Fatalf("tableoid of a view: %v", err)
	}
}

// TestDottedNamesBesideSchemas: a key outside public is "schema.name", so
// the names that would share a key with a public name are refused, not
// confused: a public table "s.t" beside a schema s, either way round,
// and a schema name with a dot.
func TestDottedNamesBesideSchemas(t *testing.T) {
	ctx := context.Background()
	eng, err := Open(NewMemoryStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	runAll(t, s, []string{
		`CREATE TABLE "a.t" (x int)`,
		`INSERT INTO "a.t" VALUES (1)`,
		"CREATE SCHEMA b",
		"CREATE TABLE b.t (x int)",
		"INSERT INTO b.t VALUES (2)",
	})
	for _, q := range []string{
		"CREATE SCHEMA a",
		`CREATE TABLE "b.t" (x int)`,
		`CREATE TABLE public."b.u" (x int)`,
		`CREATE SCHEMA "c.d"`,
		"ALTER SCHEMA b RENAME TO a",
	} {
		if _, err := s.Exec(ctx, q, nil); errs.SQLState(err) != "0A000" {
			t.Errorf("%s: %v, want 0A000", q, err)
		}
	}
	if got := rowsOf(t, s, `SELECT x FROM "a.t"`); got != "1\n" {
		t.Fatalf(`"a.t": %q`, got)
	}
	if got := rowsOf(t, s, "SELECT x FROM b.t"); got != "2\n" {
		t.Fatalf("b.t: %q", got)
	}
}
