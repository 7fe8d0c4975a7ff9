package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// Queries of the simple protocol whose plan is a scan with filters and
// projections (under a LIMIT or not) send their rows as they are
// produced.

const streamRows = 10000

func setupStream(t *testing.T, c *pgx.Conn) {
	t.Helper()
	for _, q := range []string{
		"CREATE TABLE big (k int PRIMARY KEY, v int)",
		fmt.Sprintf("INSERT INTO big SELECT g, g %% 7 FROM generate_series(1, %d) g", streamRows),
	} {
		if _, err := c.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// streamTrace runs q and returns its rows as text, or its error's
// SQLSTATE and message alone (how many rows come before an error depends
// on each server's buffering).
func streamTrace(t *testing.T, c *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := c.Query(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		return []string{"error: " + err.Error()}
	}
	return append(out, rows.CommandTag().String())
}

// TestStreamedQueriesMatchPostgres: a LIMIT stops a streamed scan when it
// is reached, so that a row past it that would fail is never computed, as
// in PostgreSQL; a failure past the rows already sent still fails the
// statement; filters, projections and OFFSET give PostgreSQL's rows.
func TestStreamedQueriesMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	pg := connectPgx(t, pgtest.NewDatabase(t, "gwstream"), pgx.QueryExecModeSimpleProtocol)
	ts := startServer(t, Config{})
	rs := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	setupStream(t, pg)
	setupStream(t, rs)
	for _, q := range []string{
		"SELECT 1 / (k - 9000) FROM big LIMIT 5",
		"SELECT k FROM big WHERE k % 1000 = 0 LIMIT 3 OFFSET 2",
		"SELECT k, v * 2 FROM big WHERE k BETWEEN 4090 AND 4100 AND v <> 3",
		"SELECT count(*) FROM (SELECT k FROM big WHERE v = 1) s",
		"SELECT k FROM big WHERE k > 9990",
		"SELECT 1 / (k - 9000) FROM big",
		"SELECT k FROM big LIMIT 0",
	} {
		want, got := streamTrace(t, pg, q), streamTrace(t, rs, q)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s\nRockStream: %.300v\nPostgreSQL: %.300v", q, got, want)
		}
	}
}

// TestStreamSendsRowsBeforeTheEnd: the rows of a streamed scan go out
// before the statement ends: a division by zero at row 9,000 comes after
// the rows of the chunks before it.
func TestStreamSendsRowsBeforeTheEnd(t *testing.T) {
	ts := startServer(t, Config{})
	setupStream(t, ts.connect(t, pgx.QueryExecModeSimpleProtocol))
	r := dialRaw(t, ts.addr, nil)
	r.send(rawQuery("SELECT k, 1 / (k - 9000) FROM big"))
	trace := r.until()
	rows := 0
	for _, m := range trace {
		if strings.HasPrefix(m, "DataRow") {
			rows++
		}
	}
	if rows < streamChunkRows || !strings.HasPrefix(trace[0], "RowDescription") ||
		!strings.Contains(trace[len(trace)-2], "22012") || trace[len(trace)-1] != "ReadyForQuery(I)" {
		t.Fatalf("want RowDescription, the rows before the failing one, then 22012: %d rows, ends %v", rows, trace[len(trace)-2:])
	}
	r.send(rawQuery("SELECT k FROM big WHERE k = 7"))
	compareLogs(t, r.until(), []string{"RowDescription(k:23:4:-1:0)", `DataRow("7")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
}

// streamChunkRows is the least number of rows a streamed scan sends
// before it meets a failing row in a later chunk (runtime's streamChunk).
const streamChunkRows = 4096

// streamLong streams about 640MB: the client decides when it ends.
const streamLong = "SELECT k, repeat(md5(k::text), 2000) FROM big"

// TestCancelStopsStreamedQuery: a cancel request while a streamed query
// sends its rows ends them with 57014, and the session goes on.
func TestCancelStopsStreamedQuery(t *testing.T) {
	ts := startServer(t, Config{})
	setupStream(t, ts.connect(t, pgx.QueryExecModeSimpleProtocol))
	r := dialRaw(t, ts.addr, nil)
	r.send(rawQuery(streamLong))
	r.next(11) // RowDescription and ten rows
	cancel := dialRawNoStartup(t, ts.addr)
	cancel.send(&pgproto3.CancelRequest{ProcessID: r.pid, SecretKey: r.key})
	cancel.until()
	trace := r.until()
	rows := 0
	for _, m := range trace {
		if strings.HasPrefix(m, "DataRow") {
			rows++
		}
	}
	if rows+10 >= streamRows || len(trace) < 2 || !strings.Contains(trace[len(trace)-2], "57014") {
		t.Fatalf("want the rows cut short by 57014: %d more rows, ends %.200v", rows, trace[max(0, len(trace)-2):])
	}
	r.send(rawQuery("SELECT 1"))
	compareLogs(t, r.until(), []string{"RowDescription(?column?:23:4:-1:0)", `DataRow("1")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
}

// TestDisconnectStopsStreamedQuery: a client that goes away while a
// streamed query sends its rows stops the statement and ends its
// session.
func TestDisconnectStopsStreamedQuery(t *testing.T) {
	ts := startServer(t, Config{})
	setupStream(t, ts.connect(t, pgx.QueryExecModeSimpleProtocol))
	r := dialRaw(t, ts.addr, nil)
	r.send(rawQuery(streamLong))
	r.next(11)
	r.nc.Close()
	deadline := time.Now().Add(stopWithin)
	for ts.srv.Stats().Connections > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the session did not end: %+v", ts.srv.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	checkIdle(t)
}
