package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/admin"
	"github.com/rockstream/rockstream/internal/cluster"
	"github.com/rockstream/rockstream/internal/control"
)

func TestControlHealth(t *testing.T) {
	meta := healthMeta{Version: "v1", Storage: "/ctl", UptimeSeconds: 2}
	serving := func(id string, applied uint64, buckets []string, n int) control.WorkerRow {
		return control.WorkerRow{ID: cluster.NodeID(id), Member: true, Address: "a:" + id,
			Report: &control.WorkerReport{ID: cluster.NodeID(id), Phase: "ready", Revision: 7, Serving: true,
				Buckets: buckets, BucketCount: n, Applied: cluster.Epoch(applied)}}
	}
	st := control.ClusterStatus{Cluster: "c", Leader: "127.0.0.1:1", Revision: 7, Committed: 42,
		Assignment: []control.ShardStatus{{Owner: "w2", First: 0, Last: 127}, {Owner: "w1", First: 128, Last: 255}},
		Workers:    []control.WorkerRow{serving("w1", 42, []string{"128-255"}, 128), serving("w2", 40, []string{"0-127"}, 128)}}

	h := controlHealth(st, nil, meta)
	if h.Status != "ok" || h.Problem != "" || h.Role != "control" || h.Version != "v1" || h.Storage != "/ctl" {
		t.Fatalf("health of a settled cluster: %+v", h)
	}
	if h.Frontier == nil || *h.Frontier != 42 || h.Epoch == nil || *h.Epoch != 42 || h.RecoveredEpoch != nil {
		t.Fatalf("frontier %v epoch %v recovered %v, want 42, 42, null", h.Frontier, h.Epoch, h.RecoveredEpoch)
	}
	wantWorkers := []admin.WorkerHealth{
		{ID: 0, Name: "w1", Role: "worker", Buckets: []string{"128-255"}, BucketCount: 128, State: "serving", AppliedEpoch: 42},
		{ID: 1, Name: "w2", Role: "worker", Buckets: []string{"0-127"}, BucketCount: 128, State: "serving", AppliedEpoch: 40},
	}
	if !reflect.DeepEqual(h.Workers, wantWorkers) {
		t.Errorf("workers %+v\nwant %+v", h.Workers, wantWorkers)
	}
	wantShards := []admin.ShardHealth{
		{FirstBucket: 0, LastBucket: 127, Owner: 1, Frontier: 40, LagEpochs: 2},
		{FirstBucket: 128, LastBucket: 255, Owner: 0, Frontier: 42},
	}
	if !reflect.DeepEqual(h.Shards, wantShards) {
		t.Errorf("shards %+v\nwant %+v", h.Shards, wantShards)
	}

	// An owner lost: unreachable, its shard lags by the whole frontier,
	// the status says which worker; an owner that neither is a member
	// nor advertises gets a row of its own.
	lost := st
	lost.Workers = []control.WorkerRow{{ID: "w1", Address: "a:w1", Error: "connection refused"}}
	h = controlHealth(lost, nil, meta)
	if h.Status != "degraded" || !strings.Contains(h.Problem, "worker w1 owns buckets but is unreachable: connection refused") ||
		!strings.Contains(h.Problem, "worker w2 owns buckets but is unreachable: neither a member nor advertised") {
		t.Errorf("lost owners: status %q, problem %q", h.Status, h.Problem)
	}
	if len(h.Workers) != 2 || h.Workers[0].State != "unreachable" || h.Workers[1].Name != "w2" || len(h.Workers[1].Buckets) != 0 {
		t.Errorf("lost owners' rows: %+v", h.Workers)
	}
	if h.Shards[0].Owner != 1 || h.Shards[0].LagEpochs != 42 {
		t.Errorf("the lost owner's shard: %+v", h.Shards[0])
	}

	// A worker resetting to a new assignment, no leader, nothing assigned.
	resetting := st
	resetting.Workers = append([]control.WorkerRow(nil), st.Workers...)
	rep := *resetting.Workers[1].Report
	rep.Serving, rep.Phase = false, "loading"
	resetting.Workers[1].Report = &rep
	resetting.Leader = ""
	h = controlHealth(resetting, nil, meta)
	if h.Status != "degraded" || h.Problem != "no coordinator leads the cluster; worker w2 owns buckets but does not serve (loading)" {
		t.Errorf("resetting: status %q, problem %q", h.Status, h.Problem)
	}
	if h.Workers[1].State != "loading" || h.Workers[1].BucketCount != 0 {
		t.Errorf("resetting worker's row: %+v", h.Workers[1])
	}
	stale := st
	stale.Revision = 8
	if h = controlHealth(stale, nil, meta); !strings.Contains(h.Problem, "worker w1 serves assignment revision 7, not the current 8") {
		t.Errorf("a worker on an old revision: %q", h.Problem)
	}
	if h = controlHealth(control.ClusterStatus{Leader: "x"}, nil, meta); h.Problem != "no buckets are assigned (no worker is a member)" {
		t.Errorf("an empty cluster: %q", h.Problem)
	}

	// etcd unreadable: degraded, nothing known.
	h = controlHealth(control.ClusterStatus{}, errors.New("context deadline exceeded"), meta)
	if h.Status != "degraded" || h.Problem != "reading the cluster's state: context deadline exceeded" || h.Frontier != nil {
		t.Errorf("etcd unreadable: %+v", h)
	}
}
