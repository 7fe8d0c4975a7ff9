package gateway

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestQueryMessagesMatchPostgres runs the scripts of testdata/messages/
// against PostgreSQL and the gateway. Each `query` sends its input as one
// simple-protocol Query message on the session connection; `observe` sends
// it on a second connection, which sees only what was committed. The
// server's answers (CommandComplete tags, errors with their SQLSTATE and
// position, notices, ReadyForQuery's transaction status, rows) must be the
// same from both, and are the expected output, which -rewrite takes from
// PostgreSQL. `reset` rolls back the session's block, if any, and gives
// both servers a fresh table t (k int PRIMARY KEY, v text).
func TestQueryMessagesMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	datadriven.Walk(t, "testdata/messages", func(t *testing.T, path string) {
		ts := startServer(t, Config{})
		addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwmsg"))
		pgParams := map[string]string{"user": "postgres", "database": db}
		type pair struct{ pg, rs *rawConn }
		session := pair{dialRaw(t, addr, pgParams), dialRaw(t, ts.addr, nil)}
		observer := pair{dialRaw(t, addr, pgParams), dialRaw(t, ts.addr, nil)}
		both := func(t *testing.T, p pair, q string) string {
			want := runExchange(t, p.pg, exchange{{rawQuery(q)}})
			got := runExchange(t, p.rs, exchange{{rawQuery(q)}})
			compareLogs(t, got, want)
			return strings.Join(want, "\n") + "\n"
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "reset":
				for _, q := range []string{"ROLLBACK", "DROP TABLE IF EXISTS t, u, w CASCADE", "CREATE TABLE t (k int PRIMARY KEY, v text)"} {
					for _, c := range []*rawConn{session.pg, session.rs} {
						c.send(&pgproto3.Query{String: q})
						if tr := strings.Join(c.until(), " "); strings.Contains(tr, "ErrorResponse") {
							t.Fatalf("reset: %s: %s", q, tr)
						}
					}
				}
				return ""
			case "query":
				return both(t, session, d.Input)
			case "observe":
				return both(t, observer, d.Input)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}
