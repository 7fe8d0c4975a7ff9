package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var spillRows = flag.Int("spill-rows", 400_000, "rows of TestSpillUnderMemoryLimit's table (10000000 for docs/BENCHMARKS.md's run)")

// tempFiles returns the files under dir (none when it does not exist).
func tempFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// TestSpillUnderMemoryLimit: against a server with --memory-limit 192MB,
// a GROUP BY of as many groups as rows and an ORDER BY of the whole
// table, each far larger than the limit in memory, complete at work_mem
// = 4MB by spilling to <storage>/tmp, with the server's resident set
// under the limit; /metrics counts them, and no temporary file is left
// after them, nor after a server killed while a statement spilled and
// started again.
func TestSpillUnderMemoryLimit(t *testing.T) {
	const limit = 192 << 20
	n := *spillRows
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	// Loaded by a server without the limit (the store's own memory grows
	// with the table), queried by one with it.
	s := startServer(t, "--storage", dir, "--durability", "relaxed")
	conn := connectTo(t, s)
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE t (id bigint PRIMARY KEY, g int, v int)")
	start := time.Now()
	for lo := 1; lo <= n; lo += 250_000 {
		exec(fmt.Sprintf("INSERT INTO t SELECT i, i %% 1000, i %% 97 FROM generate_series(%d, %d) i", lo, min(lo+250_000-1, n)))
	}
	t.Logf("%d rows loaded in %v", n, time.Since(start).Round(time.Millisecond))
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.wait(5 * time.Minute)
	s = startServer(t, "--storage", dir, "--cache-size", "8MB", "--memory-limit", "192MB")
	conn = connectTo(t, s)
	exec("SET work_mem = '4MB'")
	sumV := 0
	var last []string // the last rows of ORDER BY v DESC, id: v = 0, largest ids
	for i := 1; i <= n; i++ {
		sumV += i % 97
		if i%97 == 0 {
			last = append(last, fmt.Sprintf("%d|%d|0", i, i%1000))
		}
	}
	last = last[len(last)-5:]
	rss := watchRSS(t, s.cmd.Process.Pid)
	base := processRSS(s.cmd.Process.Pid)

	start = time.Now()
	var count, sumC, sumS int64
	if err := conn.QueryRow(ctx, "SELECT count(*), sum(c), sum(s) FROM (SELECT id, count(*) c, sum(v) s FROM t GROUP BY id) x").Scan(&count, &sumC, &sumS); err != nil {
		t.Fatalf("GROUP BY id: %v", err)
	}
	if count != int64(n) || sumC != int64(n) || sumS != int64(sumV) {
		t.Errorf("GROUP BY id: %d, %d, %d; want %d, %d, %d", count, sumC, sumS, n, n, sumV)
	}
	t.Logf("GROUP BY id of %d rows: %v, peak RSS %dMB (%dMB before)", n, time.Since(start).Round(time.Millisecond), rss.peak.Load()>>20, base>>20)

	start = time.Now()
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT id, g, v FROM t ORDER BY v DESC, id OFFSET %d", n-5))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id, g, v int64
		if err := rows.Scan(&id, &g, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d|%d|%d", id, g, v))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("ORDER BY: %v", err)
	}
	if strings.Join(got, " ") != strings.Join(last, " ") {
		t.Errorf("ORDER BY v DESC, id OFFSET %d: %v, want %v", n-5, got, last)
	}
	t.Logf("ORDER BY of %d rows: %v, peak RSS %dMB", n, time.Since(start).Round(time.Millisecond), rss.peak.Load()>>20)
	rss.end()
	if p := rss.peak.Load(); p >= limit {
		t.Errorf("peak RSS %dMB, past the limit of %dMB", p>>20, limit>>20)
	}
	if v, ok := s.metric("rockstream_spill_statements_total"); !ok || v < 2 {
		t.Errorf("rockstream_spill_statements_total = %v (%v), want at least 2", v, ok)
	}
	if left := tempFiles(tmp); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// Killed while a statement spills: the files stay until the server
	// starts again.
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "SELECT count(*) FROM (SELECT DISTINCT id, v FROM t) x")
		done <- err
	}()
	deadline := time.Now().Add(60 * time.Second)
	for len(tempFiles(tmp)) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(tempFiles(tmp)) == 0 {
		t.Fatal("the statement never spilled")
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.wait(30 * time.Second)
	<-done
	s = startServer(t, "--storage", dir, "--cache-size", "8MB", "--memory-limit", "192MB")
	if left := tempFiles(tmp); len(left) > 0 {
		t.Errorf("temporary files left after a restart: %v", left)
	}
	conn = connectTo(t, s)
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&count); err != nil || count != int64(n) {
		t.Errorf("after the restart: %d rows, %v", count, err)
	}
}
