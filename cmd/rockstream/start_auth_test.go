package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/oidc/oidctest"
	"github.com/rockstream/rockstream/internal/testcerts"
)

// TestStartPasswordAuthWithStoredRoles: --auth scram-sha-256 without
// --users-file is refused on a new storage, and accepted once the storage
// holds a role that can log in with a password.
func TestStartPasswordAuthWithStoredRoles(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	out := runProg(t, dir, "", binary(t), "start", "--storage", data, "--auth", "scram-sha-256",
		"--pg-addr", "127.0.0.1:0", "--http-addr", "")
	if out.exit != exitUsage || !strings.Contains(out.stderr, "without users: nobody could log in") {
		t.Fatalf("scram-sha-256 on a new storage: exit %d\n%s", out.exit, out.stderr)
	}
	s := startServer(t, "--storage", data)
	s.psql("admin", "CREATE ROLE carol LOGIN PASSWORD 'c4rol'")
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.stderr())
	}
	s = startServer(t, "--storage", data, "--auth", "scram-sha-256")
	host, port, _ := strings.Cut(s.pgAddr, ":")
	out = runProg(t, dir, "", psql, "-X", "-q", "--csv", "-c", "SELECT current_user",
		"host="+host+" port="+port+" user=carol password=c4rol dbname=x sslmode=disable")
	if out.exit != 0 || out.stdout != "current_user\ncarol\n" {
		t.Fatalf("carol: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.stderr())
	}
}

// TestSecretsRedacted: the secrets given to CREATE SOURCE (a URL's
// password, a password option, a conninfo's password=) and to CREATE
// ROLE ... PASSWORD (the holder's last statement) appear nowhere a
// non-superuser, a log reader or an HTTP client can see: not in the
// connector relations, SHOW SOURCES, the sessions' query text, error
// messages, the log, /health or /metrics.
func TestSecretsRedacted(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	secrets := []string{"Hunter2Secret", "PwOpt9x", "Conninfo7z", "Bad5port", "RolePw55"}
	s := startServer(t, "--log-level", "debug")
	s.psql("admin", "CREATE TABLE orders (id int PRIMARY KEY)")
	s.psql("admin", "CREATE ROLE eve LOGIN")

	// The creator stays connected, idle after its CREATE SOURCE.
	holder := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", s.psqlConn("admin", "holder"))
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	fmt.Fprintln(stdin, "CREATE SOURCE shop FROM POSTGRES (connection = 'postgres://cdc:Hunter2Secret@127.0.0.1:1/shop', password = 'PwOpt9x') FOR TABLES (orders);")
	fmt.Fprintln(stdin, "CREATE SOURCE shop2 FROM POSTGRES (connection = 'host=127.0.0.1 port=1 user=cdc password=Conninfo7z') INTO orders;")
	fmt.Fprintln(stdin, "CREATE ROLE bob LOGIN PASSWORD 'RolePw55';")
	fmt.Fprintln(stdin, "\\echo created")
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "created\n" {
		t.Fatalf("holder: %q, %v", line, err)
	}
	out := runProg(t, t.TempDir(), "", psql, "-X", "-q", s.psqlConn("admin", "bad"), "-c",
		"CREATE SOURCE bad FROM POSTGRES (connection = 'postgres://u:Bad5port@h:notaport/db') INTO orders")
	if out.exit == 0 {
		t.Fatalf("a bad connection string was accepted")
	}
	seen := out.stderr
	time.Sleep(300 * time.Millisecond) // let the connectors fail and log
	for _, q := range []string{
		"SELECT * FROM rockstream_catalog.sources",
		"SHOW SOURCES",
		"SELECT query FROM rockstream_catalog.sessions",
		"SELECT query FROM pg_stat_activity", // other roles' queries are hidden from eve
	} {
		got := s.psql("eve", q)
		if !strings.Contains(got, "shop") && !strings.Contains(got, "PASSWORD '********'") && !strings.Contains(q, "pg_stat_activity") {
			t.Errorf("%s as eve shows neither the source nor the redacted CREATE ROLE:\n%s", q, got)
		}
		seen += got
	}
	for _, path := range []string{"/health", "/metrics"} {
		_, body := s.get(path)
		seen += body
	}
	stdin.Close()
	holder.Wait()
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.wait(20 * time.Second)
	seen += s.stderr()
	for _, secret := range secrets {
		if i := strings.Index(seen, secret); i >= 0 {
			t.Errorf("secret %q is visible: ...%s...", secret, seen[max(0, i-200):min(len(seen), i+50)])
		}
	}
	if !strings.Contains(seen, "postgres://cdc:********@127.0.0.1:1/shop") {
		t.Errorf("the redacted URL is not shown")
	}
}

