package lake

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rockstream/rockstream/internal/storage"
)

// DefaultAddr is where `rockstream lake` listens unless told otherwise:
// not 5432 (PostgreSQL) nor rockstream start's port.
const DefaultAddr = "127.0.0.1:5442"

// Config configures a Server.
type Config struct {
	// Dir is the lake's storage directory.
	Dir string
	// DataPath is the data_path the bootstrap writes into
	// ducklake_metadata: where DuckDB keeps the lake's Parquet files.
	DataPath string
	// NoBootstrap leaves a new catalog empty, for DuckDB to initialize
	// itself (its CREATE TABLE and COPY statements are accepted).
	NoBootstrap bool
	// MetadataSchema is the schema the bootstrap creates and puts the
	// catalog in, for DuckDB's ATTACH ... (METADATA_SCHEMA 'name'); empty
	// means public.
	MetadataSchema string
	// Durability is storage.Sync (the default: every commit is fsynced)
	// or storage.Relaxed (tests).
	Durability storage.Durability
	// fs is the file system the store is on (nil: the operating
	// system's); tests inject faults through it.
	fs vfs.FS
	// Auth is AuthTrust (the default when Users is nil), AuthPassword
	// (cleartext; use it with TLS) or AuthSCRAM (the default when Users is
	// set), as rockstream start offers them.
	Auth string
	// Users maps user names to passwords for AuthPassword and AuthSCRAM.
	Users map[string]string
	// TLS, when set, lets clients upgrade with SSLRequest.
	TLS *tls.Config
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Server is a RockLake catalog server: the store and the sessions of
// its clients. Open it, Serve a listener, Close it.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   *Store
	metrics *metrics
	pid     atomic.Uint32
	started time.Time
	// secret salts the mock SCRAM exchanges of unknown users.
	secret []byte

	mu struct {
		sync.Mutex
		listeners map[net.Listener]struct{}
		conns     map[net.Conn]struct{}
		// sessions are the started sessions by process id, for
		// CancelRequest (cancel.go).
		sessions map[uint32]*session
		closed   bool
	}
	wg sync.WaitGroup
}

// Open opens (creating when missing) the lake in cfg.Dir. A new lake is
// bootstrapped with the DuckLake catalog unless cfg.NoBootstrap.
func Open(cfg Config) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("lake: no storage directory given")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	st, err := openStore(cfg.Dir, cfg.Durability, log, cfg.fs)
	if err != nil {
		return nil, fmt.Errorf("lake: open %s: %w", cfg.Dir, err)
	}
	switch cfg.Auth {
	case "", AuthTrust, AuthPassword, AuthSCRAM:
	default:
		return nil, errors.Join(fmt.Errorf("lake: authentication must be trust, password or scram-sha-256, not %q", cfg.Auth), st.Close())
	}
	s := &Server{cfg: cfg, log: log, store: st, metrics: newMetrics(), started: time.Now(), secret: make([]byte, 32)}
	_, _ = rand.Read(s.secret)
	s.mu.listeners = map[net.Listener]struct{}{}
	s.mu.conns = map[net.Conn]struct{}{}
	s.mu.sessions = map[uint32]*session{}
	if st.Rev() == 0 && !cfg.NoBootstrap {
		if err := s.bootstrap(); err != nil {
			return nil, errors.Join(fmt.Errorf("lake: bootstrap: %w", err), st.Close())
		}
		log.Info("lake: bootstrapped the DuckLake catalog", "version", CatalogVersion, "dir", cfg.Dir)
	}
	return s, nil
}

// bootstrap creates the catalog and its initial rows in one commit.
func (s *Server) bootstrap() error {
	tx := newTxn(s.store)
	tx.begin()
	now := time.Now()
	dataPath := s.cfg.DataPath
	if dataPath == "" {
		dataPath = "data/"
	}
	stmts := append(CatalogDDL(), InitialRows(dataPath, now, newUUIDv7(now))...)
	if schema := s.cfg.MetadataSchema; schema != "" && schema != "public" {
		if _, err := tx.runCreateSchema(&createSchemaPlan{name: schema}); err != nil {
			return err
		}
		for i, text := range stmts {
			stmts[i] = strings.ReplaceAll(text, `"public".`, quoteIdent(schema)+".")
		}
	}
	for _, text := range stmts {
		parsed, err := Classify(text)
		if err != nil {
			return err
		}
		for _, st := range parsed {
			switch st.Kind {
			case KindCreateTable:
				_, err = tx.runCreate(st.create)
			case KindInsert:
				_, err = tx.runInsert(st.insert)
			default:
				err = fmt.Errorf("unexpected bootstrap statement %s", st.Kind)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", summary(text), err)
			}
		}
	}
	_, err := s.store.Commit(tx.ws)
	tx.finish()
	return err
}

// Store returns the server's catalog store.
func (s *Server) Store() *Store { return s.store }

func (s *Server) nextPID() uint32 { return s.pid.Add(1) }

