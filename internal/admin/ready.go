package admin

import (
	"encoding/json"
	"net/http"
	"time"
)

// Readiness. /ready says whether the server can serve its purpose: it
// answers 200 only while it has recovered, listens, is not stopping, and
// its storage takes writes. While the storage refuses writes (the disk is
// full) or is stopped (a failed write; it reopens itself once the
// condition clears), /ready answers 503 with a JSON body naming the
// reason, so that a load balancer or Kubernetes sends clients elsewhere
// without restarting the process (/live stays 200), and 200 again once the
// storage has recovered. /ready/reads answers 200 while reads are served,
// for deployments that route reads apart: while the disk is full, and
// while the storage is stopped as long as it serves reads at the last
// acknowledged commit (it refuses them when the failed instance cannot be
// read safely, or once a recovery attempt has let go of it).

// notReady is the body of /ready and /ready/reads when the storage is
// degraded.
type notReady struct {
	// Status is "degraded".
	Status string `json:"status"`
	// Reason is one line naming the condition, when it began and the
	// storage's error.
	Reason string `json:"reason"`
	// Since is when the condition began (RFC 3339, UTC).
	Since string `json:"since,omitempty"`
	// Reads is "served" while the disk is full and while the stopped
	// storage serves reads at the last acknowledged commit, "refused"
	// otherwise.
	Reads string `json:"reads"`
	// Problem is the storage's error.
	Problem string `json:"problem"`
}

// degradation returns the body of a degraded /ready, or nil when the
// storage takes writes.
func (s *Server) degradation() *notReady {
	eng := s.eng.Load()
	if eng == nil {
		return nil
	}
	st := eng.Stats()
	if st.StorageProblem == "" {
		return nil
	}
	b := &notReady{Status: "degraded", Problem: st.StorageProblem, Reads: "refused"}
	b.Reason = "storage degraded: reads and writes refused"
	if st.StorageReadsServed {
		b.Reads, b.Reason = "served", "storage degraded: writes refused"
	}
	if !st.StorageProblemSince.IsZero() {
		b.Since = st.StorageProblemSince.UTC().Format(time.RFC3339)
		b.Reason += " since " + b.Since
	}
	if st.StorageReadsServed {
		b.Reason += " (reads served)"
	}
	b.Reason += ": " + st.StorageProblem
	return b
}

// serveReady answers /ready, or /ready/reads when reads.
func (s *Server) serveReady(reads bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.ready.Load() {
			writeText(w, http.StatusServiceUnavailable, s.status()+"\n")
			return
		}
		d := s.degradation()
		if d == nil || (reads && d.Reads == "served") {
			writeText(w, http.StatusOK, "ready\n")
			return
		}
		body, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(append(body, '\n'))
	}
}
