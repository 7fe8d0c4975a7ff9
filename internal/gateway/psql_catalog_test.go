package gateway

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestPsqlCatalog runs psql's describe commands through the gateway
// against a RockStream holding the schema of testdata/clients/schema.sql,
// and against PostgreSQL holding the same schema. The commands that list
// user objects (\dt, \dv, \dm, \di, \d NAME of a table, a view and a
// materialized view) must print the same, after one normalization: every
// object belongs to the bootstrap role, which is "postgres" in the test
// server and "rockstream" in RockStream, so RockStream's owner column is
// read as "postgres". \l, \dn and \du list the server's own databases,
// schemas and roles, which differ by design; their output is checked for
// the rows RockStream must show.
func TestPsqlCatalog(t *testing.T) {
	if _, err := os.Stat(psqlPath); err != nil {
		t.Skip("psql is not installed")
	}
	pgtest.Require(t)
	schema, err := os.ReadFile("../../testdata/clients/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwcatalog"))
	pgHost, pgPort, _ := strings.Cut(addr, ":")
	psql(t, pgHost, pgPort, "postgres", db, string(schema))
	if out := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", string(schema)); strings.Contains(out, "ERROR") {
		t.Fatalf("creating the schema: %s", out)
	}
	owner := regexp.MustCompile(`(?m)(^|,)rockstream(,|$)`)
	for _, cmd := range []string{`\dt`, `\dv`, `\dm`, `\di`, `\di orders*`, `\d`, `\d orders`, `\d customers`, `\d totals`, `\d big_orders`} {
		want := psql(t, pgHost, pgPort, "postgres", db, cmd)
		got := owner.ReplaceAllString(psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", cmd), "${1}postgres${2}")
		sameAsPostgres(t, "psql "+cmd, got, want)
		if strings.Count(got, "\n") < 2 || strings.Contains(got, "ERROR") {
			t.Errorf("psql %s lists nothing:\n%s", cmd, got)
		}
	}
	// psql's aligned output adds \d's footers: indexes, view definitions.
	for _, cmd := range []string{`\d orders`, `\d+ orders`, `\d customers`, `\d totals`} {
		want := psqlAligned(t, pgHost, pgPort, db, cmd)
		got := psqlAligned(t, "127.0.0.1", ts.port(), "rockstream", cmd)
		sameAsPostgres(t, "psql "+cmd, got, want)
		if !strings.Contains(got, "PRIMARY KEY, btree") && !strings.Contains(got, "totals_n") {
			t.Errorf("psql %s lacks its footer:\n%s", cmd, got)
		}
	}
	// A view's definition is its query printed back, not PostgreSQL's
	// rendering of the analyzed query (docs/catalog.md).
	got := psqlAligned(t, "127.0.0.1", ts.port(), "rockstream", `\d+ totals`)
	if !strings.Contains(got, "View definition:\n SELECT customer, sum(amount) AS total, count(*) AS n FROM orders GROUP BY customer;\nAccess method: heap\n") {
		t.Errorf("psql \\d+ totals:\n%s", got)
	}
	for cmd, frags := range map[string][]string{
		`\l`:  {"Name,Owner,Encoding,Collate,Ctype,ICU Locale,Locale Provider,Access privileges\nrockstream,rockstream,UTF8,C,C,,libc,\n"},
		`\dn`: {"Name,Owner\npublic,pg_database_owner\nrockstream_catalog,rockstream\n"},
		`\du`: {"rockstream,\"Superuser, Create role, Create DB, Replication, Bypass RLS\",{}\n", "postgres,"},
	} {
		got := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", cmd)
		for _, f := range frags {
			if !strings.Contains(got, f) {
				t.Errorf("psql %s lacks %q:\n%s", cmd, f, got)
			}
		}
	}
}

// psqlAligned runs one psql command with psql's default (aligned) output.
func psqlAligned(t *testing.T, host, port, db, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, psqlPath, "-h", host, "-p", port, "-U", "postgres", "-d", db, "-X", "-c", cmd)
	c.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGSSLMODE=prefer", "PGTZ=UTC")
	out, _ := c.CombinedOutput()
	return string(out)
}
