package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Environment variables read by this package.
const (
	// EnvBin names a directory holding initdb, pg_ctl and postgres, in place
	// of DefaultBinDir.
	EnvBin = "ROCKSTREAM_PG_BIN"
	// EnvRequire, when "1", turns a missing PostgreSQL into a test failure
	// instead of a skip.
	EnvRequire = "ROCKSTREAM_REQUIRE_PG"
)

// DefaultBinDir is where Debian's postgresql-15 package installs the server
// binaries.
const DefaultBinDir = "/usr/lib/postgresql/15/bin"

// serverUser is the operating-system user the server runs as when the tests
// run as root.
const serverUser = "postgres"

// startTimeout bounds how long the server may take to accept connections.
const startTimeout = 60 * time.Second

// BinDir returns the directory the server binaries are taken from:
// ROCKSTREAM_PG_BIN, else DefaultBinDir, else the newest other major
// version Debian's packages installed under /usr/lib/postgresql.
func BinDir() string {
	if d := os.Getenv(EnvBin); d != "" {
		return d
	}
	if _, err := os.Stat(filepath.Join(DefaultBinDir, "initdb")); err == nil {
		return DefaultBinDir
	}
	best, bestVersion := DefaultBinDir, 0
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	for _, m := range matches {
		bin := filepath.Dir(m)
		if v, err := strconv.Atoi(filepath.Base(filepath.Dir(bin))); err == nil && v > bestVersion {
			best, bestVersion = bin, v
		}
	}
	return best
}

// Required reports whether the environment demands PostgreSQL
// (ROCKSTREAM_REQUIRE_PG=1).
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Available reports whether a server can be started here: the binaries
// exist and, when running as root, runuser and the postgres user exist.
func Available() bool { return unavailableReason() == "" }

// unavailableReason says why Available is false, or returns "".
func unavailableReason() string {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		p := filepath.Join(BinDir(), name)
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Sprintf("PostgreSQL server binary %s not found (install postgresql-15, or set %s to the directory holding initdb, pg_ctl and postgres)", p, EnvBin)
		}
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("runuser"); err != nil {
			return "running as root, but runuser (util-linux) is not installed to start PostgreSQL as the postgres user"
		}
		if _, err := user.Lookup(serverUser); err != nil {
			return "running as root, but there is no postgres user to start PostgreSQL as"
		}
	}
	return ""
}

// Require skips t when PostgreSQL is not available, or fails it when
// ROCKSTREAM_REQUIRE_PG=1.
func Require(t testing.TB) {
	t.Helper()
	reason := unavailableReason()
	if reason == "" {
		return
	}
	if Required() {
		t.Fatalf("%s=1 but PostgreSQL is not available: %s", EnvRequire, reason)
	}
	t.Skipf("skipping: PostgreSQL is not available: %s", reason)
}

// Server is a running throwaway PostgreSQL cluster.
type Server struct {
	dir  string // temporary directory: data/, server.log, the socket
	port int
	// asRoot is true when the server runs as serverUser through runuser.
	asRoot bool
	cmd    *exec.Cmd
	// exited is closed when the server process has exited; waitErr is its
	// exit status, valid after that.
	exited  chan struct{}
	waitErr error
}

// Port returns the server's loopback TCP port.
func (s *Server) Port() int { return s.port }

// Dir returns the server's temporary directory.
func (s *Server) Dir() string { return s.dir }

// DSN returns a connection string for database dbname as the superuser
// postgres (trust authentication, no TLS).
func (s *Server) DSN(dbname string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, dbname)
}

var shared struct {
	once sync.Once
	mu   sync.Mutex // guards srv and err
	srv  *Server
	err  error
	// seq numbers the databases NewDatabase creates.
	seq atomic.Int64
}

// Start starts the binary's shared server on first use and returns it.
// Later calls return the same server, or the same error.
func Start() (*Server, error) {
	shared.once.Do(func() {
		s, err := start()
		shared.mu.Lock()
		shared.srv, shared.err = s, err
		shared.mu.Unlock()
	})
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return shared.srv, shared.err
}

// Stop shuts the shared server down and removes its directory. It does
// nothing when no server was started.
func Stop() error {
	shared.mu.Lock()
	s := shared.srv
	shared.srv = nil
	if s != nil {
		shared.err = errors.New("pgtest: server already stopped")
	}
	shared.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.stop()
}

// Main runs the tests of a package and then stops the shared server. Call
// it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if err := Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
	}
	os.Exit(code)
}

// Shared returns the shared server for t, starting it on first use. It
// skips or fails t as Require does when PostgreSQL is absent, and fails t
// when the server does not start.
func Shared(t testing.TB) *Server {
	t.Helper()
	Require(t)
	s, err := Start()
	if err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	return s
}

