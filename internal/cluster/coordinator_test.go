package cluster

import "testing"

var testCoordConfig = CoordinatorConfig{EpochEvery: 1, CheckpointEvery: 4, PollEvery: 3, Resend: 3}

// runningCoordinator has placed the buckets on w1 and w2 at rev 5 and
// seen both ready.
func runningCoordinator(t *testing.T) *Coordinator {
	t.Helper()
	c := NewCoordinator(testCoordConfig)
	c.Ready()
	members := map[NodeID]LeaseID{"w1": 1, "w2": 2}
	c.Step(Event{Kind: EvClusterRead, Members: members})
	c.Ready()
	c.Step(Event{Kind: EvAssignmentWritten, OK: true, Rev: 5})
	c.Ready()
	for _, id := range []NodeID{"w1", "w2"} {
		c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgReady, From: id, Rev: 5}})
	}
	if c.Phase() != "running" {
		t.Fatalf("coordinator is %s, want running", c.Phase())
	}
	return c
}

func TestCoordinatorCommitsWhenAllPreparedAndAcksAfter(t *testing.T) {
	c := runningCoordinator(t)
	c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgWrite, From: ClientID, Write: Write{ID: 1, Key: "a", Delta: 1}}})
	c.Step(Event{Kind: EvTick, Now: 1})
	if got := kinds(c.Ready()); len(got) != 1 || got[0] != "log append e=1 writes=1" {
		t.Fatalf("after sealing: %v", got)
	}
	c.Step(Event{Kind: EvInputAppended, Epoch: 1, OK: true, Writes: []Write{{ID: 1, Key: "a", Delta: 1}}})
	c.Ready()
	c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgPrepared, From: "w1", Rev: 5, Epoch: 1}})
	c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgPrepared, From: "w2", Rev: 4, Epoch: 1}})
	if got := c.Ready(); len(got) != 0 {
		t.Fatalf("with w2's report from an old revision: %v", kinds(got))
	}
	c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgPrepared, From: "w2", Rev: 5, Epoch: 1}})
	if got := kinds(c.Ready()); len(got) != 1 || got[0] != "etcd commit e=1 if rev=5" {
		t.Fatalf("with both prepared: %v, want only the commit", got)
	}
	c.Step(Event{Kind: EvCommitted, Epoch: 1, OK: true})
	got := c.Ready()
	if len(got) == 0 || got[0].Msg.Kind != MsgAck || got[0].Msg.WriteIDs[0] != 1 || c.Committed() != 1 {
		t.Fatalf("after the commit: %v", kinds(got))
	}
}

func TestCoordinatorAdoptsAnEarlierSealedEpoch(t *testing.T) {
	c := runningCoordinator(t)
	mine := Write{ID: 9, Key: "b", Delta: 2}
	c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgWrite, Write: mine}})
	c.Step(Event{Kind: EvTick, Now: 1})
	c.Ready()
	earlier := []Write{{ID: 3, Key: "a", Delta: 1}}
	c.Step(Event{Kind: EvInputAppended, Epoch: 1, OK: false, Writes: earlier})
	c.Ready()
	for _, id := range []NodeID{"w1", "w2"} {
		c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgPrepared, From: id, Rev: 5, Epoch: 1}})
	}
	c.Ready()
	c.Step(Event{Kind: EvCommitted, Epoch: 1, OK: true})
	if got := c.Ready(); got[0].Msg.WriteIDs[0] != 3 || len(got[0].Msg.WriteIDs) != 1 {
		t.Fatalf("epoch 1 acknowledged %v, want the adopted write 3 only", got[0].Msg.WriteIDs)
	}
	c.Step(Event{Kind: EvTick, Now: 2})
	if got := c.Ready(); got[0].String() != "log append e=2 writes=1" || got[0].Writes[0] != mine {
		t.Fatalf("the displaced write is not sealed next: %v", kinds(got))
	}
}

func TestCoordinatorCountsPreparedOnlyOnceTheEntryIsKnown(t *testing.T) {
	c := runningCoordinator(t)
	c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgWrite, Write: Write{ID: 9, Key: "b", Delta: 2}}})
	c.Step(Event{Kind: EvTick, Now: 1})
	c.Ready()
	// Reports of an earlier incarnation's round for epoch 1 arrive before
	// the append's result.
	for _, id := range []NodeID{"w1", "w2"} {
		c.Step(Event{Kind: EvRecv, Msg: Message{Kind: MsgPrepared, From: id, Rev: 5, Epoch: 1}})
	}
	if got := c.Ready(); len(got) != 0 {
		t.Fatalf("prepared reports before the append's result led to %v", kinds(got))
	}
}
