// Package admin serves a RockStream server's HTTP endpoints for operators:
// liveness and readiness probes, a JSON health summary and Prometheus
// metrics. docs/operations.md documents every endpoint and metric.
//
// /health and /metrics may require a bearer token or a verified client
// certificate (Config.Token, Config.RequireClientCert); the probes /live,
// /ready and /ready/reads never do, so that orchestrators need no credentials.
//
// The endpoints answer from the moment the process listens, before the
// engine has recovered: /live is always 200, /ready is 503 until the
// server says it is ready (the engine recovered and the gateway listens),
// while the storage refuses writes (ready.go), and again once it starts
// shutting down, and /health and /metrics report what is known so far. Nothing here changes the engine's data; every
// answer is read from it when asked. The operator endpoints under /admin/
// (ops.go) read more of it; the one action, POST /admin/checkpoint
// (checkpoint.go), copies the store to object storage.
//
// The web console (console.go) is a page at / with its script and style,
// embedded in the binary, over read-only JSON endpoints under /api/.
//
// With a token or client certificates configured (guard.go), every
// endpoint but /live and /ready requires them: the health report, the
// metrics, the console, its API and the operator endpoints.
package admin

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rockstream/rockstream/internal/gateway"
	"github.com/rockstream/rockstream/internal/runtime"
)

// Config describes the server the endpoints report on.
type Config struct {
	// Version is the binary's version, reported by /health and
	// rockstream_build_info.
	Version string
	// StorageDir is the engine's storage directory; empty for an engine
	// in memory.
	StorageDir string
	// Token, when set, is the bearer token every endpoint but /live and
	// /ready requires (Authorization: Bearer <token>).
	Token string
	// RequireClientCert makes every endpoint but /live and /ready require
	// a client certificate the TLS server verified; the endpoints must
	// then be served over TLS with client certificates verified when
	// given.
	RequireClientCert bool
	// Logs, when set, returns the server's recent log lines, for GET
	// /admin/logs.
	Logs func() []byte
}

// GatewayStats is what the endpoints read from the wire gateway.
type GatewayStats interface {
	Stats() gateway.Stats
}

// Server holds the state the endpoints report. Its methods are safe for
// concurrent use.
type Server struct {
	cfg      Config
	started  time.Time
	eng      atomic.Pointer[runtime.Engine]
	gw       atomic.Pointer[GatewayStats]
	ready    atomic.Bool
	stopping atomic.Bool
	registry *prometheus.Registry
}

// New returns the endpoints of a server that is starting: not ready, with
// no engine yet.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, started: time.Now(), registry: prometheus.NewRegistry()}
	s.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&collector{s: s},
		&observeCollector{s: s},
		&checkpointCollector{s: s},
		spillCollector{},
	)
	return s
}

// SetEngine makes the endpoints report on eng, once it has recovered;
// nil stops them reading the engine (before it closes).
func (s *Server) SetEngine(eng *runtime.Engine) { s.eng.Store(eng) }

// SetGateway makes the endpoints report the gateway's connections; nil
// stops them.
func (s *Server) SetGateway(g GatewayStats) {
	if g == nil {
		s.gw.Store(nil)
		return
	}
	s.gw.Store(&g)
}

// SetReady says whether the server accepts clients: true once the engine
// recovered and the gateway listens.
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// SetStopping says the server is shutting down: /ready answers 503 from
// then on, so that load balancers stop sending clients.
func (s *Server) SetStopping() {
	s.stopping.Store(true)
	s.ready.Store(false)
}

func (s *Server) gateway() GatewayStats {
	if g := s.gw.Load(); g != nil {
		return *g
	}
	return nil
}

