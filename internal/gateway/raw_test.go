package gateway

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// rawConn is a client speaking the protocol message by message, for tests
// of what exactly the server answers.
type rawConn struct {
	t   testing.TB
	nc  net.Conn
	fe  *pgproto3.Frontend
	pid uint32
	key []byte
	// epochs keeps the ParameterStatus rockstream_commit_epoch messages
	// that follow commits; without it they are skipped, so that traces
	// of other behaviour do not depend on which statements committed
	// (freshness_test.go checks them).
	epochs bool
}

// recv receives the next message, skipping commit-epoch reports unless
// r.epochs is set.
func (r *rawConn) recv() (pgproto3.BackendMessage, error) {
	for {
		m, err := r.fe.Receive()
		if ps, ok := m.(*pgproto3.ParameterStatus); ok && err == nil && !r.epochs && ps.Name == commitEpochParameter {
			continue
		}
		return m, err
	}
}

// dialRaw connects to addr and completes a trust startup as user.
func dialRaw(t testing.TB, addr string, params map[string]string) *rawConn {
	t.Helper()
	r := dialRawNoStartup(t, addr)
	if params == nil {
		params = map[string]string{}
	}
	if params["user"] == "" {
		params["user"] = "tester"
	}
	r.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: params})
	r.flush()
	for {
		m := r.receive()
		switch m := m.(type) {
		case *pgproto3.BackendKeyData:
			r.pid, r.key = m.ProcessID, append([]byte(nil), m.SecretKey...)
		case *pgproto3.ReadyForQuery:
			return r
		case *pgproto3.ErrorResponse:
			t.Fatalf("startup failed: %s %s", m.Code, m.Message)
		}
	}
}

func dialRawNoStartup(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

func (r *rawConn) flush() {
	r.t.Helper()
	if err := r.fe.Flush(); err != nil {
		r.t.Fatal(err)
	}
}

// send sends messages and flushes.
func (r *rawConn) send(msgs ...pgproto3.FrontendMessage) {
	r.t.Helper()
	for _, m := range msgs {
		r.fe.Send(m)
	}
	r.flush()
}

func (r *rawConn) receive() pgproto3.BackendMessage {
	r.t.Helper()
	_ = r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := r.recv()
	if err != nil {
		r.t.Fatalf("receive: %v", err)
	}
	return m
}

// until receives messages up to and including ReadyForQuery (or the
// connection's end) and returns their trace.
func (r *rawConn) until() []string {
	r.t.Helper()
	var out []string
	for {
		_ = r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		m, err := r.recv()
		if err != nil {
			return append(out, "EOF")
		}
		out = append(out, describeMsg(m))
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			return out
		}
	}
}

// next receives n messages and returns their trace.
func (r *rawConn) next(n int) []string {
	r.t.Helper()
	var out []string
	for range n {
		out = append(out, describeMsg(r.receive()))
	}
	return out
}

// describeMsg is a one-line description of a server message.
func describeMsg(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.RowDescription:
		var f []string
		for _, fd := range m.Fields {
			f = append(f, fmt.Sprintf("%s:%d:%d:%d:%d", fd.Name, fd.DataTypeOID, fd.DataTypeSize, fd.TypeModifier, fd.Format))
		}
		return "RowDescription(" + strings.Join(f, " ") + ")"
	case *pgproto3.DataRow:
		var v []string
		for _, b := range m.Values {
			if b == nil {
				v = append(v, "NULL")
			} else {
				v = append(v, fmt.Sprintf("%q", b))
			}
		}
		return "DataRow(" + strings.Join(v, ",") + ")"
	case *pgproto3.CommandComplete:
		return "CommandComplete(" + string(m.CommandTag) + ")"
	case *pgproto3.ErrorResponse:
		s := fmt.Sprintf("ErrorResponse(%s %s %s", m.Severity, m.Code, m.Message)
		if m.Position > 0 {
			s += fmt.Sprintf(" @%d", m.Position)
		}
		if m.Detail != "" {
			s += " detail: " + m.Detail
		}
		if m.Hint != "" {
			s += " hint: " + m.Hint
		}
		return s + ")"
	case *pgproto3.NoticeResponse:
		return fmt.Sprintf("NoticeResponse(%s %s %s)", m.Severity, m.Code, m.Message)
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery(" + string(m.TxStatus) + ")"
	case *pgproto3.ParameterDescription:
		return fmt.Sprintf("ParameterDescription(%v)", m.ParameterOIDs)
	case *pgproto3.CopyInResponse:
		return fmt.Sprintf("CopyInResponse(%d %v)", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyOutResponse:
		return fmt.Sprintf("CopyOutResponse(%d %v)", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyData:
		return fmt.Sprintf("CopyData(%q)", m.Data)
	case *pgproto3.ParameterStatus:
		return fmt.Sprintf("ParameterStatus(%s=%s)", m.Name, m.Value)
	}
	name := fmt.Sprintf("%T", m)
	return strings.TrimPrefix(name, "*pgproto3.")
}

// pgAddr returns the address and database of a PostgreSQL DSN.
func pgAddr(t testing.TB, dsn string) (addr, db string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/")
}

func rawQuery(s string) *pgproto3.Query { return &pgproto3.Query{String: s} }
