package gateway

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// longStatements compute for many seconds (minutes, for some) over the
// table big of bigRows rows, each in a different operator; none of them
// changes anything when it does not complete.
var longStatements = []struct{ name, sql string }{
	{"cross join", "SELECT count(*) FROM big a, big b"},
	{"set-returning function", "SELECT count(*) FROM big a, generate_series(1, 3000) b"},
	{"recursive CTE", endlessQuery},
	{"sort", "SELECT a.k FROM big a, big b ORDER BY a.k + b.k LIMIT 1"},
	{"window", "SELECT sum(x) OVER (ORDER BY k) FROM (SELECT a.k, a.v + b.v AS x FROM big a, big b) s LIMIT 1"},
	{"aggregate", "SELECT a.k, count(*) FROM big a, big b WHERE a.v <= b.v GROUP BY a.k"},
	{"COPY TO", "COPY (SELECT a.k FROM big a, big b) TO STDOUT"},
	{"UPDATE", "UPDATE keep SET v = v + 1 WHERE k IN (SELECT a.k FROM big a, big b WHERE a.k + b.k > 0)"},
	{"materialized view", "CREATE MATERIALIZED VIEW mv AS SELECT count(*) FROM big a, big b"},
}

const bigRows = 3000

// setupLong creates the tables longStatements read and write.
func setupLong(t *testing.T, ts *testServer) *pgx.Conn {
	other := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{
		"CREATE TABLE big (k int PRIMARY KEY, v int)",
		"INSERT INTO big SELECT g, g % 10 FROM generate_series(1, 3000) g",
		"CREATE TABLE keep (k int PRIMARY KEY, v int)",
		"INSERT INTO keep SELECT g, g FROM generate_series(1, 1000) g",
	} {
		if _, err := other.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return other
}

// checkIntact checks, from another session, that the committed data is
// what setupLong left, that no view was left behind, and that the session
// answers at once.
func checkIntact(t *testing.T, other *pgx.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stopWithin)
	defer cancel()
	var n, sum int64
	if err := other.QueryRow(ctx, "SELECT count(*), sum(v) FROM keep").Scan(&n, &sum); err != nil {
		t.Fatalf("another session: %v", err)
	}
	if n != 1000 || sum != 500500 {
		t.Errorf("keep holds %d rows summing to %d, want 1000 rows summing to 500500", n, sum)
	}
	var views int64
	if err := other.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 'mv'").Scan(&views); err != nil {
		t.Fatal(err)
	}
	if views != 0 {
		t.Errorf("a canceled CREATE MATERIALIZED VIEW left its view behind")
	}
}

// untilReady receives up to ReadyForQuery and returns the trace without
// the rows a result sent before it stopped.
func (r *rawConn) untilReady() []string {
	r.t.Helper()
	var out []string
	for _, m := range r.until() {
		if !strings.HasPrefix(m, "DataRow(") && !strings.HasPrefix(m, "CopyData(") &&
			!strings.HasPrefix(m, "RowDescription(") && !strings.HasPrefix(m, "CopyOutResponse(") {
			out = append(out, m)
		}
	}
	return out
}

// cpuTime is the CPU time the process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// checkIdle checks that the process computes nothing more: a statement
// that was not stopped keeps a core busy.
func checkIdle(t *testing.T) {
	t.Helper()
	const window = 500 * time.Millisecond
	before := cpuTime(t)
	time.Sleep(window)
	if used := cpuTime(t) - before; used > window/2 {
		t.Errorf("the server used %v of CPU in %v after the statement stopped", used, window)
	}
}

