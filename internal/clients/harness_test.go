package clients

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

var target = flag.String("clients.target", "rockstream", "run the client scenarios against rockstream or postgres")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
	}
	os.Exit(code)
}

// requireTool returns the path of a client program, skipping the test when
// it is not installed (failing it under ROCKSTREAM_REQUIRE_CLIENTS=1).
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("ROCKSTREAM_REQUIRE_CLIENTS") == "1" {
		t.Fatalf("ROCKSTREAM_REQUIRE_CLIENTS=1 but %s is not installed", name)
	}
	t.Skipf("skipping: %s is not installed", name)
	return ""
}

// requireFile is requireTool for a file a client needs (a driver jar).
func requireFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	if os.Getenv("ROCKSTREAM_REQUIRE_CLIENTS") == "1" {
		t.Fatalf("ROCKSTREAM_REQUIRE_CLIENTS=1 but %s is missing", path)
	}
	t.Skipf("skipping: %s is missing", path)
}

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// binary builds cmd/rockstream once per test run.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "rockstream-clients-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "rockstream")
		cmd := exec.Command(goTool(), "build", "-o", built.path, "../../cmd/rockstream")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// endpoint is where a scenario connects.
type endpoint struct {
	host     string
	port     int
	user     string
	database string
	// postgres is true when the endpoint is the reference PostgreSQL.
	postgres bool
}

// env is the libpq environment for the endpoint, plus the scenario's
// settings.
func (e endpoint) env(prefix string) []string {
	tgt := "rockstream"
	if e.postgres {
		tgt = "postgres"
	}
	return append(os.Environ(),
		"PGHOST="+e.host, "PGPORT="+strconv.Itoa(e.port), "PGUSER="+e.user, "PGDATABASE="+e.database,
		"PGPASSWORD=", "PGSERVICEFILE=/dev/null", "PSQLRC=/dev/null",
		"LC_ALL=C.UTF-8", "LANG=C.UTF-8", "PGCLIENTENCODING=UTF8",
		"SCENARIO_PREFIX="+prefix, "SCENARIO_TARGET="+tgt)
}

// jdbcURL is the endpoint as a pgJDBC URL.
func (e endpoint) jdbcURL() string {
	return fmt.Sprintf("jdbc:postgresql://%s:%d/%s", e.host, e.port, e.database)
}

// dsn is the endpoint as a connection URL for Go drivers.
func (e endpoint) dsn() string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", e.user, e.host, e.port, e.database)
}

// serverFor returns the endpoint a scenario runs against: a fresh
// RockStream server, or a fresh database of the reference PostgreSQL
// under -clients.target=postgres.
func serverFor(t *testing.T) endpoint {
	t.Helper()
	switch *target {
	case "postgres":
		return postgresEndpoint(t)
	case "rockstream":
		return startRockStream(t)
	}
	t.Fatalf("-clients.target=%q: want rockstream or postgres", *target)
	return endpoint{}
}

// startRockStream starts `rockstream start` on free loopback ports with a
// fresh storage directory, waits until /ready answers 200, and stops it
// with SIGTERM when the test ends (failing the test unless it exits 0).
func startRockStream(t *testing.T) endpoint {
	t.Helper()
	bin := binary(t)
	pgPort, httpPort := freePort(t), freePort(t)
	cmd := exec.Command(bin, "start",
		"--storage", filepath.Join(t.TempDir(), "data"),
		"--pg-addr", fmt.Sprintf("127.0.0.1:%d", pgPort),
		"--http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("rockstream start exited with %v; its log:\n%s", err, logs.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("rockstream start did not stop within 30s of SIGTERM; its log:\n%s", logs.String())
		}
	})
	ready := fmt.Sprintf("http://127.0.0.1:%d/ready", httpPort)
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("rockstream start exited early (%v); its log:\n%s", err, logs.String())
		default:
		}
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("rockstream start not ready after 30s; its log:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return endpoint{host: "127.0.0.1", port: pgPort, user: "postgres", database: "rockstream"}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// run runs a client program with the endpoint's environment and fails the
// test, showing its output, unless it exits 0. It returns standard output.
func run(t *testing.T, e endpoint, prefix, dir string, stdin string, prog string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = e.env(prefix)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("running %s: %v", prog, err)
		}
		t.Fatalf("%s %s failed (%v)\nstdout:\n%s\nstderr:\n%s", prog, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// expectOK checks that a scenario program reported success.
func expectOK(t *testing.T, out string) {
	t.Helper()
	if strings.TrimSpace(out) != "ok" {
		t.Fatalf("scenario did not report ok; it printed:\n%s", out)
	}
}

// postgresEndpoint is a fresh database of the reference PostgreSQL.
func postgresEndpoint(t *testing.T) endpoint {
	t.Helper()
	s := pgtest.Shared(t)
	dsn := pgtest.NewDatabase(t, "clients")
	name := dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	return endpoint{host: "127.0.0.1", port: s.Port(), user: "postgres", database: name, postgres: true}
}
