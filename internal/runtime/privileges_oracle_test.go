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
	"github.com/rockstream/rockstream/internal/types"
)

// privilegeScript is run statement by statement against PostgreSQL 15 and
// RockStream; "as ROLE:" runs the statement as ROLE (SET SESSION
// AUTHORIZATION), "as -:" as the superuser. Roles are prefixed pv_ since
// PostgreSQL's roles are shared by the server's databases.
var privilegeScript = []string{
	// Roles: who may create, alter and drop them.
	"CREATE ROLE pv_alice LOGIN CREATEROLE",
	"CREATE ROLE pv_bob LOGIN",
	"CREATE ROLE pv_carol",
	"CREATE ROLE pv_dave NOINHERIT",
	"as pv_bob: CREATE ROLE pv_eve SUPERUSER",
	"as pv_bob: CREATE ROLE pv_eve",
	"as pv_bob: ALTER ROLE pv_bob SUPERUSER",
	"as pv_bob: ALTER ROLE pv_carol PASSWORD 'x'",
	"as pv_bob: ALTER ROLE pv_bob PASSWORD 'x'",
	"as pv_bob: ALTER ROLE pv_bob CREATEDB",
	"as pv_bob: DROP ROLE pv_carol",
	"as pv_alice: CREATE ROLE pv_eve SUPERUSER",
	"as pv_alice: CREATE ROLE pv_eve CREATEDB",
	"as pv_alice: ALTER ROLE pv_bob SUPERUSER",
	"as pv_alice: ALTER ROLE pv_eve PASSWORD 'y'",
	"as pv_alice: DROP ROLE pv_eve",
	"as pv_alice: DROP ROLE pv_alice",
	// Tables: nothing without a grant.
	"CREATE TABLE pv_t (k int PRIMARY KEY, v text)",
	"INSERT INTO pv_t VALUES (1, 'one'), (2, 'two')",
	"as pv_bob: SELECT * FROM pv_t",
	"as pv_bob: INSERT INTO pv_t VALUES (3, 'three')",
	"as pv_bob: UPDATE pv_t SET v = 'x'",
	"as pv_bob: DELETE FROM pv_t",
	"as pv_bob: TRUNCATE pv_t",
	"as pv_bob: DROP TABLE pv_t",
	"as pv_bob: CREATE TABLE pv_u (k int)",
	"as pv_bob: SELECT count(*) FROM (SELECT * FROM pv_t) s",
	"as pv_bob: WITH c AS (SELECT * FROM pv_t) SELECT * FROM c",
	"as pv_bob: SELECT 1 WHERE EXISTS (SELECT 1 FROM pv_t)",
	"as pv_bob: GRANT SELECT ON pv_t TO pv_carol",
	"as pv_bob: COPY pv_t TO STDOUT",
	"as pv_bob: COPY (SELECT k FROM pv_t) TO STDOUT",
	"as pv_bob: EXPLAIN SELECT * FROM pv_t",
	"as pv_bob: WITH pv_t AS (SELECT 1 AS k) SELECT k FROM pv_t",
	"as pv_bob: SELECT * FROM (WITH pv_t AS (SELECT 1 AS k) SELECT k FROM pv_t) a, pv_t",
	"as pv_bob: WITH a AS (SELECT k FROM pv_t), pv_t AS (SELECT 1 AS k) SELECT * FROM a",
	"as pv_bob: SELECT 1 FROM pv_t WHERE k IN (SELECT k FROM pv_t)",
	"as pv_bob: BEGIN",
	"as pv_bob: DECLARE c CURSOR FOR SELECT * FROM pv_t",
	"as pv_bob: ROLLBACK",
	// Grants.
	"GRANT SELECT ON pv_t TO pv_bob WITH GRANT OPTION",
	"GRANT INSERT ON TABLE pv_t TO PUBLIC",
	"as pv_bob: SELECT k, v FROM pv_t ORDER BY k",
	"as pv_bob: INSERT INTO pv_t VALUES (3, 'three')",
	"as pv_bob: UPDATE pv_t SET v = 'x' WHERE k = 3",
	"as pv_bob: INSERT INTO pv_t VALUES (4, 'four') RETURNING k",
	"as pv_carol: INSERT INTO pv_t VALUES (5, 'five')",
	"as pv_carol: INSERT INTO pv_t SELECT k + 10, v FROM pv_t",
	"as pv_carol: INSERT INTO pv_t VALUES (6, 'six') ON CONFLICT (k) DO NOTHING",
	"as pv_bob: INSERT INTO pv_t SELECT k + 10, v FROM pv_t WHERE k < 3",
	"as pv_bob: UPDATE pv_t SET v = 'z' WHERE k IN (SELECT k FROM pv_t WHERE k = 1)",
	"as pv_carol: SELECT * FROM pv_t",
	"as pv_bob: GRANT SELECT ON pv_t TO pv_carol",
	"as pv_bob: GRANT SELECT, UPDATE ON pv_t TO pv_carol",
	"as pv_carol: SELECT count(*) FROM pv_t",
	"SELECT has_table_privilege('pv_bob', 'pv_t', 'SELECT WITH GRANT OPTION'), has_table_privilege('pv_carol', 'pv_t', 'select'), has_table_privilege('pv_carol', 'pv_t', 'INSERT, DELETE'), has_table_privilege('pv_dave', 'pv_t', 'UPDATE')",
	"as pv_carol: SELECT has_table_privilege('pv_t', 'SELECT'), has_table_privilege('pv_t', 'UPDATE WITH GRANT OPTION')",
	"SELECT has_table_privilege('pv_bob', 'pv_t', 'usage')",
	"REVOKE SELECT ON pv_t FROM pv_bob",
	"REVOKE GRANT OPTION FOR SELECT ON pv_t FROM pv_bob",
	"REVOKE SELECT ON pv_t FROM pv_bob CASCADE",
	"as pv_carol: SELECT count(*) FROM pv_t",
	"as pv_bob: SELECT count(*) FROM pv_t",
	"GRANT UPDATE ON pv_t TO pv_bob",
	"as pv_bob: UPDATE pv_t SET v = 'y'",
	"as pv_bob: UPDATE pv_t SET v = 'y' WHERE k = 1",
	"as pv_bob: UPDATE pv_t SET v = v || 'y'",
	"GRANT DELETE, TRUNCATE ON pv_t TO pv_bob",
	"as pv_bob: DELETE FROM pv_t WHERE k = 5",
	"as pv_bob: DELETE FROM pv_t",
	"as pv_bob: TRUNCATE pv_t",
	"INSERT INTO pv_t VALUES (1, 'one'), (2, 'two')",
	"GRANT ALL ON ALL TABLES IN SCHEMA public TO pv_carol",
	"as pv_carol: SELECT count(*) FROM pv_t",
	"REVOKE ALL ON pv_t FROM pv_carol, PUBLIC",
	"as pv_carol: SELECT count(*) FROM pv_t",
	// Membership: inheritance, SET ROLE, admin option.
	"GRANT SELECT ON pv_t TO pv_carol",
	"GRANT pv_carol TO pv_bob",
	"GRANT pv_carol TO pv_dave",
	"as pv_bob: SELECT count(*) FROM pv_t",
	"as pv_dave: SELECT count(*) FROM pv_t",
	"as pv_dave: SET ROLE pv_carol",
	"as pv_dave: SELECT count(*) FROM pv_t",
	"as pv_dave: SELECT current_user, session_user",
	"as pv_dave: RESET ROLE",
	"SELECT pg_has_role('pv_bob', 'pv_carol', 'MEMBER'), pg_has_role('pv_dave', 'pv_carol', 'MEMBER'), pg_has_role('pv_dave', 'pv_carol', 'USAGE'), pg_has_role('pv_bob', 'pv_carol', 'USAGE WITH ADMIN OPTION')",
	"SELECT r.rolname, m.rolname, a.admin_option FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid JOIN pg_roles m ON m.oid = a.member WHERE r.rolname LIKE 'pv_%' ORDER BY 1, 2",
	"SELECT rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin FROM pg_roles WHERE rolname LIKE 'pv_%' ORDER BY 1",
	"as pv_dave: SELECT count(*) FROM pv_t",
	"as pv_dave: SET ROLE pv_bob",
	"as pv_bob: GRANT pv_carol TO pv_alice",
	"as pv_alice: GRANT pv_carol TO pv_alice",
	"GRANT pv_bob TO pv_carol",
	"GRANT pv_carol TO pv_carol",
	"REVOKE pv_carol FROM pv_dave",
	"as pv_dave: SET ROLE pv_carol",
	// Views run with their owner's rights.
	"GRANT CREATE ON SCHEMA public TO pv_bob",
	"as pv_bob: CREATE TABLE pv_b (k int)",
	"as pv_bob: INSERT INTO pv_b VALUES (7)",
	"as pv_bob: CREATE VIEW pv_bv AS SELECT k FROM pv_b",
	"as pv_bob: CREATE VIEW pv_tv AS SELECT k FROM pv_t",
	"as pv_bob: CREATE MATERIALIZED VIEW pv_bm AS SELECT k FROM pv_b",
	"as pv_bob: CREATE MATERIALIZED VIEW pv_tm AS SELECT k FROM pv_t",
	"as pv_dave: SELECT * FROM pv_bv",
	"as pv_dave: SELECT * FROM pv_bm",
	"as pv_bob: GRANT SELECT ON pv_bv, pv_bm TO pv_dave",
	"SELECT relname, relacl, relowner::regrole FROM pg_class WHERE relname IN ('pv_b', 'pv_bv', 'pv_bm') ORDER BY 1",
	"SELECT nspacl FROM pg_namespace WHERE nspname = 'public'",
	"SELECT has_schema_privilege('pv_bob', 'public', 'CREATE'), has_schema_privilege('pv_dave', 'public', 'CREATE, USAGE'), has_schema_privilege('pv_dave', 'public', 'CREATE')",
	"as pv_dave: SELECT * FROM pv_bv",
	"as pv_dave: SELECT * FROM pv_bm",
	"as pv_dave: SELECT * FROM pv_b",
	"as pv_bob: GRANT SELECT ON pv_tv TO pv_dave",
	"as pv_dave: SELECT count(*) FROM pv_tv",
	"REVOKE pv_carol FROM pv_bob",
	"as pv_dave: SELECT count(*) FROM pv_tv",
	"as pv_dave: DROP VIEW pv_bv",
	"as pv_dave: ALTER TABLE pv_b OWNER TO pv_dave",
	"as pv_bob: ALTER TABLE pv_b OWNER TO pv_dave",
	"ALTER TABLE pv_b OWNER TO pv_dave",
	"as pv_dave: INSERT INTO pv_b VALUES (8)",
	"as pv_bob: INSERT INTO pv_b VALUES (9)",
	"as pv_dave: SELECT count(*) FROM pv_bv",
	"as pv_bob: DROP MATERIALIZED VIEW pv_bm",
	"as pv_bob: DROP VIEW pv_bv",
	"as pv_bob: DROP VIEW pv_tv",
	"DROP ROLE pv_dave",
	"as pv_dave: DROP TABLE pv_b",
	"REVOKE CREATE ON SCHEMA public FROM pv_bob",
	"as pv_bob: CREATE TABLE pv_c (k int)",
	// Default privileges.
	"GRANT CREATE ON SCHEMA public TO pv_alice",
	"ALTER DEFAULT PRIVILEGES FOR ROLE pv_alice GRANT SELECT ON TABLES TO pv_bob",
	"SELECT defaclrole::regrole, defaclnamespace, defaclobjtype, defaclacl FROM pg_default_acl",
	"as pv_alice: CREATE TABLE pv_a (k int)",
	"SELECT relacl FROM pg_class WHERE relname = 'pv_a'",
	"as pv_bob: SELECT * FROM pv_a",
	"as pv_bob: ALTER DEFAULT PRIVILEGES FOR ROLE pv_alice GRANT INSERT ON TABLES TO pv_bob",
	"as pv_alice: DROP TABLE pv_a",
	"DROP ROLE pv_bob",
	"ALTER DEFAULT PRIVILEGES FOR ROLE pv_alice REVOKE SELECT ON TABLES FROM pv_bob",
	"REVOKE CREATE ON SCHEMA public FROM pv_alice",
	"as pv_bob: SET SESSION AUTHORIZATION pv_alice",
	"DROP ROLE pv_bob",
	"as pv_carol: DROP OWNED BY pv_bob",
	"DROP OWNED BY pv_bob",
	"SELECT count(*) FROM pg_class WHERE relname = 'pv_tm'",
	"SELECT has_table_privilege('pv_bob', 'pv_t', 'SELECT, UPDATE, DELETE'), has_table_privilege('pv_carol', 'pv_t', 'SELECT'), array_length(relacl, 1) FROM pg_class WHERE relname = 'pv_t'",
	"DROP TABLE pv_t",
	"DROP ROLE pv_bob, pv_carol",
}

