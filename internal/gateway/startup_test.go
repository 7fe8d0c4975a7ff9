package gateway

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// startupTrace sends a startup message and returns the server's answers
// up to ReadyForQuery or the end of the connection, without
// ParameterStatus and BackendKeyData (whose values vary).
func startupTrace(t *testing.T, addr string, m *pgproto3.StartupMessage) ([]string, *rawConn) {
	r := dialRawNoStartup(t, addr)
	r.send(m)
	var out []string
	for _, s := range r.until() {
		if s != "BackendKeyData" {
			out = append(out, s)
		}
	}
	return out, r
}

func TestStartupParameters(t *testing.T) {
	ts := startServer(t, Config{})
	tr, r := startupTrace(t, ts.addr, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{
		"user": "u", "database": "db", "application_name": "app1", "client_encoding": "UTF8",
		"options": `-c statement_timeout=150ms --idle_in_transaction_session_timeout=2s -c application_name=my\ app`,
	}})
	want := []string{"AuthenticationOk",
		"ParameterStatus(DateStyle=ISO, MDY)", "ParameterStatus(IntervalStyle=postgres)", "ParameterStatus(TimeZone=UTC)",
		"ParameterStatus(application_name=my app)", "ParameterStatus(client_encoding=UTF8)",
		"ParameterStatus(default_transaction_read_only=off)", "ParameterStatus(in_hot_standby=off)",
		"ParameterStatus(integer_datetimes=on)", "ParameterStatus(is_superuser=on)",
		"ParameterStatus(server_encoding=UTF8)", "ParameterStatus(server_version=" + ServerVersion + ")",
		"ParameterStatus(session_authorization=u)", "ParameterStatus(standard_conforming_strings=on)",
		"ReadyForQuery(I)"}
	compareLogs(t, tr, want)
	r.send(&pgproto3.Query{String: "SHOW statement_timeout; SET application_name = 'other'"})
	compareLogs(t, r.until(), []string{"RowDescription(statement_timeout:25:-1:-1:0)", `DataRow("150ms")`, "CommandComplete(SHOW)",
		"CommandComplete(SET)", "ParameterStatus(application_name=other)", "ReadyForQuery(I)"})

	// Encodings other than UTF8 are refused, as PostgreSQL refuses an
	// encoding it cannot convert.
	tr, _ = startupTrace(t, ts.addr, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{
		"user": "u", "client_encoding": "LATIN1"}})
	compareLogs(t, tr, []string{`ErrorResponse(FATAL 22023 invalid value for parameter "client_encoding": "LATIN1": RockStream supports UTF8 only)`, "EOF"})

	// An unknown setting is an error, as in PostgreSQL.
	tr, _ = startupTrace(t, ts.addr, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{
		"user": "u", "no_such_setting": "1"}})
	compareLogs(t, tr, []string{`ErrorResponse(FATAL 42704 unrecognized configuration parameter "no_such_setting")`, "EOF"})

	// Protocol 3.2 is offered 3.0 with NegotiateProtocolVersion.
	tr, _ = startupTrace(t, ts.addr, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32, Parameters: map[string]string{
		"user": "u", "_pq_.test": "x"}})
	if len(tr) < 2 || tr[0] != "NegotiateProtocolVersion" || tr[1] != "AuthenticationOk" || tr[len(tr)-1] != "ReadyForQuery(I)" {
		t.Fatalf("3.2 startup: %v", tr)
	}
}
