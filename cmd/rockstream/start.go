package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/gateway"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/oidc"
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
	tlsClientCA      string
	tlsClientCRL     string
	tlsRequire       string
	httpAuth         string
	oidcIssuer       string
	oidcAudience     string
	oidcJWKS         string
	oidcRoleClaim    string
	auth             string
	usersFile        string
	allowTrustRemote bool
	maxConnections   int
	reservedConns    int
	reservedSet      bool // --superuser-reserved-connections was given
	authTimeout      time.Duration
	statementTimeout time.Duration
	idleInTxTimeout  time.Duration
	maxMessageSize   byteSize
	memoryLimit      byteSize
	gcPercent        int
	shutdownTimeout  time.Duration
	logFormat        string
	logLevel         string
	checkpoints      autoCheckpoints
	cluster          clusterFlags
}

func newStartCommand() *cobra.Command {
	var f startFlags
	cmd := &cobra.Command{
		Use:   "start [--storage DIR] [--pg-addr ADDR] [--http-addr ADDR] [flags]",
		Short: "Run RockStream as a server for PostgreSQL clients",
		Long: `Run RockStream as a server: psql and PostgreSQL drivers connect to it on
--pg-addr (default ` + defaultPGAddr + `), and operators reach its health checks
and Prometheus metrics over HTTP on --http-addr (default ` + defaultHTTPAddr + `):
/live, /ready, /health and /metrics, the web console at /, and the operator
endpoints under /admin/.

With --storage DIR the server keeps its data in DIR: at start-up it recovers
the tables, views and their state from DIR (without recomputing the views)
and goes on from the last committed epoch; every transaction is durable when
its COMMIT returns. Without --storage the data lives in memory and is lost
when the server stops (a warning says so).

Both addresses are bound before recovery starts, so that a port in use
fails at once; clients are served once recovery has finished, when /ready
turns 200 and the "ready" log line is written. /ready answers 503 again, with
the reason, while the storage refuses writes (disk full) or has stopped after
an I/O error, until it has reopened itself; /ready/reads stays 200 while
reads are served. Port 0 picks a free port;
the "ready" line names the addresses actually bound.

Authentication (--auth): trust accepts any user name, and by default only
from loopback addresses (--allow-trust-remote lifts that); password and
scram-sha-256 check the password of a user from --users-file, a text file of
lines "name:password" (blank lines and lines starting with # are ignored;
the password is everything after the first colon), or of a role created with
CREATE ROLE ... LOGIN PASSWORD; cert admits a TLS client certificate
signed by --tls-client-ca whose common name is the user name; oidc takes
the password as an OpenID Connect token of --oidc-issuer for
--oidc-audience, signed by a key of --oidc-jwks, whose --oidc-role-claim
names the user. Over TLS, scram-sha-256 offers channel binding
(SCRAM-SHA-256-PLUS).
--users-file without a password method, and a password method without any
user who could log in, are refused. --tls-cert and --tls-key (PEM files)
let clients use TLS (sslmode=require); --tls-require remote or all refuses
plain-text clients. Connections that do not authenticate within
--authentication-timeout are closed; failed logins of a user from one
address are slowed down, up to one check every 5s. --http-auth guards
every HTTP endpoint but /live and /ready with a bearer token or a client
certificate.

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
that cannot be opened).` + roleCommandHelp,
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
			f.reservedSet = cmd.Flags().Changed("superuser-reserved-connections")
			return runRole(cmd, f, f.cluster)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	f.cluster.register(fs)
	f.store.register(fs, "keep the server's data in `DIR` (default: in memory, lost at exit)")
	fs.StringVar(&f.pgAddr, "pg-addr", defaultPGAddr, "serve PostgreSQL clients on `ADDR` (host:port)")
	fs.StringVar(&f.httpAddr, "http-addr", defaultHTTPAddr, "serve /live, /ready, /health, /metrics, the console and /admin/ on `ADDR`; empty turns HTTP off")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate chain `FILE` (PEM), with --tls-key")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key `FILE` (PEM), with --tls-cert")
	fs.StringVar(&f.tlsClientCA, "tls-client-ca", "", "verify client certificates against the CA certificates in `FILE` (PEM), for --auth cert")
	fs.StringVar(&f.tlsClientCRL, "tls-client-crl", "", "refuse client certificates that the revocation lists in `FILE` (PEM) name")
	fs.StringVar(&f.tlsRequire, "tls-require", string(gateway.TLSRequireNone), "which clients must use TLS: `none`, remote (not on loopback) or all")
	fs.StringVar(&f.auth, "auth", string(gateway.AuthTrust), "client authentication: `trust`, password, scram-sha-256, cert or oidc")
	fs.StringVar(&f.oidcIssuer, "oidc-issuer", "", "with --auth oidc, the `URL` tokens must name as their issuer (iss)")
	fs.StringVar(&f.oidcAudience, "oidc-audience", "", "with --auth oidc, tokens must be meant for audience `A` (aud)")
	fs.StringVar(&f.oidcJWKS, "oidc-jwks", "", "with --auth oidc, the issuer's JSON Web Key Set: a `FILE` or an https:// URL (http:// on loopback)")
	fs.StringVar(&f.oidcRoleClaim, "oidc-role-claim", "sub", "with --auth oidc, the claim `NAME` that names the role a token logs in as")
	fs.StringVar(&f.usersFile, "users-file", "", "`FILE` of name:password lines for password and scram-sha-256 authentication")
	fs.StringVar(&f.httpAuth, "http-auth", "", "make every HTTP endpoint but /live and /ready require a bearer token read from a file (`token:FILE`) or a client certificate (cert)")
	fs.BoolVar(&f.allowTrustRemote, "allow-trust-remote", false, "let trust authentication accept clients that are not on loopback")
	fs.IntVar(&f.maxConnections, "max-connections", 100, "most client connections open at once; more are refused")
	fs.IntVar(&f.reservedConns, "superuser-reserved-connections", 3, "of --max-connections, how many only superusers may use")
	fs.DurationVar(&f.authTimeout, "authentication-timeout", 10*time.Second, "close connections that have not started up and authenticated within `DURATION`")
	fs.DurationVar(&f.statementTimeout, "statement-timeout", 0, "cancel statements running longer than `DURATION` (e.g. 30s); 0 means never")
	fs.DurationVar(&f.idleInTxTimeout, "idle-in-transaction-timeout", 0, "close sessions idle inside a transaction block for longer than `DURATION`; 0 means never")
	f.maxMessageSize = 64 << 20
	fs.Var(&f.maxMessageSize, "max-message-size", "largest protocol message a client may send")
	fs.Var(&f.memoryLimit, "memory-limit", "most memory the server may use; a statement that would take it past fails with 53200 (default: half the machine's memory, or of the cgroup's limit)")
	fs.IntVar(&f.gcPercent, "gc-percent", memgov.ServerGCPercent, "the garbage collector's GOGC: how far, in percent, the heap may grow past what the last collection left live before the next starts; the memory limit still bounds it (GOGC in the environment wins)")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGINT/SIGTERM, how long running statements may take to finish")
	f.checkpoints.register(fs)
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: `text` or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "least severe log level written: debug, `info`, warn or error")
	return cmd
}

