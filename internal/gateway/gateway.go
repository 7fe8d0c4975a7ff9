// Package gateway serves RockStream over the PostgreSQL wire protocol
// (version 3.0), so that psql, drivers and tools reach it as they reach
// PostgreSQL. Each connection is one runtime.Session; the gateway owns the
// protocol (startup, TLS, authentication, simple and extended query, COPY,
// cancel) and the engine owns the SQL.
//
// Invariants:
//   - One goroutine per connection reads its messages and runs its
//     statements in order; only that goroutine writes to the connection,
//     except Shutdown, which writes a final message to a connection only
//     while its goroutine is idle (blocked reading) and then closes it.
//   - While a statement runs or a result streams, the connection's
//     messages are read by a watch goroutine instead (watch.go), one
//     reader at a time: messages it reads are handled afterwards, in
//     order, and the client going away cancels the statement, which then
//     leaves nothing behind.
//   - A statement runs under a context that a CancelRequest, the
//     statement timeout, Shutdown or its client's disconnect cancels; the
//     error the client sees says which.
//   - Whatever happens to a connection (error, panic, disconnect), its
//     session is closed, which rolls back an open transaction block.
//   - A Query message is parsed whole before any of it runs, and its
//     statements run between Session.BeginMessage and EndMessage: several
//     statements are one implicit transaction block, which the first
//     error, after which nothing more of the message runs, rolls back.
//     The statements of an extended-protocol pipeline, executed before a
//     Sync, are one such block too, ended by Sync, unless the Sync came
//     with the only Execute (frames.go lets the gateway see it). Every
//     error, in either protocol, fails an open block.
//
// docs/wire.md describes what clients see.
package gateway

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/runtime"
)

// Config configures a Server. The zero value serves trust authentication
// on loopback connections only, without TLS and without limits other than
// the defaults below.
type Config struct {
	// TLS, when set, lets clients upgrade with SSLRequest; without it the
	// server answers 'N' and clients continue in plain text.
	TLS *tls.Config
	// Auth says how clients authenticate.
	Auth AuthConfig
	// MaxConnections bounds concurrent client connections; 0 means 100.
	MaxConnections int
	// StatementTimeout aborts a statement running longer; 0 means none.
	// Sessions may change it with SET statement_timeout.
	StatementTimeout time.Duration
	// IdleInTransactionTimeout closes a session idle inside a transaction
	// block for longer; 0 means none. Sessions may change it with SET
	// idle_in_transaction_session_timeout.
	IdleInTransactionTimeout time.Duration
	// MaxMessageBytes bounds one protocol message; 0 means 64 MiB.
	MaxMessageBytes int
	// Logger receives connection-level logs; nil discards them.
	Logger *slog.Logger
}

// AuthMethod is how a client proves who it is.
type AuthMethod string

const (
	AuthTrust    AuthMethod = "trust"    // any user name is accepted
	AuthPassword AuthMethod = "password" // cleartext password
	AuthSCRAM    AuthMethod = "scram-sha-256"
)

// AuthConfig selects the authentication method.
type AuthConfig struct {
	// Method is used for every connection; empty means AuthTrust.
	Method AuthMethod
	// AllowTrustRemote permits trust authentication for connections that do
	// not come from a loopback address; without it they are refused.
	AllowTrustRemote bool
	// Users maps user names to passwords, in addition to the roles created
	// with CREATE ROLE ... LOGIN PASSWORD.
	Users map[string]string
}

// Stats is a snapshot of the server's counters, for metrics.
type Stats struct {
	Connections      int    // open now
	ConnectionsTotal uint64 // accepted since start
	Rejected         uint64 // refused (limits, authentication)
	Queries          uint64 // statements run
	Errors           uint64 // statements that failed
	Canceled         uint64 // statements canceled (cancel request, timeout, shutdown)
}

const (
	defaultMaxConnections  = 100
	defaultMaxMessageBytes = 64 << 20
)

