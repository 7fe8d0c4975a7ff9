package control

import (
	"errors"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/cluster"
)

func TestDecisionsNameTheirReading(t *testing.T) {
	d := newDecisions(2)
	var got []Decision
	ev := func(e cluster.Event) { got = append(got, d.event(e)...) }
	act := func(a cluster.Action) { got = append(got, d.action(a)...) }

	members := map[cluster.NodeID]cluster.LeaseID{"w1": 0x10, "w2": 0x20}
	ev(cluster.Event{Kind: cluster.EvClusterRead, Members: members, Committed: 4})
	a := cluster.Place(members)
	act(cluster.Action{Kind: cluster.ActWriteAssignment, Assignment: &a, Rev: 0})
	ev(cluster.Event{Kind: cluster.EvAssignmentWritten, OK: true, Rev: 9})
	for e := cluster.Epoch(5); e <= 8; e++ {
		ev(cluster.Event{Kind: cluster.EvCommitted, OK: true, Epoch: e})
	}
	ev(cluster.Event{Kind: cluster.EvCommitted, Err: errors.New("timeout"), Epoch: 9})
	act(cluster.Action{Kind: cluster.ActPutObject, Key: cluster.ManifestKey(8), Data: []byte(`["checkpoint/00000008/r9-w1","checkpoint/00000008/r9-w2"]`)})
	ev(cluster.Event{Kind: cluster.EvCheckpointRecorded, OK: true, Epoch: 8})

	var kinds []string
	for _, x := range got {
		kinds = append(kinds, x.Kind)
	}
	// Commits: the first of the assignment (5), then those divisible by 2;
	// a failed one always.
	want := "placement assignment commit commit commit commit checkpoint"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("decisions %v, want %s", kinds, want)
	}
	if r := got[0].Reading; !strings.Contains(r, "w1 (lease 10), w2 (lease 20)") || !strings.Contains(r, "no assignment") || !strings.Contains(r, "committed 4") {
		t.Errorf("placement reading: %s", r)
	}
	if x := got[1]; x.Revision != 9 || !x.OK || !strings.Contains(x.Detail, "revision 0 and older are refused") {
		t.Errorf("assignment: %+v", x)
	}
	if x := got[2]; x.Epoch != 5 || x.Revision != 9 || !strings.Contains(x.Reading, "by every member: w1, w2") {
		t.Errorf("first commit: %+v", x)
	}
	if x := got[5]; x.OK || x.Epoch != 9 || !strings.Contains(x.Detail, "unknown outcome") {
		t.Errorf("failed commit: %+v", x)
	}
	if x := got[6]; !x.OK || !strings.Contains(x.Reading, "r9-w1, checkpoint/00000008/r9-w2") {
		t.Errorf("checkpoint: %+v", x)
	}
}
