package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// These tests run `rockstream start` as a subprocess on free loopback
// ports (port 0; the "ready" log line names the ports bound) and talk to
// it as an operator would: HTTP endpoints, signals, exit statuses.

// server is a running `rockstream start`.
type server struct {
	t        testing.TB
	cmd      *exec.Cmd
	pgAddr   string
	httpAddr string

	mu    sync.Mutex
	lines []map[string]any // JSON log lines so far
	raw   strings.Builder  // all of standard error
	done  chan struct{}    // closed when the process has exited
	exit  int
}

// startServer starts `rockstream start` with args (plus JSON logs and
// port-0 addresses unless args set them) and waits for its "ready" line.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	s := launch(t, args...)
	deadline := time.After(60 * time.Second)
	for {
		if line := s.logLine("ready"); line != nil {
			s.pgAddr, _ = line["pg_addr"].(string)
			s.httpAddr, _ = line["http_addr"].(string)
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("rockstream start exited with %d before it was ready:\n%s", s.exit, s.stderr())
		case <-deadline:
			t.Fatalf("rockstream start was not ready within 60s:\n%s", s.stderr())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// launch starts `rockstream start` without waiting for it.
func launch(t *testing.T, args ...string) *server {
	t.Helper()
	full := append([]string{"start", "--log-format", "json"}, args...)
	if !hasFlag(args, "--pg-addr") {
		full = append(full, "--pg-addr", "127.0.0.1:0")
	}
	if !hasFlag(args, "--http-addr") {
		full = append(full, "--http-addr", "127.0.0.1:0")
	}
	return spawn(t, full)
}

// spawn starts the binary with exactly args, collecting its log lines.
func spawn(t testing.TB, full []string) *server {
	t.Helper()
	s := &server{t: t, cmd: exec.Command(binary(t), full...), done: make(chan struct{})}
	s.cmd.Dir = t.TempDir()
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			s.mu.Lock()
			s.raw.WriteString(sc.Text() + "\n")
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.lines = append(s.lines, m)
			}
			s.mu.Unlock()
		}
		io.Copy(io.Discard, stderr)
		err := s.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			s.exit = exit.ExitCode()
		} else if err != nil {
			s.exit = -1
		}
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// logLine returns the first log line with message msg, or nil.
func (s *server) logLine(msg string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lines {
		if l["msg"] == msg {
			return l
		}
	}
	return nil
}

func (s *server) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw.String()
}

// wait waits for the process to exit and returns its status.
func (s *server) wait(timeout time.Duration) int {
	s.t.Helper()
	select {
	case <-s.done:
		return s.exit
	case <-time.After(timeout):
		s.t.Fatalf("rockstream start did not exit within %s:\n%s", timeout, s.stderr())
	}
	return 0
}

