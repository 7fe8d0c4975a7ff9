package control

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rockstream/rockstream/internal/cluster"
)

// WorkerReport is what a worker process answers to its endpoint's Status
// call: its machine's state.
type WorkerReport struct {
	ID       cluster.NodeID   `json:"id"`
	Phase    string           `json:"phase"`
	Lease    cluster.LeaseID  `json:"lease"`
	Revision cluster.Revision `json:"revision"`
	Serving  bool             `json:"serving"`
	// Buckets are the ranges it serves, "first-last".
	Buckets     []string      `json:"buckets"`
	BucketCount int           `json:"bucket_count"`
	Applied     cluster.Epoch `json:"applied_epoch"`
	// State is the keyed sum of its buckets at Applied, when asked for.
	State cluster.Batch `json:"state,omitempty"`
}

// Report turns a worker host's status into its report.
func (st WorkerStatus) Report(id cluster.NodeID, withState bool) WorkerReport {
	r := WorkerReport{ID: id, Phase: st.Phase, Lease: st.Lease, Revision: st.Rev, Serving: st.Serving, Applied: st.Applied}
	if st.Serving {
		r.Buckets, r.BucketCount = bucketRanges(st.Owned)
	}
	if withState {
		r.State = st.State
	}
	return r
}

func bucketRanges(owned [cluster.NumBuckets]bool) ([]string, int) {
	var out []string
	n := 0
	for b := 0; b < cluster.NumBuckets; b++ {
		if !owned[b] {
			continue
		}
		first := b
		for b+1 < cluster.NumBuckets && owned[b+1] {
			b++
		}
		n += b - first + 1
		out = append(out, fmt.Sprintf("%d-%d", first, b))
	}
	return out, n
}

// ClusterStatus is the cluster as etcd and the workers' endpoints report
// it (`rockstream cluster status`).
type ClusterStatus struct {
	Cluster string `json:"cluster"`
	// Leader is the address the coordinator campaigned with, empty when
	// none leads.
	Leader string `json:"leader"`
	// Revision is the assignment's revision; Committed the commit
	// frontier; Checkpoint the latest recorded cluster checkpoint.
	Revision   cluster.Revision `json:"revision"`
	Committed  cluster.Epoch    `json:"committed"`
	Checkpoint cluster.Epoch    `json:"checkpoint"`
	// CommittedAt is when the coordinator committed Committed (zero when
	// no commit time is recorded for it).
	CommittedAt time.Time `json:"committed_at,omitzero"`
	// Assignment is the bucket ranges and their owners.
	Assignment []ShardStatus `json:"assignment"`
	// Workers are the registered members and the processes advertising
	// an endpoint, in ID order.
	Workers []WorkerRow `json:"workers"`
}

// ShardStatus is one contiguous range of buckets with one owner in the
// assignment.
type ShardStatus struct {
	Owner cluster.NodeID `json:"owner"`
	First int            `json:"first"`
	Last  int            `json:"last"`
}

// WorkerRow is one worker: its membership and, when its endpoint
// answered, its report and how many epochs it lags behind the frontier.
type WorkerRow struct {
	ID        cluster.NodeID  `json:"id"`
	Member    bool            `json:"member"`
	Lease     cluster.LeaseID `json:"member_lease,omitempty"`
	Address   string          `json:"address,omitempty"`
	Report    *WorkerReport   `json:"report,omitempty"`
	LagEpochs *uint64         `json:"lag_epochs,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// ReadStatus reads the cluster's state from etcd and asks every worker's
// endpoint for its report (each bounded by a second), with each worker's
// state when withState is set.
func ReadStatus(ctx context.Context, store *Store, withState bool) (ClusterStatus, error) {
	keys := store.Keys()
	name := strings.TrimSuffix(strings.TrimPrefix(keys.Prefix(), "/rockstream/"), "/")
	st := ClusterStatus{Cluster: name}
	rctx, cancel := context.WithTimeout(ctx, store.cfg.RequestTimeout)
	ev, at := store.readCluster(rctx, nil)
	cancel()
	if ev.Err != nil {
		return st, ev.Err
	}
	st.Revision, st.Committed, st.Checkpoint = ev.Rev, ev.Committed, ev.Checkpoint
	if at.Epoch == ev.Committed && ev.Committed > 0 {
		st.CommittedAt = at.At
	}
	if ev.Assignment != nil {
		for b := 0; b < cluster.NumBuckets; b++ {
			first := b
			for b+1 < cluster.NumBuckets && ev.Assignment.Owner[b+1] == ev.Assignment.Owner[first] {
				b++
			}
			st.Assignment = append(st.Assignment, ShardStatus{Owner: ev.Assignment.Owner[first], First: first, Last: b})
		}
	}
	if leader, err := ResolveNode(ctx, store.cli, keys, cluster.CoordinatorID); err == nil {
		st.Leader = leader
	}
	rctx, cancel = context.WithTimeout(ctx, store.cfg.RequestTimeout)
	resp, err := store.cli.Get(rctx, keys.Nodes(), clientv3.WithPrefix())
	cancel()
	if err != nil {
		return st, fmt.Errorf("control: read the nodes' endpoints: %w", err)
	}
	rows := map[cluster.NodeID]*WorkerRow{}
	row := func(id cluster.NodeID) *WorkerRow {
		if rows[id] == nil {
			rows[id] = &WorkerRow{ID: id}
		}
		return rows[id]
	}
	for id, l := range ev.Members {
		r := row(id)
		r.Member, r.Lease = true, l
	}
	for _, kv := range resp.Kvs {
		row(cluster.NodeID(strings.TrimPrefix(string(kv.Key), keys.Nodes()))).Address = string(kv.Value)
	}
	var wg sync.WaitGroup
	for _, r := range rows {
		if r.Address == "" {
			r.Error = "no endpoint advertised"
			continue
		}
		wg.Add(1)
		go func(r *WorkerRow) {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			var rep WorkerReport
			if err := NodeStatus(cctx, r.Address, withState, &rep); err != nil {
				r.Error = err.Error()
				return
			}
			r.Report = &rep
			if rep.Serving && rep.Applied <= st.Committed {
				lag := uint64(st.Committed - rep.Applied)
				r.LagEpochs = &lag
			}
		}(r)
	}
	wg.Wait()
	for _, r := range rows {
		st.Workers = append(st.Workers, *r)
	}
	sort.Slice(st.Workers, func(i, j int) bool { return st.Workers[i].ID < st.Workers[j].ID })
	return st, nil
}
