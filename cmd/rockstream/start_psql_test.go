package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// psqlConn returns the connection string of a psql client of s.
func (s *server) psqlConn(user, app string) string {
	host, port, _ := strings.Cut(s.pgAddr, ":")
	return fmt.Sprintf("host=%s port=%s user=%s dbname=shop application_name=%s sslmode=disable", host, port, user, app)
}

// psql runs psql against s and returns its CSV output.
func (s *server) psql(user, sql string) string {
	s.t.Helper()
	psql, err := exec.LookPath("psql")
	if err != nil {
		s.t.Skip("psql is not installed")
	}
	out := runProg(s.t, s.t.TempDir(), "", psql, "-X", "-q", "--csv", "-v", "ON_ERROR_STOP=1", s.psqlConn(user, "e2e"), "-c", sql)
	if out.exit != 0 {
		s.t.Fatalf("psql -c %q: exit %d\n%s", sql, out.exit, out.stderr)
	}
	return out.stdout
}

// TestStartWithPsql writes and reads through `rockstream start` with psql:
// the metrics follow the writes, a second client shows up in
// rockstream_catalog.sessions with what it is doing, and SIGTERM with that
// client in an open transaction still exits 0, keeping what was committed
// and nothing of the open transaction.
func TestStartWithPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	data := filepath.Join(t.TempDir(), "data")
	s := startServer(t, "--storage", data, "--shutdown-timeout", "3s")
	epoch0, _ := s.metric("rockstream_committed_epoch")

	s.psql("alice", `CREATE TABLE orders (id int PRIMARY KEY, store int, amount numeric(10,2))`)
	s.psql("alice", `CREATE MATERIALIZED VIEW per_store AS SELECT store, count(*) AS n, sum(amount) AS total FROM orders GROUP BY store`)
	s.psql("alice", `INSERT INTO orders VALUES (1, 1, 10), (2, 1, 250), (3, 2, 5)`)
	if got := s.psql("alice", "SELECT * FROM per_store ORDER BY store"); got != "store,n,total\n1,2,260.00\n2,1,5.00\n" {
		t.Fatalf("per_store through psql:\n%s", got)
	}
	for series, want := range map[string]float64{
		"rockstream_committed_epoch":                     epoch0 + 3,
		"rockstream_epochs_committed_total":              3,
		"rockstream_epoch_commit_duration_seconds_count": 3,
		`rockstream_rows_written_total{op="insert"}`:     3,
		`rockstream_statements_total{kind="ddl"}`:        2,
		`rockstream_view_rows{view="per_store"}`:         2,
		"rockstream_gateway_connections_accepted_total":  4,
	} {
		if got, ok := s.metric(series); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}

	// A second client opens a transaction and stays connected.
	holder := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", s.psqlConn("bob", "holder"))
	holder.Env = append(os.Environ(), "PSQLRC=/dev/null")
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var holderErr strings.Builder
	holder.Stderr = &holderErr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	// The echo tells when psql has run the statements before it.
	fmt.Fprintln(stdin, "BEGIN; INSERT INTO orders VALUES (4, 3, 99); \\echo inserted")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "inserted\n" {
		t.Fatalf("holder: %q, %v\n%s", line, err, holderErr.String())
	}

	got := s.psql("alice", `SELECT user_name, database, application_name, client_addr, client_port > 0, state, query
		FROM rockstream_catalog.sessions WHERE application_name = 'holder'`)
	if want := "user_name,database,application_name,client_addr,?column?,state,query\nbob,shop,holder,127.0.0.1,t,idle in transaction,\"INSERT INTO orders VALUES (4, 3, 99);\"\n"; got != want {
		t.Errorf("the holder in rockstream_catalog.sessions:\n%s\nwant:\n%s", got, want)
	}
	got = s.psql("alice", `SELECT state, query FROM rockstream_catalog.sessions WHERE user_name = 'alice'`)
	if !strings.HasPrefix(got, "state,query\nactive,\"SELECT state, query FROM rockstream_catalog.sessions") {
		t.Errorf("the reading session in rockstream_catalog.sessions:\n%s", got)
	}
	// The psql runs above have exited, but the server may not have seen
	// their connections close yet: wait (bounded) for the count to settle.
	v, _ := s.metric("rockstream_gateway_connections")
	for deadline := time.Now().Add(5 * time.Second); v != 1 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		v, _ = s.metric("rockstream_gateway_connections")
	}
	if v != 1 {
		t.Errorf("rockstream_gateway_connections = %v with one client connected, want 1", v)
	}
	if got := s.psql("alice", "SELECT count(*) FROM orders"); got != "count\n3\n" {
		t.Errorf("another session sees the open transaction's row: %q", got)
	}

	began := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM with a client in a transaction:\n%s", code, s.stderr())
	}
	t.Logf("stopped after %s", time.Since(began))
	stdin.Close()
	io.Copy(io.Discard, stdout)
	holder.Wait()

	if got := sqlMust(t, data, "SELECT * FROM orders ORDER BY id"); got != "id,store,amount\n1,1,10.00\n2,1,250.00\n3,2,5.00\n" {
		t.Fatalf("orders after the server stopped:\n%s", got)
	}
	if err := runProg(t, t.TempDir(), "", binary(t), "doctor", "--storage", data, "--deep"); err.exit != 0 {
		t.Fatalf("doctor after the server stopped: exit %d\n%s", err.exit, err.stdout)
	}
}