// TestPrivilegeOracle runs privilegeScript against PostgreSQL and
// RockStream: every statement succeeds in both, or fails in both with the
// same SQLSTATE and message (and detail); a query's rows are the same.
func TestPrivilegeOracle(t *testing.T) {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "privoracle"))
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	dropRoles := func() {
		for _, r := range []string{"pv_alice", "pv_bob", "pv_carol", "pv_dave", "pv_eve"} {
			_, _ = pgc.Exec(ctx, "DROP OWNED BY "+r+" CASCADE; DROP ROLE IF EXISTS "+r).ReadAll()
		}
	}
	dropRoles()
	defer dropRoles()
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	lastAs := ""
	for _, line := range privilegeScript {
		stmt, as := line, ""
		if rest, ok := strings.CutPrefix(line, "as "); ok {
			as, stmt, _ = strings.Cut(rest, ": ")
		}
		auth := "RESET SESSION AUTHORIZATION"
		if as != "" {
			auth = "SET SESSION AUTHORIZATION " + as
		}
		if as == lastAs && line != privilegeScript[0] {
			auth = ""
		}
		lastAs = as
		// The role is switched when it changes, so that a transaction
		// block runs as one role.
		if auth != "" {
			if _, err := pgc.Exec(ctx, auth).ReadAll(); err != nil {
				t.Fatalf("PostgreSQL %s: %v", auth, err)
			}
			if _, err := s.Exec(ctx, auth, nil); err != nil {
				t.Fatalf("RockStream %s: %v", auth, err)
			}
		}
		rs, pgRes := s.Exec(ctx, stmt, nil)
		pr, pgErr := pgc.Exec(ctx, stmt).ReadAll()
		var pe *pgconn.PgError
		var re *errs.Error
		switch {
		case pgErr == nil && pgRes == nil:
			if len(pr) > 0 && rs != nil {
				want := fmt.Sprint(pgRows(pr[len(pr)-1].Rows))
				got := fmt.Sprint(rsRows(rs))
				if want != got {
					t.Errorf("%s: RockStream rows %s; PostgreSQL %s", line, got, want)
				}
			}
		case errors.As(pgErr, &pe) && errors.As(pgRes, &re):
			if pe.Code != re.SQLState || pe.Message != re.Message || pe.Detail != re.Detail {
				t.Errorf("%s: RockStream %s %q (%q); PostgreSQL %s %q (%q)", line, re.SQLState, re.Message, re.Detail, pe.Code, pe.Message, pe.Detail)
			}
		default:
			t.Errorf("%s: RockStream: %v; PostgreSQL: %v", line, pgRes, pgErr)
		}
	}
}

func pgRows(rows [][][]byte) []string {
	var out []string
	for _, r := range rows {
		var cells []string
		for _, c := range r {
			cells = append(cells, string(c))
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return out
}

func rsRows(res *Result) []string {
	var out []string
	for _, r := range res.Rows {
		var cells []string
		for _, v := range r {
			cells = append(cells, types.Format(v, types.Type{}))
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return out
}
