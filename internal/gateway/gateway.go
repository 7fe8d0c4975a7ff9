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
//   - A connection holds one of MaxConnections slots from its startup
//     message until it ends; the last SuperuserReservedConnections go to
//     superusers only. Startup and authentication end within
//     AuthenticationTimeout of the accept, or the connection is closed,
//     so sockets that never authenticate free what they hold. Server.mu
//     is taken before a conn's mu, never the other way.
//   - A password (or token) is checked only at its turn in the throttle
//     of its address and user (throttle.go); no check waits for another
//     pair's.
//   - A client message whose fields are malformed (malformed.go) is
//     answered as PostgreSQL answers it, never dropped in silence.
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

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
)

// Config configures a Server. The zero value serves trust authentication
// on loopback connections only, without TLS and without limits other than
// the defaults below.
type Config struct {
	// TLS, when set, lets clients upgrade with SSLRequest; without it the
	// server answers 'N' and clients continue in plain text. Its
	// ClientCAs, with ClientAuth VerifyClientCertIfGiven, verify client
	// certificates (AuthCert).
	TLS *tls.Config
	// TLSRequire says which clients must use TLS; empty means none.
	TLSRequire TLSRequire
	// Auth says how clients authenticate.
	Auth AuthConfig
	// MaxConnections bounds concurrent client connections; 0 means 100.
	// A connection takes a slot once its startup message arrives, so that
	// sockets that never start up hold none (AuthenticationTimeout closes
	// them).
	MaxConnections int
	// SuperuserReservedConnections of the MaxConnections slots are kept
	// for superusers, as PostgreSQL's superuser_reserved_connections; it
	// must be less than MaxConnections.
	SuperuserReservedConnections int
	// AuthenticationTimeout bounds the time from accepting a connection to
	// the end of its authentication (PostgreSQL's authentication_timeout);
	// 0 means 10 seconds.
	AuthenticationTimeout time.Duration
	// LoginThrottle slows down repeated failed logins; the zero value
	// means the defaults of throttle.go.
	LoginThrottle LoginThrottle
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
	// AuthCert accepts a TLS client certificate, verified against the
	// TLS configuration's ClientCAs, whose common name is the user name.
	AuthCert AuthMethod = "cert"
	// AuthOIDC takes the password as an OIDC bearer token, verified as
	// AuthConfig.OIDC says, whose role claim names the user.
	AuthOIDC AuthMethod = "oidc"
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
	// OIDC configures AuthOIDC.
	OIDC *OIDCConfig
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
	defaultMaxConnections        = 100
	defaultMaxMessageBytes       = 64 << 20
	defaultAuthenticationTimeout = 10 * time.Second
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
	// throttle delays logins after failures (throttle.go).
	throttle *loginThrottle
	// endPoint is the tls-server-end-point channel binding data of the
	// server's certificate; nil without TLS.
	endPoint []byte
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
	if cfg.AuthenticationTimeout <= 0 {
		cfg.AuthenticationTimeout = defaultAuthenticationTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	s := &Server{eng: eng, cfg: cfg, log: log, secret: secret, users: newUserVerifiers(cfg.Auth.Users),
		throttle: newLoginThrottle(cfg.LoginThrottle), endPoint: tlsEndPoint(cfg.TLS)}
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

// rejected counts a refused connection and gives back its slot before
// the client reads the error, so a client that connects again after a
// refusal finds the slot free.
func (s *Server) rejected(c *conn) {
	s.mu.Lock()
	s.mu.stats.Rejected++
	s.mu.Unlock()
	c.mu.Lock()
	c.mu.slot = false
	c.mu.Unlock()
}

// takeSlot gives c one of the MaxConnections slots, once its startup
// message has arrived; it fails with 53300 when none is free. Checking and
// taking happen under one lock, so the limit is exact.
func (s *Server) takeSlot(c *conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slotsTakenLocked(c) >= s.cfg.MaxConnections {
		return errs.New(errs.TooManyConnections, "sorry, too many clients already")
	}
	c.mu.Lock()
	c.mu.slot = true
	c.mu.Unlock()
	return nil
}

// checkReserved fails with 53300 when c, authenticated as a role that is
// not a superuser, holds one of the slots reserved for superusers: fewer
// than SuperuserReservedConnections slots were free when it took its own.
func (s *Server) checkReserved(c *conn) error {
	if c.superuser || s.cfg.SuperuserReservedConnections <= 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slotsTakenLocked(c) >= s.cfg.MaxConnections-s.cfg.SuperuserReservedConnections {
		return errs.New(errs.TooManyConnections, "remaining connection slots are reserved for roles with the SUPERUSER attribute")
	}
	return nil
}

// slotsTakenLocked counts the slots connections other than c hold.
func (s *Server) slotsTakenLocked(c *conn) int {
	n := 0
	for _, o := range s.mu.conns {
		if o != c && o.hasSlot() {
			n++
		}
	}
	return n
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
