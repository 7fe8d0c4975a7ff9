package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/admin"
	"github.com/rockstream/rockstream/internal/cluster"
	"github.com/rockstream/rockstream/internal/control"
)

// The /health of a control process (docs/cluster.md#status): the
// single-node answer's shape (admin.Health), filled from the cluster's
// status as etcd and the workers' endpoints report it. The role is
// "control"; the frontier (and epoch, durable_epoch) is the committed
// epoch in etcd; the workers are the cluster's, numbered in node-ID
// order and named by their node IDs; the shards are the assignment's
// bucket ranges, each with its owner's applied epoch and how far it lags
// behind the committed one, in epochs and in milliseconds. An owner that
// does not answer is shown at the applied epoch it last reported to this
// control. The status is "ok" while a
// coordinator leads, every bucket is assigned and every owner serves the
// assignment's revision, and "degraded" otherwise, with the reason in
// problem. Nothing here reads etcd or the network: controlHealth is pure.

// healthMeta is what /health reports of the control process itself.
type healthMeta struct {
	Version       string
	Storage       string
	UptimeSeconds float64
	// Now is when the cluster was read; lag_ms counts up to it.
	Now time.Time
	// LastReports are the last reports this control had of each worker,
	// for those that do not answer now.
	LastReports map[cluster.NodeID]control.WorkerReport
}

// controlHealth is the /health of a control whose reading of the cluster
// is st, or failed with readErr.
func controlHealth(st control.ClusterStatus, readErr error, meta healthMeta) admin.Health {
	h := admin.Health{Status: "ok", Version: meta.Version, UptimeSeconds: meta.UptimeSeconds,
		Storage: meta.Storage, Role: "control", Workers: []admin.WorkerHealth{}, Shards: []admin.ShardHealth{}}
	if readErr != nil {
		h.Status, h.Problem = "degraded", "reading the cluster's state: "+readErr.Error()
		return h
	}
	committed := uint64(st.Committed)
	h.Epoch, h.DurableEpoch, h.Frontier = &committed, &committed, &committed

	named := map[cluster.NodeID]bool{}
	for _, w := range st.Workers {
		named[w.ID] = true
	}
	workers := append([]control.WorkerRow(nil), st.Workers...)
	for _, s := range st.Assignment { // an owner nothing else names
		if !named[s.Owner] {
			named[s.Owner] = true
			workers = append(workers, control.WorkerRow{ID: s.Owner, Error: "neither a member nor advertised"})
		}
	}
	sort.Slice(workers, func(i, j int) bool { return workers[i].ID < workers[j].ID })
	number := map[cluster.NodeID]int{}
	for i, w := range workers {
		number[w.ID] = i
		h.Workers = append(h.Workers, workerHealth(i, w, meta.LastReports))
	}

	var problems []string
	if st.Leader == "" {
		problems = append(problems, "no coordinator leads the cluster")
	}
	if len(st.Assignment) == 0 {
		problems = append(problems, "no buckets are assigned (no worker is a member)")
	}
	reported := map[cluster.NodeID]bool{}
	for _, s := range st.Assignment {
		sh := admin.ShardHealth{FirstBucket: s.First, LastBucket: s.Last, Owner: number[s.Owner]}
		w := workers[number[s.Owner]]
		r, answered := lastReport(w, meta.LastReports)
		if r != nil {
			sh.Frontier = uint64(r.Applied)
		}
		if sh.Frontier < committed {
			sh.LagEpochs = committed - sh.Frontier
		}
		sh.LagMs = shardLagMs(answered && sh.Frontier >= committed, st.CommittedAt, meta.Now)
		h.Shards = append(h.Shards, sh)
		if p := ownerProblem(w, st.Revision); p != "" && !reported[s.Owner] {
			reported[s.Owner] = true
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		h.Status, h.Problem = "degraded", strings.Join(problems, "; ")
	}
	return h
}

// workerHealth is the row of worker w, numbered n: unreachable, at the
// applied epoch it last reported, when it does not answer.
func workerHealth(n int, w control.WorkerRow, last map[cluster.NodeID]control.WorkerReport) admin.WorkerHealth {
	wh := admin.WorkerHealth{ID: n, Name: string(w.ID), Role: "worker", Buckets: []string{}, State: "unreachable"}
	r, answered := lastReport(w, last)
	if r != nil {
		wh.AppliedEpoch = uint64(r.Applied)
	}
	if answered {
		wh.State = r.Phase
		if r.Serving {
			wh.State = "serving"
			wh.Buckets, wh.BucketCount = append(wh.Buckets, r.Buckets...), r.BucketCount
		}
	}
	return wh
}

// lastReport is w's report, or the last one it gave when it does not
// answer (nil if none); answered says which.
func lastReport(w control.WorkerRow, last map[cluster.NodeID]control.WorkerReport) (*control.WorkerReport, bool) {
	if w.Report != nil {
		return w.Report, true
	}
	if r, ok := last[w.ID]; ok {
		return &r, false
	}
	return nil, false
}

// shardLagMs is a shard's lag_ms: 0 while its owner answers at the
// frontier; otherwise the time since the frontier's epoch was committed
// (at committedAt; zero when unknown): the time since its owner's
// applied epoch was committed when it does not answer at the frontier,
// or since the first epoch it has not applied when it is one behind, a
// lower bound when it is further behind.
func shardLagMs(current bool, committedAt, now time.Time) int64 {
	if current || committedAt.IsZero() || !now.After(committedAt) {
		return 0
	}
	return now.Sub(committedAt).Milliseconds()
}

// ownerProblem says why w, which owns buckets of the assignment at rev,
// does not serve them; empty when it does.
func ownerProblem(w control.WorkerRow, rev cluster.Revision) string {
	r := w.Report
	switch {
	case r == nil && w.Error != "":
		return fmt.Sprintf("worker %s owns buckets but is unreachable: %s", w.ID, w.Error)
	case r == nil:
		return fmt.Sprintf("worker %s owns buckets but is unreachable", w.ID)
	case !r.Serving:
		return fmt.Sprintf("worker %s owns buckets but does not serve (%s)", w.ID, r.Phase)
	case r.Revision != rev:
		return fmt.Sprintf("worker %s serves assignment revision %d, not the current %d", w.ID, r.Revision, rev)
	}
	return ""
}
