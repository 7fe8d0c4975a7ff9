package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/admin"
)

// TestClusterStatus runs `rockstream cluster status` against a running
// server with three workers: it prints the role, the frontier, each
// worker's bucket range and each shard, as /health reports them.
func TestClusterStatus(t *testing.T) {
	bin := binary(t)
	s := startServer(t, "--workers", "3")
	server := "http://" + s.httpAddr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host, port, _ := strings.Cut(s.pgAddr, ":")
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=ops sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"CREATE TABLE t (k int)", "INSERT INTO t VALUES (1)"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	out := runProg(t, t.TempDir(), "", bin, "cluster", "status", "--server", server)
	if out.exit != 0 {
		t.Fatalf("cluster status: exit %d\n%s", out.exit, out.stderr)
	}
	for _, line := range []string{
		`^role all, status ok, frontier 2$`,
		`^worker\s+role\s+buckets\s+count\s+state\s+applied epoch\s*$`,
		`^0\s+all\s+0-85\s+86\s+serving\s+2\s*$`,
		`^1\s+all\s+86-170\s+85\s+serving\s+2\s*$`,
		`^2\s+all\s+171-255\s+85\s+serving\s+2\s*$`,
		`^buckets\s+owner\s+frontier\s+lag epochs\s+lag ms\s*$`,
		`^0-85\s+0\s+2\s+0\s+0\s*$`,
		`^86-170\s+1\s+2\s+0\s+0\s*$`,
		`^171-255\s+2\s+2\s+0\s+0\s*$`,
	} {
		if !regexp.MustCompile(`(?m)` + line).MatchString(out.stdout) {
			t.Errorf("cluster status lacks %s:\n%s", line, out.stdout)
		}
	}
	out = runProg(t, t.TempDir(), "", bin, "cluster", "status", "--json", "--server", server)
	var h admin.Health
	if err := json.Unmarshal([]byte(out.stdout), &h); err != nil || h.Role != "all" || len(h.Workers) != 3 || len(h.Shards) != 3 || h.Frontier == nil || *h.Frontier != 2 {
		t.Fatalf("cluster status --json: %v\n%s", err, out.stdout)
	}
	if out := runProg(t, t.TempDir(), "", bin, "cluster", "status", "--server", "http://127.0.0.1:1"); out.exit == 0 || !strings.Contains(out.stderr, "cannot reach the server") {
		t.Fatalf("cluster status of no server: exit %d\n%s", out.exit, out.stderr)
	}
	if out := runProg(t, t.TempDir(), "", bin, "cluster", "status", "--help"); out.exit != 0 || !strings.Contains(out.stdout, "rockstream_catalog.workers") {
		t.Fatalf("cluster status --help: exit %d\n%s", out.exit, out.stdout)
	}
}
