package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/jackc/pgx/v5"
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

// TestQueryMessageWithCopyMatchesPostgres sends a Query message whose
// middle statement is a COPY FROM STDIN, its data following the message,
// to PostgreSQL and to the gateway: the rows copied belong to the
// message's implicit transaction, and a failure anywhere rolls them back
// with the rest.
func TestQueryMessageWithCopyMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwmsgcopy"))
	conns := []*rawConn{
		dialRaw(t, addr, map[string]string{"user": "postgres", "database": db}),
		dialRaw(t, ts.addr, nil),
	}
	cases := []exchange{
		{{rawQuery("CREATE TABLE t (k int PRIMARY KEY, v text)")}},
		{{
			rawQuery("INSERT INTO t VALUES (1, 'a'); COPY t FROM STDIN; INSERT INTO t VALUES (4, 'd'); SELECT count(*) FROM t"),
			&pgproto3.CopyData{Data: []byte("2\tb\n3\tc\n")},
			&pgproto3.CopyDone{},
		}},
		// Bad data fails the COPY and rolls back the whole message.
		{{
			rawQuery("INSERT INTO t VALUES (5, 'e'); COPY t FROM STDIN; INSERT INTO t VALUES (7, 'g')"),
			&pgproto3.CopyData{Data: []byte("6\tf\nsix\tf\n")},
			&pgproto3.CopyDone{},
		}},
		// So does a failure after the COPY.
		{{
			rawQuery("COPY t FROM STDIN; SELECT 1/0"),
			&pgproto3.CopyData{Data: []byte("8\th\n")},
			&pgproto3.CopyDone{},
		}},
		{{rawQuery("SELECT * FROM t ORDER BY k")}},
	}
	for i, ex := range cases {
		want := runExchange(t, conns[0], ex)
		got := runExchange(t, conns[1], ex)
		t.Logf("exchange %d: %s", i, strings.Join(want, " "))
		compareLogs(t, got, want)
	}
}

// TestSimpleProtocolClientsMatchPostgres runs multi-statement strings
// through pgx's simple protocol (one Query message per Exec) against
// PostgreSQL and the gateway: the same results and errors, and the same
// committed rows.
func TestSimpleProtocolClientsMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	run := func(dsn string) []string {
		ctx := context.Background()
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var log []string
		for _, q := range []string{
			"CREATE TABLE acct (id int PRIMARY KEY, balance int); INSERT INTO acct VALUES (1, 100), (2, 0)",
			// A transfer whose second half fails: the first half rolls back.
			"UPDATE acct SET balance = balance - 50 WHERE id = 1; UPDATE acct SET balance = balance + 50 / 0 WHERE id = 2",
			"UPDATE acct SET balance = balance - 30 WHERE id = 1; UPDATE acct SET balance = balance + 30 WHERE id = 2",
			"SELECT id, balance FROM acct ORDER BY id",
		} {
			results, err := conn.PgConn().Exec(ctx, q).ReadAll()
			for _, r := range results {
				entry := r.CommandTag.String()
				for _, row := range r.Rows {
					entry += fmt.Sprintf(" %s", row)
				}
				if r.Err != nil {
					entry += " error: " + r.Err.Error()
				}
				log = append(log, entry)
			}
			if err != nil {
				log = append(log, "error: "+err.Error())
			}
		}
		// pgx's Exec of several statements in the simple protocol.
		if _, err := conn.Exec(ctx, "INSERT INTO acct VALUES (3, 3); INSERT INTO acct VALUES (1, 1)"); err != nil {
			log = append(log, "pgx error: "+err.Error())
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM acct").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return append(log, fmt.Sprintf("rows: %d", n))
	}
	want := run(pgtest.NewDatabase(t, "gwmsgpgx"))
	got := run(ts.dsn("tester", ""))
	t.Logf("postgres: %q", want)
	compareLogs(t, got, want)
}

// TestBatchMatchesPostgres sends pgx batches, which pgx pipelines before
// one Sync, to PostgreSQL and the gateway in each of pgx's query modes: a
// batch is one transaction, which an error anywhere in it rolls back.
func TestBatchMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	run := func(dsn string, mode pgx.QueryExecMode) []string {
		ctx := context.Background()
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = mode
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var log []string
		exec := func(q string) {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		exec("DROP TABLE IF EXISTS b")
		exec("CREATE TABLE b (k int PRIMARY KEY)")
		for _, batch := range [][]string{
			{"INSERT INTO b VALUES (1)", "INSERT INTO b VALUES (2)", "SELECT count(*) FROM b"},
			{"INSERT INTO b VALUES (3)", "SELECT 1/(k - k) FROM b", "INSERT INTO b VALUES (4)"},
			{"INSERT INTO b VALUES (5)", "BEGIN", "INSERT INTO b VALUES (6)"},
			{"INSERT INTO b VALUES (7)", "COMMIT", "INSERT INTO b VALUES (8)", "INSERT INTO b VALUES (1)"},
		} {
			b := &pgx.Batch{}
			for _, q := range batch {
				b.Queue(q)
			}
			err := conn.SendBatch(ctx, b).Close()
			log = append(log, fmt.Sprintf("batch %q: %v", batch, err))
			var keys []int32
			rows, err := conn.Query(ctx, "SELECT k FROM b ORDER BY k")
			if err == nil {
				keys, err = pgx.CollectRows(rows, pgx.RowTo[int32])
			}
			log = append(log, fmt.Sprintf("then %v %v, status %c", keys, err, conn.PgConn().TxStatus()))
		}
		exec("ROLLBACK")
		return log
	}
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			want := run(pgtest.NewDatabase(t, "gwbatch"), mode)
			got := run(ts.dsn("tester", ""), mode)
			t.Logf("postgres: %q", want)
			compareLogs(t, got, want)
		})
	}
}
