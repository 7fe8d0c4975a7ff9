package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// These tests run hostile statements against a server with a small
// --memory-limit: each fails with 53200 while another session keeps
// being served, the server's resident set stays under the limit, and
// the committed data is intact afterwards.

// rssWatch samples a process's resident set from /proc until stopped.
type rssWatch struct {
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func watchRSS(t *testing.T, pid int) *rssWatch {
	w := &rssWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			if n := processRSS(pid); n > w.peak.Load() {
				w.peak.Store(n)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(w.end)
	return w
}

func (w *rssWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// processRSS reads VmRSS of pid from /proc/PID/status, in bytes.
func processRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func connectTo(t *testing.T, s *server) *pgx.Conn {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.pgAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=rockstream sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// bystander runs a small query on its own session until stopped,
// counting its answers and reporting the first failure.
func bystander(t *testing.T, s *server, query, want string) (stop func() int) {
	conn := connectTo(t, s)
	var (
		served atomic.Int64
		wg     sync.WaitGroup
		fail   atomic.Value
	)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			var got string
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err := conn.QueryRow(ctx, query).Scan(&got)
			cancel()
			if err != nil || got != want {
				fail.CompareAndSwap(nil, fmt.Sprintf("%s: %q, %v", query, got, err))
				return
			}
			served.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() int {
		close(done)
		wg.Wait()
		if f := fail.Load(); f != nil {
			t.Errorf("the other session was not served: %v", f)
		}
		return int(served.Load())
	}
}

// wantOutOfMemory checks that err is 53200 with a DETAIL naming the
// limit.
func wantOutOfMemory(t *testing.T, what string, err error) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53200" {
		t.Fatalf("%s: want 53200 out of memory, got %v", what, err)
	}
	if pe.Message != "out of memory" || !strings.Contains(pe.Detail, "--memory-limit") || pe.Hint == "" {
		t.Errorf("%s: message %q, detail %q, hint %q", what, pe.Message, pe.Detail, pe.Hint)
	}
}

func TestMemoryLimitStopsHostileQueries(t *testing.T) {
	const limit = 192 << 20
	s := startServer(t, "--storage", t.TempDir(), "--cache-size", "8MB", "--memory-limit", "192MB")
	rss := watchRSS(t, s.cmd.Process.Pid)
	conn := connectTo(t, s)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE t (a int, b int)",
		"INSERT INTO t SELECT g % 10, g FROM generate_series(1, 200) g",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	stop := bystander(t, s, "SELECT count(*)::text || ',' || sum(b)::text FROM t", "200,20100")
	join20 := "SELECT count(*) FROM t t1"
	for i := 2; i <= 20; i++ {
		join20 += fmt.Sprintf(" JOIN t t%d USING (a)", i)
	}
	for _, h := range []struct{ name, query string }{
		{"cross join", "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b"},
		{"20-way self join with duplicate keys", join20},
		{"doubling recursion", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n * 2 + x FROM r, (VALUES (0), (1)) v(x)) SELECT count(*) FROM r"},
	} {
		start := time.Now()
		_, err := conn.Exec(ctx, h.query)
		wantOutOfMemory(t, h.name, err)
		var pe *pgconn.PgError
		errors.As(err, &pe)
		t.Logf("%s: stopped after %v, peak RSS %dMB: %s", h.name, time.Since(start).Round(time.Millisecond), rss.peak.Load()>>20, pe.Detail)
	}
	if n := stop(); n == 0 {
		t.Error("the other session was never answered while the hostile queries ran")
	}
	var got string
	if err := conn.QueryRow(ctx, "SELECT count(*)::text || ',' || sum(b)::text FROM t").Scan(&got); err != nil || got != "200,20100" {
		t.Fatalf("after the hostile queries the same session reads %q, %v", got, err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (1, 1)"); err != nil {
		t.Fatalf("the server no longer writes: %v", err)
	}
	// A result larger than the limit streams: 40,000 rows of 5kB, 200MB
	// in all, reach the client while the server holds a chunk at a time.
	if _, err := conn.Exec(ctx, "INSERT INTO t SELECT -1, g FROM generate_series(1000, 40999) g"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "SELECT b, repeat('x', 5000) FROM t WHERE a = -1", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var n, bytes int
	for rows.Next() {
		var b int
		var s string
		if err := rows.Scan(&b, &s); err != nil {
			t.Fatal(err)
		}
		n, bytes = n+1, bytes+len(s)
	}
	if err := rows.Err(); err != nil || n != 40000 || bytes != 40000*5000 {
		t.Fatalf("a 200MB streamed result: %d rows of %d bytes, %v", n, bytes, err)
	}
	t.Logf("200MB streamed result: peak RSS %dMB", rss.peak.Load()>>20)
	rss.end()
	if p := rss.peak.Load(); p >= limit {
		t.Errorf("peak RSS %dMB reached the %dMB limit", p>>20, limit>>20)
	}
}

func TestMemoryLimitHugeLiteralAndCopyField(t *testing.T) {
	// The 60MB message itself is held twice while it is received (the
	// protocol buffer and the query text): the limit leaves room for
	// that, and none for the parser's eight copies of it.
	const limit = 320 << 20
	s := startServer(t, "--cache-size", "8MB", "--memory-limit", "320MB")
	rss := watchRSS(t, s.cmd.Process.Pid)
	conn := connectTo(t, s)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE big (id int, s text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO big VALUES (1, 'small')"); err != nil {
		t.Fatal(err)
	}
	stop := bystander(t, s, "SELECT s FROM big WHERE id = 1", "small")
	huge := strings.Repeat("x", 60<<20)
	_, err := conn.Exec(ctx, "SELECT length('"+huge+"')", pgx.QueryExecModeSimpleProtocol)
	wantOutOfMemory(t, "a 60MB literal", err)
	t.Logf("60MB literal: peak RSS %dMB", rss.peak.Load()>>20)
	_, err = conn.PgConn().CopyFrom(ctx, strings.NewReader("2\t"+huge+"\n"), "COPY big FROM STDIN")
	wantOutOfMemory(t, "a 60MB COPY field", err)
	t.Logf("60MB COPY field: peak RSS %dMB", rss.peak.Load()>>20)
	if n := stop(); n == 0 {
		t.Error("the other session was never answered")
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM big").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after the refused COPY the table holds %d rows, %v", n, err)
	}
	// A field the limit allows is copied.
	if _, err := conn.PgConn().CopyFrom(ctx, strings.NewReader("3\t"+huge[:4<<20]+"\n"), "COPY big FROM STDIN"); err != nil {
		t.Fatalf("a 4MB COPY field: %v", err)
	}
	rss.end()
	if p := rss.peak.Load(); p >= limit {
		t.Errorf("peak RSS %dMB reached the %dMB limit", p>>20, limit>>20)
	}
}
