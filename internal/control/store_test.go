package control

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/rockstream/rockstream/internal/cluster"
)

func newTestStore(t *testing.T, cli *clientv3.Client, name string) *Store {
	t.Helper()
	keys, err := NewKeys(name)
	if err != nil {
		t.Fatal(err)
	}
	return NewStore(cli, keys, StoreConfig{LeaseTTL: time.Second, RequestTimeout: time.Second})
}

// lead wins the store's election with a new session and conditions the
// store's writes on it.
func lead(t *testing.T, cli *clientv3.Client, s *Store, name string) *concurrency.Session {
	t.Helper()
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	e := concurrency.NewElection(sess, s.Keys().Election())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Campaign(ctx, name); err != nil {
		t.Fatal(err)
	}
	s.SetLeader(&Leadership{Key: e.Key(), Rev: e.Rev()})
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	return sess
}

func perform(t *testing.T, s *Store, a cluster.Action) cluster.Event {
	t.Helper()
	ev := s.Perform(context.Background(), "w1", a)
	if ev.Err != nil {
		t.Fatalf("%s: %v", a, ev.Err)
	}
	return ev
}

func place(ids ...cluster.NodeID) *cluster.Assignment {
	m := map[cluster.NodeID]cluster.LeaseID{}
	for i, id := range ids {
		m[id] = cluster.LeaseID(i + 1)
	}
	a := cluster.Place(m)
	return &a
}

func TestStoreWritesAreConditionalOnTheRevision(t *testing.T) {
	cli := connect(t, startEtcd(t).Endpoints())
	s := newTestStore(t, cli, "c1")
	lead(t, cli, s, "coord-a")

	first := perform(t, s, cluster.Action{Kind: cluster.ActWriteAssignment, Rev: 0, Assignment: place("w1")})
	if !first.OK || first.Rev == 0 {
		t.Fatalf("first assignment: %+v", first)
	}
	if ev := perform(t, s, cluster.Action{Kind: cluster.ActWriteAssignment, Rev: 0, Assignment: place("w2")}); ev.OK {
		t.Fatalf("an assignment conditioned on revision 0 after one was written succeeded: %+v", ev)
	}
	second := perform(t, s, cluster.Action{Kind: cluster.ActWriteAssignment, Rev: first.Rev, Assignment: place("w1", "w2")})
	if !second.OK || second.Rev <= first.Rev {
		t.Fatalf("second assignment: %+v", second)
	}
	read := perform(t, s, cluster.Action{Kind: cluster.ActReadCluster})
	if read.Rev != second.Rev || read.Assignment.String() != place("w1", "w2").String() || read.Committed != 0 {
		t.Fatalf("read %d [%s] committed=%d, want %d [%s] committed=0", read.Rev, read.Assignment, read.Committed, second.Rev, place("w1", "w2"))
	}

	commit := func(e cluster.Epoch, rev cluster.Revision) bool {
		ev := perform(t, s, cluster.Action{Kind: cluster.ActCommit, Epoch: e, Rev: rev})
		if ev.Epoch != e {
			t.Fatalf("commit result names epoch %d, want %d", ev.Epoch, e)
		}
		return ev.OK
	}
	if commit(1, first.Rev) {
		t.Fatal("commit under a stale revision succeeded")
	}
	if !commit(1, second.Rev) {
		t.Fatal("commit of epoch 1 under the current revision failed")
	}
	if commit(1, second.Rev) || commit(3, second.Rev) {
		t.Fatal("a commit of an epoch other than committed+1 succeeded")
	}
	if !commit(2, second.Rev) {
		t.Fatal("commit of epoch 2 failed")
	}
	if ev := perform(t, s, cluster.Action{Kind: cluster.ActRecordCheckpoint, Epoch: 2, Rev: first.Rev}); ev.OK {
		t.Fatal("checkpoint recorded under a stale revision")
	}
	if ev := perform(t, s, cluster.Action{Kind: cluster.ActRecordCheckpoint, Epoch: 2, Rev: second.Rev}); !ev.OK {
		t.Fatal("checkpoint not recorded under the current revision")
	}
	read = perform(t, s, cluster.Action{Kind: cluster.ActReadCluster})
	if read.Committed != 2 || read.Checkpoint != 2 || read.Rev != second.Rev {
		t.Fatalf("read committed=%d checkpoint=%d rev=%d, want 2, 2, %d (a checkpoint pointer does not move the fencing token)",
			read.Committed, read.Checkpoint, read.Rev, second.Rev)
	}

	// A store without leadership writes nothing.
	s.SetLeader(nil)
	if commit(3, second.Rev) {
		t.Fatal("a store without leadership committed")
	}
}

