package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/runtime"
)

// readBundle returns the files of a support bundle by name.
func readBundle(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(h.Name, "rockstream-support/")] = string(b)
	}
}

// auditEvents decodes JSON lines of audit events.
func auditEvents(t *testing.T, out string) []runtime.AuditEvent {
	t.Helper()
	var evs []runtime.AuditEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev runtime.AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestOperatorCommands runs explain, audit tail, resource usage and
// support bundle against a running server, and audit tail and support
// bundle on its stopped storage directory.
func TestOperatorCommands(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	s := startServer(t, "--storage", data)
	server := "http://" + s.httpAddr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	host, port, _ := strings.Cut(s.pgAddr, ":")
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=ops dbname=shop sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const password = "s3cr3t-pw"
	for _, q := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int)",
		"INSERT INTO t SELECT i, i % 4 FROM generate_series(1, 500) i",
		"CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n FROM t GROUP BY g",
		"CREATE ROLE alice WITH LOGIN PASSWORD '" + password + "'",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (k int)"); err == nil {
		t.Fatal("creating t twice succeeded")
	}
	must := func(args ...string) outcome {
		t.Helper()
		out := runProg(t, dir, "", bin, args...)
		if out.exit != 0 {
			t.Fatalf("rockstream %s: exit %d\n%s%s", strings.Join(args, " "), out.exit, out.stdout, out.stderr)
		}
		return out
	}
	url := "file://" + filepath.Join(dir, "backups")
	must("checkpoint", "create", "--server", server, "--to", url)

	// explain
	out := must("explain", "per_g", "--server", server)
	if !strings.Contains(out.stdout, "aggregate  group=[t.g]") || strings.Contains(out.stdout, "state:") {
		t.Fatalf("explain per_g:\n%s", out.stdout)
	}
	out = must("explain", "PER_G", "--estimate", "--server", server)
	if !strings.Contains(out.stdout, "[state: 4 keys") || !strings.Contains(out.stdout, "estimated state: 4 keys") ||
		!strings.Contains(out.stdout, "State (measured): 4 keys") {
		t.Fatalf("explain per_g --estimate:\n%s", out.stdout)
	}
	if out := runProg(t, dir, "", bin, "explain", "t", "--server", server); out.exit != 1 || !strings.Contains(out.stderr, "is a table") {
		t.Fatalf("explain of a table: exit %d\n%s", out.exit, out.stderr)
	}
	if out := runProg(t, dir, "", bin, "explain", "x; DROP TABLE t", "--server", server); out.exit != 1 || !strings.Contains(out.stderr, "22023") {
		t.Fatalf("explain of a bad name: exit %d\n%s", out.exit, out.stderr)
	}

	// audit tail
	out = must("audit", "tail", "--server", server)
	if strings.Contains(out.stdout, password) {
		t.Fatalf("the audit log holds the password:\n%s", out.stdout)
	}
	evs := auditEvents(t, out.stdout)
	var kinds []string
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) || ev.Time.IsZero() {
			t.Fatalf("event %d: %+v", i, ev)
		}
		kinds = append(kinds, ev.Kind+"/"+ev.Outcome)
	}
	want := []string{"ddl/ok", "ddl/ok", "role/ok", "ddl/error", "checkpoint/ok"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("audit kinds %v, want %v:\n%s", kinds, want, out.stdout)
	}
	if evs[0].Role != "ops" || evs[3].SQLState != "42P07" || !strings.Contains(evs[2].Statement, "PASSWORD '********'") ||
		!strings.HasPrefix(evs[4].Role, "http 127.0.0.1:") || evs[4].Object != url || !strings.Contains(evs[4].Detail, "of epoch") {
		t.Fatalf("audit events:\n%s", out.stdout)
	}
	if out := must("audit", "tail", "-n", "1", "--server", server); len(auditEvents(t, out.stdout)) != 1 {
		t.Fatalf("audit tail -n 1:\n%s", out.stdout)
	}
	if out := runProg(t, dir, "", bin, "audit", "tail", "--server", server, "--storage", data); out.exit != 2 || !strings.Contains(out.stderr, "not both") {
		t.Fatalf("audit tail --server --storage: exit %d\n%s", out.exit, out.stderr)
	}
	// --follow prints what comes after.
	follow := exec.Command(bin, "audit", "tail", "-n", "0", "--follow", "--server", server)
	pipe, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		follow.Process.Signal(syscall.SIGTERM)
		follow.Wait()
	}()
	time.Sleep(300 * time.Millisecond)
	if _, err := conn.Exec(ctx, "DROP MATERIALIZED VIEW per_g"); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		if sc.Scan() {
			lines <- sc.Text()
		}
	}()
	select {
	case line := <-lines:
		if ev := auditEvents(t, line); ev[0].Seq != 6 || ev[0].Statement != "DROP MATERIALIZED VIEW per_g" {
			t.Fatalf("audit tail --follow printed %s", line)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("audit tail --follow printed nothing after a DROP")
	}
	if _, err := conn.Exec(ctx, "CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n FROM t GROUP BY g"); err != nil {
		t.Fatal(err)
	}

	// resource usage
	out = must("resource", "usage", "--server", server)
	if !strings.Contains(out.stdout, "memory: rss ") || !strings.Contains(out.stdout, "disk: ") ||
		!regexp.MustCompile(`(?m)^per_g\s+materialized view\s+4\s`).MatchString(out.stdout) ||
		!regexp.MustCompile(`(?m)^t\s+table\s+500\s`).MatchString(out.stdout) {
		t.Fatalf("resource usage:\n%s", out.stdout)
	}
	out = must("resource", "usage", "--json", "--server", server)
	var u runtime.ResourceUsage
	if err := json.Unmarshal([]byte(out.stdout), &u); err != nil || len(u.Relations) != 2 || u.Relations[0].StateKeys != 4 || u.Disk == nil || u.Disk.TotalBytes == 0 {
		t.Fatalf("resource usage --json: %v\n%s", err, out.stdout)
	}

	// A source whose connection string holds a password, failing to
	// connect: its state change is audited, once, and no password is
	// written anywhere.
	const dsnPassword = "hunter2-pw"
	if _, err := conn.Exec(ctx, "CREATE SOURCE src FROM POSTGRES (connection = 'host=127.0.0.1 port=1 user=u password="+dsnPassword+" dbname=x') FOR TABLES (t)"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out = must("audit", "tail", "-n", "2", "--server", server)
		evs := auditEvents(t, out.stdout)
		if evs[len(evs)-1].Kind == "connector" {
			ev := evs[len(evs)-1]
			if ev.Object != "src" || ev.Outcome != "error" || ev.Role != "server" || !strings.Contains(ev.Detail, "source failed") ||
				!strings.Contains(evs[0].Statement, "password=********") {
				t.Fatalf("connector audit:\n%s", out.stdout)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connector event in the audit log:\n%s", out.stdout)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// support bundle
	bundle := filepath.Join(dir, "bundle.tar.gz")
	must("support", "bundle", "-o", bundle, "--server", server)
	files := readBundle(t, bundle)
	for _, name := range []string{"version.json", "health.json", "metrics.txt", "catalog.json", "resources.json", "logs.txt", "audit.jsonl"} {
		if files[name] == "" {
			t.Errorf("the bundle has no %s (it has %v)", name, slices.Sorted(func(yield func(string) bool) {
				for k := range files {
					if !yield(k) {
						return
					}
				}
			}))
		}
	}
	for name, body := range files {
		if strings.Contains(body, password) || strings.Contains(body, dsnPassword) {
			t.Errorf("%s in the bundle holds a password", name)
		}
	}
	if !strings.Contains(files["catalog.json"], "per_g") || !strings.Contains(files["metrics.txt"], "rockstream_") ||
		!strings.Contains(files["logs.txt"], `"msg":"ready"`) || !strings.Contains(files["version.json"], testVersion) {
		t.Fatalf("bundle contents:\ncatalog: %s\nlogs: %s", files["catalog.json"], files["logs.txt"])
	}

	// The stopped store: audit tail and a bundle with a doctor report.
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(30 * time.Second); code != 0 {
		t.Fatalf("server exited %d", code)
	}
	out = must("audit", "tail", "-n", "100", "--storage", data)
	if evs := auditEvents(t, out.stdout); len(evs) != 9 || evs[6].Kind != "ddl" || evs[8].Kind != "connector" {
		t.Fatalf("audit tail --storage:\n%s", out.stdout)
	}
	offline := filepath.Join(dir, "offline.tar.gz")
	must("support", "bundle", "-o", offline, "--server", "http://127.0.0.1:1", "--storage", data)
	files = readBundle(t, offline)
	if !strings.Contains(files["doctor.txt"], "healthy") || !strings.Contains(files["errors.txt"], "cannot reach the server") ||
		strings.Count(files["audit.jsonl"], "\n") != 9 {
		t.Fatalf("offline bundle: %v", files)
	}
	if out := runProg(t, dir, "", bin, "support", "bundle", "-o", offline, "--server", "http://127.0.0.1:1"); out.exit != 1 || !strings.Contains(out.stderr, "nothing could be collected") {
		t.Fatalf("bundle with nothing to collect: exit %d\n%s", out.exit, out.stderr)
	}
}
