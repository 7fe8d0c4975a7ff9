package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

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

	// lag_ms counts from the frontier's commit time: 0 for an owner that
	// answers at the frontier, the time since then for one behind it and
	// for one that does not answer, shown at the epoch it last reported.
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	timed := st
	timed.CommittedAt = now.Add(-1500 * time.Millisecond)
	withLag := meta
	withLag.Now = now
	h = controlHealth(timed, nil, withLag)
	if h.Shards[0].LagMs != 1500 || h.Shards[0].LagEpochs != 2 || h.Shards[1].LagMs != 0 {
		t.Errorf("lag of a shard behind: %+v", h.Shards)
	}
	timed.Workers = []control.WorkerRow{st.Workers[0], {ID: "w2", Member: true, Address: "a:w2", Error: "deadline exceeded"}}
	withLag.LastReports = map[cluster.NodeID]control.WorkerReport{"w2": *st.Workers[1].Report}
	withLag.LastReports["w2"] = func(r control.WorkerReport) control.WorkerReport { r.Applied = 42; return r }(withLag.LastReports["w2"])
	h = controlHealth(timed, nil, withLag)
	if h.Shards[0].Frontier != 42 || h.Shards[0].LagEpochs != 0 || h.Shards[0].LagMs != 1500 || h.Shards[1].LagMs != 0 {
		t.Errorf("lag of an owner that does not answer: %+v", h.Shards)
	}
	if w := h.Workers[1]; w.State != "unreachable" || w.AppliedEpoch != 42 || len(w.Buckets) != 0 {
		t.Errorf("an owner that does not answer, last at 42: %+v", w)
	}
	timed.CommittedAt = time.Time{}
	if h = controlHealth(timed, nil, withLag); h.Shards[0].LagMs != 0 {
		t.Errorf("lag without a commit time: %+v", h.Shards[0])
	}

	// etcd unreadable: degraded, nothing known.
	h = controlHealth(control.ClusterStatus{}, errors.New("context deadline exceeded"), meta)
	if h.Status != "degraded" || h.Problem != "reading the cluster's state: context deadline exceeded" || h.Frontier != nil {
		t.Errorf("etcd unreadable: %+v", h)
	}
}
