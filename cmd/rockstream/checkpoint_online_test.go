package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCheckpointOnline checkpoints a running server with `checkpoint
// create --server` and CHECKPOINT TO while a client writes, keeps two
// checkpoints, restores the latest and compares it with what the server
// had committed at its epoch.
func TestCheckpointOnline(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sqlMust(t, data, `CREATE TABLE t (k int PRIMARY KEY, g int);
CREATE MATERIALIZED VIEW c AS SELECT g, count(*) AS n FROM t GROUP BY g;
INSERT INTO t SELECT i, i % 3 FROM generate_series(1, 1000) i`)
	s := startServer(t, "--storage", data)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	connect := func() *pgx.Conn {
		host, port, _ := strings.Cut(s.pgAddr, ":")
		conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=test dbname=shop sslmode=disable", host, port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		return conn
	}
	writer := connect()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := writer.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", 1000+i, i%3)); err != nil {
				writeErr = err
				return
			}
		}
	}()

	url := "file://" + filepath.Join(dir, "backups")
	server := "http://" + s.httpAddr
	epochRe := regexp.MustCompile(`^checkpoint (\S+) of epoch (\d+) at `)
	var epoch string
	var ids, epochs []string
	for i := range 3 {
		time.Sleep(50 * time.Millisecond)
		out := runProg(t, dir, "", bin, "checkpoint", "create", "--server", server, "--to", url, "--keep", "2")
		if out.exit != 0 {
			t.Fatalf("checkpoint create --server: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
		}
		m := epochRe.FindStringSubmatch(out.stdout)
		if m == nil || !strings.Contains(out.stdout, "kept ") {
			t.Fatalf("checkpoint create --server printed:\n%s", out.stdout)
		}
		if i == 2 && !strings.Contains(out.stdout, "deleted 1 ") {
			t.Fatalf("the third checkpoint with --keep 2 deleted no checkpoint:\n%s", out.stdout)
		}
		epoch = m[2]
		ids, epochs = append(ids, m[1]), append(epochs, m[2])
	}
	close(stop)
	wg.Wait()
	if writeErr != nil {
		t.Fatal(writeErr)
	}

	restored := filepath.Join(dir, "restored")
	if out := runProg(t, dir, "", bin, "checkpoint", "restore", "--from", url, "--storage", restored); out.exit != 0 {
		t.Fatalf("checkpoint restore: exit %d\n%s", out.exit, out.stderr)
	}
	got := sqlMust(t, restored, "SELECT g, count(*) AS n FROM t GROUP BY g ORDER BY g;\nSELECT g, n FROM c ORDER BY g;\nSHOW rockstream.frontier")
	reader := connect()
	var want strings.Builder
	want.WriteString("g,n\n")
	rows, err := reader.Query(ctx, "SELECT g, n FROM c AS OF EPOCH "+epoch+" ORDER BY g")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var g, n int64
		if err := rows.Scan(&g, &n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&want, "%d,%d\n", g, n)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	wantAll := want.String() + want.String() + "rockstream.frontier\n" + epoch + "\n"
	if got != wantAll {
		t.Fatalf("restored checkpoint of epoch %s:\n%s\nthe server at that epoch:\n%s", epoch, got, wantAll)
	}

	// The two kept checkpoints are listed; the older restores by id.
	out := runProg(t, dir, "", bin, "checkpoint", "list", "--from", url)
	if out.exit != 0 || strings.Count(out.stdout, "\n") != 3 || !strings.Contains(out.stdout, ids[1]) ||
		!regexp.MustCompile(ids[2]+`.*latest`).MatchString(out.stdout) || strings.Contains(out.stdout, ids[0]) {
		t.Fatalf("checkpoint list: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
	}
	older := filepath.Join(dir, "older")
	if out := runProg(t, dir, "", bin, "checkpoint", "restore", "--from", url, "--id", ids[1], "--storage", older); out.exit != 0 {
		t.Fatalf("checkpoint restore --id: exit %d\n%s", out.exit, out.stderr)
	}
	if got := sqlMust(t, older, "SHOW rockstream.frontier"); got != "rockstream.frontier\n"+epochs[1]+"\n" {
		t.Fatalf("checkpoint %s restored at %q, want epoch %s", ids[1], got, epochs[1])
	}

	// CHECKPOINT TO from a client takes one too; KEEP 1 deletes the two
	// kept before.
	var id string
	var ep int64
	var files, upFiles, upBytes, deleted int64
	if err := reader.QueryRow(ctx, "CHECKPOINT TO '"+url+"' KEEP 1").Scan(&id, &ep, &files, &upFiles, &upBytes, &deleted); err != nil {
		t.Fatal(err)
	}
	if deleted != 2 || files == 0 || ep < 1 {
		t.Fatalf("CHECKPOINT TO ... KEEP 1: %s epoch %d, %d files, %d deleted", id, ep, files, deleted)
	}

	for _, c := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"--storage", data, "--to", url}, 2, "use --server"},
		{[]string{"--server", server, "--storage", data, "--to", url}, 2, "one of --storage DIR or --server URL"},
		{[]string{"--server", server}, 2, "--to URL"},
		{[]string{"--server", "ftp://x", "--to", url}, 2, "not an HTTP address"},
		{[]string{"--server", server, "--to", "ftp://x/y"}, 1, "unsupported scheme"},
		{[]string{"--server", "http://127.0.0.1:1", "--to", url}, 1, "cannot reach the server"},
	} {
		out := runProg(t, dir, "", bin, append([]string{"checkpoint", "create"}, c.args...)...)
		if out.exit != c.exit || !strings.Contains(out.stderr, c.want) {
			t.Errorf("checkpoint create %s: exit %d, want %d with %q\n%s", strings.Join(c.args, " "), out.exit, c.exit, c.want, out.stderr)
		}
	}
}

