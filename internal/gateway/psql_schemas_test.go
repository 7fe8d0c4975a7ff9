package gateway

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// schemasSQL makes objects of the same names in two schemas.
const schemasSQL = `CREATE SCHEMA sa;
CREATE SCHEMA "Sb";
CREATE TABLE t (a int PRIMARY KEY, b text);
CREATE TABLE sa.t (a int PRIMARY KEY, c int NOT NULL);
CREATE TABLE "Sb"."U" (k int);
CREATE VIEW sa.v AS SELECT a, c FROM sa.t;
CREATE MATERIALIZED VIEW sa.m AS SELECT c, count(*) AS n FROM sa.t GROUP BY c;
CREATE INDEX ON sa.t (c);
COMMENT ON SCHEMA sa IS 'schema a';
`

// TestPsqlSchemas runs psql's schema commands against RockStream and
// PostgreSQL over the same objects in two schemas: \dn, \dt s.*, \d s.t
// and their kin print the same.
func TestPsqlSchemas(t *testing.T) {
	if _, err := os.Stat(psqlPath); err != nil {
		t.Skip("psql is not installed")
	}
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwschemas"))
	pgHost, pgPort, _ := strings.Cut(addr, ":")
	psql(t, pgHost, pgPort, "postgres", db, schemasSQL)
	if out := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", schemasSQL); strings.Contains(out, "ERROR") {
		t.Fatalf("creating the objects: %s", out)
	}
	owner := regexp.MustCompile(`(?m)(^|,|=|/)rockstream(,|$|=|/)`)
	for _, cmd := range []string{`\dn s*`, `\dn "Sb"`, `\dn+ sa`, `\dt`, `\dt sa.*`, `\dt *.t`, `\dt "Sb".*`,
		`\dv sa.*`, `\dm sa.*`, `\di sa.*`, `\d sa.t`, `\d sa.v`, `\d "Sb"."U"`, `\d t`} {
		want := psql(t, pgHost, pgPort, "postgres", db, cmd)
		got := owner.ReplaceAllString(psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", cmd), "${1}postgres${2}")
		sameAsPostgres(t, "psql "+cmd, got, want)
		if strings.Count(got, "\n") < 2 || strings.Contains(got, "ERROR") {
			t.Errorf("psql %s lists nothing:\n%s", cmd, got)
		}
	}
	for cmd, frag := range map[string]string{`\d sa.t`: "Table \"sa.t\"", `\d t`: "Table \"public.t\""} {
		want := psqlAligned(t, pgHost, pgPort, db, cmd)
		got := psqlAligned(t, "127.0.0.1", ts.port(), "rockstream", cmd)
		sameAsPostgres(t, "psql "+cmd, got, want)
		if !strings.Contains(got, frag) {
			t.Errorf("psql %s lacks %q:\n%s", cmd, frag, got)
		}
	}
	for cmd, frag := range map[string]string{`\dt sa.*`: "sa,t,table,postgres\n", `\dn s*`: "sa,postgres\n", `\di sa.*`: "sa,t_c_idx,index,postgres,t\n"} {
		if got := owner.ReplaceAllString(psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", cmd), "${1}postgres${2}"); !strings.Contains(got, frag) {
			t.Errorf("psql %s lacks %q:\n%s", cmd, frag, got)
		}
	}
}

// setSchemaSQL makes a table with its key, an index and readers, then
// moves the table and a view to other schemas.
const setSchemaSQL = `CREATE SCHEMA sa;
CREATE SCHEMA sb;
CREATE TABLE t (a int PRIMARY KEY, b text);
CREATE INDEX t_b ON t (b);
CREATE VIEW v AS SELECT a, b FROM t;
CREATE VIEW w AS SELECT a FROM v;
ALTER TABLE t SET SCHEMA sa;
ALTER VIEW v SET SCHEMA sb;
`

// TestPsqlSetSchema: after ALTER TABLE and ALTER VIEW ... SET SCHEMA,
// psql's \d, \dt, \di and \dv show the relations, the table's indexes
// among them, in their new schemas, as PostgreSQL's do.
func TestPsqlSetSchema(t *testing.T) {
	if _, err := os.Stat(psqlPath); err != nil {
		t.Skip("psql is not installed")
	}
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwsetschema"))
	pgHost, pgPort, _ := strings.Cut(addr, ":")
	psql(t, pgHost, pgPort, "postgres", db, setSchemaSQL)
	if out := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", setSchemaSQL); strings.Contains(out, "ERROR") {
		t.Fatalf("creating and moving the objects: %s", out)
	}
	owner := regexp.MustCompile(`(?m)(^|,|=|/)rockstream(,|$|=|/)`)
	for _, cmd := range []string{`\dt sa.*`, `\di sa.*`, `\dv sb.*`, `\dv`, `\d sa.t`, `\d sb.v`, `\d w`} {
		want := psql(t, pgHost, pgPort, "postgres", db, cmd)
		got := owner.ReplaceAllString(psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", cmd), "${1}postgres${2}")
		sameAsPostgres(t, "psql "+cmd, got, want)
		if strings.Count(got, "\n") < 2 || strings.Contains(got, "ERROR") {
			t.Errorf("psql %s lists nothing:\n%s", cmd, got)
		}
	}
	for cmd, frag := range map[string]string{`\d sa.t`: `Table "sa.t"`, `\d sb.v`: `View "sb.v"`} {
		got := psqlAligned(t, "127.0.0.1", ts.port(), "rockstream", cmd)
		sameAsPostgres(t, "psql "+cmd, got, psqlAligned(t, pgHost, pgPort, db, cmd))
		if !strings.Contains(got, frag) {
			t.Errorf("psql %s lacks %q:\n%s", cmd, frag, got)
		}
	}
	if got := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", `\dt t`); strings.Count(got, "\n") > 1 {
		t.Errorf("psql \\dt t still finds the moved table:\n%s", got)
	}
}