// gatewayConfig returns the gateway configuration the flags describe,
// reading the TLS and users files.
func (f *startFlags) gatewayConfig() (gateway.Config, error) {
	cfg := gateway.Config{
		MaxConnections:               f.maxConnections,
		SuperuserReservedConnections: f.reservedConns,
		AuthenticationTimeout:        f.authTimeout,
		StatementTimeout:             f.statementTimeout,
		IdleInTransactionTimeout:     f.idleInTxTimeout,
		MaxMessageBytes:              int(f.maxMessageSize),
	}
	switch m := gateway.AuthMethod(f.auth); m {
	case gateway.AuthTrust, gateway.AuthPassword, gateway.AuthSCRAM, gateway.AuthCert, gateway.AuthOIDC:
		cfg.Auth.Method = m
	default:
		return cfg, fmt.Errorf("--auth must be trust, password, scram-sha-256, cert or oidc, not %q", f.auth)
	}
	switch r := gateway.TLSRequire(f.tlsRequire); r {
	case gateway.TLSRequireNone, gateway.TLSRequireRemote, gateway.TLSRequireAll:
		cfg.TLSRequire = r
	default:
		return cfg, fmt.Errorf("--tls-require must be none, remote or all, not %q", f.tlsRequire)
	}
	cfg.Auth.AllowTrustRemote = f.allowTrustRemote
	if !f.reservedSet && f.reservedConns >= f.maxConnections {
		// The default leaves at least one slot for other roles.
		f.reservedConns = max(0, f.maxConnections-1)
		cfg.SuperuserReservedConnections = f.reservedConns
	}
	switch {
	case f.maxConnections < 1:
		return cfg, fmt.Errorf("--max-connections must be at least 1")
	case f.reservedConns < 0 || f.reservedConns >= f.maxConnections:
		return cfg, fmt.Errorf("--superuser-reserved-connections (%d) must be at least 0 and less than --max-connections (%d)", f.reservedConns, f.maxConnections)
	case f.authTimeout < time.Second || f.authTimeout > 600*time.Second:
		return cfg, fmt.Errorf("--authentication-timeout must be between 1s and 10m, as PostgreSQL's authentication_timeout")
	case f.statementTimeout < 0 || f.idleInTxTimeout < 0 || f.shutdownTimeout < 0:
		return cfg, fmt.Errorf("timeouts cannot be negative")
	case f.maxMessageSize < 1024:
		return cfg, fmt.Errorf("--max-message-size must be at least 1kB")
	}
	var err error
	if cfg.TLS, err = loadTLS(f.tlsCert, f.tlsKey, f.tlsClientCA, f.tlsClientCRL); err != nil {
		return cfg, err
	}
	switch {
	case cfg.TLSRequire != gateway.TLSRequireNone && cfg.TLS == nil:
		return cfg, fmt.Errorf("--tls-require %s needs --tls-cert and --tls-key", cfg.TLSRequire)
	case cfg.Auth.Method == gateway.AuthCert && f.tlsClientCA == "":
		return cfg, fmt.Errorf("--auth cert needs --tls-client-ca, the CA that signs the client certificates (and --tls-cert, --tls-key)")
	}
	if cfg.Auth.OIDC, err = f.oidcConfig(cfg.Auth.Method); err != nil {
		return cfg, err
	}
	if f.usersFile != "" {
		if cfg.Auth.Method == gateway.AuthTrust || cfg.Auth.Method == gateway.AuthCert || cfg.Auth.Method == gateway.AuthOIDC {
			return cfg, fmt.Errorf("--users-file needs a password method: add --auth scram-sha-256 (or password); under %s its passwords would not be checked", cfg.Auth.Method)
		}
		if cfg.Auth.Users, err = readUsersFile(f.usersFile); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// oidcConfig reads the --oidc-* flags and loads the key set; they are
// refused with any method but oidc, which needs all but the role claim.
func (f *startFlags) oidcConfig(m gateway.AuthMethod) (*gateway.OIDCConfig, error) {
	if m != gateway.AuthOIDC {
		if f.oidcIssuer != "" || f.oidcAudience != "" || f.oidcJWKS != "" {
			return nil, fmt.Errorf("--oidc-issuer, --oidc-audience and --oidc-jwks go with --auth oidc")
		}
		return nil, nil
	}
	switch {
	case f.oidcIssuer == "" || f.oidcAudience == "" || f.oidcJWKS == "":
		return nil, fmt.Errorf("--auth oidc needs --oidc-issuer, --oidc-audience and --oidc-jwks")
	case f.oidcRoleClaim == "":
		return nil, fmt.Errorf("--oidc-role-claim cannot be empty")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := oidc.NewKeySet(ctx, f.oidcJWKS)
	if err != nil {
		return nil, fmt.Errorf("--oidc-jwks: %w", err)
	}
	return &gateway.OIDCConfig{Keys: keys, Token: oidc.Config{Issuer: f.oidcIssuer, Audience: f.oidcAudience,
		RoleClaim: f.oidcRoleClaim, Leeway: 30 * time.Second}}, nil
}
