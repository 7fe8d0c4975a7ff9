package gateway

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// holdWriteToken opens a transaction block that holds the write token
// (its DELETE does; INSERTs alone would wait in the block without it), so
// that another session's write waits for it; it returns the connection
// holding it.
func holdWriteToken(t *testing.T, ts *testServer) *rawConn {
	a := dialRaw(t, ts.addr, nil)
	for _, q := range []string{"CREATE TABLE IF NOT EXISTS w (n int)", "BEGIN", "INSERT INTO w VALUES (1)", "DELETE FROM w WHERE n = 0"} {
		a.send(&pgproto3.Query{String: q})
		if tr := a.until(); strings.Contains(strings.Join(tr, " "), "Error") {
			t.Fatalf("%s: %v", q, tr)
		}
	}
	return a
}

// startBlockedWrite makes r run a write that waits for the write token.
func startBlockedWrite(t *testing.T, r *rawConn) {
	r.send(&pgproto3.Query{String: "BEGIN"})
	r.until()
	r.send(&pgproto3.Query{String: "DELETE FROM w WHERE n = 2"})
}

// silent checks that r receives nothing for a while.
func (r *rawConn) silent(d time.Duration) {
	r.t.Helper()
	_ = r.nc.SetReadDeadline(time.Now().Add(d))
	m, err := r.recv()
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		r.t.Fatalf("expected silence, got %v %v", m, err)
	}
	// A timed-out read leaves the frontend usable: nothing was consumed.
}

func TestCancelRequest(t *testing.T) {
	ts := startServer(t, Config{})
	holdWriteToken(t, ts)
	b := dialRaw(t, ts.addr, nil)
	startBlockedWrite(t, b)

	// A cancel with the wrong key is ignored silently.
	bad := dialRawNoStartup(t, ts.addr)
	bad.send(&pgproto3.CancelRequest{ProcessID: b.pid, SecretKey: []byte{1, 2, 3, 4}})
	if tr := bad.until(); len(tr) != 1 || tr[0] != "EOF" {
		t.Fatalf("cancel connection answered %v", tr)
	}
	b.silent(200 * time.Millisecond)

	good := dialRawNoStartup(t, ts.addr)
	good.send(&pgproto3.CancelRequest{ProcessID: b.pid, SecretKey: b.key})
	good.until()
	got := b.until()
	want := []string{"ErrorResponse(ERROR 57014 canceling statement due to user request)", "ReadyForQuery(E)"}
	compareLogs(t, got, want)
	b.send(&pgproto3.Query{String: "ROLLBACK"})
	compareLogs(t, b.until(), []string{"CommandComplete(ROLLBACK)", "ReadyForQuery(I)"})
	if st := ts.srv.Stats(); st.Canceled != 1 {
		t.Errorf("stats = %+v, want one canceled", st)
	}
}

func TestStatementTimeout(t *testing.T) {
	ts := startServer(t, Config{})
	holdWriteToken(t, ts)
	b := dialRaw(t, ts.addr, nil)
	b.send(&pgproto3.Query{String: "SET statement_timeout = '150ms'"})
	compareLogs(t, b.until(), []string{"CommandComplete(SET)", "ReadyForQuery(I)"})
	startBlockedWrite(t, b)
	compareLogs(t, b.until(), []string{"ErrorResponse(ERROR 57014 canceling statement due to statement timeout)", "ReadyForQuery(E)"})
	b.send(&pgproto3.Query{String: "ROLLBACK; SET statement_timeout = 'soon'"})
	compareLogs(t, b.until(), []string{
		"CommandComplete(ROLLBACK)",
		`ErrorResponse(ERROR 22023 invalid value for parameter "statement_timeout": "soon")`,
		"ReadyForQuery(I)"})

	// The server's default applies to every session.
	ts2 := startServer(t, Config{StatementTimeout: 150 * time.Millisecond})
	holdWriteToken(t, ts2)
	c := dialRaw(t, ts2.addr, nil)
	startBlockedWrite(t, c)
	compareLogs(t, c.until(), []string{"ErrorResponse(ERROR 57014 canceling statement due to statement timeout)", "ReadyForQuery(E)"})
}

