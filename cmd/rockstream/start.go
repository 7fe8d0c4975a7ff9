package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/gateway"
)

// Default addresses of `rockstream start`.
const (
	defaultPGAddr   = "127.0.0.1:5432"
	defaultHTTPAddr = "127.0.0.1:6876"
)

// startFlags are the flags of `rockstream start`.
type startFlags struct {
	store            storageFlags
	pgAddr           string
	httpAddr         string
	tlsCert, tlsKey  string
	auth             string
	usersFile        string
	allowTrustRemote bool
	maxConnections   int
	statementTimeout time.Duration
	idleInTxTimeout  time.Duration
	maxMessageSize   byteSize
	shutdownTimeout  time.Duration
	logFormat        string
	logLevel         string
}

func newStartCommand() *cobra.Command {
	var f startFlags
	cmd := &cobra.Command{
		Use:   "start [--storage DIR] [--pg-addr ADDR] [--http-addr ADDR] [flags]",
		Short: "Run RockStream as a server for PostgreSQL clients",
		Long: `Run RockStream as a server: psql and PostgreSQL drivers connect to it on
--pg-addr (default ` + defaultPGAddr + `), and operators reach its health checks
and Prometheus metrics over HTTP on --http-addr (default ` + defaultHTTPAddr + `):
/live, /ready, /health and /metrics.

With --storage DIR the server keeps its data in DIR: at start-up it recovers
the tables, views and their state from DIR (without recomputing the views)
and goes on from the last committed epoch; every transaction is durable when
its COMMIT returns. Without --storage the data lives in memory and is lost
when the server stops (a warning says so).

Both addresses are bound before recovery starts, so that a port in use
fails at once; clients are served once recovery has finished, when /ready
turns 200 and the "ready" log line is written. Port 0 picks a free port;
the "ready" line names the addresses actually bound.

Authentication (--auth): trust accepts any user name, and by default only
from loopback addresses (--allow-trust-remote lifts that); password and
scram-sha-256 check the password of a user from --users-file, a text file of
lines "name:password" (blank lines and lines starting with # are ignored;
the password is everything after the first colon), or of a role created with
CREATE ROLE ... LOGIN PASSWORD. --tls-cert and --tls-key (PEM files) let
clients use TLS (sslmode=require).

SIGINT or SIGTERM shuts the server down gracefully: it stops accepting
connections, lets running statements finish for up to --shutdown-timeout
(then cancels them and rolls back their transactions), closes the storage
and exits 0. Committed transactions are on disk; nothing uncommitted is
kept. A statement still running 5s after it was cancelled is logged and not
waited for (exit status 1), and a second signal exits at once with status
1; the next start recovers every committed epoch either way.

Logs are structured (log/slog) on standard error: text by default, JSON
with --log-format json.

Exit status: 0 after a graceful shutdown, 1 when the server failed while
running or could not shut down cleanly, 2 when it could not start (bad flags, an address in use, storage
that cannot be opened).`,
		Example: `  # A durable server on the default addresses
  rockstream start --storage ./data
  psql -h 127.0.0.1 -p 5432 -U rockstream

  # Another port, password authentication, TLS
  rockstream start --storage ./data --pg-addr 0.0.0.0:6875 \
    --auth scram-sha-256 --users-file users.txt \
    --tls-cert server.crt --tls-key server.key

  # Health and metrics
  curl -s 127.0.0.1:6876/health
  curl -s 127.0.0.1:6876/metrics | grep rockstream_committed_epoch`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServer(cmd.Context(), f, cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	f.store.register(fs, "keep the server's data in `DIR` (default: in memory, lost at exit)")
	fs.StringVar(&f.pgAddr, "pg-addr", defaultPGAddr, "serve PostgreSQL clients on `ADDR` (host:port)")
	fs.StringVar(&f.httpAddr, "http-addr", defaultHTTPAddr, "serve /live, /ready, /health and /metrics on `ADDR`; empty turns HTTP off")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate chain `FILE` (PEM), with --tls-key")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key `FILE` (PEM), with --tls-cert")
	fs.StringVar(&f.auth, "auth", string(gateway.AuthTrust), "client authentication: `trust`, password or scram-sha-256")
	fs.StringVar(&f.usersFile, "users-file", "", "`FILE` of name:password lines for password and scram-sha-256 authentication")
	fs.BoolVar(&f.allowTrustRemote, "allow-trust-remote", false, "let trust authentication accept clients that are not on loopback")
	fs.IntVar(&f.maxConnections, "max-connections", 100, "most client connections open at once; more are refused")
	fs.DurationVar(&f.statementTimeout, "statement-timeout", 0, "cancel statements running longer than `DURATION` (e.g. 30s); 0 means never")
	fs.DurationVar(&f.idleInTxTimeout, "idle-in-transaction-timeout", 0, "close sessions idle inside a transaction block for longer than `DURATION`; 0 means never")
	f.maxMessageSize = 64 << 20
	fs.Var(&f.maxMessageSize, "max-message-size", "largest protocol message a client may send")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGINT/SIGTERM, how long running statements may take to finish")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: `text` or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "least severe log level written: debug, `info`, warn or error")
	return cmd
}

// gatewayConfig returns the gateway configuration the flags describe,
// reading the TLS and users files.
func (f *startFlags) gatewayConfig() (gateway.Config, error) {
	cfg := gateway.Config{
		MaxConnections:           f.maxConnections,
		StatementTimeout:         f.statementTimeout,
		IdleInTransactionTimeout: f.idleInTxTimeout,
		MaxMessageBytes:          int(f.maxMessageSize),
	}
	switch m := gateway.AuthMethod(f.auth); m {
	case gateway.AuthTrust, gateway.AuthPassword, gateway.AuthSCRAM:
		cfg.Auth.Method = m
	default:
		return cfg, fmt.Errorf("--auth must be trust, password or scram-sha-256, not %q", f.auth)
	}
	cfg.Auth.AllowTrustRemote = f.allowTrustRemote
	switch {
	case f.maxConnections < 1:
		return cfg, fmt.Errorf("--max-connections must be at least 1")
	case f.statementTimeout < 0 || f.idleInTxTimeout < 0 || f.shutdownTimeout < 0:
		return cfg, fmt.Errorf("timeouts cannot be negative")
	case f.maxMessageSize < 1024:
		return cfg, fmt.Errorf("--max-message-size must be at least 1kB")
	}
	var err error
	if cfg.TLS, err = loadTLS(f.tlsCert, f.tlsKey); err != nil {
		return cfg, err
	}
	if f.usersFile != "" {
		if cfg.Auth.Users, err = readUsersFile(f.usersFile); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}
