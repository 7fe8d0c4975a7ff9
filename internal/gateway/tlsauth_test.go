package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/testcerts"
)

// certSetup is a server CA with a server certificate for 127.0.0.1, a
// client CA, and certificate files in a temporary directory.
type certSetup struct {
	dir                string
	serverCA, clientCA *testcerts.CA
	serverCAFile       string
	server             *testcerts.Issued
}

func newCertSetup(t *testing.T) *certSetup {
	t.Helper()
	cs := &certSetup{dir: t.TempDir()}
	var err error
	if cs.serverCA, err = testcerts.NewCA("server CA"); err != nil {
		t.Fatal(err)
	}
	if cs.clientCA, err = testcerts.NewCA("client CA"); err != nil {
		t.Fatal(err)
	}
	if cs.server, err = cs.serverCA.Issue(testcerts.Options{CommonName: "localhost", Server: true}); err != nil {
		t.Fatal(err)
	}
	if cs.serverCAFile, err = cs.serverCA.WriteFile(cs.dir, "root"); err != nil {
		t.Fatal(err)
	}
	return cs
}

// tlsConfig is the server's TLS configuration, verifying client
// certificates of the client CA when given.
func (cs *certSetup) tlsConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cs.server.TLS}, ClientCAs: cs.clientCA.Pool(),
		ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
}

