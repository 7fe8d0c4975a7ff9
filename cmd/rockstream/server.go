package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rockstream/rockstream/internal/admin"
	"github.com/rockstream/rockstream/internal/connectors"
	_ "github.com/rockstream/rockstream/internal/connectors/kafka"
	"github.com/rockstream/rockstream/internal/gateway"
	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/spill"
)

// runServer runs `rockstream start` until ctx ends or SIGINT/SIGTERM
// arrives, then shuts down gracefully.
//
// The order matters: both addresses are bound first (a port in use fails
// before any recovery work), then the HTTP endpoints serve (live, not
// ready), then the engine recovers, then the gateway serves and the
// server is announced ready. Shutdown runs the other way.
func runServer(ctx context.Context, f startFlags, stderr io.Writer) error {
	logs := newLogRing(logRingBytes)
	log, err := newLogger(io.MultiWriter(stderr, logs), f.logFormat, f.logLevel)
	if err != nil {
		return usageError{err}
	}
	opts, err := f.store.options()
	if err != nil {
		return err
	}
	gcfg, err := f.gatewayConfig()
	if err != nil {
		return usageError{err}
	}
	gcfg.Logger = log.With("component", "gateway")
	if err := f.checkpoints.check(f.store.dir); err != nil {
		return usageError{err}
	}
	if f.store.dir == "" {
		log.Warn("no --storage given: the data lives in memory and is lost when the server stops; pass --storage DIR to keep it")
	}
	warnAuth(log, f, gcfg)
	if err := setMemoryLimit(log, int64(f.memoryLimit)); err != nil {
		return usageError{err}
	}
	log.Debug("garbage collector", "gc_percent", memgov.SetGCPercent(f.gcPercent))
	spill.SetLogger(log.With("component", "spill"))

	// A first signal starts the graceful shutdown; a second ends the
	// process at once.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer func() {
		signal.Stop(signals)
		close(signals)
	}()
	stop := make(chan os.Signal, 1)
	go func() {
		sig, ok := <-signals
		if !ok {
			return
		}
		stop <- sig
		if sig, ok := <-signals; ok {
			log.Error("second signal: exiting without waiting for the shutdown", "signal", sig.String())
			os.Exit(exitFailed)
		}
	}()

	pgLn, err := listen(f.pgAddr, "--pg-addr")
	if err != nil {
		return usageError{err}
	}
	defer pgLn.Close()
	acfg := admin.Config{Version: currentVersion().Version, StorageDir: f.store.dir, Logs: logs.Bytes}
	httpTLS, err := httpGuard(f.httpAuth, gcfg, &acfg)
	if err != nil {
		return usageError{err}
	}
	endpoints := admin.New(acfg)
	httpAddr := ""
	httpDone := make(chan error, 1)
	if f.httpAddr != "" {
		httpLn, err := listen(f.httpAddr, "--http-addr")
		if err != nil {
			return usageError{err}
		}
		if httpTLS != nil {
			httpLn = tls.NewListener(httpLn, httpTLS)
		}
		httpAddr = httpLn.Addr().String()
		httpSrv := &http.Server{Handler: endpoints.Handler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelWarn)}
		go func() { httpDone <- httpSrv.Serve(httpLn) }()
		defer httpSrv.Close()
	}

	durability := f.store.durability
	if f.store.dir == "" {
		durability = "none"
	}
	log.Info("recovering", "storage", storageName(f.store.dir), "durability", durability)
	began := time.Now()
	opts.Logger = storageLogger(log, f.logLevel)
	eng, err := instance.Open(opts)
	if err != nil {
		return usageError{fmt.Errorf("opening the storage: %w", err)}
	}
	if err := checkLoginPossible(eng, gcfg); err != nil {
		_ = eng.Close()
		return usageError{err}
	}
	if f.store.dir != "" {
		audit, err := runtime.OpenAuditLog(f.store.dir)
		if err != nil {
			_ = eng.Close()
			return usageError{fmt.Errorf("opening the audit log: %w", err)}
		}
		eng.SetAuditLog(audit)
		defer audit.Close()
	}
	recovered := eng.Epoch()
	tables, matviews, views := eng.ObjectCounts()
	log.Info("recovered", "epoch", recovered, "tables", tables, "materialized_views", matviews, "views", views,
		"duration", time.Since(began).Round(time.Millisecond).String())

	// Sources and sinks (docs/connectors.md) run beside the gateway.
	conns := connectors.Start(eng, connectors.Options{Logger: log})
	gw := gateway.New(eng, gcfg)
	serveDone := make(chan error, 1)
	go func() { serveDone <- gw.Serve(pgLn) }()
	endpoints.SetEngine(eng)
	endpoints.SetGateway(gw)
	endpoints.SetReady(true)
	log.Info("ready", "pg_addr", pgLn.Addr().String(), "http_addr", httpAddr, "storage", storageName(f.store.dir),
		"epoch", recovered, "version", currentVersion().Version)
	stopCheckpoints := f.checkpoints.start(log, eng)

	var runErr error
	select {
	case sig := <-stop:
		log.Info("shutting down", "signal", sig.String(), "timeout", f.shutdownTimeout.String())
	case <-ctx.Done():
		log.Info("shutting down", "reason", context.Cause(ctx).Error(), "timeout", f.shutdownTimeout.String())
	case err := <-serveDone:
		runErr = fmt.Errorf("the PostgreSQL listener failed: %w", err)
		serveDone <- err
		log.Error("shutting down", "err", runErr)
	case err := <-httpDone:
		runErr = fmt.Errorf("the HTTP listener failed: %w", err)
		log.Error("shutting down", "err", runErr)
	}
	stopCheckpoints()
	return errors.Join(runErr, shutdown(log, f.shutdownTimeout, endpoints, gw, serveDone, conns, eng))
}

