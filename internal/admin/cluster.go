package admin

import "github.com/rockstream/rockstream/internal/runtime"

// The cluster state /health reports: the process's role, its workers and
// the shards they own (docs/cluster.md#status). A single process has the
// role "all" and its workers are the engine's; a control process of the
// cluster (cmd/rockstream) fills the same Health from the cluster's status
// with the role "control".

// WorkerHealth is one worker as /health reports it.
type WorkerHealth struct {
	// ID is the worker's number: on one node its index among the
	// engine's workers, on a control its position in the list, which is
	// in Name order; shards name their owner by it.
	ID int `json:"id"`
	// Name is a cluster worker's node ID (--node-id); empty on one node.
	Name string `json:"name,omitempty"`
	Role string `json:"role"`
	// Buckets are the bucket ranges the worker owns, "first-last" each.
	Buckets      []string `json:"buckets"`
	BucketCount  int      `json:"bucket_count"`
	State        string   `json:"state"`
	AppliedEpoch uint64   `json:"applied_epoch"`
}

// ShardHealth is one shard (a contiguous bucket range with one owner) as
// /health reports it.
type ShardHealth struct {
	FirstBucket int    `json:"first_bucket"`
	LastBucket  int    `json:"last_bucket"`
	Owner       int    `json:"owner"`
	Frontier    uint64 `json:"frontier"`
	LagEpochs   uint64 `json:"lag_epochs"`
	LagMs       int64  `json:"lag_ms"`
}

// clusterHealth fills h's role, frontier, workers and shards from eng.
func clusterHealth(h *Health, eng *runtime.Engine) {
	workers := eng.Workers()
	h.Workers = make([]WorkerHealth, len(workers))
	for i, w := range workers {
		ranges := make([]string, len(w.Buckets))
		for j, r := range w.Buckets {
			ranges[j] = r.String()
		}
		h.Workers[i] = WorkerHealth{ID: w.ID, Role: w.Role, Buckets: ranges, BucketCount: w.BucketCount(),
			State: w.State, AppliedEpoch: w.AppliedEpoch}
	}
	shards := eng.Shards()
	h.Shards = make([]ShardHealth, len(shards))
	var frontier uint64
	for i, s := range shards {
		h.Shards[i] = ShardHealth{FirstBucket: s.FirstBucket, LastBucket: s.LastBucket, Owner: s.Owner,
			Frontier: s.Frontier, LagEpochs: s.LagEpochs, LagMs: s.Lag.Milliseconds()}
		if i == 0 || s.Frontier < frontier {
			frontier = s.Frontier
		}
	}
	// The frontier is the minimum over the shards: every bucket has
	// committed it.
	h.Frontier = &frontier
}
