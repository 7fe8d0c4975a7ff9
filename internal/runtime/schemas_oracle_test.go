package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// schemaScript is run statement by statement against PostgreSQL 15 and
// RockStream, in one session each; "as ROLE:" runs the statement as ROLE
// (SET SESSION AUTHORIZATION), "as -:" as the superuser. Roles are
// prefixed sc_ since PostgreSQL's roles are shared by the server's
// databases. Plain views stand for materialized views in PostgreSQL,
// whose materialized views are only as fresh as their last REFRESH.
var schemaScript = []string{
	// Creating schemas.
	"CREATE SCHEMA sa",
	"CREATE SCHEMA sa",
	"CREATE SCHEMA IF NOT EXISTS sa",
	`CREATE SCHEMA "Sb"`,
	"CREATE SCHEMA pg_mine",
	"CREATE SCHEMA public",
	"CREATE SCHEMA pg_catalog",
	"SELECT nspname FROM pg_namespace WHERE nspname IN ('sa', 'Sb', 'sb', 'public') ORDER BY 1",
	"SELECT schema_name FROM information_schema.schemata WHERE schema_name IN ('sa', 'Sb', 'public') ORDER BY 1",
	// Two tables of one name.
	"CREATE TABLE t (a int PRIMARY KEY, b text)",
	"CREATE TABLE sa.t (a int, c int)",
	"CREATE TABLE sa.t (a int)",
	"CREATE TABLE IF NOT EXISTS sa.t (a int)",
	`CREATE TABLE "Sb"."T" (k int)`,
	"CREATE TABLE sb.t (a int)",
	"CREATE TABLE nosuch.t (a int)",
	"INSERT INTO t VALUES (1, 'one'), (2, 'two')",
	"INSERT INTO sa.t VALUES (10, 100), (20, 200), (30, NULL)",
	`INSERT INTO "Sb"."T" VALUES (7), (8)`,
	"INSERT INTO nosuch.t VALUES (1)",
	"SELECT * FROM t ORDER BY a",
	"SELECT * FROM sa.t ORDER BY a",
	"SELECT * FROM public.t ORDER BY a",
	`SELECT * FROM "Sb"."T" ORDER BY k`,
	`SELECT * FROM "Sb".t`,
	`SELECT * FROM sb."T"`,
	"SELECT * FROM nosuch.t",
	"SELECT t.a, s.c FROM public.t t JOIN sa.t s ON s.a = t.a * 10 ORDER BY 1",
	"SELECT sa.t.c FROM sa.t WHERE sa.t.a = 20",
	// The database's own name may qualify a name; another's may not.
	"SELECT a FROM $db.public.t ORDER BY a",
	"SELECT c FROM $db.sa.t WHERE a = 10",
	"SELECT * FROM otherdb.public.t",
	"INSERT INTO otherdb.public.t VALUES (9, 'x')",
	"UPDATE $db.public.t SET b = b WHERE a = 1",
	"CREATE TABLE otherdb.sa.z (a int)",
	"DROP TABLE otherdb.sa.t",
	"DROP INDEX otherdb.sa.t_pkey",
	// search_path.
	"SHOW search_path",
	"SELECT current_schema(), current_schemas(false), current_schemas(true)",
	"SET search_path TO sa, public",
	"SHOW search_path",
	"SELECT current_schema(), current_schemas(true)",
	"SELECT * FROM t ORDER BY a",
	"SELECT * FROM public.t ORDER BY a",
	"CREATE TABLE u (x int)",
	"INSERT INTO u VALUES (5)",
	"SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'u'",
	"UPDATE t SET c = c + 1 WHERE a = 10",
	"DELETE FROM t WHERE a = 30",
	"SELECT * FROM t ORDER BY a",
	"CREATE VIEW v AS SELECT a, c FROM t",
	"CREATE VIEW pv AS SELECT a, b FROM public.t",
	"CREATE INDEX ON t (c)",
	"SELECT schemaname, tablename, indexname FROM pg_indexes WHERE tablename = 't' ORDER BY 1, 3",
	`SET search_path TO "Sb"`,
	"SHOW search_path",
	"SELECT * FROM \"T\" ORDER BY k",
	"SELECT * FROM t",
	"SELECT * FROM v",
	"SELECT * FROM sa.v ORDER BY a",
	"SELECT * FROM sa.pv ORDER BY a",
	`SET search_path TO nosuch, "$user", public`,
	"SELECT current_schema(), current_schemas(false)",
	"SELECT * FROM t ORDER BY a",
	"SET search_path TO nosuch",
	"SELECT current_schema(), current_schemas(true)",
	"CREATE TABLE w (a int)",
	"SELECT count(*) FROM pg_class WHERE relname = 'w'",
	"SET search_path TO public, sa",
	"SELECT * FROM u",
	"SELECT * FROM t ORDER BY a",
	"RESET search_path",
	"SHOW search_path",
	// set_config takes the value as one string, as pg_dump uses it.
	"SELECT pg_catalog.set_config('search_path', '', false)",
	"SELECT current_schemas(true)",
	"CREATE TABLE x (a int)",
	"SELECT set_config('search_path', 'sa, public', false)",
	"SHOW search_path",
	"SELECT * FROM u",
	"BEGIN",
	"SELECT set_config('search_path', 'Sb', true)",
	"SELECT * FROM \"T\" ORDER BY k",
	"COMMIT",
	"SHOW search_path",
	"SELECT set_config('search_path', '\"Sb\"', false)",
	"SELECT * FROM \"T\" ORDER BY k",
	"SELECT set_config(name, 'x', false) FROM pg_settings WHERE name = 'no_such_setting'",
	"RESET search_path",
	// What else pg_dump sends: LOCK TABLE in a block, tableoid,
	// acldefault, its settings.
	"LOCK TABLE t IN ACCESS SHARE MODE",
	"BEGIN",
	"LOCK TABLE public.t IN ACCESS SHARE MODE",
	"LOCK TABLE sa.t, sa.u IN ACCESS SHARE MODE",
	"COMMIT",
	"BEGIN",
	"LOCK TABLE sa.nosuch IN ACCESS SHARE MODE",
	"ROLLBACK",
	"SELECT DISTINCT tableoid, tableoid::regclass FROM pg_class",
	"SELECT n.nspname FROM pg_namespace n WHERE n.tableoid = 'pg_namespace'::regclass AND n.nspname = 'sa'",
	"SET synchronize_seqscans TO off",
	"SET row_security = off",
	"SHOW row_security",
	// A view keeps what its names meant.
	"SET search_path TO sa, public",
	"CREATE VIEW sa.vt AS SELECT a FROM t",
	"RESET search_path",
	"SELECT * FROM sa.vt ORDER BY a",
	"SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema IN ('sa', 'Sb') ORDER BY 1, 2",
	"SELECT table_schema, table_name, column_name FROM information_schema.columns WHERE table_schema = 'sa' AND table_name = 't' ORDER BY ordinal_position",
	"SELECT 'sa.t'::regclass, 'public.t'::regclass, '\"Sb\".\"T\"'::regclass",
	"SELECT 'nosuch.t'::regclass",
	"SELECT pg_table_is_visible('sa.t'::regclass), pg_table_is_visible('public.t'::regclass)",
	// Privileges per schema.
	"CREATE ROLE sc_bob LOGIN",
	"CREATE ROLE sc_carol LOGIN",
	"GRANT SELECT ON ALL TABLES IN SCHEMA sa TO sc_bob",
	"as sc_bob: SELECT * FROM sa.u",
	"as sc_bob: CREATE TABLE sa.mine (a int)",
	"as sc_bob: SET search_path TO sa, public",
	"as sc_bob: SELECT current_schemas(false)",
	"as sc_bob: SELECT * FROM u",
	"as sc_bob: SELECT count(*) FROM t",
	"as sc_bob: RESET search_path",
	"GRANT USAGE ON SCHEMA sa TO sc_bob",
	"as sc_bob: SET search_path TO sa, public",
	"as sc_bob: SELECT current_schemas(false)",
	"as sc_bob: SELECT * FROM u",
	"as sc_bob: RESET search_path",
	"as sc_bob: SELECT * FROM sa.u",
	"as sc_bob: SELECT * FROM public.t",
	"as sc_bob: CREATE TABLE sa.mine (a int)",
	"GRANT CREATE ON SCHEMA sa TO sc_bob",
	"as sc_bob: CREATE TABLE sa.mine (a int)",
	"as sc_bob: INSERT INTO sa.mine VALUES (1)",
	"as sc_bob: SELECT * FROM sa.mine",
	"as sc_carol: SELECT * FROM sa.mine",
	"SELECT has_schema_privilege('sc_bob', 'sa', 'USAGE'), has_schema_privilege('sc_bob', 'sa', 'CREATE'), has_schema_privilege('sc_carol', 'sa', 'USAGE'), has_schema_privilege('sc_carol', 'public', 'USAGE')",
	"SELECT has_schema_privilege('sc_bob', 'nosuch', 'USAGE')",
	"SELECT acldefault('r', 'sc_bob'::regrole), acldefault('n', 'sc_bob'::regrole), acldefault('f', 'sc_bob'::regrole), acldefault('T', 'sc_bob'::regrole), acldefault('s', 'sc_bob'::regrole)",
	"REVOKE CREATE ON SCHEMA sa FROM sc_bob",
	"as sc_bob: CREATE TABLE sa.mine2 (a int)",
	"SELECT nspname, array_length(nspacl, 1), has_schema_privilege('sc_bob', oid, 'USAGE') FROM pg_namespace WHERE nspname = 'sa'",
	"GRANT USAGE ON SCHEMA nosuch TO sc_bob",
	"as sc_bob: DROP SCHEMA sa",
	"as sc_bob: ALTER SCHEMA sa RENAME TO sx",
	"as sc_bob: CREATE SCHEMA bobs",
	"CREATE SCHEMA carols AUTHORIZATION sc_carol",
	"SELECT n.nspname, r.rolname FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner WHERE n.nspname IN ('carols', 'sa') AND NOT r.rolsuper ORDER BY 1",
	"as sc_carol: CREATE TABLE carols.c (a int)",
	"as sc_carol: SELECT count(*) FROM carols.c",
	"as sc_bob: SELECT count(*) FROM carols.c",
	"ALTER SCHEMA carols OWNER TO sc_bob",
	"SELECT n.nspname, r.rolname FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner WHERE n.nspname = 'carols'",
	// Renaming and dropping.
	"ALTER SCHEMA nosuch RENAME TO other",
	"ALTER SCHEMA sa RENAME TO public",
	"COMMENT ON SCHEMA sa IS 'schema a'",
	"COMMENT ON SCHEMA nosuch IS 'x'",
	"as sc_bob: COMMENT ON SCHEMA sa IS 'mine'",
	"SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname IN ('sa', 'public', 'carols') ORDER BY nspname",
	"SELECT d.description FROM pg_description d JOIN pg_namespace n ON n.oid = d.objoid AND d.classoid = 'pg_namespace'::regclass WHERE n.nspname IN ('sa', 'carols') ORDER BY 1",
	"COMMENT ON SCHEMA sa IS NULL",
	"SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = 'sa'",
	"COMMENT ON SCHEMA sa IS 'schema a again'",
	"CREATE SCHEMA empty",
	"ALTER SCHEMA empty RENAME TO emptied",
	"SELECT nspname FROM pg_namespace WHERE nspname LIKE 'empt%'",
	"DROP SCHEMA emptied",
	"DROP SCHEMA emptied",
	"DROP SCHEMA IF EXISTS emptied",
	"DROP SCHEMA nosuch, sa",
	`DROP SCHEMA "Sb"`,
	`DROP SCHEMA "Sb" RESTRICT`,
	`DROP SCHEMA "Sb" CASCADE`,
	`SELECT * FROM "Sb"."T"`,
	"DROP SCHEMA carols CASCADE",
	"DROP TABLE sa.mine",
	"DROP TABLE sa.nosuch",
	"DROP TABLE IF EXISTS sa.nosuch",
	"DROP VIEW sa.pv",
	"CREATE VIEW public.over_sa AS SELECT a FROM sa.t WHERE c > 100",
	"SELECT * FROM over_sa ORDER BY a",
	"DROP SCHEMA sa",
	"DROP TABLE sa.t",
	"SET search_path TO sa",
	"DROP TABLE t",
	"DROP INDEX t_c_idx",
	"DROP INDEX t_c_idx",
	"RESET search_path",
	"DROP SCHEMA sa CASCADE",
	"SELECT * FROM over_sa",
	"SELECT * FROM sa.t",
	"SELECT * FROM t ORDER BY a",
	"SELECT nspname FROM pg_namespace WHERE nspname IN ('sa', 'Sb', 'carols')",
	"CREATE ROLE sc_dan",
	"CREATE SCHEMA dans AUTHORIZATION sc_dan",
	"DROP ROLE sc_dan",
	"DROP SCHEMA dans",
	"CREATE SCHEMA dans2 AUTHORIZATION sc_dan",
	"CREATE TABLE dans2.x (a int)",
	"CREATE SCHEMA others",
	"GRANT USAGE ON SCHEMA others TO sc_dan",
	"DROP OWNED BY sc_dan",
	"DROP OWNED BY sc_dan CASCADE",
	"SELECT nspname FROM pg_namespace WHERE nspname IN ('dans2', 'others')",
	"SELECT has_schema_privilege('sc_dan', 'others', 'USAGE')",
	"DROP SCHEMA others",
	"CREATE SCHEMA dans3 AUTHORIZATION sc_dan",
	"REASSIGN OWNED BY sc_dan TO sc_bob",
	"SELECT n.nspname, r.rolname FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner WHERE n.nspname = 'dans3'",
	"DROP SCHEMA dans3",
	"DROP ROLE sc_bob, sc_carol, sc_dan",
}