// client issues a client certificate and returns its libpq parameters.
func (cs *certSetup) client(t *testing.T, ca *testcerts.CA, name string, o testcerts.Options) string {
	t.Helper()
	is, err := ca.Issue(o)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := is.WriteFiles(cs.dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("sslcert=%s sslkey=%s", certFile, keyFile)
}

func (ts *testServer) conninfo(user, extra string) string {
	host, port, _ := net.SplitHostPort(ts.addr)
	return fmt.Sprintf("host=%s port=%s user=%s dbname=x connect_timeout=10 %s", host, port, user, extra)
}

// TestCertAuth: the cert method admits a client whose certificate the
// client CA signed and whose common name is the user name, with pgx and
// psql verifying the server's certificate (verify-ca, verify-full); an
// expired certificate, one of another CA, none at all, a common name that
// is not the user's, and a plain-text connection are refused.
func TestCertAuth(t *testing.T) {
	cs := newCertSetup(t)
	ts := startServer(t, Config{TLS: cs.tlsConfig(), Auth: AuthConfig{Method: AuthCert}})
	alice := cs.client(t, cs.clientCA, "alice", testcerts.Options{CommonName: "alice"})
	root := "sslrootcert=" + cs.serverCAFile
	for _, mode := range []string{"verify-full", "verify-ca", "require"} {
		c, err := connectErr(ts.conninfo("alice", "sslmode="+mode+" "+root+" "+alice))
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		var user string
		if err := c.QueryRow(context.Background(), "SELECT current_user").Scan(&user); err != nil || user != "alice" {
			t.Fatalf("current_user = %q, %v", user, err)
		}
		c.Close(context.Background())
	}

	_, err := connectErr(ts.conninfo("bob", "sslmode=verify-full "+root+" "+alice))
	wantPgError(t, err, "28000", `certificate authentication failed for user "bob"`)
	_, err = connectErr(ts.conninfo("alice", "sslmode=verify-full "+root))
	wantPgError(t, err, "28000", "connection requires a valid client certificate")
	_, err = connectErr(ts.conninfo("alice", "sslmode=disable"))
	wantPgError(t, err, "28000", `certificate authentication failed for user "alice": the connection does not use TLS`)

	// Refused in the TLS handshake: the server says why in a TLS alert.
	expired := cs.client(t, cs.clientCA, "expired", testcerts.Options{CommonName: "alice",
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	other, err := testcerts.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	stranger := cs.client(t, other, "stranger", testcerts.Options{CommonName: "alice"})
	for name, params := range map[string]string{"expired": expired, "another CA's": stranger} {
		if c, err := connectErr(ts.conninfo("alice", "sslmode=require "+params)); err == nil {
			c.Close(context.Background())
			t.Errorf("an %s certificate was accepted", name)
		} else if !strings.Contains(err.Error(), "certificate") {
			t.Errorf("an %s certificate: %v", name, err)
		}
	}
	// The client refuses a server whose certificate another CA signed.
	otherRoot, err := other.WriteFile(cs.dir, "otherroot")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := connectErr(ts.conninfo("alice", "sslmode=verify-ca sslrootcert="+otherRoot+" "+alice)); err == nil {
		c.Close(context.Background())
		t.Error("verify-ca accepted a server certificate of another CA")
	}

	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	run := func(conninfo string) (string, error) {
		out, err := exec.Command(psql, "-X", "-At", "-c", "SELECT current_user", conninfo).CombinedOutput()
		return string(out), err
	}
	for _, mode := range []string{"verify-full", "verify-ca"} {
		if out, err := run(ts.conninfo("alice", "sslmode="+mode+" "+root+" "+alice)); err != nil || out != "alice\n" {
			t.Errorf("psql %s with alice's certificate: %v\n%s", mode, err, out)
		}
	}
	// verify-full checks the host name: the server's certificate names
	// 127.0.0.1 and localhost, not 127.0.0.2; verify-ca does not.
	eng, err := instance.Open(instance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	ts2 := serveOn(t, eng, ln, Config{TLS: cs.tlsConfig(), Auth: AuthConfig{Method: AuthCert}})
	if out, err := run(ts2.conninfo("alice", "sslmode=verify-ca "+root+" "+alice)); err != nil || out != "alice\n" {
		t.Errorf("psql verify-ca to 127.0.0.2: %v\n%s", err, out)
	}
	if out, err := run(ts2.conninfo("alice", "sslmode=verify-full "+root+" "+alice)); err == nil || !strings.Contains(out, `does not match host name "127.0.0.2"`) {
		t.Errorf("psql verify-full to a host the certificate does not name: %v\n%s", err, out)
	}
	if out, err := run(ts.conninfo("alice", "sslmode=verify-full "+root+" "+expired)); err == nil || !strings.Contains(out, "certificate") {
		t.Errorf("psql with an expired certificate: %v\n%s", err, out)
	}
	if out, err := run(ts.conninfo("alice", "sslmode=verify-full "+root)); err == nil || !strings.Contains(out, "connection requires a valid client certificate") {
		t.Errorf("psql without a certificate: %v\n%s", err, out)
	}
	if out, err := run(ts.conninfo("bob", "sslmode=verify-full "+root+" "+alice)); err == nil || !strings.Contains(out, `certificate authentication failed for user "bob"`) {
		t.Errorf("psql as bob with alice's certificate: %v\n%s", err, out)
	}
}

// TestTLSRequire: with TLS required for all clients, a plain-text
// connection is refused with 28000; with TLS required for remote ones,
// a loopback client may stay in plain text and a remote one may not.
func TestTLSRequire(t *testing.T) {
	cs := newCertSetup(t)
	users := map[string]string{"alice": "pw"}
	ts := startServer(t, Config{TLS: cs.tlsConfig(), TLSRequire: TLSRequireAll, Auth: AuthConfig{Method: AuthSCRAM, Users: users}})
	_, err := connectErr(ts.dsn("alice", "pw"))
	wantPgError(t, err, "28000", `connection without TLS refused for host "127.0.0.1", user "alice": this server requires TLS`)
	c, err := connectErr(strings.Replace(ts.dsn("alice", "pw"), "sslmode=disable", "sslmode=require", 1))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())

	local := startServer(t, Config{TLS: cs.tlsConfig(), TLSRequire: TLSRequireRemote, Auth: AuthConfig{Method: AuthSCRAM, Users: users}})
	c, err = connectErr(local.dsn("alice", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())

	eng, err := instance.Open(instance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote := serveOn(t, eng, remoteListener{ln}, Config{TLS: cs.tlsConfig(), TLSRequire: TLSRequireRemote, Auth: AuthConfig{Method: AuthSCRAM, Users: users}})
	_, err = connectErr(remote.dsn("alice", "pw"))
	wantPgError(t, err, "28000", `connection without TLS refused for host "203.0.113.7", user "alice": this server requires TLS`)
	c, err = connectErr(strings.Replace(remote.dsn("alice", "pw"), "sslmode=disable", "sslmode=require", 1))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
}

// TestCertRevoked: a client certificate its CA's revocation list names is
// refused in the TLS handshake; others of the same CA are accepted, and
// a list another CA signed is not taken.
func TestCertRevoked(t *testing.T) {
	cs := newCertSetup(t)
	revoked, err := cs.clientCA.Issue(testcerts.Options{CommonName: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	crlPEM, err := cs.clientCA.RevocationList(revoked.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	crls, err := ParseRevocationLists(crlPEM, []*x509.Certificate{cs.clientCA.Cert})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseRevocationLists(crlPEM, []*x509.Certificate{cs.serverCA.Cert}); err == nil {
		t.Error("a revocation list of another CA was taken")
	}
	cfg := cs.tlsConfig()
	cfg.VerifyPeerCertificate = RefuseRevoked(crls)
	ts := startServer(t, Config{TLS: cfg, Auth: AuthConfig{Method: AuthCert}})
	certFile, keyFile, err := revoked.WriteFiles(cs.dir, "revoked")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := connectErr(ts.conninfo("alice", "sslmode=require sslcert="+certFile+" sslkey="+keyFile)); err == nil {
		c.Close(context.Background())
		t.Error("a revoked certificate was accepted")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a revoked certificate: %v", err)
	}
	good := cs.client(t, cs.clientCA, "alice2", testcerts.Options{CommonName: "alice"})
	c, err := connectErr(ts.conninfo("alice", "sslmode=require "+good))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
}
