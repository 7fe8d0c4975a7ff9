package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/lake"
	"github.com/rockstream/rockstream/internal/runtime"
)

// TestLakeCommand runs `rockstream lake` in process on free ports,
// attaches as a client, and reads /health and /metrics.
func TestLakeCommand(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"lake", "--storage", dir, "--pg-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
			"--data-path", "s3://bucket/lake/"}, strings.NewReader(""), pw, io.Discard)
		pw.Close()
	}()
	var pgAddr, httpAddr string
	sc := bufio.NewScanner(pr)
	for (pgAddr == "" || httpAddr == "") && sc.Scan() {
		line := sc.Text()
		if m := regexp.MustCompile(`HTTP on http://(\S+)`).FindStringSubmatch(line); m != nil {
			httpAddr = m[1]
		}
		if m := regexp.MustCompile(` on (127\.0\.0\.1:\d+) \(revision (\d+)\)`).FindStringSubmatch(line); m != nil {
			pgAddr = m[1]
			if m[2] != "1" {
				t.Errorf("a new lake starts at revision %s, want 1 (the bootstrap)", m[2])
			}
		}
	}
	go io.Copy(io.Discard, pr)
	if pgAddr == "" || httpAddr == "" {
		t.Fatalf("rockstream lake printed no addresses")
	}

	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	conn, err := pgconn.Connect(cctx, "postgres://duckdb@"+pgAddr+"/lake?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Exec(cctx, `SELECT "key", "value" FROM "public"."ducklake_metadata" WHERE "key" = 'data_path'`).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || string(res[0].Rows[0][1]) != "s3://bucket/lake/" {
		t.Fatalf("data_path row: %+v", res)
	}
	_, err = conn.Exec(cctx, `SELECT * FROM pg_stat_activity`).ReadAll()
	var pgErr *pgconn.PgError
	if err == nil || !asPgError(err, &pgErr) || pgErr.Code != "0A000" {
		t.Fatalf("unsupported statement: err %v, want 0A000", err)
	}
	// A DuckLake-shaped commit: snapshot 1.
	if _, err = conn.Exec(cctx, `BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;INSERT INTO "public".ducklake_snapshot VALUES (1, NOW(), 1, 1, 0);COMMIT`).ReadAll(); err != nil {
		t.Fatal(err)
	}
	conn.Close(cctx)

	resp, err := http.Get("http://" + httpAddr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || h["status"] != "ok" || h["tables"] != float64(28) {
		t.Errorf("/health: %d %v", resp.StatusCode, h)
	}
	resp, err = http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`rocklake_statements_total{kind="select"} 1`, `rocklake_statements_total{kind="unsupported"} 1`, "rocklake_commits_total 1"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// An online checkpoint of the running lake (POST /admin/checkpoint),
	// restored: the restored lake holds snapshot 1.
	online := "file://" + t.TempDir()
	var out strings.Builder
	if code := run(context.Background(), []string{"checkpoint", "create", "--server", "http://" + httpAddr, "--to", online}, strings.NewReader(""), &out, &out); code != exitOK ||
		!strings.Contains(out.String(), "of epoch 2 ") {
		t.Fatalf("checkpoint create --server: exit %d\n%s", code, out.String())
	}
	onlineDir := t.TempDir() + "/online"
	if code := run(context.Background(), []string{"checkpoint", "restore", "--from", online, "--storage", onlineDir}, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
		t.Fatalf("checkpoint restore of the online checkpoint: exit %d", code)
	}
	out.Reset()
	if code := run(context.Background(), []string{"doctor", "--storage", onlineDir}, strings.NewReader(""), &out, &out); code != exitOK ||
		!strings.Contains(out.String(), "2 DuckLake snapshots (latest 1)") || !strings.Contains(out.String(), "healthy") {
		t.Fatalf("doctor of the restored online checkpoint: exit %d\n%s", code, out.String())
	}
	cancel()
	if code := <-exit; code != exitOK {
		t.Errorf("exit status %d", code)
	}

	// doctor and checkpoint create|restore work on the lake directory.
	var buf strings.Builder
	if code := run(context.Background(), []string{"doctor", "--storage", dir}, strings.NewReader(""), &buf, &buf); code != exitOK ||
		!strings.Contains(buf.String(), "durable up to lake revision 2 ") ||
		!strings.Contains(buf.String(), "lake: revision 2 (2 commits)") ||
		!strings.Contains(buf.String(), "2 DuckLake snapshots (latest 1)") || !strings.Contains(buf.String(), "healthy") {
		t.Fatalf("doctor: exit %d\n%s", code, buf.String())
	}
	backup := "file://" + t.TempDir()
	buf.Reset()
	if code := run(context.Background(), []string{"checkpoint", "create", "--storage", dir, "--to", backup}, strings.NewReader(""), &buf, io.Discard); code != exitOK ||
		!strings.Contains(buf.String(), "lake revision 2") {
		t.Fatalf("checkpoint create: exit %d\n%s", code, buf.String())
	}
	restored := t.TempDir() + "/restored"
	if code := run(context.Background(), []string{"checkpoint", "restore", "--from", backup, "--storage", restored}, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
		t.Fatalf("checkpoint restore: exit %d", code)
	}
	buf.Reset()
	if code := run(context.Background(), []string{"doctor", "--storage", restored}, strings.NewReader(""), &buf, &buf); code != exitOK ||
		!strings.Contains(buf.String(), "28 tables") || !strings.Contains(buf.String(), "durable up to lake revision 2 ") {
		t.Fatalf("doctor of the restored lake: exit %d\n%s", code, buf.String())
	}
}

// TestLakeEpochKey: the lake records its revision under the engine's
// frontier key, the epoch key doctor and checkpoint open every store
// with before they know what it holds.
func TestLakeEpochKey(t *testing.T) {
	if !bytes.Equal(lake.EpochKey(), runtime.FrontierKey()) {
		t.Fatalf("lake.EpochKey() = %q, runtime.FrontierKey() = %q", lake.EpochKey(), runtime.FrontierKey())
	}
}

func asPgError(err error, target **pgconn.PgError) bool {
	pe, ok := err.(*pgconn.PgError)
	if ok {
		*target = pe
	}
	return ok
}
