package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/admin"
	"github.com/rockstream/rockstream/internal/cluster"
	"github.com/rockstream/rockstream/internal/control"
)

// controlAPI is the HTTP endpoints of a control process
// (docs/cluster.md#processes):
//
//	GET  /live             200 while the process runs
//	GET  /health           the cluster's state in the single-node /health shape (controlhealth.go)
//	GET  /cluster/etcd     {"endpoints": [...]}, for workers started with --control
//	GET  /cluster/status   the cluster's state (?state=1 adds each worker's sums)
//	POST /cluster/writes   submit writes of the keyed-sum workload, wait for their acks
//	GET  /admin/audit      the audit log's lines after ?after=SEQ
type controlAPI struct {
	store     *control.Store
	client    *control.Client
	coord     *control.CoordinatorHost
	etcd      []string
	objects   string
	auditPath string
	// meta is what /health reports of this process, started when it
	// started; stopping is set once it shuts down.
	meta     healthMeta
	started  time.Time
	stopping atomic.Bool
}

// controlStatus is the answer of GET /cluster/status.
type controlStatus struct {
	control.ClusterStatus
	Etcd    []string `json:"etcd"`
	Objects string   `json:"objects"`
	// Coordinator is this process's coordinator, when it leads.
	Coordinator *control.CoordinatorStatus `json:"coordinator,omitempty"`
}

// writesRequest is the body of POST /cluster/writes.
type writesRequest struct {
	Writes []cluster.Write `json:"writes"`
	// TimeoutMs bounds the wait for the acknowledgements (default 5000,
	// at most 60000).
	TimeoutMs int `json:"timeout_ms"`
}

// writesAnswer lists the writes acknowledged; the others have an unknown
// outcome.
type writesAnswer struct {
	Acked []uint64 `json:"acked"`
}

const maxWritesPerRequest = 10000

func (a *controlAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /live", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "live") })
	mux.HandleFunc("GET /cluster/etcd", func(w http.ResponseWriter, r *http.Request) {
		admin.WriteJSON(w, http.StatusOK, map[string][]string{"endpoints": a.etcd})
	})
	mux.HandleFunc("GET /health", a.health)
	mux.HandleFunc("GET /cluster/status", a.status)
	mux.HandleFunc("POST /cluster/writes", a.writes)
	mux.HandleFunc("GET /admin/audit", a.audit)
	return mux
}

func (a *controlAPI) status(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	st, err := control.ReadStatus(ctx, a.store, r.URL.Query().Get("state") == "1")
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err)
		return
	}
	ans := controlStatus{ClusterStatus: st, Etcd: a.etcd, Objects: a.objects}
	cctx, ccancel := context.WithTimeout(ctx, 200*time.Millisecond)
	if cs, err := a.coord.Status(cctx); err == nil {
		ans.Coordinator = &cs
	}
	ccancel()
	admin.WriteJSON(w, http.StatusOK, ans)
}

func (a *controlAPI) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	st, err := control.ReadStatus(ctx, a.store, false)
	meta := a.meta
	meta.UptimeSeconds = time.Since(a.started).Seconds()
	h := controlHealth(st, err, meta)
	if a.stopping.Load() {
		h.Status = "stopping"
	}
	admin.WriteHealth(w, h)
}

func (a *controlAPI) writes(w http.ResponseWriter, r *http.Request) {
	var req writesRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("the body is not a writes request: %w", err))
		return
	}
	switch {
	case len(req.Writes) == 0 || len(req.Writes) > maxWritesPerRequest:
		httpError(w, http.StatusBadRequest, fmt.Errorf("a request carries 1 to %d writes, not %d", maxWritesPerRequest, len(req.Writes)))
		return
	case req.TimeoutMs < 0 || req.TimeoutMs > 60000:
		httpError(w, http.StatusBadRequest, errors.New("timeout_ms must be between 0 and 60000"))
		return
	}
	seen := make(map[uint64]bool, len(req.Writes))
	for _, wr := range req.Writes {
		if wr.ID == 0 || wr.Key == "" || seen[wr.ID] {
			httpError(w, http.StatusBadRequest, fmt.Errorf("write %d: every write needs a unique nonzero ID and a key", wr.ID))
			return
		}
		seen[wr.ID] = true
	}
	// Acknowledgements go to the client node of the leading control only.
	lctx, lcancel := context.WithTimeout(r.Context(), 200*time.Millisecond)
	_, err := a.coord.Status(lctx)
	lcancel()
	if err != nil {
		leader, _ := a.store.Resolve(r.Context(), cluster.CoordinatorID)
		httpError(w, http.StatusServiceUnavailable, fmt.Errorf("this control process does not lead the cluster; the leader's cluster endpoint is %q", leader))
		return
	}
	timeout := 5 * time.Second
	if req.TimeoutMs > 0 {
		timeout = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	acked := a.client.Submit(ctx, req.Writes)
	if acked == nil {
		acked = []uint64{}
	}
	admin.WriteJSON(w, http.StatusOK, writesAnswer{Acked: acked})
}

func (a *controlAPI) audit(w http.ResponseWriter, r *http.Request) {
	admin.ServeAuditFile(w, r, a.auditPath)
}

// httpError answers with err in the shape of the server's refusals
// (admin.ActionError, without a SQLSTATE).
func httpError(w http.ResponseWriter, code int, err error) {
	admin.WriteJSON(w, code, admin.ActionError{Error: err.Error()})
}

// listened is a listener bound, or why not.
type listened struct {
	ln  net.Listener
	err error
}

func bind(addr, flag string) listened {
	ln, err := listen(addr, flag)
	return listened{ln, err}
}

// bindCluster binds --cluster-addr, whose address is advertised to the
// other processes as bound: a wildcard host would name no machine.
func bindCluster(addr string) listened {
	l := bind(addr, "--cluster-addr")
	if l.err == nil {
		if a, ok := l.ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
			l.ln.Close()
			l = listened{err: fmt.Errorf("--cluster-addr %s is advertised to the other processes as bound: give the host they reach this one at, not a wildcard", addr)}
		}
	}
	return l
}