// TestSchemasMatchPostgres runs schemaScript against PostgreSQL and
// RockStream: every statement succeeds in both, or fails in both with
// the same SQLSTATE, message and detail; a query's rows are the same.
func TestSchemasMatchPostgres(t *testing.T) {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "schemaoracle"))
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	dropRoles := func() {
		for _, r := range []string{"sc_bob", "sc_carol", "sc_dan"} {
			_, _ = pgc.Exec(ctx, "DROP OWNED BY "+r+" CASCADE; DROP ROLE IF EXISTS "+r).ReadAll()
		}
	}
	dropRoles()
	defer dropRoles()
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	var dbName string
	if r, err := pgc.Exec(ctx, "SELECT current_database()").ReadAll(); err == nil && len(r) == 1 && len(r[0].Rows) == 1 {
		dbName = string(r[0].Rows[0][0])
	}
	lastAs := ""
	for i, line := range schemaScript {
		stmt, as := line, ""
		if rest, ok := strings.CutPrefix(line, "as "); ok {
			as, stmt, _ = strings.Cut(rest, ": ")
		}
		auth := "RESET SESSION AUTHORIZATION"
		if as != "" {
			auth = "SET SESSION AUTHORIZATION " + as
		}
		if as == lastAs && i > 0 {
			auth = ""
		}
		lastAs = as
		if auth != "" {
			if _, err := pgc.Exec(ctx, auth).ReadAll(); err != nil {
				t.Fatalf("PostgreSQL %s: %v", auth, err)
			}
			if _, err := s.Exec(ctx, auth, nil); err != nil {
				t.Fatalf("RockStream %s: %v", auth, err)
			}
		}
		rs, rsErr := s.Exec(ctx, strings.ReplaceAll(stmt, "$db", s.Setting("current_database")), nil)
		pr, pgErr := pgc.Exec(ctx, strings.ReplaceAll(stmt, "$db", dbName)).ReadAll()
		var pe *pgconn.PgError
		var re *errs.Error
		switch {
		case pgErr == nil && rsErr == nil:
			if len(pr) > 0 && rs != nil {
				want := fmt.Sprint(pgRows(pr[len(pr)-1].Rows))
				got := fmt.Sprint(rsRows(rs))
				if want != got {
					t.Errorf("%s: RockStream rows %s; PostgreSQL %s", line, got, want)
				}
			}
		case errors.As(pgErr, &pe) && errors.As(rsErr, &re):
			// The databases' names differ.
			pe.Message = strings.ReplaceAll(pe.Message, dbName, s.Setting("current_database"))
			if pe.Code != re.SQLState || pe.Message != re.Message || pe.Detail != re.Detail {
				t.Errorf("%s: RockStream %s %q (%q); PostgreSQL %s %q (%q)", line, re.SQLState, re.Message, re.Detail, pe.Code, pe.Message, pe.Detail)
			}
		default:
			t.Errorf("%s: RockStream: %v; PostgreSQL: %v", line, rsErr, pgErr)
		}
	}
	if len(schemaScript) < 80 {
		t.Fatalf("the script has %d statements", len(schemaScript))
	}
}
