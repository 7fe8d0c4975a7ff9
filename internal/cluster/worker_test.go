package cluster

import (
	"encoding/json"
	"testing"
)

var testWorkerConfig = WorkerConfig{LeaseTTL: 8, RenewEvery: 2}

// servingWorker is w1 registered under lease 7 and serving rev 10 (all
// buckets) at epoch 0.
func servingWorker(t *testing.T) *Worker {
	t.Helper()
	w := NewWorker("w1", testWorkerConfig, Disk{})
	w.Step(Event{Kind: EvTick, Now: 1})
	w.Step(Event{Kind: EvRegistered, Lease: 7, SentAt: 1})
	a := Place(map[NodeID]LeaseID{"w1": 7})
	w.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgReset, From: CoordinatorID, To: "w1", Rev: 10, Assignment: &a}})
	if _, ok := w.Serving(); !ok || w.Rev() != 10 {
		t.Fatalf("worker is %s at rev %d, want serving rev 10", w.Phase(), w.Rev())
	}
	w.Ready()
	return w
}

func kinds(actions []Action) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a.String())
	}
	return out
}

func TestWorkerRefusesOlderRevision(t *testing.T) {
	w := servingWorker(t)
	w.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgPrepare, Rev: 9, Epoch: 1}})
	if got := w.Ready(); len(got) != 0 {
		t.Fatalf("a prepare of revision 9 at revision 10 led to %v", kinds(got))
	}
	other := Place(map[NodeID]LeaseID{"w1": 3})
	w.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgReset, Rev: 12, Assignment: &other}})
	if got := w.Ready(); len(got) != 0 || w.Rev() != 10 {
		t.Fatalf("a reset naming another lease led to %v (rev %d)", kinds(got), w.Rev())
	}
}

func TestWorkerAppliesOnlyAfterCommit(t *testing.T) {
	w := servingWorker(t)
	w.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgPrepare, Rev: 10, Epoch: 1}})
	w.Ready()
	data, _ := json.Marshal([]Write{{ID: 1, Key: "a", Delta: 3}})
	w.Step(Event{Kind: EvInputRead, Epoch: 1, Data: data, OK: true, Tag: 10})
	if got := kinds(w.Ready()); len(got) != 2 || got[0] != "disk prepare e=1 keys=1" {
		t.Fatalf("after reading epoch 1: %v, want a prepared record and its report", got)
	}
	if w.Applied() != 0 || len(w.State()) != 0 {
		t.Fatalf("applied %d before the commit", w.Applied())
	}
	w.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgApply, Rev: 10, Committed: 1}})
	if got := kinds(w.Ready()); len(got) != 1 || got[0] != "disk apply e=1 keys=1" || w.State()["a"] != 3 {
		t.Fatalf("after committed=1: %v, state %v", got, w.State())
	}
}

func TestWorkerFencesItselfWhenItCannotRenew(t *testing.T) {
	w := servingWorker(t)
	for now := int64(2); now < 9; now++ {
		w.Step(Event{Kind: EvTick, Now: now})
		for _, a := range w.Ready() {
			if a.Kind == ActKeepAlive {
				w.Step(Event{Kind: EvRenewed, Lease: 7, SentAt: a.SentAt, Err: errTest})
			}
		}
		if _, ok := w.Serving(); !ok {
			t.Fatalf("fenced at %d, before the lease's TTL ran out", now)
		}
	}
	w.Step(Event{Kind: EvTick, Now: 9})
	if _, ok := w.Serving(); ok || w.Lease() != 0 || w.Rev() != 0 {
		t.Fatalf("still serving rev %d under lease %d at the deadline", w.Rev(), w.Lease())
	}
	if got := kinds(w.Ready()); len(got) != 1 || got[0] != "etcd register" {
		t.Fatalf("after fencing: %v, want a new registration", got)
	}
}

type testError struct{}

func (testError) Error() string { return "unavailable" }

var errTest error = testError{}
