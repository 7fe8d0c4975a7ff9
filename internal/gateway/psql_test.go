package gateway

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

const psqlPath = "/usr/bin/psql"

// psql runs the real psql client against host:port with the given -c
// commands and returns its standard output and error.
func psql(t *testing.T, host, port, user, db string, cmds ...string) string {
	t.Helper()
	args := []string{"-h", host, "-p", port, "-U", user, "-d", db, "-X", "-q", "--csv", "-v", "ON_ERROR_STOP=0"}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psqlPath, args...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGSSLMODE=prefer", "PGTZ=UTC")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("psql timed out: %s", out)
	}
	_ = err // a failing command makes psql exit 1; its output says why
	return string(out)
}

var psqlCommands = []string{
	"CREATE TABLE t (id int PRIMARY KEY, name text, price numeric(8,2), at timestamptz, tags bytea)",
	"INSERT INTO t VALUES (1, 'apple', 1.5, '2026-11-30 01:02:03+00', '\\x0102'), (2, 'pear, ripe', NULL, NULL, NULL), (3, 'quote \"q\"', 10, '2026-01-01 00:00:00+00', '')",
	"SELECT * FROM t ORDER BY id",
	"SELECT count(*), sum(price), avg(price), 2.0/3 AS third, 1e300::float8 * 10 AS big FROM t",
	"BEGIN; UPDATE t SET price = price * 2 WHERE id = 1; SELECT id, price FROM t WHERE id = 1; ROLLBACK",
	"SELECT id FROM t WHERE price > 100",
	"SELECT 1/0",
	"SELECT nosuch FROM t",
	"SELECT true, false, NULL::int, ''::text, interval '1 day 2 hours', date '2026-02-28' + 1",
	"COMMIT",
	"SHOW TimeZone",
}

// TestPsql runs the real psql against PostgreSQL and against RockStream:
// its CSV output and messages must be equal.
func TestPsql(t *testing.T) {
	if _, err := os.Stat(psqlPath); err != nil {
		t.Skip("psql is not installed")
	}
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwpsql"))
	pgHost, pgPort, _ := strings.Cut(addr, ":")
	want := psql(t, pgHost, pgPort, "postgres", db, psqlCommands...)
	got := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", psqlCommands...)
	sameAsPostgres(t, "psql output", got, want)
	// Spot-check the expected text, so that a psql that prints nothing
	// at all cannot pass.
	for _, frag := range []string{
		"id,name,price,at,tags\n1,apple,1.50,2026-11-30 01:02:03+00,\\x0102\n2,\"pear, ripe\",,,\n",
		"ERROR:  division by zero\n",
		"WARNING:  there is no transaction in progress\n",
		"TimeZone\nUTC\n",
	} {
		if !strings.Contains(got, frag) {
			t.Errorf("psql output lacks %q:\n%s", frag, got)
		}
	}
}

// sameAsPostgres fails the test when what RockStream answered (got)
// differs from what PostgreSQL answered (want).
func sameAsPostgres(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s differs\n--- RockStream:\n%s\n--- PostgreSQL:\n%s", what, got, want)
	}
}
