package runtime

import (
	"fmt"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The workers of the process and the buckets they own, as
// rockstream_catalog.workers and .shards, /health and `rockstream cluster
// status` show them. On a single node every worker has the role "all"
// (it maintains views, answers queries and commits), owns the contiguous
// range of buckets zset.BucketOwner gives it, and applies every epoch at
// once with the others: an epoch's writes from all workers commit as one
// atomic batch. The shard table is computed from the workers alone
// (shardsOf), so that it reads the same once workers apply epochs on
// their own.

// RoleAll is the role of a process that is the whole system: gateway,
// coordinator and every worker.
const RoleAll = "all"

// The states of a worker.
const (
	// WorkerServing: the worker steps circuits and its epochs commit.
	WorkerServing = "serving"
	// WorkerFailed: the storage failed to commit an epoch and the engine
	// accepts no writes until it has recovered.
	WorkerFailed = "failed"
)

// BucketRange is the buckets First to Last, both included.
type BucketRange struct {
	First, Last int
}

// String returns r as "first-last".
func (r BucketRange) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// Len returns the number of buckets in r.
func (r BucketRange) Len() int { return r.Last - r.First + 1 }

// WorkerInfo describes one worker of the process.
type WorkerInfo struct {
	ID   int
	Role string
	// Buckets are the bucket ranges the worker owns, in order; none when
	// there are more workers than buckets.
	Buckets []BucketRange
	State   string
	// AppliedEpoch is the last epoch the worker has applied, and
	// AppliedAt when that epoch committed (the engine's start when it
	// committed before the engine opened).
	AppliedEpoch uint64
	AppliedAt    time.Time
}

// BucketCount returns the number of buckets w owns.
func (w WorkerInfo) BucketCount() int {
	n := 0
	for _, r := range w.Buckets {
		n += r.Len()
	}
	return n
}

// BucketText is w's buckets as ranges ("0-85", "0-9,20-29"); "" for none.
func (w WorkerInfo) BucketText() string {
	parts := make([]string, len(w.Buckets))
	for i, r := range w.Buckets {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// ShardInfo is one contiguous range of buckets with one owner.
type ShardInfo struct {
	FirstBucket, LastBucket int
	// Owner is the owning worker's ID.
	Owner int
	// Frontier is the last epoch committed for the shard's buckets.
	Frontier uint64
	// LagEpochs is how many epochs the shard is behind the most advanced
	// shard, and Lag how long before that shard's epoch its own epoch
	// committed.
	LagEpochs uint64
	Lag       time.Duration
}

// bucketRanges returns, for each of n workers, the contiguous bucket
// ranges it owns under owner (bucket → worker).
func bucketRanges(n int, owner func(b, n int) int) [][]BucketRange {
	out := make([][]BucketRange, n)
	for b := 0; b < zset.Buckets; {
		w := owner(b, n)
		last := b
		for last+1 < zset.Buckets && owner(last+1, n) == w {
			last++
		}
		out[w] = append(out[w], BucketRange{First: b, Last: last})
		b = last + 1
	}
	return out
}

// shardsOf returns the shards of workers: one per bucket range each
// worker owns, ordered by first bucket, with each shard's lag behind the
// most advanced worker.
func shardsOf(workers []WorkerInfo) []ShardInfo {
	var newest WorkerInfo
	for _, w := range workers {
		if w.AppliedEpoch > newest.AppliedEpoch {
			newest = w
		}
	}
	byFirst := make([]*ShardInfo, zset.Buckets)
	for _, w := range workers {
		lag := newest.AppliedAt.Sub(w.AppliedAt)
		if lag < 0 || w.AppliedEpoch == newest.AppliedEpoch {
			lag = 0
		}
		for _, r := range w.Buckets {
			byFirst[r.First] = &ShardInfo{FirstBucket: r.First, LastBucket: r.Last, Owner: w.ID,
				Frontier: w.AppliedEpoch, LagEpochs: newest.AppliedEpoch - w.AppliedEpoch, Lag: lag}
		}
	}
	var out []ShardInfo
	for _, s := range byFirst {
		if s != nil {
			out = append(out, *s)
		}
	}
	return out
}

// Workers returns the workers of the process, by ID.
func (e *Engine) Workers() []WorkerInfo {
	epoch, at := e.obs.appliedAt()
	state := WorkerServing
	e.mu.RLock()
	if e.mu.failed != nil {
		state = WorkerFailed
	}
	e.mu.RUnlock()
	ranges := bucketRanges(e.opts.Workers, zset.BucketOwner)
	out := make([]WorkerInfo, len(ranges))
	for i, r := range ranges {
		out[i] = WorkerInfo{ID: i, Role: RoleAll, Buckets: r, State: state, AppliedEpoch: epoch, AppliedAt: at}
	}
	return out
}

// Shards returns the shards of the process, by first bucket.
func (e *Engine) Shards() []ShardInfo { return shardsOf(e.Workers()) }

// workerColumns are the columns of rockstream_catalog.workers.
var workerColumns = []plan.Column{
	{Name: "worker_id", Type: types.Of(types.Int4)},
	{Name: "role", Type: types.Of(types.Text)},
	{Name: "buckets", Type: types.Of(types.Text)},
	{Name: "bucket_count", Type: types.Of(types.Int4)},
	{Name: "state", Type: types.Of(types.Text)},
	{Name: "applied_epoch", Type: types.Of(types.Int8)},
}

func workerRows(workers []WorkerInfo) zset.Batch {
	out := make(zset.Batch, len(workers))
	for i, w := range workers {
		out[i] = zset.Entry{Row: zset.Row{
			types.MakeInt(types.Int4, int64(w.ID)), types.MakeText(w.Role), types.MakeText(w.BucketText()),
			types.MakeInt(types.Int4, int64(w.BucketCount())), types.MakeText(w.State),
			types.MakeInt(types.Int8, int64(w.AppliedEpoch)),
		}, Weight: 1}
	}
	return out
}

// shardColumns are the columns of rockstream_catalog.shards.
var shardColumns = []plan.Column{
	{Name: "first_bucket", Type: types.Of(types.Int4)},
	{Name: "last_bucket", Type: types.Of(types.Int4)},
	{Name: "owner", Type: types.Of(types.Int4)},
	{Name: "frontier", Type: types.Of(types.Int8)},
	{Name: "lag_epochs", Type: types.Of(types.Int8)},
	{Name: "lag_ms", Type: types.Of(types.Int8)},
}

func shardRows(shards []ShardInfo) zset.Batch {
	out := make(zset.Batch, len(shards))
	for i, s := range shards {
		out[i] = zset.Entry{Row: zset.Row{
			types.MakeInt(types.Int4, int64(s.FirstBucket)), types.MakeInt(types.Int4, int64(s.LastBucket)),
			types.MakeInt(types.Int4, int64(s.Owner)), types.MakeInt(types.Int8, int64(s.Frontier)),
			types.MakeInt(types.Int8, int64(s.LagEpochs)), types.MakeInt(types.Int8, s.Lag.Milliseconds()),
		}, Weight: 1}
	}
	return out
}
