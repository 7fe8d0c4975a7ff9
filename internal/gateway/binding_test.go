package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/scram"
)

// scramClient runs a SCRAM exchange by hand over r, choosing mechanism
// and sending gs2 as the GS2 header and cbind as the channel binding data
// of the final message, with a correct proof for password. It returns the
// trace of what the server answered from the final message on.
func scramClient(t *testing.T, r *rawConn, mechanism, gs2 string, cbind []byte, password string) []string {
	t.Helper()
	sasl, ok := r.receive().(*pgproto3.AuthenticationSASL)
	if !ok {
		t.Fatal("no SASL request")
	}
	_ = sasl
	bare := "n=,r=clientnonce0123456789"
	r.send(&pgproto3.SASLInitialResponse{AuthMechanism: mechanism, Data: []byte(gs2 + bare)})
	m := r.receive()
	cont, ok := m.(*pgproto3.AuthenticationSASLContinue)
	if !ok {
		return append([]string{describeMsg(m)}, r.until()...)
	}
	serverFirst := string(cont.Data)
	var nonce, salt string
	iter := 0
	for _, a := range strings.Split(serverFirst, ",") {
		switch {
		case strings.HasPrefix(a, "r="):
			nonce = a[2:]
		case strings.HasPrefix(a, "s="):
			salt = a[2:]
		case strings.HasPrefix(a, "i="):
			iter, _ = strconv.Atoi(a[2:])
		}
	}
	saltBytes, _ := base64.StdEncoding.DecodeString(salt)
	salted, err := pbkdf2.Key(sha256.New, password, saltBytes, iter, 32)
	if err != nil {
		t.Fatal(err)
	}
	hm := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	clientKey := hm(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	withoutProof := "c=" + base64.StdEncoding.EncodeToString(append([]byte(gs2), cbind...)) + ",r=" + nonce
	sig := hm(stored[:], bare+","+serverFirst+","+withoutProof)
	proof := make([]byte, len(clientKey))
	for i := range proof {
		proof[i] = clientKey[i] ^ sig[i]
	}
	r.send(&pgproto3.SASLResponse{Data: []byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof))})
	var out []string
	for {
		m := r.receive()
		out = append(out, strings.SplitN(describeMsg(m), "(", 2)[0])
		switch m.(type) {
		case *pgproto3.ErrorResponse:
			out[len(out)-1] = describeMsg(m)
			return out
		case *pgproto3.AuthenticationOk:
			return out
		}
	}
}

// dialTLSRaw opens a raw connection to ts upgraded to TLS and sends the
// startup message for user.
func dialTLSRaw(t *testing.T, ts *testServer, user string) *rawConn {
	t.Helper()
	r := dialRawNoStartup(t, ts.addr)
	r.send(&pgproto3.SSLRequest{})
	b := make([]byte, 1)
	if _, err := r.nc.Read(b); err != nil || b[0] != 'S' {
		t.Fatalf("SSLRequest answered %q, %v", b, err)
	}
	tc := tls.Client(r.nc, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	r.nc = tc
	r.fe = pgproto3.NewFrontend(tc, tc)
	r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": user}})
	return r
}

// TestSCRAMChannelBinding: over TLS the server offers
// SCRAM-SHA-256-PLUS with tls-server-end-point binding; pgx and psql with
// channel_binding=require log in; a client proving other binding data, or
// claiming the server cannot bind, is refused with PostgreSQL's errors.
func TestSCRAMChannelBinding(t *testing.T) {
	cs := newCertSetup(t)
	ts := startServer(t, Config{TLS: cs.tlsConfig(), Auth: AuthConfig{Method: AuthSCRAM, Users: map[string]string{"alice": "pw"}}})
	endPoint, err := scram.TLSServerEndPoint(cs.server.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"require", "prefer", "disable"} {
		c, err := connectErr(ts.conninfo("alice", "password=pw sslmode=verify-full sslrootcert="+cs.serverCAFile+" channel_binding="+mode))
		if err != nil {
			t.Fatalf("pgx channel_binding=%s: %v", mode, err)
		}
		c.Close(context.Background())
	}
	// Without TLS nothing is offered to bind to.
	if c, err := connectErr(ts.conninfo("alice", "password=pw sslmode=disable channel_binding=require")); err == nil {
		c.Close(context.Background())
		t.Error("channel_binding=require succeeded without TLS")
	}

	r := dialTLSRaw(t, ts, "alice")
	compareLogs(t, scramClient(t, r, scram.MechanismPlus, "p=tls-server-end-point,,", endPoint, "pw"),
		[]string{"AuthenticationSASLFinal", "AuthenticationOk"})
	r = dialTLSRaw(t, ts, "alice")
	other := append([]byte(nil), endPoint...)
	other[0] ^= 1
	compareLogs(t, scramClient(t, r, scram.MechanismPlus, "p=tls-server-end-point,,", other, "pw"),
		[]string{"ErrorResponse(FATAL 08P01 SCRAM channel binding check failed)"})
	r = dialTLSRaw(t, ts, "alice")
	compareLogs(t, scramClient(t, r, scram.Mechanism, "y,,", nil, "pw"),
		[]string{"ErrorResponse(FATAL 28000 SCRAM channel binding negotiation error detail: The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding.)", "EOF"})
	r = dialTLSRaw(t, ts, "alice")
	compareLogs(t, scramClient(t, r, scram.Mechanism, "p=tls-server-end-point,,", endPoint, "pw"),
		[]string{"ErrorResponse(FATAL 08P01 malformed SCRAM message detail: The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.)", "EOF"})
	r = dialTLSRaw(t, ts, "alice")
	compareLogs(t, scramClient(t, r, scram.MechanismPlus, "n,,", nil, "pw"),
		[]string{"ErrorResponse(FATAL 08P01 malformed SCRAM message detail: The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data.)", "EOF"})
	r = dialTLSRaw(t, ts, "alice")
	compareLogs(t, scramClient(t, r, scram.MechanismPlus, "p=tls-unique,,", endPoint, "pw"),
		[]string{`ErrorResponse(FATAL 08P01 unsupported SCRAM channel-binding type "tls-unique")`, "EOF"})

	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	out, err := exec.Command(psql, "-X", "-At", "-c", "SELECT current_user",
		ts.conninfo("alice", "password=pw sslmode=verify-full sslrootcert="+cs.serverCAFile+" channel_binding=require")).CombinedOutput()
	if err != nil || string(out) != "alice\n" {
		t.Errorf("psql channel_binding=require: %v\n%s", err, out)
	}
	out, err = exec.Command(psql, "-X", "-At", "-c", "SELECT 1",
		ts.conninfo("alice", "password=pw sslmode=disable channel_binding=require")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "channel binding") {
		t.Errorf("psql channel_binding=require without TLS: %v\n%s", err, out)
	}
}