// DSN returns a connection string for the shared server's postgres
// database, starting the server on first use (see Shared).
func DSN(t testing.TB) string {
	t.Helper()
	return Shared(t).DSN("postgres")
}

// NewDatabase creates a fresh, empty database named prefix_N on the shared
// server and returns its connection string. The database is dropped when
// t ends.
func NewDatabase(t testing.TB, prefix string) string {
	t.Helper()
	s := Shared(t)
	name := fmt.Sprintf("%s_%d", prefix, shared.seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.adminExec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := s.adminExec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	return s.DSN(name)
}

// adminExec runs sql on the postgres database.
func (s *Server) adminExec(ctx context.Context, sql string) error {
	conn, err := pgconn.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql).ReadAll()
	return err
}

// start creates and starts a cluster.
func start() (*Server, error) {
	if reason := unavailableReason(); reason != "" {
		return nil, errors.New(reason)
	}
	s := &Server{asRoot: os.Geteuid() == 0}
	base := tempBase(s.asRoot)
	sweepStale(base)
	dir, err := os.MkdirTemp(base, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("creating server directory: %w", err)
	}
	s.dir = dir
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	if s.asRoot {
		u, err := user.Lookup(serverUser)
		if err != nil {
			return nil, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("handing %s to user %s: %w", dir, serverUser, err)
		}
	}

	initdb := s.command("initdb", "-D", s.dataDir(), "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}

	// A free port can be taken by someone else between our probe and the
	// server's bind; try a few.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.port = port
		lastErr = s.run()
		if lastErr == nil {
			ok = true
			return s, nil
		}
		if !strings.Contains(lastErr.Error(), "could not bind") &&
			!strings.Contains(lastErr.Error(), "already in use") {
			break
		}
	}
	return nil, lastErr
}

// run starts the server process on s.port and waits until it accepts
// connections.
func (s *Server) run() error {
	logPath := filepath.Join(s.dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := s.command("postgres", "-D", s.dataDir(),
		"-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+s.dir,
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "wal_level=logical",
		"-c", "max_wal_senders=10",
		"-c", "max_replication_slots=10",
		"-c", "max_connections=200",
		"-c", "shared_buffers=64MB",
		"-c", "TimeZone=UTC",
		"-c", "DateStyle=ISO, MDY",
		"-c", "IntervalStyle=postgres",
		"-c", "extra_float_digits=1",
	)
	cmd.Stdout = logf
	cmd.Stderr = logf
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	s.cmd = cmd
	s.exited = make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()

	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited during start-up (%v); log:\n%s", s.waitErr, tail(logPath))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgconn.Connect(ctx, s.DSN("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("postgres did not accept connections within %v (last error: %v); log:\n%s", startTimeout, err, tail(logPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop shuts the server down (fast mode: open sessions are rolled back)
// and removes its directory.
func (s *Server) stop() error {
	var errsOut []error
	stop := s.command("pg_ctl", "-D", s.dataDir(), "-m", "fast", "-w", "-t", "60", "stop")
	if out, err := stop.CombinedOutput(); err != nil {
		errsOut = append(errsOut, fmt.Errorf("pg_ctl stop: %v\n%s", err, out))
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.kill()
		errsOut = append(errsOut, errors.New("postgres did not exit after pg_ctl stop; killed"))
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errsOut = append(errsOut, err)
	}
	return errors.Join(errsOut...)
}

// Restart stops the server (fast shutdown: open sessions are ended) and
// starts it again on the same port and data, as an upstream server's
// restart looks to its clients.
func (s *Server) Restart() error {
	stop := s.command("pg_ctl", "-D", s.dataDir(), "-m", "fast", "-w", "-t", "60", "stop")
	if out, err := stop.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	<-s.exited
	return s.run()
}

// kill ends the server process and waits for it.
func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

// command returns a command running the named server binary, as the
// postgres user when the tests run as root.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(BinDir(), name)
	if s.asRoot {
		return exec.Command("runuser", append([]string{"-u", serverUser, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// tempBase returns the directory to create the server directory in. The
// server user must be able to reach it, which a root-only TMPDIR does not
// allow.
func tempBase(asRoot bool) string {
	base := os.TempDir()
	if !asRoot {
		return base
	}
	for d := base; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if d == filepath.Dir(d) {
			return base
		}
	}
}

// dirPrefix starts the name of every server directory; ownerFile in it
// holds the process ID of the test binary that owns it.
const (
	dirPrefix = "rockstream-pg-"
	ownerFile = "owner.pid"
)

// sweepStale removes the server directories in base left behind by test
// binaries that died without stopping their server (the parent-death
// signal stopped the server, but nothing removed its files).
func sweepStale(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPrefix) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // being created right now, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		if pm, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			first, _, _ := strings.Cut(string(pm), "\n")
			if spid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && processAlive(spid) {
				continue // its server still runs
			}
		}
		os.RemoveAll(dir)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last lines of the file at path, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}