// waitCanceled waits until the server counted a canceled statement more
// than before: the statement has returned.
func waitCanceled(t *testing.T, ts *testServer, before uint64) {
	t.Helper()
	deadline := time.Now().Add(stopWithin)
	for ts.srv.Stats().Canceled <= before {
		if time.Now().After(deadline) {
			t.Fatalf("the statement did not stop within %v", stopWithin)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startLong starts statement sql on a new connection, checks that another
// session is served while it runs, and returns the connection.
func startLong(t *testing.T, ts *testServer, other *pgx.Conn, sql string) *rawConn {
	t.Helper()
	r := dialRaw(t, ts.addr, nil)
	r.send(rawQuery("SET rockstream.max_recursion_iterations = 100000000"))
	compareLogs(t, r.until(), []string{"CommandComplete(SET)", "ReadyForQuery(I)"})
	r.send(rawQuery(sql))
	time.Sleep(150 * time.Millisecond) // let it compute
	start := time.Now()
	var one int
	if err := other.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > stopWithin {
		t.Errorf("another session waited %v while the statement ran", d)
	}
	return r
}

// TestCancelRequestStopsEveryOperator: a CancelRequest stops a statement
// promptly whichever operator it computes in, with 57014, and the session
// goes on; another session is served meanwhile and nothing is left
// behind.
func TestCancelRequestStopsEveryOperator(t *testing.T) {
	ts := startServer(t, Config{})
	other := setupLong(t, ts)
	for _, st := range longStatements {
		t.Run(st.name, func(t *testing.T) {
			r := startLong(t, ts, other, st.sql)
			before := ts.srv.Stats().Canceled
			start := time.Now()
			cancel := dialRawNoStartup(t, ts.addr)
			cancel.send(&pgproto3.CancelRequest{ProcessID: r.pid, SecretKey: r.key})
			cancel.until()
			compareLogs(t, r.untilReady(), []string{"ErrorResponse(ERROR 57014 canceling statement due to user request)", "ReadyForQuery(I)"})
			if d := time.Since(start); d > stopWithin {
				t.Errorf("the canceled statement answered after %v", d)
			}
			if ts.srv.Stats().Canceled != before+1 {
				t.Errorf("stats = %+v, want one more canceled", ts.srv.Stats())
			}
			r.send(rawQuery("SELECT 1"))
			compareLogs(t, r.until(), []string{"RowDescription(?column?:23:4:-1:0)", `DataRow("1")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
			checkIdle(t)
			checkIntact(t, other)
		})
	}
}

// TestDisconnectStopsStatement: a client that goes away (closing its
// socket or resetting the connection) while its statement computes
// stops the statement promptly, whichever operator it computes in; its
// session ends, another is served meanwhile, and nothing is left behind.
func TestDisconnectStopsStatement(t *testing.T) {
	ts := startServer(t, Config{})
	other := setupLong(t, ts)
	for i, st := range longStatements {
		t.Run(st.name, func(t *testing.T) {
			r := startLong(t, ts, other, st.sql)
			before := ts.srv.Stats().Canceled
			if i%2 == 1 {
				// A reset rather than an orderly close.
				if err := r.nc.(*net.TCPConn).SetLinger(0); err != nil {
					t.Fatal(err)
				}
			}
			r.nc.Close()
			waitCanceled(t, ts, before)
			deadline := time.Now().Add(stopWithin)
			for ts.srv.Stats().Connections > 1 {
				if time.Now().After(deadline) {
					t.Fatalf("the session did not end: %+v", ts.srv.Stats())
				}
				time.Sleep(5 * time.Millisecond)
			}
			checkIdle(t)
			checkIntact(t, other)
		})
	}
}

// TestDisconnectKeepsPipelinedMessages: watching the client while a
// statement runs reads the messages pipelined after it without losing or
// reordering any, in both protocols; a Terminate read meanwhile cancels
// the statement.
func TestDisconnectKeepsPipelinedMessages(t *testing.T) {
	ts := startServer(t, Config{})
	other := setupLong(t, ts)
	r := dialRaw(t, ts.addr, nil)
	// The first statement runs long enough for the watch to start.
	slow := "SELECT count(*) FROM big a, big b WHERE a.k < 300"
	r.send(rawQuery(slow), rawQuery("SELECT 2"),
		&pgproto3.Parse{Query: "SELECT $1::int + 1"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("41")}},
		&pgproto3.Execute{}, &pgproto3.Parse{Name: "s", Query: slow}, &pgproto3.Bind{PreparedStatement: "s"},
		&pgproto3.Execute{}, &pgproto3.Sync{}, rawQuery("SELECT 3"))
	compareLogs(t, r.until(), []string{"RowDescription(count:20:8:-1:0)", `DataRow("897000")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
	compareLogs(t, r.until(), []string{"RowDescription(?column?:23:4:-1:0)", `DataRow("2")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
	compareLogs(t, r.until(), []string{"ParseComplete", "BindComplete", `DataRow("42")`, "CommandComplete(SELECT 1)",
		"ParseComplete", "BindComplete", `DataRow("897000")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
	compareLogs(t, r.until(), []string{"RowDescription(?column?:23:4:-1:0)", `DataRow("3")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})

	// A Terminate sent while a statement runs is the client leaving: the
	// UPDATE is canceled and leaves nothing behind.
	before := ts.srv.Stats().Canceled
	q := dialRaw(t, ts.addr, nil)
	q.send(rawQuery(longStatements[slices.IndexFunc(longStatements, func(s struct{ name, sql string }) bool { return s.name == "UPDATE" })].sql))
	time.Sleep(150 * time.Millisecond)
	q.send(&pgproto3.Terminate{})
	compareLogs(t, q.until(), []string{"EOF"})
	waitCanceled(t, ts, before)
	checkIntact(t, other)
}

// TestCancelMatchesPostgres: a driver canceling a computing statement gets the error
// PostgreSQL gives it, and the connection stays usable.
func TestCancelMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	pg := connectPgx(t, pgtest.NewDatabase(t, "gwcancel"), pgx.QueryExecModeCacheStatement)
	ts := startServer(t, Config{})
	rs := ts.connect(t, pgx.QueryExecModeCacheStatement)
	const q = "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b"
	run := func(c *pgx.Conn) *pgconn.PgError {
		// A cancel that arrives while the statement is still being
		// prepared, or before it starts, is dropped by both servers (as it
		// should be); on a loaded machine that can happen, so the cancel
		// is repeated until the statement ends.
		done, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			tick := time.NewTicker(300 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					if err := c.PgConn().CancelRequest(context.Background()); err != nil {
						t.Errorf("cancel request: %v", err)
						return
					}
				}
			}
		}()
		var n int64
		err := c.QueryRow(context.Background(), q).Scan(&n)
		close(done)
		<-stopped
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("canceled query: %v", err)
		}
		var one int
		if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil {
			t.Fatalf("after the cancel: %v", err)
		}
		return pe
	}
	want, got := run(pg), run(rs)
	if got.Code != want.Code || got.Message != want.Message {
		t.Errorf("RockStream: %s %s; PostgreSQL: %s %s", got.Code, got.Message, want.Code, want.Message)
	}
}

// TestDisconnectStopsExtendedStatement: the client of an extended-protocol
// statement going away stops it too, whether it is alone before its Sync
// or part of a pipeline, and the pipeline's earlier writes are rolled
// back.
func TestDisconnectStopsExtendedStatement(t *testing.T) {
	ts := startServer(t, Config{})
	other := setupLong(t, ts)
	for _, pipelined := range []bool{false, true} {
		r := dialRaw(t, ts.addr, nil)
		var msgs []pgproto3.FrontendMessage
		if pipelined {
			msgs = append(msgs, &pgproto3.Parse{Query: "DELETE FROM keep"}, &pgproto3.Bind{}, &pgproto3.Execute{})
		}
		msgs = append(msgs, &pgproto3.Parse{Query: "SELECT count(*) FROM big a, big b"}, &pgproto3.Bind{},
			&pgproto3.Execute{}, &pgproto3.Sync{})
		before := ts.srv.Stats().Canceled
		r.send(msgs...)
		time.Sleep(150 * time.Millisecond)
		r.nc.Close()
		waitCanceled(t, ts, before)
		checkIdle(t)
		checkIntact(t, other)
	}
}
