package gateway

import (
	"os"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestPsqlDescribeFunctions runs psql's \df through the gateway after
// CREATE FUNCTION, against RockStream and PostgreSQL holding the same
// functions: the listings must be the same.
func TestPsqlDescribeFunctions(t *testing.T) {
	if _, err := os.Stat(psqlPath); err != nil {
		t.Skip("psql is not installed")
	}
	pgtest.Require(t)
	ddl := `CREATE FUNCTION add(x int, int) RETURNS int LANGUAGE SQL IMMUTABLE STRICT AS $$ SELECT x + $2 $$;
CREATE FUNCTION add(a text, b text) RETURNS text LANGUAGE SQL IMMUTABLE RETURN a || b;
CREATE FUNCTION hello() RETURNS text LANGUAGE SQL STABLE AS 'SELECT ''hello''';
`
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwfunctions"))
	pgHost, pgPort, _ := strings.Cut(addr, ":")
	psql(t, pgHost, pgPort, "postgres", db, ddl)
	if out := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", ddl); strings.Contains(out, "ERROR") {
		t.Fatalf("creating the functions: %s", out)
	}
	want := psql(t, pgHost, pgPort, "postgres", db, `\df`)
	got := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", `\df`)
	sameAsPostgres(t, `psql \df`, got, want)
	if !strings.Contains(got, "hello") {
		t.Errorf(`psql \df lists nothing:`+"\n%s", got)
	}
}
