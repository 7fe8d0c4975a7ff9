package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
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
//	GET  /cluster/writes/{id}?term=T&after_epoch=E  the outcome of a write submitted with that receipt
//	GET  /admin/audit      the audit log's lines after ?after=SEQ
type controlAPI struct {
	store     *control.Store
	objects   control.Objects
	client    *control.Client
	coord     *control.CoordinatorHost
	etcd      []string
	location  string
	auditPath string
	// meta is what /health reports of this process, started when it
	// started; stopping is set once it shuts down.
	meta     healthMeta
	started  time.Time
	stopping atomic.Bool

	// last is each worker's last report to this control, which /health
	// shows for a worker that does not answer.
	mu   sync.Mutex
	last map[cluster.NodeID]control.WorkerReport
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
// outcome, which GET /cluster/writes/{id} finds out with the receipt the
// answer carries (also in its headers, sent before the wait).
type writesAnswer struct {
	Acked []uint64 `json:"acked"`
	control.Receipt
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
	mux.HandleFunc("GET /cluster/writes/{id}", a.writeOutcome)
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
	ans := controlStatus{ClusterStatus: st, Etcd: a.etcd, Objects: a.location}
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
	meta.Now = time.Now()
	meta.UptimeSeconds = meta.Now.Sub(a.started).Seconds()
	meta.LastReports = a.remember(st)
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
	timeout := 5 * time.Second
	if req.TimeoutMs > 0 {
		timeout = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	// Only the leading control takes writes: its coordinator's term takes
	// them, and the acknowledgements come to its client node. The receipt
	// goes out in the headers as soon as the writes are taken, so that a
	// client whose answer is cut off (the control dies) can still learn
	// their outcome.
	receipt, acked, err := a.client.Submit(ctx, req.Writes, func(rc control.Receipt) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(receiptTermHeader, strconv.FormatInt(rc.Term, 10))
		w.Header().Set(receiptAfterHeader, strconv.FormatUint(uint64(rc.After), 10))
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	})
	switch {
	case errors.Is(err, control.ErrInFlight):
		httpError(w, http.StatusConflict, fmt.Errorf("%w: wait for its answer, or ask for its outcome with its receipt", err))
		return
	case err != nil:
		ans := notLeading{Leader: a.leaderHTTP(r.Context())}
		ans.Error = "this control process does not lead the cluster"
		if ans.Leader != "" {
			ans.Error += "; the leading control's HTTP address is " + ans.Leader
		}
		admin.WriteJSON(w, http.StatusServiceUnavailable, ans)
		return
	}
	if acked == nil {
		acked = []uint64{}
	}
	_ = json.NewEncoder(w).Encode(writesAnswer{Acked: acked, Receipt: receipt})
}

// notLeading is the refusal of POST /cluster/writes by a control that
// does not lead: Leader is the leading control's HTTP address, when it
// answered.
type notLeading struct {
	admin.ActionError
	Leader string `json:"leader,omitempty"`
}

// controlNode is what a control's cluster endpoint answers to the Status
// call: where its HTTP endpoints are.
type controlNode struct {
	HTTPAddr string `json:"http_addr"`
}

// leaderHTTP asks the leading control's cluster endpoint for its HTTP
// address; empty when none leads or it does not answer within 500 ms.
func (a *controlAPI) leaderHTTP(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	addr, err := a.store.Resolve(ctx, cluster.CoordinatorID)
	if err != nil {
		return ""
	}
	var n controlNode
	if control.NodeStatus(ctx, addr, false, &n) != nil {
		return ""
	}
	return n.HTTPAddr
}

// The headers of POST /cluster/writes's answer carrying the receipt.
const (
	receiptTermHeader  = "Rockstream-Write-Term"
	receiptAfterHeader = "Rockstream-Write-After-Epoch"
)

// writeOutcome answers whether a write is committed, with the receipt of
// its submission (docs/cluster.md#writes-and-their-outcome). Any control
// answers.
func (a *controlAPI) writeOutcome(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		httpError(w, http.StatusBadRequest, fmt.Errorf("write ID %q is not a nonzero integer", r.PathValue("id")))
		return
	}
	q := r.URL.Query()
	term, err1 := strconv.ParseInt(q.Get("term"), 10, 64)
	after, err2 := strconv.ParseUint(q.Get("after_epoch"), 10, 64)
	if err1 != nil || err2 != nil {
		httpError(w, http.StatusBadRequest, errors.New("give the receipt of the write's submission: ?term=T&after_epoch=E, as POST /cluster/writes answered"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	out, err := control.WriteOutcome(ctx, a.store, a.objects, id, control.Receipt{Term: term, After: cluster.Epoch(after)})
	switch {
	case errors.Is(err, control.ErrBadReceipt):
		httpError(w, http.StatusBadRequest, err)
	case err != nil:
		httpError(w, http.StatusServiceUnavailable, err)
	default:
		admin.WriteJSON(w, http.StatusOK, out)
	}
}

// remember keeps the reports of st's workers that answered and returns
// the last report of each worker.
func (a *controlAPI) remember(st control.ClusterStatus) map[cluster.NodeID]control.WorkerReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last == nil {
		a.last = map[cluster.NodeID]control.WorkerReport{}
	}
	for _, w := range st.Workers {
		if w.Report != nil && w.Report.Phase != "not answering" {
			a.last[w.ID] = *w.Report
		}
	}
	out := make(map[cluster.NodeID]control.WorkerReport, len(a.last))
	for id, r := range a.last {
		out[id] = r
	}
	return out
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