// Server is a PostgreSQL wire protocol server over one engine.
type Server struct {
	eng *runtime.Engine
	cfg Config
	log *slog.Logger
	// secret salts the mock SCRAM exchanges of unknown users.
	secret  []byte
	nextPID atomic.Uint32
	users   *userVerifiers
	// queries, errors and canceled count statements (Stats).
	queries, errors, canceled atomic.Uint64

	mu struct {
		sync.Mutex
		closing   bool
		listeners []net.Listener
		// conns holds every open connection by process ID (its
		// BackendKeyData), including those still starting up.
		conns map[uint32]*conn
		stats Stats
	}
	// wg counts connection goroutines.
	wg sync.WaitGroup
}

// New returns a server for eng.
func New(eng *runtime.Engine, cfg Config) *Server {
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = defaultMaxConnections
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = defaultMaxMessageBytes
	}
	if cfg.Auth.Method == "" {
		cfg.Auth.Method = AuthTrust
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	s := &Server{eng: eng, cfg: cfg, log: log, secret: secret, users: newUserVerifiers(cfg.Auth.Users)}
	s.mu.conns = map[uint32]*conn{}
	// A statement that panics fails with XX000 and its session goes on;
	// the panic is logged here.
	eng.OnPanic(func(r any, stack []byte) {
		if testHookPanic != nil {
			testHookPanic(r)
		}
		log.Error("gateway: statement panicked", "panic", r, "stack", string(stack))
	})
	return s
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("gateway: server closed")

// Serve accepts connections on ln until Shutdown; it always returns a
// non-nil error, ErrServerClosed after Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.mu.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.mu.listeners = append(s.mu.listeners, ln)
	s.mu.Unlock()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.mu.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: wait and retry, as
				// net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c := s.register(nc)
		if c == nil {
			continue
		}
		go c.serve()
	}
}

// serveConn serves one connection on the calling goroutine.
func (s *Server) serveConn(nc net.Conn) {
	if c := s.register(nc); c != nil {
		c.serve()
	}
}

// register records a new connection; it returns nil (and closes nc) when
// the server is shutting down.
func (s *Server) register(nc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closing {
		nc.Close()
		return nil
	}
	pid := s.nextPID.Add(1)
	c := newConn(s, nc, pid)
	s.mu.conns[pid] = c
	s.mu.stats.Connections = len(s.mu.conns)
	s.mu.stats.ConnectionsTotal++
	s.wg.Add(1)
	return c
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	delete(s.mu.conns, c.pid)
	s.mu.stats.Connections = len(s.mu.conns)
	s.mu.Unlock()
	s.wg.Done()
}

// rejected counts a refused connection.
func (s *Server) rejected() {
	s.mu.Lock()
	s.mu.stats.Rejected++
	s.mu.Unlock()
}

// overLimit reports whether c is beyond the connection limit: connections
// are admitted in the order they arrived.
func (s *Server) overLimit(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	older := 0
	for pid, o := range s.mu.conns {
		if pid < c.pid && !o.isCancelOnly() {
			older++
		}
	}
	return older >= s.cfg.MaxConnections
}

// lookup returns the connection with process ID pid, or nil.
func (s *Server) lookup(pid uint32) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.conns[pid]
}

// Shutdown stops accepting connections, ends idle sessions, lets running
// statements finish until ctx is done (then cancels them, rolling back
// their transactions), and returns when every session has ended.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.mu.closing = true
	lns := s.mu.listeners
	s.mu.listeners = nil
	conns := make([]*conn, 0, len(s.mu.conns))
	for _, c := range s.mu.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var err error
	for _, ln := range lns {
		err = errors.Join(err, ln.Close())
	}
	for _, c := range conns {
		c.shutdown()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return err
	case <-ctx.Done():
	}
	s.mu.Lock()
	for _, c := range s.mu.conns {
		c.cancelStatement(errAdminShutdown)
	}
	s.mu.Unlock()
	<-done
	return err
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := s.mu.stats
	s.mu.Unlock()
	st.Queries = s.queries.Load()
	st.Errors = s.errors.Load()
	st.Canceled = s.canceled.Load()
	return st
}