// TestStartGatewayFlags checks that the gateway flags of `rockstream start`
// reach the gateway: password authentication against --users-file, the
// connection limit, the statement timeout, and TLS.
func TestStartGatewayFlags(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, []byte("alice:wonder land\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, key := selfSigned(t, dir)
	s := startServer(t, "--auth", "scram-sha-256", "--users-file", users, "--max-connections", "1",
		"--statement-timeout", "30s", "--tls-cert", cert, "--tls-key", key)
	host, port, _ := strings.Cut(s.pgAddr, ":")
	run := func(conn, sql string) outcome {
		return runProg(t, dir, "", psql, "-X", "-q", "--csv", "-v", "ON_ERROR_STOP=1",
			fmt.Sprintf("host=%s port=%s dbname=shop %s", host, port, conn), "-c", sql)
	}

	out := run("user=alice password='wonder land' sslmode=require", "SHOW statement_timeout")
	if out.exit != 0 || out.stdout != "statement_timeout\n30s\n" {
		t.Errorf("SHOW statement_timeout over TLS: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
	}
	out = run("user=alice password=wrong sslmode=require", "SELECT 1")
	if out.exit == 0 || !strings.Contains(out.stderr, `password authentication failed for user "alice"`) {
		t.Errorf("a wrong password: exit %d\n%s", out.exit, out.stderr)
	}
	if v, _ := s.metric("rockstream_gateway_connections_rejected_total"); v != 1 {
		t.Errorf("rockstream_gateway_connections_rejected_total = %v after one failed login, want 1", v)
	}

	// With one client connected, a second is refused.
	holder := exec.Command(psql, "-X", "-q", fmt.Sprintf("host=%s port=%s dbname=shop user=alice password='wonder land'", host, port))
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
	fmt.Fprintln(stdin, "\\echo connected")
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "connected\n" {
		t.Fatalf("holder: %q, %v", line, err)
	}
	out = run("user=alice password='wonder land'", "SELECT 1")
	if out.exit == 0 || !strings.Contains(out.stderr, "sorry, too many clients already") {
		t.Errorf("a second client with --max-connections 1: exit %d\n%s", out.exit, out.stderr)
	}
	stdin.Close()
	io.Copy(io.Discard, stdout)
	holder.Wait()

	s.cmd.Process.Signal(syscall.SIGINT)
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d after SIGINT:\n%s", code, s.stderr())
	}
}

// TestStartShutdownBound stops a server while a client runs a long
// statement: the server exits within --shutdown-timeout plus the grace
// for cancelled statements, either gracefully (the statement stopped when
// cancelled) or with status 1 naming the statement that did not stop.
func TestStartShutdownBound(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	data := filepath.Join(t.TempDir(), "data")
	s := startServer(t, "--storage", data, "--shutdown-timeout", "1s")
	s.psql("alice", "CREATE TABLE kept (a int)")
	s.psql("alice", "INSERT INTO kept VALUES (1)")
	const long = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 50000000) SELECT count(*) FROM r"
	client := exec.Command(psql, "-X", "-q", s.psqlConn("bob", "long"),
		"-c", "SET rockstream.max_recursion_iterations = 100000000", "-c", long)
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		client.Process.Kill()
		client.Wait()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.psql("alice", "SELECT state FROM rockstream_catalog.sessions WHERE application_name = 'long'"), "active") {
		if time.Now().After(deadline) {
			t.Fatal("the long statement never showed as active")
		}
		time.Sleep(50 * time.Millisecond)
	}

	began := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	code := s.wait(time.Second + cancelGrace + 10*time.Second)
	took := time.Since(began)
	t.Logf("exit %d after %s", code, took)
	switch code {
	case 0:
	case exitFailed:
		if l := s.logLine("session still running"); l == nil || l["query"] != long {
			t.Errorf("exit 1 without naming the statement that did not stop:\n%s", s.stderr())
		}
	default:
		t.Fatalf("exit %d:\n%s", code, s.stderr())
	}
	if got := sqlMust(t, data, "SELECT * FROM kept"); got != "a\n1\n" {
		t.Fatalf("committed data after the shutdown: %q", got)
	}
}