func TestIdleInTransactionTimeout(t *testing.T) {
	ts := startServer(t, Config{IdleInTransactionTimeout: 150 * time.Millisecond})
	r := dialRaw(t, ts.addr, nil)
	// Idle outside a block is fine.
	time.Sleep(300 * time.Millisecond)
	r.send(&pgproto3.Query{String: "BEGIN"})
	compareLogs(t, r.until(), []string{"CommandComplete(BEGIN)", "ReadyForQuery(T)"})
	compareLogs(t, r.until(), []string{"ErrorResponse(FATAL 25P03 terminating connection due to idle-in-transaction timeout)", "EOF"})
}

func TestMaxConnections(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 2})
	a := ts.connect(t, pgx.QueryExecModeCacheStatement)
	b := dialRaw(t, ts.addr, nil)
	_, err := connectErr(ts.dsn("third", ""))
	wantPgError(t, err, "53300", "sorry, too many clients already")
	// The connections admitted keep working.
	if _, err := a.Exec(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	b.send(&pgproto3.Terminate{})
	b.until()
	deadline := time.Now().Add(5 * time.Second)
	for ts.srv.Stats().Connections > 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	c, err := connectErr(ts.dsn("third", ""))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
}

func TestBadClientsDoNotDisturbOthers(t *testing.T) {
	ts := startServer(t, Config{MaxMessageBytes: 1000})
	good := ts.connect(t, pgx.QueryExecModeCacheStatement)
	check := func(t *testing.T) {
		t.Helper()
		var n int
		if err := good.QueryRow(context.Background(), "SELECT 1 + 1").Scan(&n); err != nil || n != 2 {
			t.Fatalf("healthy session: %d, %v", n, err)
		}
	}
	cases := []struct {
		name  string
		start bool
		bytes []byte
		want  []string
	}{
		{"oversized message", true, append([]byte{'Q', 0, 0, 0x07, 0xd4}, make([]byte, 2000)...),
			[]string{"ErrorResponse(FATAL 08P01 message of 2000 bytes exceeds the maximum message size of 1000 bytes)", "EOF"}},
		{"unknown message type", true, []byte{'g', 0, 0, 0, 4},
			[]string{"ErrorResponse(FATAL 08P01 invalid frontend message type 103)", "EOF"}},
		{"garbage", true, []byte("garbage bytes"),
			[]string{"ErrorResponse(FATAL 08P01 message of 1634886237 bytes exceeds the maximum message size of 1000 bytes)", "EOF"}},
		{"negative length", true, []byte{'Q', 0xff, 0xff, 0xff, 0xff},
			[]string{"ErrorResponse(FATAL 08P01 invalid frontend message: invalid message length: -1)", "EOF"}},
		{"garbage startup", false, []byte{0, 0, 0, 8, 0, 2, 0, 0},
			[]string{"ErrorResponse(FATAL 08P01 unsupported frontend protocol: server supports 3.0)", "EOF"}},
		{"huge startup", false, []byte{0x7f, 0, 0, 0, 0, 3, 0, 0},
			[]string{"ErrorResponse(FATAL 08P01 invalid startup packet: invalid length of startup packet: 2130706428)", "EOF"}},
		{"no user", false, mustEncode(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"database": "x"}}),
			[]string{"ErrorResponse(FATAL 28000 no PostgreSQL user name specified in startup packet)", "EOF"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r *rawConn
			if tc.start {
				r = dialRaw(t, ts.addr, nil)
			} else {
				r = dialRawNoStartup(t, ts.addr)
			}
			if _, err := r.nc.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			got := r.until()
			if tc.want != nil {
				compareLogs(t, got, tc.want)
			}
			check(t)
		})
	}
}

func mustEncode(m pgproto3.FrontendMessage) []byte {
	b, err := m.Encode(nil)
	if err != nil {
		panic(err)
	}
	return b
}

func TestTerminateRollsBack(t *testing.T) {
	ts := startServer(t, Config{})
	holder := holdWriteToken(t, ts)
	holder.send(&pgproto3.Terminate{})
	compareLogs(t, holder.until(), []string{"EOF"})
	// The block was rolled back and its write token released.
	other := dialRaw(t, ts.addr, nil)
	other.send(&pgproto3.Query{String: "INSERT INTO w VALUES (7); SELECT n FROM w"})
	compareLogs(t, other.until(), []string{"CommandComplete(INSERT 0 1)", "RowDescription(n:23:4:-1:0)", `DataRow("7")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
}
