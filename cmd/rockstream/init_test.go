package main

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/twmb/franz-go/pkg/kfake"
)

// initProject runs `rockstream init` in process and returns its exit status
// and stderr.
func initProject(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := run(context.Background(), append([]string{"init"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stderr.String()
}

// TestInitTemplates checks the files each template generates and the
// content that ties them to the flags.
func TestInitTemplates(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		files []string
		// want maps a file to strings it must contain.
		want map[string][]string
	}{{
		args:  nil,
		files: []string{"README.md", "cleanup.sh", "run.sh", "schema.sql", "verify.sh"},
		want: map[string][]string{
			"run.sh":     {"start --storage ./data", "--pg-addr '127.0.0.1:5432' --http-addr '127.0.0.1:6876'"},
			"schema.sql": {"CREATE TABLE orders", "CREATE MATERIALIZED VIEW sales_by_store", "INSERT INTO orders"},
			"verify.sh":  {"host=127.0.0.1 port=5432", "q -f schema.sql", "FROM sales_by_store"},
			"cleanup.sh": {"rm -rf ./data"},
			"README.md":  {"rockstream init --template local"},
		},
	}, {
		args:  []string{"--template", "kafka", "--kafka-brokers", "k1:9092,k2:9092", "--topic", "o'rders", "--pg-addr", "0.0.0.0:7000"},
		files: []string{"README.md", "cleanup.sh", "run.sh", "schema.sql", "verify.sh"},
		want: map[string][]string{
			"run.sh":     {"--pg-addr '0.0.0.0:7000'"},
			"schema.sql": {"FROM KAFKA (\n    brokers = 'k1:9092,k2:9092', topic = 'o''rders'", ") INTO orders;", "CREATE MATERIALIZED VIEW sales_by_store", "CREATE SINK sales_by_store_out FROM sales_by_store INTO KAFKA", "topic = 'o''rders_by_store'"},
			"verify.sh":  {"host=127.0.0.1 port=7000", "rockstream_catalog.sources"},
		},
	}, {
		args:  []string{"--template", "postgres-cdc", "--pg-connection", "postgres://cdc@db:5432/shop"},
		files: []string{"README.md", "cleanup.sh", "run.sh", "schema.sql", "upstream.sql", "verify.sh"},
		want: map[string][]string{
			"schema.sql":   {"CREATE SOURCE shop FROM POSTGRES (\n    connection = 'postgres://cdc@db:5432/shop'\n) FOR TABLES (customers, orders);", "CREATE MATERIALIZED VIEW revenue_by_customer"},
			"upstream.sql": {"CREATE TABLE orders", "REPLICA IDENTITY"},
			"verify.sh":    {"UPSTREAM=${UPSTREAM:-'postgres://cdc@db:5432/shop'}", "INSERT INTO orders"},
			"cleanup.sh":   {"DROP SOURCE IF EXISTS shop", "pg_drop_replication_slot", "DROP PUBLICATION", "rockstream_shop"},
		},
	}} {
		dir := filepath.Join(t.TempDir(), "proj")
		if code, stderr := initProject(t, append([]string{dir}, tc.args...)...); code != exitOK {
			t.Fatalf("init %v: exit %d: %s", tc.args, code, stderr)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, tc.files) {
			t.Errorf("init %v wrote %v, want %v", tc.args, names, tc.files)
		}
		for _, name := range names {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			for _, w := range tc.want[name] {
				if !strings.Contains(text, w) {
					t.Errorf("init %v: %s does not contain %q:\n%s", tc.args, name, w, text)
				}
			}
			if strings.Contains(text, "<no value>") {
				t.Errorf("init %v: %s has an unfilled template value:\n%s", tc.args, name, text)
			}
			if !strings.HasSuffix(name, ".sh") {
				continue
			}
			if !strings.HasPrefix(text, "#!/usr/bin/env bash\n") || !strings.Contains(text, "\nset -euo pipefail\n") {
				t.Errorf("init %v: %s lacks the bash shebang or set -euo pipefail:\n%s", tc.args, name, text)
			}
			if info, _ := os.Stat(filepath.Join(dir, name)); info.Mode().Perm()&0o100 == 0 {
				t.Errorf("init %v: %s is not executable (%v)", tc.args, name, info.Mode())
			}
			if out, err := exec.Command("bash", "-n", filepath.Join(dir, name)).CombinedOutput(); err != nil {
				t.Errorf("init %v: bash -n %s: %v\n%s", tc.args, name, err, out)
			}
		}
	}
}

// TestInitRefusesNonEmptyDir: a DIR with files is a usage error unless
// --force, which rewrites the generated files and keeps the others.
func TestInitRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := initProject(t, dir)
	if code != exitUsage || !strings.Contains(stderr, "is not empty; use --force") {
		t.Fatalf("init into a non-empty dir: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "run.sh")); !os.IsNotExist(err) {
		t.Fatalf("refused init still wrote run.sh (%v)", err)
	}
	if code, stderr := initProject(t, dir, "--force"); code != exitOK {
		t.Fatalf("init --force: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "keep me" {
		t.Fatalf("init --force changed an unrelated file: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "verify.sh")); err != nil {
		t.Fatal(err)
	}
}

func TestInitUsageErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	for _, args := range [][]string{
		{},
		{dir, "extra"},
		{dir, "--template", "mysql"},
		{dir, "--pg-addr", "no-port"},
		{dir, "--no-such-flag"},
	} {
		code, stderr := initProject(t, args...)
		if code != exitUsage || !strings.HasPrefix(stderr, "rockstream: ") {
			t.Errorf("init %v: exit %d, stderr %q; want exit %d", args, code, stderr, exitUsage)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("failed inits created %s (%v)", dir, err)
	}
}

// freeAddr returns a loopback address with a port free at the time of the
// call.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runGeneratedProject generates a project with args, then runs it the way
// its README says: run.sh in the background, verify.sh, cleanup.sh. Each
// must exit 0. before runs after init, before the server starts.
func runGeneratedProject(t *testing.T, before func(dir string), args ...string) {
	t.Helper()
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	bin := binary(t)
	dir := filepath.Join(t.TempDir(), "proj")
	full := append([]string{"init", dir, "--pg-addr", freeAddr(t), "--http-addr", freeAddr(t)}, args...)
	if out := runProg(t, t.TempDir(), "", bin, full...); out.exit != 0 {
		t.Fatalf("rockstream %v: exit %d\n%s", full, out.exit, out.stderr)
	}
	if before != nil {
		before(dir)
	}
	env := append(os.Environ(), "ROCKSTREAM="+bin, "PSQLRC=/dev/null")
	server := exec.Command(filepath.Join(dir, "run.sh"))
	server.Env = env
	var log strings.Builder
	server.Stdout, server.Stderr = io.Discard, &log
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	// stop kills the server if it still runs and returns its exit error and
	// log, which is safe to read only once it has exited.
	var exitErr error
	stopped := false
	stop := func() (error, string) {
		if !stopped {
			server.Process.Kill()
			exitErr, stopped = <-exited, true
		}
		return exitErr, log.String()
	}
	t.Cleanup(func() { stop() })
	script := func(name string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, name))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			_, serverLog := stop()
			t.Fatalf("%s: %v\n%s\nserver log:\n%s", name, err, out, serverLog)
		}
	}
	script("verify.sh")
	script("cleanup.sh")
	select {
	case exitErr = <-exited:
		stopped = true
		if exitErr != nil {
			t.Errorf("the server run.sh started exited with %v after cleanup.sh:\n%s", exitErr, log.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the server run.sh started still runs after cleanup.sh")
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("cleanup.sh left ./data (%v)", err)
	}
}

// TestInitLocalProject runs a generated local project end to end.
func TestInitLocalProject(t *testing.T) {
	runGeneratedProject(t, nil)
}

// TestInitPostgresCDCProject runs a generated postgres-cdc project end to
// end against a real upstream PostgreSQL: upstream.sql there, the CDC
// source in RockStream, rows inserted upstream by verify.sh arriving in the
// view, and cleanup.sh leaving no replication slot or publication behind.
func TestInitPostgresCDCProject(t *testing.T) {
	pgtest.Require(t)
	upstream := pgtest.NewDatabase(t, "initcdc")
	runGeneratedProject(t, func(dir string) {
		out := runProg(t, dir, "", "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", upstream, "-f", "upstream.sql")
		if out.exit != 0 {
			t.Fatalf("psql -f upstream.sql: exit %d\n%s", out.exit, out.stderr)
		}
	}, "--template", "postgres-cdc", "--pg-connection", upstream)
	for what, q := range map[string]string{
		"replication slots": "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()",
		"publications":      "SELECT count(*) FROM pg_publication",
	} {
		out := runProg(t, t.TempDir(), "", "psql", "-X", "-q", "-t", upstream, "-c", q)
		if out.exit != 0 || strings.TrimSpace(out.stdout) != "0" {
			t.Errorf("%s left after cleanup.sh: %q (exit %d, %s)", what, out.stdout, out.exit, out.stderr)
		}
	}
}

// TestInitKafkaProject runs a generated kafka project end to end against an
// in-process Kafka cluster: the source and sink are created, and with kcat
// installed verify.sh's sample orders arrive in the view.
func TestInitKafkaProject(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil && os.Getenv("ROCKSTREAM_REQUIRE_CLIENTS") == "1" {
		t.Fatal("kcat is not installed (apt-get install kcat)")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders", "orders_by_store"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runGeneratedProject(t, nil, "--template", "kafka", "--kafka-brokers", strings.Join(c.ListenAddrs(), ","), "--topic", "orders")
}
