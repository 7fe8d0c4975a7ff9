package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// endlessQuery computes for hours: a UNION ALL recursion that never
// reaches a fixpoint, under the largest iteration limit.
const endlessQuery = `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r`

// stopWithin bounds how long a computing statement may take to stop;
// generous for a loaded machine (the stop takes milliseconds).
const stopWithin = 5 * time.Second

func startComputing(t *testing.T, r *rawConn) {
	t.Helper()
	r.send(&pgproto3.Query{String: "SET rockstream.max_recursion_iterations = 100000000"})
	compareLogs(t, r.until(), []string{"CommandComplete(SET)", "ReadyForQuery(I)"})
	r.send(&pgproto3.Query{String: endlessQuery})
	time.Sleep(100 * time.Millisecond) // let it compute
}

// TestCancelComputingStatement: a CancelRequest and statement_timeout stop
// a statement that is computing, not only one that waits, and the
// session goes on.
func TestCancelComputingStatement(t *testing.T) {
	ts := startServer(t, Config{})
	b := dialRaw(t, ts.addr, nil)
	startComputing(t, b)
	start := time.Now()
	cancel := dialRawNoStartup(t, ts.addr)
	cancel.send(&pgproto3.CancelRequest{ProcessID: b.pid, SecretKey: b.key})
	cancel.until()
	compareLogs(t, b.until(), []string{"ErrorResponse(ERROR 57014 canceling statement due to user request)", "ReadyForQuery(I)"})
	if d := time.Since(start); d > stopWithin {
		t.Errorf("the canceled statement answered after %v", d)
	}
	if st := ts.srv.Stats(); st.Canceled != 1 {
		t.Errorf("stats = %+v, want one canceled", st)
	}

	b.send(&pgproto3.Query{String: "SET statement_timeout = '150ms'"})
	compareLogs(t, b.until(), []string{"CommandComplete(SET)", "ReadyForQuery(I)"})
	start = time.Now()
	b.send(&pgproto3.Query{String: endlessQuery})
	compareLogs(t, b.until(), []string{"ErrorResponse(ERROR 57014 canceling statement due to statement timeout)", "ReadyForQuery(I)"})
	if d := time.Since(start); d > stopWithin {
		t.Errorf("the timed-out statement answered after %v", d)
	}
	b.send(&pgproto3.Query{String: "SELECT 1"})
	compareLogs(t, b.until(), []string{"RowDescription(?column?:23:4:-1:0)", `DataRow("1")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
}

// TestShutdownStopsComputingStatement: past its deadline, Shutdown
// cancels a computing statement and returns at once.
func TestShutdownStopsComputingStatement(t *testing.T) {
	ts := startServer(t, Config{})
	b := dialRaw(t, ts.addr, nil)
	startComputing(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Logf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > stopWithin {
		t.Fatalf("Shutdown returned after %v", d)
	}
	compareLogs(t, b.until(), []string{"ErrorResponse(FATAL 57P01 terminating connection due to administrator command)", "EOF"})
}
