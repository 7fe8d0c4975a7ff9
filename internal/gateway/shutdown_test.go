package gateway

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/instance"
)

func TestShutdown(t *testing.T) {
	eng, err := instance.Open(instance.Options{Storage: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(eng, Config{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ts := &testServer{eng: eng, srv: srv, addr: ln.Addr().String()}

	idle := dialRaw(t, ts.addr, nil)
	idle.send(&pgproto3.Query{String: "CREATE TABLE v (n int); CREATE MATERIALIZED VIEW mv AS SELECT n FROM v"})
	idle.until()
	holder := holdWriteToken(t, ts) // an open block that has written
	busy := dialRaw(t, ts.addr, nil)
	busy.send(&pgproto3.Query{String: "SUBSCRIBE mv"}) // runs until canceled
	busy.next(1)
	silent := dialRawNoStartup(t, ts.addr) // connected, never starts up

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != ErrServerClosed {
		t.Fatalf("Serve returned %v", err)
	}
	fatal := []string{"ErrorResponse(FATAL 57P01 terminating connection due to administrator command)", "EOF"}
	// Idle sessions end at once, the block rolled back; the running
	// statement ran until the grace period ended, then was canceled.
	compareLogs(t, idle.until(), fatal)
	compareLogs(t, holder.until(), fatal)
	compareLogs(t, busy.until(), fatal)
	compareLogs(t, silent.until(), []string{"EOF"})
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("shutdown took %v: it did not wait for the running statement", d)
	}
	if _, err := net.Dial("tcp", ts.addr); err == nil {
		t.Error("the listener still accepts connections")
	}
	// Nothing of the open blocks was committed, and the engine accepts
	// writes again.
	s := eng.NewSession()
	defer s.Close()
	res, err := s.Exec(context.Background(), "SELECT count(*) FROM w", nil)
	if err != nil || res.Rows[0][0].Int() != 0 {
		t.Fatalf("rows after shutdown: %v %v", res, err)
	}
	if _, err := s.Exec(context.Background(), "INSERT INTO w VALUES (3)", nil); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownWaitsForRunningStatements(t *testing.T) {
	ts := startServer(t, Config{})
	holder := holdWriteToken(t, ts)
	busy := dialRaw(t, ts.addr, nil)
	startBlockedWrite(t, busy)
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- ts.srv.Shutdown(context.Background()) }()
	// The holder is idle: it is ended, its block rolled back, which lets
	// the busy session's write run; the busy session then ends.
	compareLogs(t, holder.until(), []string{"ErrorResponse(FATAL 57P01 terminating connection due to administrator command)", "EOF"})
	got := busy.until()
	want := []string{"CommandComplete(DELETE 0)", "ReadyForQuery(T)"}
	compareLogs(t, got[:2], want)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestPanicEndsOnlyItsSession(t *testing.T) {
	testHookHandle = func(m pgproto3.FrontendMessage) {
		if q, ok := m.(*pgproto3.Query); ok && strings.Contains(q.String, "boom") {
			panic("boom")
		}
	}
	defer func() { testHookHandle = nil }()
	ts := startServer(t, Config{})
	other := dialRaw(t, ts.addr, nil)
	holder := holdWriteToken(t, ts)
	holder.send(&pgproto3.Query{String: "SELECT 'boom'"})
	compareLogs(t, holder.until(), []string{"ErrorResponse(FATAL XX000 internal error: boom)", "EOF"})
	// The panicking session's block was rolled back: other sessions
	// can write.
	other.send(&pgproto3.Query{String: "INSERT INTO w VALUES (5); SELECT count(*) FROM w"})
	compareLogs(t, other.until(), []string{"CommandComplete(INSERT 0 1)", "RowDescription(count:20:8:-1:0)", `DataRow("1")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
}