func TestStoreCommitFailsForADeposedLeader(t *testing.T) {
	cli := connect(t, startEtcd(t).Endpoints())
	a, b := newTestStore(t, cli, "c1"), newTestStore(t, cli, "c1")
	sessA := lead(t, cli, a, "coord-a")
	asg := perform(t, a, cluster.Action{Kind: cluster.ActWriteAssignment, Assignment: place("w1")})
	if !asg.OK {
		t.Fatal("assignment not written")
	}

	// b campaigns; it wins when a's session lease ends (a crashed or was
	// cut off and its lease expired).
	won := make(chan *concurrency.Session)
	go func() {
		sess, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Error(err)
			close(won)
			return
		}
		e := concurrency.NewElection(sess, b.Keys().Election())
		if err := e.Campaign(context.Background(), "coord-b"); err != nil {
			t.Error(err)
		}
		b.SetLeader(&Leadership{Key: e.Key(), Rev: e.Rev()})
		won <- sess
	}()
	select {
	case <-won:
		t.Fatal("b won while a leads")
	case <-time.After(200 * time.Millisecond):
	}
	sessA.Orphan()
	if _, err := cli.Revoke(context.Background(), sessA.Lease()); err != nil {
		t.Fatal(err)
	}
	sessB := <-won
	if sessB == nil {
		return
	}
	defer sessB.Close()

	if ev := perform(t, a, cluster.Action{Kind: cluster.ActCommit, Epoch: 1, Rev: asg.Rev}); ev.OK {
		t.Fatal("the deposed coordinator committed")
	}
	// Nor does it learn anything from etcd any more.
	if ev := a.Perform(context.Background(), cluster.CoordinatorID, cluster.Action{Kind: cluster.ActReadCluster}); !errors.Is(ev.Err, errNotLeading) || ev.Members != nil {
		t.Fatalf("the deposed coordinator read etcd: %+v", ev)
	}
	if ev := perform(t, a, cluster.Action{Kind: cluster.ActWriteAssignment, Rev: asg.Rev, Assignment: place("w2")}); ev.OK {
		t.Fatal("the deposed coordinator wrote an assignment")
	}
	before := time.Now().Truncate(time.Millisecond)
	if ev := perform(t, b, cluster.Action{Kind: cluster.ActCommit, Epoch: 1, Rev: asg.Rev}); !ev.OK {
		t.Fatal("the new leader could not commit")
	}
	if ev := b.Perform(context.Background(), cluster.CoordinatorID, cluster.Action{Kind: cluster.ActReadCluster}); ev.Err != nil || ev.Committed != 1 {
		t.Fatalf("the leader's read: %+v", ev)
	}
	// The commit records when it was made, for the shards' lag.
	if _, at := b.readCluster(context.Background(), nil); at.Epoch != 1 || at.At.Before(before) || at.At.After(time.Now()) {
		t.Fatalf("commit time %+v, want epoch 1 after %s", at, before)
	}
}

func TestStoreLeaseNotRenewedExpiresWithItsMembership(t *testing.T) {
	cli := connect(t, startEtcd(t).Endpoints())
	s := newTestStore(t, cli, "c1")
	reg := perform(t, s, cluster.Action{Kind: cluster.ActRegister, SentAt: 7})
	if reg.Lease == 0 || reg.SentAt != 7 {
		t.Fatalf("register: %+v", reg)
	}
	read := perform(t, s, cluster.Action{Kind: cluster.ActReadCluster})
	if read.Members["w1"] != reg.Lease || len(read.Members) != 1 {
		t.Fatalf("members %v, want w1:%d", read.Members, reg.Lease)
	}
	renew := perform(t, s, cluster.Action{Kind: cluster.ActKeepAlive, Lease: reg.Lease, SentAt: 9})
	if !renew.OK || renew.Lease != reg.Lease || renew.SentAt != 9 {
		t.Fatalf("renewal: %+v", renew)
	}
	renewed := time.Now()

	// No more renewals: etcd expires the lease and deletes the key.
	for {
		read = perform(t, s, cluster.Action{Kind: cluster.ActReadCluster})
		if len(read.Members) == 0 {
			break
		}
		if time.Since(renewed) > 10*time.Second {
			t.Fatal("the membership key outlived its lease by far")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if gone := time.Since(renewed); gone < time.Second {
		t.Fatalf("the membership key disappeared %s after the renewal, before the lease's 1 s TTL", gone)
	}
	late := s.Perform(context.Background(), "w1", cluster.Action{Kind: cluster.ActKeepAlive, Lease: reg.Lease})
	if late.OK || late.Err != nil {
		t.Fatalf("renewing the expired lease: OK=%v Err=%v, want a definite refusal", late.OK, late.Err)
	}
}

func TestStoreUnreachableEtcdIsAnUnknownOutcome(t *testing.T) {
	e := startEtcd(t)
	direct := connect(t, e.Endpoints())
	p := startProxy(t, e.Endpoints()[0][len("http://"):])
	cli := connect(t, []string{p.endpoint()})
	s := newTestStore(t, cli, "c1")
	s.cfg.RequestTimeout = 300 * time.Millisecond
	lead(t, direct, s, "coord-a")
	reg := perform(t, s, cluster.Action{Kind: cluster.ActRegister})

	p.setCut(true)
	for _, a := range []cluster.Action{
		{Kind: cluster.ActCommit, Epoch: 1},
		{Kind: cluster.ActWriteAssignment, Assignment: place("w1")},
		{Kind: cluster.ActKeepAlive, Lease: reg.Lease},
		{Kind: cluster.ActReadCluster},
	} {
		ev := s.Perform(context.Background(), "w1", a)
		if ev.Err == nil || ev.OK {
			t.Errorf("%s with etcd unreachable: OK=%v Err=%v, want an unknown outcome (Err)", a, ev.OK, ev.Err)
		}
	}
}
