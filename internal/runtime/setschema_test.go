package runtime

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
)

// TestSetSchemaRecovery reopens a store whose relations moved between
// schemas: a table with a key, a unique constraint, an index, a comment
// and a default calling a public function, moved out of public into a
// schema created after it, renamed there, and moved again out of a
// schema dropped since; a view and a materialized view (with an index)
// that read it, moved by ALTER VIEW and ALTER MATERIALIZED VIEW; and a
// table created outside public whose default calls a public function.
// They come back in their schemas, under their names, with their
// indexes and comment, and the views are maintained.
func TestSetSchemaRecovery(t *testing.T) {
	dir := t.TempDir()
	eng := openEngineIn(t, dir)
	s := eng.NewSession()
	runAll(t, s, []string{
		"CREATE FUNCTION f(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x + 1'",
		"CREATE TABLE t (k int PRIMARY KEY, v int DEFAULT f(41), w text UNIQUE)",
		"CREATE INDEX t_v ON t (v)",
		"COMMENT ON TABLE t IS 'kept'",
		"INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y')",
		"CREATE VIEW pv AS SELECT k, v FROM t",
		"CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n, sum(v) AS s FROM t",
		"CREATE INDEX mv_n ON mv (n)",
		"CREATE SCHEMA a",
		"CREATE SCHEMA b",
		"ALTER TABLE t SET SCHEMA a",
		"ALTER TABLE a.t RENAME TO u",
		"ALTER TABLE a.u SET SCHEMA b",
		"DROP SCHEMA a",
		"CREATE SCHEMA c",
		"ALTER VIEW pv SET SCHEMA c",
		"ALTER MATERIALIZED VIEW mv SET SCHEMA c",
		"CREATE SCHEMA d",
		"CREATE TABLE d.e (k int, d int DEFAULT f(1))",
		"INSERT INTO d.e (k) VALUES (1)",
	})
	const rels = `SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('public', 'a', 'b', 'c', 'd') ORDER BY 1, 2`
	const relsWant = "b|t_v|i\nb|t_w_key|i\nb|u|r\nb|u_pkey|i\nc|mv|m\nc|mv_n|i\nc|pv|v\nd|e|r\n"
	check := func(s *Session) {
		t.Helper()
		if got := rowsOf(t, s, rels); got != relsWant {
			t.Fatalf("pg_class:\n%s\nwant:\n%s", got, relsWant)
		}
		if got := rowsOf(t, s, "SELECT schemaname, indexname, indexdef FROM pg_indexes WHERE tablename = 'u' AND indexname = 't_v'"); got != "b|t_v|CREATE INDEX t_v ON b.u USING btree (v)\n" {
			t.Fatalf("pg_indexes: %q", got)
		}
		if got := rowsOf(t, s, "SELECT * FROM c.pv ORDER BY k"); got != "1|10\n2|20\n" {
			t.Fatalf("c.pv: %q", got)
		}
		if got := rowsOf(t, s, "SELECT pg_get_viewdef('c.pv'::regclass)"); got != " SELECT k, v FROM b.u;\n" {
			t.Fatalf("c.pv's definition: %q", got)
		}
		if got := rowsOf(t, s, "SELECT obj_description('b.u'::regclass, 'pg_class')"); got != "kept\n" {
			t.Fatalf("b.u's comment: %q", got)
		}
		if got := rowsOf(t, s, "SELECT * FROM d.e"); got != "1|2\n" {
			t.Fatalf("d.e: %q", got)
		}
	}
	check(s)
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng = openEngineIn(t, dir)
	s = eng.NewSession()
	check(s)
	runAll(t, s, []string{"INSERT INTO b.u (k, w) VALUES (3, 'z')", "DELETE FROM b.u WHERE k = 1"})
	if got := rowsOf(t, s, "SELECT * FROM c.mv"); got != "2|62\n" {
		t.Fatalf("c.mv maintained after reopening: %q", got)
	}
	if got := rowsOf(t, s, "SELECT k FROM b.u WHERE v = 42"); got != "3\n" {
		t.Fatalf("index read after reopening: %q", got)
	}
	expectCode(t, s, "INSERT INTO b.u VALUES (4, 0, 'z')", errs.UniqueViolation)
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(storage.Options{Dir: filepath.Join(dir, "db"), Logger: quietLog, EpochKey: FrontierKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Deep: every view equals its query, every index its relation.
	rep, err := Check(st, true)
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check: %v %v", err, rep)
	}
}

// expectCode runs q in s and wants it to fail with code.
func expectCode(t *testing.T, s *Session, q string, code errs.Code) *errs.Error {
	t.Helper()
	_, err := s.Exec(context.Background(), q, nil)
	var e *errs.Error
	if !asErr(err, &e) || e.SQLState != errs.SQLState(errs.New(code, "")) {
		t.Fatalf("%s: got %v, want %s", q, err, errs.SQLState(errs.New(code, "")))
	}
	return e
}

// TestSetSchemaErrors checks ALTER ... SET SCHEMA's errors and notice
// as PostgreSQL 15 words them.
func TestSetSchemaErrors(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	var notes []Notice
	s.OnNotice(func(n Notice) { notes = append(notes, n) })
	runAll(t, s, []string{
		"CREATE SCHEMA a", "CREATE SCHEMA b",
		"CREATE TABLE a.t (k int PRIMARY KEY, v int)", "CREATE INDEX ti ON a.t (v)",
		"CREATE VIEW v AS SELECT k FROM a.t", "CREATE MATERIALIZED VIEW mv AS SELECT k FROM a.t",
		"CREATE TABLE b.ti (x int)",
	})
	for _, c := range []struct {
		q, state, msg, hint string
	}{
		{"ALTER TABLE nosuch SET SCHEMA b", "42P01", `relation "nosuch" does not exist`, ""},
		{"ALTER SEQUENCE nosuch SET SCHEMA b", "42P01", `relation "nosuch" does not exist`, ""},
		{"ALTER TABLE a.nosuch SET SCHEMA b", "42P01", `relation "a.nosuch" does not exist`, ""},
		{"ALTER TABLE nosuch.t SET SCHEMA b", "3F000", `schema "nosuch" does not exist`, ""},
		{"ALTER TABLE nosuch.t RENAME TO u", "3F000", `schema "nosuch" does not exist`, ""},
		{"ALTER TABLE a.t SET SCHEMA nosuch", "3F000", `schema "nosuch" does not exist`, ""},
		{"ALTER TABLE a.t SET SCHEMA b", "42P07", `relation "ti" already exists in schema "b"`, ""},
		{"ALTER VIEW a.t SET SCHEMA b", "42809", `"t" is not a view`, ""},
		{"ALTER VIEW IF EXISTS a.t SET SCHEMA b", "42809", `"t" is not a view`, ""},
		{"ALTER VIEW mv SET SCHEMA b", "42809", `"mv" is not a view`, ""},
		{"ALTER MATERIALIZED VIEW v SET SCHEMA b", "42809", `"v" is not a materialized view`, ""},
		{"ALTER SEQUENCE a.t SET SCHEMA b", "42809", `"t" is not a sequence`, ""},
		{"ALTER TABLE a.ti SET SCHEMA b", "42809", `cannot change schema of index "ti"`, "Change the schema of the table instead."},
		{"ALTER TABLE a.t SET SCHEMA pg_catalog", "0A000", "cannot move objects into or out of system schemas", ""},
		{"ALTER TABLE pg_class SET SCHEMA b", "42809", "cannot alter pg_catalog.pg_class: it is a system relation", ""},
	} {
		_, err := s.Exec(context.Background(), c.q, nil)
		var e *errs.Error
		if !asErr(err, &e) || e.SQLState != c.state || e.Message != c.msg || e.Hint != c.hint {
			t.Errorf("%s: got %v, want %s %s (hint %q)", c.q, err, c.state, c.msg, c.hint)
		}
	}
	notes = nil
	for q, tag := range map[string]string{
		"ALTER TABLE IF EXISTS nosuch SET SCHEMA b":             "ALTER TABLE",
		"ALTER VIEW IF EXISTS nosuch SET SCHEMA b":              "ALTER VIEW",
		"ALTER MATERIALIZED VIEW IF EXISTS nosuch SET SCHEMA b": "ALTER MATERIALIZED VIEW",
		"ALTER SEQUENCE IF EXISTS nosuch SET SCHEMA b":          "ALTER SEQUENCE",
		"ALTER TABLE IF EXISTS a.nosuch SET SCHEMA b":           "ALTER TABLE",
		"ALTER TABLE IF EXISTS b.nosuch SET SCHEMA a":           "ALTER TABLE",
	} {
		res, err := s.Exec(context.Background(), q, nil)
		if err != nil || res.Tag != tag {
			t.Errorf("%s: got %v %v, want %s", q, res, err, tag)
		}
	}
	if len(notes) != 6 {
		t.Fatalf("IF EXISTS notices: %v", notes)
	}
	for _, n := range notes {
		if n.Severity != "NOTICE" || n.SQLState != "00000" || n.Message != `relation "nosuch" does not exist, skipping` {
			t.Errorf("IF EXISTS notice: %+v", n)
		}
	}
	// Moves, one into the schema it is in (nothing to do); the tags are
	// the statements'.
	for _, c := range [][2]string{
		{"ALTER TABLE a.t SET SCHEMA a", "ALTER TABLE"},
		{"ALTER MATERIALIZED VIEW mv SET SCHEMA a", "ALTER MATERIALIZED VIEW"},
		{"ALTER VIEW v SET SCHEMA b", "ALTER VIEW"},
		{"ALTER TABLE b.v SET SCHEMA public", "ALTER TABLE"},
	} {
		res, err := s.Exec(context.Background(), c[0], nil)
		if err != nil || res.Tag != c[1] {
			t.Errorf("%s: got %v %v, want %s", c[0], res, err, c[1])
		}
	}
	if got := rowsOf(t, s, "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname IN ('t', 'v', 'mv') ORDER BY 2"); got != "a|mv\na|t\npublic|v\n" {
		t.Fatalf("pg_class: %q", got)
	}
}

// TestSetSchemaInTransaction: a move in a transaction block is seen by
// the block's later statements and undone by ROLLBACK.
func TestSetSchemaInTransaction(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	runAll(t, s, []string{
		"CREATE SCHEMA a", "CREATE TABLE t (k int PRIMARY KEY)", "CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n FROM t",
		"BEGIN", "ALTER TABLE t SET SCHEMA a", "INSERT INTO a.t VALUES (1), (2)", "ROLLBACK",
	})
	if got := rowsOf(t, s, "SELECT count(*) FROM t"); got != "0\n" {
		t.Fatalf("rolled back: %q", got)
	}
	runAll(t, s, []string{"BEGIN", "ALTER TABLE t SET SCHEMA a", "INSERT INTO a.t VALUES (1), (2)", "COMMIT"})
	if got := rowsOf(t, s, "SELECT n FROM mv"); got != "2\n" {
		t.Fatalf("committed: %q", got)
	}
	expectCode(t, s, "SELECT * FROM t", errs.UndefinedTable)
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestSetSchemaPrivileges: the owner moves a relation, into a schema it
// has CREATE on; a superuser moving another role's relation leaves its
// owner and grants as they were.
func TestSetSchemaPrivileges(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	admin := asRole(eng, "configured")
	runAll(t, admin, []string{
		"CREATE ROLE bob", "CREATE ROLE carol",
		"CREATE SCHEMA a", "CREATE SCHEMA b", "CREATE SCHEMA c",
		"GRANT USAGE, CREATE ON SCHEMA a TO bob", "GRANT USAGE ON SCHEMA b TO bob", "GRANT CREATE ON SCHEMA public TO bob",
		"CREATE TABLE a.notmine (x int)",
	})
	bob := asRole(eng, "bob")
	runAll(t, bob, []string{"CREATE TABLE a.mine (x int)", "GRANT SELECT ON a.mine TO carol"})
	expectDenied(t, bob, "ALTER TABLE a.notmine SET SCHEMA nosuch", "must be owner of table notmine")
	expectDenied(t, bob, "ALTER VIEW a.notmine SET SCHEMA public", "must be owner of table notmine")
	expectCode(t, bob, "ALTER TABLE a.mine SET SCHEMA nosuch", errs.InvalidSchemaName)
	expectDenied(t, bob, "ALTER TABLE a.mine SET SCHEMA b", "permission denied for schema b")
	expectDenied(t, bob, "ALTER TABLE a.mine SET SCHEMA c", "permission denied for schema c")
	runAll(t, bob, []string{"ALTER TABLE a.mine SET SCHEMA public"})
	runAll(t, admin, []string{"ALTER TABLE public.mine SET SCHEMA b"})
	const owner = "SELECT schemaname, tableowner FROM pg_tables WHERE tablename = 'mine'"
	if got := rowsOf(t, admin, owner); got != "b|bob\n" {
		t.Fatalf("owner after a superuser's move: %q", got)
	}
	if got := rowsOf(t, admin, "SELECT has_table_privilege('carol', 'b.mine', 'SELECT')"); got != "t\n" {
		t.Fatalf("carol's grant after the moves: %q", got)
	}
	runAll(t, bob, []string{"ALTER TABLE b.mine SET SCHEMA a"})
	if got := rowsOf(t, admin, owner); got != "a|bob\n" {
		t.Fatalf("owner after bob's move: %q", got)
	}
}