func (s *server) get(path string) (int, string) {
	s.t.Helper()
	resp, err := http.Get("http://" + s.httpAddr + path)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// metric returns the value of the sample line starting with series (a
// metric name with its labels, as printed) in /metrics.
func (s *server) metric(series string) (float64, bool) {
	s.t.Helper()
	_, body := s.get("/metrics")
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// sqlMust runs script with `rockstream sql` on storage and returns its
// standard output. The script comes on standard input, so that each of its
// statements is a transaction of its own, as with psql -f.
func sqlMust(t *testing.T, storage, script string) string {
	t.Helper()
	out := runProg(t, t.TempDir(), script, binary(t), "sql", "--csv", "--storage", storage)
	if out.exit != 0 {
		t.Fatalf("rockstream sql < %q: exit %d\n%s", script, out.exit, out.stderr)
	}
	return out.stdout
}

const startSchema = `CREATE TABLE orders (id int PRIMARY KEY, store int, amount numeric(10,2));
CREATE MATERIALIZED VIEW per_store AS SELECT store, count(*) AS n, sum(amount) AS total FROM orders GROUP BY store;
CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 100;
INSERT INTO orders VALUES (1, 1, 10), (2, 1, 250), (3, 2, 5);
UPDATE orders SET store = 3 WHERE id = 3`

// TestStartServesEndpoints starts a server on a storage directory written
// by `rockstream sql` and checks every endpoint against what the storage
// holds, then stops it with each signal and reads the data back.
func TestStartServesEndpoints(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			sqlMust(t, data, startSchema)
			before := sqlMust(t, data, "SELECT * FROM per_store ORDER BY store")

			s := startServer(t, "--storage", data, "--shutdown-timeout", "5s")
			ready := s.logLine("ready")
			if ready["epoch"] != float64(5) || ready["storage"] != data || ready["version"] != testVersion {
				t.Errorf("ready line: %v; want epoch 5, storage %s, version %s", ready, data, testVersion)
			}
			if code, body := s.get("/live"); code != 200 || body != "live\n" {
				t.Errorf("/live: %d %q", code, body)
			}
			if code, body := s.get("/ready"); code != 200 || body != "ready\n" {
				t.Errorf("/ready: %d %q", code, body)
			}
			code, body := s.get("/health")
			var h map[string]any
			if err := json.Unmarshal([]byte(body), &h); err != nil {
				t.Fatalf("/health: %v\n%s", err, body)
			}
			want := map[string]any{
				"status": "ok", "version": testVersion, "epoch": float64(5), "durable_epoch": float64(5),
				"recovered_epoch": float64(5), "storage": data, "in_memory": false,
				"tables": float64(1), "materialized_views": float64(1), "views": float64(1),
				"sessions": float64(0), "connections": float64(0),
			}
			for k, v := range want {
				if h[k] != v {
					t.Errorf("/health %s = %v, want %v", k, h[k], v)
				}
			}
			if up, _ := h["uptime_seconds"].(float64); code != 200 || up <= 0 {
				t.Errorf("/health: status %d, uptime %v", code, h["uptime_seconds"])
			}
			for series, want := range map[string]float64{
				"rockstream_ready":                                    1,
				"rockstream_committed_epoch":                          5,
				"rockstream_recovered_epoch":                          5,
				"rockstream_durable_epoch":                            5,
				"rockstream_epochs_committed_total":                   0,
				`rockstream_relations{kind="table"}`:                  1,
				`rockstream_relations{kind="view"}`:                   1,
				`rockstream_view_rows{view="per_store"}`:              float64(strings.Count(before, "\n") - 1),
				`rockstream_view_last_change_epoch{view="per_store"}`: 5,
				"rockstream_gateway_connections":                      0,
			} {
				if got, ok := s.metric(series); !ok || got != want {
					t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
				}
			}
			for _, series := range []string{"go_goroutines", "process_cpu_seconds_total", "rockstream_storage_disk_bytes"} {
				if v, ok := s.metric(series); !ok || v <= 0 {
					t.Errorf("%s = %v (present %v), want > 0", series, v, ok)
				}
			}
			// The gateway listens.
			c, err := net.Dial("tcp", s.pgAddr)
			if err != nil {
				t.Fatalf("connecting to the gateway: %v", err)
			}
			c.Close()

			began := time.Now()
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := s.wait(20 * time.Second); code != 0 {
				t.Fatalf("exit %d after %s, want 0:\n%s", code, sig, s.stderr())
			}
			t.Logf("stopped %s after %s", sig, time.Since(began))
			if s.logLine("shutting down") == nil || s.logLine("stopped") == nil {
				t.Errorf("no shutdown lines in the log:\n%s", s.stderr())
			}
			if after := sqlMust(t, data, "SELECT * FROM per_store ORDER BY store"); after != before {
				t.Fatalf("view after the server stopped:\n%s\nwant:\n%s", after, before)
			}
			if got := sqlMust(t, data, "SELECT committed_epoch FROM rockstream_catalog.frontiers"); got != "committed_epoch\n5\n" {
				t.Fatalf("frontier after the server stopped: %q", got)
			}
		})
	}
}

// TestStartInMemory starts without --storage: a warning says the data is
// not kept, and the health report says so.
func TestStartInMemory(t *testing.T) {
	s := startServer(t)
	if l := s.logLine("no --storage given: the data lives in memory and is lost when the server stops; pass --storage DIR to keep it"); l == nil || l["level"] != "WARN" {
		t.Errorf("no warning about memory:\n%s", s.stderr())
	}
	_, body := s.get("/health")
	if !strings.Contains(body, `"in_memory": true`) || !strings.Contains(body, `"durable_epoch": null`) {
		t.Errorf("/health in memory:\n%s", body)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.stderr())
	}
}

// TestStartAddressInUse starts on a port that is taken: the server says
// which address and flag, exits 2, and does not touch the storage.
func TestStartAddressInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, flag := range []string{"--pg-addr", "--http-addr"} {
		data := filepath.Join(t.TempDir(), "data")
		s := launch(t, "--storage", data, flag, addr)
		if code := s.wait(20 * time.Second); code != exitUsage {
			t.Errorf("%s %s taken: exit %d, want %d", flag, addr, code, exitUsage)
		}
		want := fmt.Sprintf("rockstream: cannot listen on %s: address already in use; is another server running? choose another address with %s\n", addr, flag)
		if !strings.HasSuffix(s.stderr(), want) {
			t.Errorf("%s %s taken: stderr\n%s\nwant it to end with\n%s", flag, addr, s.stderr(), want)
		}
		if s.logLine("recovering") != nil {
			t.Errorf("%s taken: recovery began before the address was bound", flag)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%s taken: the storage directory was created", flag)
		}
	}
}

// TestStartStorageInUse starts a second server on the storage of a
// running one: it cannot open it and says so.
func TestStartStorageInUse(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	first := startServer(t, "--storage", data)
	second := launch(t, "--storage", data)
	if code := second.wait(20 * time.Second); code != exitUsage {
		t.Errorf("second server on %s: exit %d, want %d\n%s", data, code, exitUsage, second.stderr())
	}
	if !strings.Contains(second.stderr(), "another process is using it (a running server?)") {
		t.Errorf("second server on %s:\n%s", data, second.stderr())
	}
	first.cmd.Process.Signal(syscall.SIGTERM)
	if code := first.wait(20 * time.Second); code != 0 {
		t.Fatalf("first server: exit %d", code)
	}
}