func (s *Server) authMethod() string {
	switch {
	case s.cfg.Auth != "":
		return s.cfg.Auth
	case s.cfg.Users != nil:
		return AuthSCRAM
	}
	return AuthTrust
}

// commit applies a transaction's writes, counting commits and
// conflicts.
func (s *Server) commit(tx *txn) error {
	if tx == nil || tx.ws.empty() {
		return nil
	}
	began := time.Now()
	_, err := s.store.Commit(tx.ws)
	s.metrics.commitSeconds.Observe(time.Since(began).Seconds())
	if err != nil {
		var se *sqlError
		if errors.As(err, &se) && (se.code == codeUniqueViolation || se.code == codeSerialization) {
			s.metrics.conflicts.Inc()
		}
		return err
	}
	s.metrics.commits.Inc()
	return nil
}

// countConflict counts a write refused for a conflict: an INSERT (or
// COPY) of a primary key a committed row holds fails with 23505 when it
// runs, as in PostgreSQL, which is how DuckLake's concurrent commits
// usually meet; a COMMIT's refusals are counted by commit.
func (s *Server) countConflict(k Kind, err error) {
	switch k {
	case KindInsert, KindCopyIn, KindUpdate, KindDelete:
	default:
		return
	}
	var se *sqlError
	if errors.As(err, &se) && (se.code == codeUniqueViolation || se.code == codeSerialization) {
		s.metrics.conflicts.Inc()
	}
}

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.mu.listeners[ln] = struct{}{}
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.mu.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		s.mu.Lock()
		if s.mu.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.mu.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(nc)
	}
}

func (s *Server) serveConn(nc net.Conn) {
	defer s.wg.Done()
	s.metrics.connections.Inc()
	defer s.metrics.connections.Dec()
	defer func() {
		s.mu.Lock()
		delete(s.mu.conns, nc)
		s.mu.Unlock()
		nc.Close()
	}()
	sess := &session{srv: s, nc: nc, be: pgproto3.NewBackend(nc, nc),
		stmts: map[string]*Statement{}, portals: map[string]*portal{}}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("lake: session panicked", "panic", r)
		}
	}()
	// A session that ends (the client went away) rolls back its
	// transaction, releasing what other writers wait for.
	defer sess.endTxn()
	defer s.unregister(sess)
	if err := sess.serve(); err != nil && !errors.Is(err, net.ErrClosed) {
		s.log.Debug("lake: session ended", "err", err)
	}
}

// Close stops the listeners, ends the sessions (their open
// transactions roll back) and closes the store.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.closed = true
	for ln := range s.mu.listeners {
		ln.Close()
	}
	for c := range s.mu.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return s.store.Close()
}

// Health is what /health reports.
type Health struct {
	Status        string  `json:"status"`
	Dir           string  `json:"dir"`
	Revision      uint64  `json:"revision"`
	Tables        int     `json:"tables"`
	UptimeSeconds float64 `json:"uptime_seconds"`
}

// Handler serves /health (JSON), /metrics (Prometheus) and POST
// /admin/checkpoint (an online checkpoint, checkpoint.go).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		h := Health{Status: "ok", Dir: s.cfg.Dir, Revision: s.store.Rev(), Tables: len(s.store.liveTables()),
			UptimeSeconds: time.Since(s.started).Seconds()}
		code := http.StatusOK
		if err := s.store.db.Err(); err != nil {
			h.Status, code = "failed: "+err.Error(), http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(h)
	})
	mux.Handle("/metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("POST /admin/checkpoint", s.serveCheckpoint)
	return mux
}

// metrics are the server's Prometheus series (docs/lake.md).
type metrics struct {
	registry      *prometheus.Registry
	statements    *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	commits       prometheus.Counter
	conflicts     prometheus.Counter
	commitSeconds prometheus.Histogram
	connections   prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		statements: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rocklake_statements_total",
			Help: "Statements received, by kind (unsupported included)."}, []string{"kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rocklake_statement_seconds",
			Help: "Statement latency, by kind.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}, []string{"kind"}),
		commits: prometheus.NewCounter(prometheus.CounterOpts{Name: "rocklake_commits_total",
			Help: "Transactions committed with changes."}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "rocklake_commit_conflicts_total",
			Help: "Transactions refused for a conflict (23505 or 40001), at the write that meets it or at COMMIT."}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rocklake_commit_seconds",
			Help: "Time to apply and fsync a commit.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rocklake_connections",
			Help: "Open client connections."}),
	}
	m.registry.MustRegister(m.statements, m.latency, m.commits, m.conflicts, m.commitSeconds, m.connections)
	return m
}

func (m *metrics) statement(k Kind, d time.Duration) {
	m.statements.WithLabelValues(k.String()).Inc()
	m.latency.WithLabelValues(k.String()).Observe(d.Seconds())
}

// ListenAndServe listens on addr and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	return s.Serve(ln)
}