// TestStartCertAuth: `rockstream start --auth cert --tls-client-ca ...
// --tls-client-crl ... --tls-require all --http-auth cert` admits psql
// with a client certificate (verify-full against the server's CA),
// refuses a revoked certificate and plain text, and serves /metrics over
// HTTPS to clients with a certificate only.
func TestStartCertAuth(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	dir := t.TempDir()
	serverCA, err := testcerts.NewCA("server CA")
	if err != nil {
		t.Fatal(err)
	}
	clientCA, err := testcerts.NewCA("client CA")
	if err != nil {
		t.Fatal(err)
	}
	srvCert, err := serverCA.Issue(testcerts.Options{CommonName: "localhost", Server: true})
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := srvCert.WriteFiles(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	rootFile, err := serverCA.WriteFile(dir, "root")
	if err != nil {
		t.Fatal(err)
	}
	clientCAFile, err := clientCA.WriteFile(dir, "clients")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := clientCA.Issue(testcerts.Options{CommonName: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	aliceCert, aliceKey, err := alice.WriteFiles(dir, "alice")
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := clientCA.Issue(testcerts.Options{CommonName: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	revokedCert, revokedKey, err := revoked.WriteFiles(dir, "revoked")
	if err != nil {
		t.Fatal(err)
	}
	crl, err := clientCA.RevocationList(revoked.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	crlFile := filepath.Join(dir, "clients.crl")
	if err := os.WriteFile(crlFile, crl, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth", "cert", "--tls-cert", certFile, "--tls-key", keyFile}, "--auth cert needs --tls-client-ca"},
		{[]string{"--tls-client-ca", clientCAFile}, "--tls-client-ca needs --tls-cert and --tls-key"},
		{[]string{"--tls-require", "all"}, "--tls-require all needs --tls-cert and --tls-key"},
		{[]string{"--tls-require", "some"}, `--tls-require must be none, remote or all, not "some"`},
		{[]string{"--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", keyFile}, "holds no PEM certificate"},
		{[]string{"--http-auth", "cert"}, "--http-auth cert needs --tls-cert, --tls-key and --tls-client-ca"},
		{[]string{"--http-auth", "basic"}, `--http-auth must be token:FILE or cert, not "basic"`},
		{[]string{"--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-crl", crlFile}, "--tls-client-crl needs --tls-client-ca"},
		{[]string{"--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", rootFile, "--tls-client-crl", crlFile}, "is not signed by a client CA"},
	} {
		out := runProg(t, dir, "", binary(t), append([]string{"start", "--http-addr", "127.0.0.1:0", "--pg-addr", "127.0.0.1:0"}, c.args...)...)
		if out.exit != exitUsage || !strings.Contains(out.stderr, c.want) {
			t.Errorf("start %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(c.args, " "), out.exit, out.stderr, exitUsage, c.want)
		}
	}

	s := startServer(t, "--auth", "cert", "--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", clientCAFile,
		"--tls-client-crl", crlFile, "--tls-require", "all", "--http-auth", "cert")
	host, port, _ := strings.Cut(s.pgAddr, ":")
	conn := "host=" + host + " port=" + port + " user=alice dbname=x "
	out := runProg(t, dir, "", psql, "-X", "-At", "-c", "SELECT current_user",
		conn+"sslmode=verify-full sslrootcert="+rootFile+" sslcert="+aliceCert+" sslkey="+aliceKey)
	if out.exit != 0 || out.stdout != "alice\n" {
		t.Errorf("psql with alice's certificate: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
	}
	out = runProg(t, dir, "", psql, "-X", "-At", "-c", "SELECT current_user",
		conn+"sslmode=verify-full sslrootcert="+rootFile+" sslcert="+revokedCert+" sslkey="+revokedKey)
	if out.exit == 0 || !strings.Contains(out.stderr, "certificate") {
		t.Errorf("psql with a revoked certificate: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
	}
	out = runProg(t, dir, "", psql, "-X", "-At", "-c", "SELECT 1", conn+"sslmode=disable")
	if out.exit == 0 || !strings.Contains(out.stderr, "this server requires TLS") {
		t.Errorf("psql in plain text: exit %d\n%s", out.exit, out.stderr)
	}

	https := func(certs ...tls.Certificate) int {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: serverCA.Pool(), Certificates: certs}}}
		resp, err := c.Get("https://" + s.httpAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := https(alice.TLS); code != 200 {
		t.Errorf("/metrics with a client certificate: %d", code)
	}
	if code := https(); code != 403 {
		t.Errorf("/metrics without a client certificate: %d, want 403", code)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.stderr())
	}
}

// TestStartHTTPToken: --http-auth token:FILE guards /health and /metrics
// with the file's bearer token; the probes stay open.
func TestStartHTTPToken(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runProg(t, dir, "", binary(t), "start", "--http-addr", "127.0.0.1:0", "--pg-addr", "127.0.0.1:0", "--http-auth", "token:"+tokenFile)
	if out.exit != exitUsage || !strings.Contains(out.stderr, "must be one word of at least 16 characters") {
		t.Errorf("a short token: exit %d\n%s", out.exit, out.stderr)
	}
	if err := os.WriteFile(tokenFile, []byte("0123456789abcdef-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--http-auth", "token:"+tokenFile)
	fetch := func(path, token string) int {
		req, _ := http.NewRequest("GET", "http://"+s.httpAddr+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, token string
		want        int
	}{
		{"/metrics", "", 401}, {"/health", "", 401}, {"/metrics", "wrong", 403},
		{"/metrics", "0123456789abcdef-token", 200}, {"/health", "0123456789abcdef-token", 200},
		{"/live", "", 200}, {"/ready", "", 200},
	} {
		if got := fetch(c.path, c.token); got != c.want {
			t.Errorf("GET %s with token %q: %d, want %d", c.path, c.token, got, c.want)
		}
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.stderr())
	}
}

// TestStartOIDC: `rockstream start --auth oidc` with a key set file
// admits psql with a token as its password and refuses an expired one;
// the flags that go together are checked.
func TestStartOIDC(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	dir := t.TempDir()
	is, err := oidctest.NewIssuer("https://idp.test", "k-")
	if err != nil {
		t.Fatal(err)
	}
	jwks := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(jwks, is.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth", "oidc", "--oidc-issuer", "https://idp.test"}, "--auth oidc needs --oidc-issuer, --oidc-audience and --oidc-jwks"},
		{[]string{"--oidc-jwks", jwks}, "--oidc-issuer, --oidc-audience and --oidc-jwks go with --auth oidc"},
		{[]string{"--auth", "oidc", "--oidc-issuer", "https://idp.test", "--oidc-audience", "rs", "--oidc-jwks", filepath.Join(dir, "missing")}, "--oidc-jwks: reading the key set"},
		{[]string{"--auth", "oidc", "--oidc-issuer", "https://idp.test", "--oidc-audience", "rs", "--oidc-jwks", "http://127.0.0.1:1/jwks"}, "--oidc-jwks: fetching the key set"},
	} {
		out := runProg(t, dir, "", binary(t), append([]string{"start", "--http-addr", "", "--pg-addr", "127.0.0.1:0"}, c.args...)...)
		if out.exit != exitUsage || !strings.Contains(out.stderr, c.want) {
			t.Errorf("start %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(c.args, " "), out.exit, out.stderr, exitUsage, c.want)
		}
	}
	s := startServer(t, "--auth", "oidc", "--oidc-issuer", "https://idp.test", "--oidc-audience", "rs",
		"--oidc-jwks", jwks, "--oidc-role-claim", "preferred_username")
	host, port, _ := strings.Cut(s.pgAddr, ":")
	login := func(token string) outcome {
		t.Setenv("PGPASSWORD", token)
		return runProg(t, dir, "", psql, "-X", "-At", "-c", "SELECT current_user", "host="+host+" port="+port+" user=alice dbname=x sslmode=disable")
	}
	claims := is.Claims("rs", "preferred_username", "alice")
	if out := login(is.Sign("RS256", "k-rsa", claims)); out.exit != 0 || out.stdout != "alice\n" {
		t.Errorf("psql with a token: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
	}
	claims["exp"] = time.Now().Add(-time.Hour).Unix()
	if out := login(is.Sign("RS256", "k-rsa", claims)); out.exit == 0 || !strings.Contains(out.stderr, `OIDC authentication failed for user "alice"`) {
		t.Errorf("psql with an expired token: exit %d\n%s", out.exit, out.stderr)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.stderr())
	}
	if !strings.Contains(s.stderr(), "expired at") {
		t.Errorf("the log does not say the token expired:\n%s", s.stderr())
	}
}