// TestStartFlags checks that bad flags stop the server before it starts,
// and that TLS and users files that are right let it start.
func TestStartFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cert, key := selfSigned(t, dir)
	users := write("users", "# operators\nalice:s3cret:with:colons\n\nbob: spaced \n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth", "md5"}, `--auth must be trust, password, scram-sha-256, cert or oidc, not "md5"`},
		{[]string{"--tls-cert", cert}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-cert", key, "--tls-key", key}, "loading the TLS certificate and key"},
		{[]string{"--auth", "scram-sha-256", "--users-file", filepath.Join(dir, "missing")}, "reading --users-file"},
		{[]string{"--auth", "scram-sha-256", "--users-file", write("bad", "alice\n")}, "bad:1: want name:password"},
		{[]string{"--auth", "scram-sha-256", "--users-file", write("dup", "a:1\na:2\n")}, `dup:2: user "a" is listed twice`},
		{[]string{"--auth", "password", "--users-file", write("empty", "# nobody\n")}, "lists no users"},
		{[]string{"--users-file", users}, "--users-file needs a password method"},
		{[]string{"--auth", "trust", "--users-file", users}, "--users-file needs a password method"},
		{[]string{"--auth", "scram-sha-256"}, "--auth scram-sha-256 without users: nobody could log in"},
		{[]string{"--auth", "password"}, "--auth password without users: nobody could log in"},
		{[]string{"--max-connections", "5", "--superuser-reserved-connections", "5"}, "--superuser-reserved-connections (5) must be at least 0 and less than --max-connections (5)"},
		{[]string{"--superuser-reserved-connections", "-1"}, "--superuser-reserved-connections (-1) must be"},
		{[]string{"--authentication-timeout", "0s"}, "--authentication-timeout must be between 1s and 10m"},
		{[]string{"--durability", "eventually"}, `--durability must be sync or relaxed, not "eventually"`},
		{[]string{"--cache-size", "lots"}, `"lots" is not a size`},
		{[]string{"--max-message-size", "10"}, "--max-message-size must be at least 1kB"},
		{[]string{"--max-connections", "0"}, "--max-connections must be at least 1"},
		{[]string{"--statement-timeout", "soon"}, "invalid argument"},
		{[]string{"--log-level", "loud"}, "--log-level must be"},
		{[]string{"--pg-addr", "127.0.0.1:99999"}, "cannot listen on 127.0.0.1:99999"},
		{[]string{"stray"}, "unknown command"},
	} {
		out := runProg(t, dir, "", binary(t), append([]string{"start", "--http-addr", "127.0.0.1:0", "--pg-addr", "127.0.0.1:0"}, c.args...)...)
		if out.exit != exitUsage || !strings.Contains(out.stderr, c.want) {
			t.Errorf("start %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(c.args, " "), out.exit, out.stderr, exitUsage, c.want)
		}
	}

	s := startServer(t, "--auth", "scram-sha-256", "--users-file", users, "--tls-cert", cert, "--tls-key", key,
		"--max-connections", "5", "--statement-timeout", "30s", "--idle-in-transaction-timeout", "1m",
		"--max-message-size", "1MB", "--cache-size", "64MB", "--http-addr", "")
	if s.httpAddr != "" {
		t.Errorf("--http-addr '' still served HTTP on %s", s.httpAddr)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.stderr())
	}
}

func TestReadUsersFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(p, []byte("# operators\r\nalice:s3cret:with:colons\r\n\n  bob : spaced \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	users, err := readUsersFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users["alice"] != "s3cret:with:colons" || users["bob"] != " spaced " {
		t.Fatalf("users = %q", users)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "1kB": 1024, "64MB": 64 << 20, "2 GiB": 2 << 30, "1tb": 1 << 40, "3M": 3 << 20} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "1.5GB", "-1", "1PB", "99999999999TB"} {
		if _, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q) succeeded", in)
		}
	}
	for n, want := range map[byteSize]string{256 << 20: "256MB", 1536: "1536B", 3 << 10: "3kB", 0: "0"} {
		if got := n.String(); got != want {
			t.Errorf("byteSize(%d).String() = %q, want %q", int64(n), got, want)
		}
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "rockstream test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestStartFlagsDocumented checks that docs/cli.md documents every flag
// of `rockstream start` and that --help shows each with its default.
func TestStartFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## `rockstream start`")
	section, _, _ = strings.Cut(section, "\n## ")
	help := runProg(t, t.TempDir(), "", binary(t), "start", "--help")
	newStartCommand().Flags().VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(section, "`--"+f.Name) {
			t.Errorf("docs/cli.md does not document start --%s", f.Name)
		}
		if !strings.Contains(help.stdout, "--"+f.Name) {
			t.Errorf("start --help does not list --%s", f.Name)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0s" && f.DefValue != "0" &&
			!strings.Contains(section, "`"+strings.Trim(f.DefValue, `"`)+"`") {
			t.Errorf("docs/cli.md does not give start --%s's default %s", f.Name, f.DefValue)
		}
	})
}