// TestCheckpointInterval runs a server that checkpoints itself every
// 300ms, keeping two: the checkpoints are logged, audited and pruned, and
// the latest restores.
func TestCheckpointInterval(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sqlMust(t, data, "CREATE TABLE t (k int PRIMARY KEY); INSERT INTO t SELECT i FROM generate_series(1, 100) i")
	url := "file://" + filepath.Join(dir, "backups")
	s := startServer(t, "--storage", data, "--checkpoint-to", url, "--checkpoint-interval", "300ms", "--checkpoint-keep", "2")
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.mu.Lock()
		n := 0
		for _, l := range s.lines {
			if l["msg"] == "checkpoint created" {
				n++
			}
		}
		s.mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d checkpoints within 60s:\n%s", n, s.stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(30 * time.Second); code != 0 {
		t.Fatalf("server exited %d:\n%s", code, s.stderr())
	}
	out := runProg(t, dir, "", bin, "checkpoint", "list", "--from", url)
	if out.exit != 0 || strings.Count(out.stdout, "\n") != 3 {
		t.Fatalf("checkpoint list after --checkpoint-keep 2: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
	}
	out = runProg(t, dir, "", bin, "audit", "tail", "-n", "100", "--storage", data)
	if !strings.Contains(out.stdout, `"role":"server","kind":"checkpoint"`) {
		t.Fatalf("audit log:\n%s", out.stdout)
	}
	restored := filepath.Join(dir, "restored")
	if out := runProg(t, dir, "", bin, "checkpoint", "restore", "--from", url, "--storage", restored); out.exit != 0 {
		t.Fatalf("restore: exit %d\n%s", out.exit, out.stderr)
	}
	if got := sqlMust(t, restored, "SELECT count(*) FROM t"); got != "count\n100\n" {
		t.Fatalf("restored: %q", got)
	}
	for _, c := range [][]string{
		{"--checkpoint-to", url},
		{"--storage", data, "--checkpoint-to", url, "--checkpoint-interval", "0s"},
	} {
		out := runProg(t, dir, "", bin, append([]string{"start", "--pg-addr", "127.0.0.1:0", "--http-addr", ""}, c...)...)
		if out.exit != 2 || !strings.Contains(out.stderr, "--checkpoint-") {
			t.Errorf("start %v: exit %d\n%s", c, out.exit, out.stderr)
		}
	}
}