// Handler returns the endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /live", func(w http.ResponseWriter, r *http.Request) {
		writeText(w, http.StatusOK, "live\n")
	})
	mux.HandleFunc("GET /ready", s.serveReady(false))
	mux.HandleFunc("GET /ready/reads", s.serveReady(true))
	// Everything else is behind the guard.
	guarded := http.NewServeMux()
	guarded.HandleFunc("GET /health", s.serveHealth)
	guarded.Handle("GET /metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	s.routeActions(guarded)
	s.routeOps(guarded)
	guarded.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		consoleFiles.ServeHTTP(w, r) // the web console's page
	})
	s.registerConsole(guarded) // its script, its style and its /api/
	mux.Handle("/", s.guard(guarded))
	return mux
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// status is "ok" when ready, "stopping" once shutting down, and
// "starting" before.
func (s *Server) status() string {
	switch {
	case s.stopping.Load():
		return "stopping"
	case s.ready.Load():
		return "ok"
	}
	return "starting"
}

// Health is the body of /health.
type Health struct {
	// Status is "ok" (ready), "degraded" (ready, but the storage refuses
	// writes, or on a control the cluster cannot commit: Problem says
	// why), "starting" or "stopping"; the HTTP status is 200 for "ok" and
	// 503 otherwise.
	Status  string `json:"status"`
	Problem string `json:"problem,omitempty"`
	// Reads, while the status is "degraded", is "served" (reads are
	// answered from the last acknowledged commit) or "refused".
	Reads   string `json:"reads,omitempty"`
	Version string `json:"version"`
	// Epoch is the last committed epoch, DurableEpoch the last known to
	// survive a machine crash (null in memory), RecoveredEpoch the one
	// the engine started from; all null before recovery finished.
	Epoch          *uint64 `json:"epoch"`
	DurableEpoch   *uint64 `json:"durable_epoch"`
	RecoveredEpoch *uint64 `json:"recovered_epoch"`
	UptimeSeconds  float64 `json:"uptime_seconds"`
	// Storage is the storage directory, empty in memory.
	Storage           string `json:"storage"`
	InMemory          bool   `json:"in_memory"`
	Tables            int    `json:"tables"`
	MaterializedViews int    `json:"materialized_views"`
	Views             int    `json:"views"`
	Sessions          int    `json:"sessions"`
	// Connections is the number of open client connections of the
	// gateway.
	Connections int `json:"connections"`
	// Role is the process's role: "all" for a process that is the whole
	// system, "control" for a cluster's control process.
	Role string `json:"role"`
	// Frontier is the commit frontier, the last epoch every shard has
	// committed; Workers and Shards the process's workers (on a control,
	// the cluster's) and the bucket ranges they own (cluster.go). All null
	// before recovery finished.
	Frontier *uint64        `json:"frontier"`
	Workers  []WorkerHealth `json:"workers"`
	Shards   []ShardHealth  `json:"shards"`
}

func (s *Server) health() Health {
	h := Health{
		Status:        s.status(),
		Version:       s.cfg.Version,
		UptimeSeconds: time.Since(s.started).Seconds(),
		Storage:       s.cfg.StorageDir,
		InMemory:      s.cfg.StorageDir == "",
		Role:          runtime.RoleAll,
	}
	if eng := s.eng.Load(); eng != nil {
		clusterHealth(&h, eng)
		st := eng.Stats()
		h.Epoch, h.RecoveredEpoch = &st.Epoch, &st.RecoveredEpoch
		if st.Durable {
			h.DurableEpoch = &st.DurableEpoch
		}
		h.Tables, h.MaterializedViews, h.Views = eng.ObjectCounts()
		h.Sessions = st.Sessions
		if st.StorageProblem != "" && h.Status == "ok" {
			h.Status, h.Problem, h.Reads = "degraded", st.StorageProblem, "refused"
			if st.StorageReadsServed {
				h.Reads = "served"
			}
		}
	}
	if g := s.gateway(); g != nil {
		h.Connections = g.Stats().Connections
	}
	return h
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) { WriteHealth(w, s.health()) }

// WriteHealth answers a GET /health with h: HTTP 200 when its status is
// "ok", 503 otherwise, the body still saying what is known.
func WriteHealth(w http.ResponseWriter, h Health) {
	code := http.StatusOK
	if h.Status != "ok" {
		code = http.StatusServiceUnavailable
	}
	WriteJSON(w, code, h)
}
