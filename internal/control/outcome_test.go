package control

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/rockstream/rockstream/internal/cluster"
)

func TestWriteOutcome(t *testing.T) {
	ctx := context.Background()
	cli := connect(t, startEtcd(t).Endpoints())
	s := newTestStore(t, cli, "c1")
	bucket := memblob.OpenBucket(nil)
	t.Cleanup(func() { bucket.Close() })
	objects := BlobObjects{Bucket: bucket}
	entry := func(e cluster.Epoch, ids ...uint64) {
		t.Helper()
		var ws []cluster.Write
		for _, id := range ids {
			ws = append(ws, cluster.Write{ID: id, Key: "k", Delta: 1})
		}
		data, _ := json.Marshal(ws)
		if _, created, err := objects.PutIfAbsent(ctx, cluster.InputKey(e), data); err != nil || !created {
			t.Fatalf("entry %d: %v %v", e, created, err)
		}
	}
	outcome := func(id uint64, r Receipt) Outcome {
		t.Helper()
		out, err := WriteOutcome(ctx, s, objects, id, r)
		if err != nil {
			t.Fatalf("outcome of %d: %v", id, err)
		}
		return out
	}

	// Term A leads and commits epochs 1 and 2; write 5 is in epoch 2.
	sessA := lead(t, cli, s, "coord-a")
	termA := s.leader().Rev
	asg := perform(t, s, cluster.Action{Kind: cluster.ActWriteAssignment, Assignment: place("w1")})
	entry(1, 1, 2)
	entry(2, 5)
	for e := cluster.Epoch(1); e <= 2; e++ {
		if ev := perform(t, s, cluster.Action{Kind: cluster.ActCommit, Epoch: e, Rev: asg.Rev}); !ev.OK {
			t.Fatalf("commit %d refused", e)
		}
	}
	if out := outcome(5, Receipt{Term: termA, After: 0}); out.State != "committed" || out.Epoch != 2 || out.Frontier != 2 {
		t.Fatalf("a committed write: %+v", out)
	}
	// Write 6 is in no entry, and its term still leads: unknown.
	if out := outcome(6, Receipt{Term: termA, After: 1}); out.State != "unknown" || !strings.Contains(out.Reason, "still leads") {
		t.Fatalf("a write of the leading term: %+v", out)
	}
	// Write 7 is sealed in epoch 3, not committed yet.
	entry(3, 7)

	// Term A ends. Write 7 is still unknown (epoch 3 may commit); write
	// 6 can no longer be sealed anywhere: epoch 3's entry is final.
	sessA.Orphan()
	if _, err := cli.Revoke(ctx, sessA.Lease()); err != nil {
		t.Fatal(err)
	}
	if out := outcome(7, Receipt{Term: termA, After: 2}); out.State != "unknown" || out.Epoch != 3 {
		t.Fatalf("a write sealed in an uncommitted epoch: %+v", out)
	}
	if out := outcome(6, Receipt{Term: termA, After: 1}); out.State != "not_committed" || out.Frontier != 2 {
		t.Fatalf("a write of an ended term in no entry: %+v", out)
	}

	// Term B commits epoch 3 (adopting its entry); write 8 of term A is in
	// no entry to epoch 3 and epoch 4 is not sealed yet: the outcome
	// closes epoch 4 with an empty entry, which any later coordinator
	// adopts, and answers with certainty.
	lead(t, cli, s, "coord-b")
	if ev := perform(t, s, cluster.Action{Kind: cluster.ActCommit, Epoch: 3, Rev: asg.Rev}); !ev.OK {
		t.Fatal("commit 3 refused")
	}
	if out := outcome(7, Receipt{Term: termA, After: 2}); out.State != "committed" || out.Epoch != 3 {
		t.Fatalf("the write of epoch 3 once committed: %+v", out)
	}
	if out := outcome(8, Receipt{Term: termA, After: 2}); out.State != "not_committed" || out.Frontier != 3 {
		t.Fatalf("a write of an ended term, nothing sealed past the frontier: %+v", out)
	}
	if data, err := objects.Get(ctx, cluster.InputKey(4)); err != nil || string(data) != "[]" {
		t.Fatalf("epoch 4 was not closed with an empty entry: %q %v", data, err)
	}

	// Receipts no submission returns are refused.
	for _, r := range []Receipt{{Term: 0, After: 1}, {Term: termA, After: 9}} {
		if _, err := WriteOutcome(ctx, s, objects, 6, r); !errors.Is(err, ErrBadReceipt) {
			t.Errorf("receipt %+v: %v, want ErrBadReceipt", r, err)
		}
	}
}