// Bounds of the shutdown beyond --shutdown-timeout.
const (
	// cancelGrace is how long cancelled statements get to stop.
	cancelGrace = 5 * time.Second
	// closeGrace is how long closing the storage (flushing what it holds
	// in memory) may take.
	closeGrace = time.Minute
)

// shutdown stops the gateway (letting statements run until the timeout,
// then cancelling them) and the connectors, then closes the engine. Committed epochs are
// already durable, so the only work left is to end the sessions. A
// session whose statement does not stop when cancelled, or a storage that
// does not close, is reported and not waited for: the process exits with
// an error and the next start recovers from the last committed epoch.
func shutdown(log *slog.Logger, timeout time.Duration, endpoints *admin.Server, gw *gateway.Server,
	serveDone chan error, conns *connectors.Manager, eng *runtime.Engine) error {
	endpoints.SetStopping()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- gw.Shutdown(ctx) }()
	select {
	case err := <-stopped:
		if err != nil {
			log.Warn("running statements were cancelled at the shutdown timeout", "err", err)
		}
	case <-time.After(timeout + cancelGrace):
		for _, si := range eng.Sessions() {
			if si.State == runtime.StateActive {
				log.Error("session still running", "session", si.ID, "user", si.Client.User,
					"since", si.QueryStart.Format(time.RFC3339Nano), "query", si.Query)
			}
		}
		epoch := eng.Epoch()
		err := fmt.Errorf("sessions did not stop within %s of being cancelled; exiting without waiting for them: epochs up to %d are committed and the next start recovers them", cancelGrace, epoch)
		log.Error("stopped with errors", "epoch", epoch, "err", err)
		return err
	}
	var errList []error
	if err := <-serveDone; err != nil && !errors.Is(err, gateway.ErrServerClosed) {
		errList = append(errList, err)
	}
	if err := conns.Close(); err != nil {
		errList = append(errList, fmt.Errorf("stopping the connectors: %w", err))
	}
	endpoints.SetGateway(nil)
	endpoints.SetEngine(nil)
	epoch := eng.Epoch()
	closed := make(chan error, 1)
	go func() { closed <- eng.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			errList = append(errList, fmt.Errorf("closing the storage: %w", err))
		}
	case <-time.After(closeGrace):
		errList = append(errList, fmt.Errorf("the storage did not close within %s; epochs up to %d are committed and the next start recovers them", closeGrace, epoch))
	}
	if err := errors.Join(errList...); err != nil {
		log.Error("stopped with errors", "epoch", epoch, "err", err)
		return err
	}
	log.Info("stopped", "epoch", epoch)
	return nil
}

// listen binds addr, explaining the usual failures in terms of the flag
// that chose the address.
func listen(addr, flag string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	var why string
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		why = "address already in use; is another server running?"
	case errors.Is(err, syscall.EACCES):
		why = "permission denied (ports below 1024 need privileges);"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		why = "no network interface of this machine has that address;"
	default:
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		why = err.Error() + ";"
	}
	return nil, fmt.Errorf("cannot listen on %s: %s choose another address with %s", addr, why, flag)
}

func storageName(dir string) string {
	if dir == "" {
		return "memory"
	}
	return dir
}

// newLogger returns the server's logger on w.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level must be debug, info, warn or error, not %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

// storageLogger is the logger of the storage engine, whose informational
// lines (files found, tables flushed) are for debugging only.
func storageLogger(log *slog.Logger, level string) *slog.Logger {
	log = log.With("component", "storage")
	if strings.EqualFold(level, "debug") {
		return log
	}
	return slog.New(minLevel{log.Handler(), slog.LevelWarn})
}

// minLevel drops records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }

