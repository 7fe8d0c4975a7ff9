package gateway

import (
	"context"
	"crypto/x509"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/testcerts"
)

// TestJDBCAuth logs in with pgJDBC (testdata/jdbc/Login.java): SCRAM
// over TLS, where the server offers channel binding, and a client
// certificate with verify-full; a wrong password and a certificate for
// another user are refused.
func TestJDBCAuth(t *testing.T) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no JDK")
	}
	if _, err := os.Stat(jdbcJar); err != nil {
		t.Skip("pgJDBC is not installed")
	}
	classes := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, javac, "-cp", jdbcJar, "-d", classes, "testdata/jdbc/Login.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	login := func(ts *testServer, params url.Values) string {
		out, err := exec.CommandContext(ctx, "java", "-cp", jdbcJar+":"+classes, "Login",
			"jdbc:postgresql://"+ts.addr+"/x?"+params.Encode()).CombinedOutput()
		if err != nil {
			t.Fatalf("java Login: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	cs := newCertSetup(t)
	scramTS := startServer(t, Config{TLS: cs.tlsConfig(), Auth: AuthConfig{Method: AuthSCRAM, Users: map[string]string{"alice": "pw"}}})
	p := url.Values{"user": {"alice"}, "password": {"pw"}, "sslmode": {"verify-full"}, "sslrootcert": {cs.serverCAFile}}
	if got := login(scramTS, p); got != "user alice" {
		t.Errorf("SCRAM over TLS: %s", got)
	}
	p.Set("password", "wrong")
	if got := login(scramTS, p); !strings.HasPrefix(got, "error 28P01") {
		t.Errorf("a wrong password: %s", got)
	}

	certTS := startServer(t, Config{TLS: cs.tlsConfig(), Auth: AuthConfig{Method: AuthCert}})
	is, err := cs.clientCA.Issue(testcerts.Options{CommonName: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	certFile, _, err := is.WriteFiles(cs.dir, "jdbc-alice")
	if err != nil {
		t.Fatal(err)
	}
	// pgJDBC reads keys in PKCS #8 DER.
	pk8, err := x509.MarshalPKCS8PrivateKey(is.TLS.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(cs.dir, "jdbc-alice.pk8")
	if err := os.WriteFile(keyFile, pk8, 0o600); err != nil {
		t.Fatal(err)
	}
	p = url.Values{"user": {"alice"}, "sslmode": {"verify-full"}, "sslrootcert": {cs.serverCAFile},
		"sslcert": {certFile}, "sslkey": {keyFile}}
	if got := login(certTS, p); got != "user alice" {
		t.Errorf("a client certificate: %s", got)
	}
	p.Set("user", "bob")
	if got := login(certTS, p); !strings.HasPrefix(got, "error 28000") || !strings.Contains(got, `certificate authentication failed for user "bob"`) {
		t.Errorf("alice's certificate as bob: %s", got)
	}
}
