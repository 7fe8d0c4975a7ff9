package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestFunctionRecovery reopens an engine after CREATE FUNCTION: the
// functions come back in the order their callers need (a function
// calling another, a plain view and a materialized view calling them, a
// replaced definition), a dropped one stays gone, and the materialized
// view goes on being maintained with the inlined body.
func TestFunctionRecovery(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	e1, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(s *Session, sql string) string {
		t.Helper()
		res, err := s.Exec(ctx, sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return formatRows(res)
	}
	s := e1.NewSession()
	for _, q := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"CREATE FUNCTION add(a int, b int) RETURNS int LANGUAGE SQL IMMUTABLE AS $$ SELECT a + b $$",
		"CREATE FUNCTION add(a text, b text) RETURNS text LANGUAGE SQL IMMUTABLE RETURN a || b",
		"CREATE FUNCTION twice(int) RETURNS int IMMUTABLE STRICT LANGUAGE SQL AS 'SELECT add($1, $1)'",
		"CREATE FUNCTION label(int) RETURNS text STABLE LANGUAGE SQL AS $$ SELECT 'v' || $1 $$",
		"CREATE OR REPLACE FUNCTION label(int) RETURNS text STABLE LANGUAGE SQL AS $$ SELECT 'w' || $1 $$",
		"CREATE FUNCTION gone(int) RETURNS int IMMUTABLE LANGUAGE SQL AS 'SELECT 1'",
		"DROP FUNCTION gone(int)",
		"INSERT INTO t VALUES (1, 10), (2, NULL)",
		"CREATE MATERIALIZED VIEW m AS SELECT k, twice(v) AS d, add('x', 'y') AS s FROM t",
		"CREATE VIEW pv AS SELECT k, label(k) AS l FROM t",
	} {
		run(s, q)
	}
	query := "SELECT m.k, m.d, m.s, pv.l FROM m JOIN pv USING (k) ORDER BY k"
	before := run(s, query)
	if want := "1|20|xy|w1\n2|NULL|xy|w2\n"; before != want {
		t.Fatalf("before reopen:\n%s\nwant:\n%s", before, want)
	}
	s.Close()
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e2.Close()
	s2 := e2.NewSession()
	if after := run(s2, query); after != before {
		t.Fatalf("changed across reopen:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	run(s2, "INSERT INTO t VALUES (3, 4)")
	if got, want := run(s2, "SELECT d FROM m WHERE k = 3"), "8\n"; got != want {
		t.Fatalf("maintained after reopen: %q, want %q", got, want)
	}
	if _, err := s2.Exec(ctx, "SELECT gone(1)", nil); errs.SQLState(err) != "42883" {
		t.Fatalf("dropped function: %v", err)
	}
	_, err = s2.Exec(ctx, "DROP FUNCTION add(int, int)", nil)
	if errs.SQLState(err) != "2BP01" || !strings.Contains(err.Error(), "materialized view m depends on function add(integer, integer)") {
		t.Fatalf("DROP FUNCTION of a called function: %v", err)
	}
	run(s2, "DROP FUNCTION twice CASCADE")
	if _, err := s2.Exec(ctx, "SELECT * FROM m", nil); errs.SQLState(err) != "42P01" {
		t.Fatalf("CASCADE left the view: %v", err)
	}
	run(s2, "DROP FUNCTION add(int, int)")
}

// TestFunctionsInPgProc lists SQL functions as pg_proc and psql's \df
// show them, with each kind of body.
func TestFunctionsInPgProc(t *testing.T) {
	ctx := context.Background()
	e, err := Open(NewMemoryStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession()
	defer s.Close()
	run := func(sql string) string {
		t.Helper()
		res, err := s.Exec(ctx, sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return formatRows(res)
	}
	run("CREATE FUNCTION add(x int, int) RETURNS int LANGUAGE SQL IMMUTABLE STRICT AS $$ SELECT x + $2 $$")
	run("CREATE FUNCTION ten(x bigint) RETURNS bigint LANGUAGE SQL STABLE BEGIN ATOMIC SELECT x * 10; END")
	run("CREATE FUNCTION hello() RETURNS text RETURN 'hello'")
	if got, want := run("SELECT add(1, 2), ten(4), hello()"), "3|40|hello\n"; got != want {
		t.Fatalf("calls: %q, want %q", got, want)
	}
	got := run("SELECT p.proname, l.lanname, p.provolatile, p.proisstrict, p.pronargs, p.prosrc, p.proargnames, " +
		"p.prorettype::regtype FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang " +
		"JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1")
	want := "add|sql|i|t|2| SELECT x + $2 |{x,\"\"}|integer\n" +
		"hello|sql|v|f|0||NULL|text\n" +
		"ten|sql|s|f|1||{x}|bigint\n"
	if got != want {
		t.Fatalf("pg_proc:\n%s\nwant:\n%s", got, want)
	}
	// psql's \df.
	got = run(`SELECT n.nspname as "Schema", p.proname as "Name",
  pg_catalog.pg_get_function_result(p.oid) as "Result data type",
  pg_catalog.pg_get_function_arguments(p.oid) as "Argument data types",
 CASE p.prokind WHEN 'a' THEN 'agg' WHEN 'w' THEN 'window' WHEN 'p' THEN 'proc' ELSE 'func' END as "Type"
FROM pg_catalog.pg_proc p
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE pg_catalog.pg_function_is_visible(p.oid)
      AND n.nspname <> 'pg_catalog'
      AND n.nspname <> 'information_schema'
ORDER BY 1, 2, 4`)
	want = "public|add|integer|x integer, integer|func\n" +
		"public|hello|text||func\n" +
		"public|ten|bigint|x bigint|func\n"
	if got != want {
		t.Fatalf(`\df:`+"\n%s\nwant:\n%s", got, want)
	}
	if _, err := s.Exec(ctx, "CREATE FUNCTION two() RETURNS int LANGUAGE SQL BEGIN ATOMIC SELECT 1; SELECT 2; END", nil); errs.SQLState(err) != "0A000" {
		t.Fatalf("two statements: %v", err)
	}
	if _, err := s.Exec(ctx, "CREATE FUNCTION f() RETURNS int LANGUAGE SQL AS 'SELECT 1 FROM pg_class'", nil); errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), "a FROM clause") {
		t.Fatalf("FROM: %v", err)
	}
}

// TestFunctionInDefault keeps a table whose column default calls a SQL
// function: the function cannot be dropped, not even with CASCADE, and the
// default works after a restart.
func TestFunctionInDefault(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	e1, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e1.NewSession()
	for _, q := range []string{
		"CREATE FUNCTION seven() RETURNS int IMMUTABLE LANGUAGE SQL RETURN 7",
		"CREATE TABLE t (k int, d int DEFAULT seven())",
		"INSERT INTO t (k) VALUES (1)",
		// A default reading the clock is bound again at each statement's
		// clock, with the functions it calls.
		"CREATE FUNCTION later(x timestamptz) RETURNS timestamptz STABLE LANGUAGE SQL RETURN x + interval '1 hour'",
		"CREATE TABLE c (k int, at timestamptz DEFAULT later(now()))",
		"INSERT INTO c (k) VALUES (1)",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{"DROP FUNCTION seven", "DROP FUNCTION seven() CASCADE"} {
		if _, err := s.Exec(ctx, q, nil); errs.SQLState(err) != "2BP01" {
			t.Fatalf("%s: %v, want 2BP01", q, err)
		}
	}
	s.Close()
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e2.Close()
	s2 := e2.NewSession()
	if _, err := s2.Exec(ctx, "INSERT INTO t (k) VALUES (2)", nil); err != nil {
		t.Fatal(err)
	}
	res, err := s2.Exec(ctx, "SELECT k, d FROM t ORDER BY k", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := formatRows(res), "1|7\n2|7\n"; got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
	if _, err := s2.Exec(ctx, "INSERT INTO c (k) VALUES (2)", nil); err != nil {
		t.Fatal(err)
	}
	res, err = s2.Exec(ctx, "SELECT k, at > now() FROM c ORDER BY k", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := formatRows(res), "1|t\n2|t\n"; got != want {
		t.Fatalf("clock default through a function: rows %q, want %q", got, want)
	}
}