// warnAuth logs configurations that work but are probably not meant.
func warnAuth(log *slog.Logger, f startFlags, cfg gateway.Config) {
	host, _, _ := net.SplitHostPort(f.pgAddr)
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	switch {
	case cfg.Auth.Method == gateway.AuthTrust && !loopback && !cfg.Auth.AllowTrustRemote:
		log.Warn("trust authentication refuses clients that are not on loopback; use --auth scram-sha-256 with --users-file, or --allow-trust-remote", "pg_addr", f.pgAddr)
	case cfg.Auth.Method == gateway.AuthTrust && cfg.Auth.AllowTrustRemote:
		log.Warn("trust authentication accepts any client that reaches the server, without a password", "pg_addr", f.pgAddr)
	case cfg.Auth.Method == gateway.AuthPassword && cfg.TLS == nil:
		log.Warn("password authentication without TLS sends passwords in clear text; add --tls-cert and --tls-key, or use --auth scram-sha-256")
	case cfg.Auth.Method == gateway.AuthOIDC && cfg.TLS == nil:
		log.Warn("oidc authentication without TLS sends tokens in clear text, where anyone on the path may reuse them until they expire; add --tls-cert and --tls-key, and --tls-require remote")
	}
}

// checkLoginPossible refuses a password method under which nobody could
// log in: no --users-file and no role of the storage with LOGIN and a
// password.
func checkLoginPossible(eng *runtime.Engine, cfg gateway.Config) error {
	if cfg.Auth.Method != gateway.AuthPassword && cfg.Auth.Method != gateway.AuthSCRAM {
		return nil
	}
	if len(cfg.Auth.Users) > 0 {
		return nil
	}
	roles, err := eng.Roles()
	if err != nil {
		return err
	}
	for _, r := range roles {
		if r.CanLogin && r.Verifier != "" {
			return nil
		}
	}
	return fmt.Errorf("--auth %s without users: nobody could log in; give --users-file, or create a role WITH LOGIN PASSWORD first (for instance under --auth trust)", cfg.Auth.Method)
}

// loadTLS reads a certificate and key pair, and the CA certificates that
// verify client certificates; both empty means no TLS.
func loadTLS(certFile, keyFile, clientCAFile, crlFile string) (*tls.Config, error) {
	if crlFile != "" && clientCAFile == "" {
		return nil, fmt.Errorf("--tls-client-crl needs --tls-client-ca")
	}
	if certFile == "" && keyFile == "" {
		if clientCAFile != "" {
			return nil, fmt.Errorf("--tls-client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("--tls-cert and --tls-key go together: give both or neither")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the TLS certificate and key: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		caPEM, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		var cas []*x509.Certificate
		for rest := caPEM; ; {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			if block.Type != "CERTIFICATE" {
				continue
			}
			ca, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("--tls-client-ca %s: %w", clientCAFile, err)
			}
			pool.AddCert(ca)
			cas = append(cas, ca)
		}
		if len(cas) == 0 {
			return nil, fmt.Errorf("--tls-client-ca %s holds no PEM certificate", clientCAFile)
		}
		if crlFile != "" {
			data, err := os.ReadFile(crlFile)
			if err != nil {
				return nil, fmt.Errorf("reading --tls-client-crl: %w", err)
			}
			crls, err := gateway.ParseRevocationLists(data, cas)
			if err != nil {
				return nil, fmt.Errorf("--tls-client-crl %s: %w", crlFile, err)
			}
			cfg.VerifyPeerCertificate = gateway.RefuseRevoked(crls)
		}
		// As PostgreSQL with ssl_ca_file: a client may present a
		// certificate, which is then verified; --auth cert demands one.
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// httpGuard parses --http-auth into the endpoints' configuration and, for
// cert, the TLS configuration the HTTP listener serves with.
func httpGuard(spec string, gcfg gateway.Config, acfg *admin.Config) (*tls.Config, error) {
	switch {
	case spec == "":
		return nil, nil
	case spec == "cert":
		if gcfg.TLS == nil || gcfg.TLS.ClientCAs == nil {
			return nil, fmt.Errorf("--http-auth cert needs --tls-cert, --tls-key and --tls-client-ca: the endpoints are then served over HTTPS")
		}
		acfg.RequireClientCert = true
		return gcfg.TLS.Clone(), nil
	case strings.HasPrefix(spec, "token:"):
		file := strings.TrimPrefix(spec, "token:")
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading the --http-auth token: %w", err)
		}
		token := strings.TrimSpace(string(b))
		if len(token) < 16 || strings.ContainsAny(token, " \t\r\n") {
			return nil, fmt.Errorf("the --http-auth token in %s must be one word of at least 16 characters", file)
		}
		acfg.Token = token
		return nil, nil
	}
	return nil, fmt.Errorf("--http-auth must be token:FILE or cert, not %q", spec)
}

// readUsersFile reads a users file: one "name:password" per line; blank
// lines and lines starting with # are ignored, and the password is
// everything after the first colon.
func readUsersFile(path string) (map[string]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading --users-file: %w", err)
	}
	defer fh.Close()
	users := map[string]string{}
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		name, password, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s:%d: want name:password", path, n)
		case name == "":
			return nil, fmt.Errorf("%s:%d: the user name is empty", path, n)
		case password == "":
			return nil, fmt.Errorf("%s:%d: user %q has an empty password", path, n, name)
		}
		if _, dup := users[name]; dup {
			return nil, fmt.Errorf("%s:%d: user %q is listed twice", path, n, name)
		}
		users[name] = password
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading --users-file: %w", err)
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("%s lists no users", path)
	}
	return users, nil
}
