package runtime

import "testing"

// TestSchemaFunctionsRecovery reopens an engine holding SQL functions
// outside public: functions created qualified and through search_path,
// bodies and views whose unqualified calls resolved through the path of
// their creation, a plain view read under another path, and a function
// moved by ALTER FUNCTION ... SET SCHEMA out of a schema dropped since,
// come back resolving as they did.
func TestSchemaFunctionsRecovery(t *testing.T) {
	dir := t.TempDir()
	eng := openEngineIn(t, dir)
	s := eng.NewSession()
	runAll(t, s, []string{
		"CREATE SCHEMA s",
		"CREATE TABLE t (k int)",
		"INSERT INTO t VALUES (1), (2)",
		"CREATE FUNCTION f(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x + 1'",
		"CREATE FUNCTION s.f(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x + 100'",
		"SET search_path TO s, public",
		"CREATE FUNCTION g(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT f(x) * 2'",
		"CREATE MATERIALIZED VIEW public.mv AS SELECT k, f(k) AS fk, g(k) AS gk FROM t",
		"CREATE VIEW public.v AS SELECT k, f(k) AS fk FROM t",
		"RESET search_path",
		"CREATE FUNCTION s.h(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT f(x) * 3'",
		"CREATE MATERIALIZED VIEW mh AS SELECT k, s.h(k) AS hk FROM t",
		"CREATE SCHEMA r",
		"CREATE FUNCTION r.m(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x * 7'",
		"ALTER FUNCTION r.m(int) SET SCHEMA s",
		"DROP SCHEMA r",
	})
	const state = "SELECT m.k, fk, gk, hk FROM mv m JOIN mh USING (k) ORDER BY 1"
	const want = "1|101|202|6\n2|102|204|9\n"
	const procs = "SELECT n.nspname, p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.prolang = 14 ORDER BY 1, 2"
	const procsWant = "public|f\ns|f\ns|g\ns|h\ns|m\n"
	check := func(s *Session) {
		t.Helper()
		if got := rowsOf(t, s, state); got != want {
			t.Fatalf("views:\n%s\nwant:\n%s", got, want)
		}
		if got := rowsOf(t, s, "SELECT * FROM v ORDER BY k"); got != "1|101\n2|102\n" {
			t.Fatalf("plain view read under another search path: %q", got)
		}
		if got := rowsOf(t, s, "SELECT s.m(2)"); got != "14\n" {
			t.Fatalf("moved function: %q", got)
		}
		if got := rowsOf(t, s, procs); got != procsWant {
			t.Fatalf("pg_proc:\n%s\nwant:\n%s", got, procsWant)
		}
	}
	check(s)
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng = openEngineIn(t, dir)
	defer eng.Close()
	s = eng.NewSession()
	defer s.Close()
	check(s)
	runAll(t, s, []string{"INSERT INTO t VALUES (3)"})
	if got := rowsOf(t, s, "SELECT fk, gk FROM mv WHERE k = 3"); got != "103|206\n" {
		t.Fatalf("maintained after reopening: %q", got)
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaFunctionsPrivileges: creating a function in a schema, or
// moving one into it, needs CREATE on the schema, as for a relation.
func TestSchemaFunctionsPrivileges(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := asRole(eng, "configured")
	runAll(t, s, []string{"CREATE SCHEMA s", "CREATE SCHEMA mine", "CREATE ROLE bob", "GRANT USAGE, CREATE ON SCHEMA mine TO bob",
		"GRANT USAGE ON SCHEMA s TO bob"})
	bob := asRole(eng, "bob")
	expectDenied(t, bob, "CREATE FUNCTION s.f(x int) RETURNS int LANGUAGE SQL AS 'SELECT x'", "permission denied for schema s")
	expectDenied(t, bob, "CREATE FUNCTION f(x int) RETURNS int LANGUAGE SQL AS 'SELECT x'", "permission denied for schema public")
	runAll(t, bob, []string{"CREATE FUNCTION mine.f(x int) RETURNS int LANGUAGE SQL AS 'SELECT x'"})
	expectDenied(t, bob, "ALTER FUNCTION mine.f(int) SET SCHEMA s", "permission denied for schema s")
}
