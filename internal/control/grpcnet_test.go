package control

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/s3test"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/rockstream/rockstream/internal/cluster"
	"github.com/rockstream/rockstream/internal/storage"
)

func listenGRPC(t *testing.T, cli *clientv3.Client, keys Keys) *GRPCNetwork {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := ListenGRPC(lis, cli, GRPCNetworkConfig{Keys: keys, QueueSize: 8})
	t.Cleanup(func() { n.Close() })
	return n
}

// receive waits for a message on ch.
func receive(t *testing.T, ch <-chan cluster.Message, within time.Duration) cluster.Message {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(within):
		t.Fatalf("no message within %s", within)
	}
	return cluster.Message{}
}

func TestGRPCNetworkDeliversResolvesAndReconnects(t *testing.T) {
	e := startEtcd(t)
	cli := connect(t, e.Endpoints())
	keys, _ := NewKeys("net")
	ctx := context.Background()

	a := listenGRPC(t, cli, keys)
	got := make(chan cluster.Message, 16)
	a.Attach("w1", func(m cluster.Message) { got <- m })
	if err := a.Advertise(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	b := listenGRPC(t, cli, keys)
	local := make(chan cluster.Message, 16)
	b.Attach(cluster.ClientID, func(m cluster.Message) { local <- m })

	asg := cluster.Place(map[cluster.NodeID]cluster.LeaseID{"w1": 7, "w2": 9})
	sent := cluster.Message{Kind: cluster.MsgReset, From: cluster.CoordinatorID, To: "w1", Rev: 42, Epoch: 3, Committed: 2, Checkpoint: 1, Assignment: &asg}
	b.Send(sent)
	if m := receive(t, got, 10*time.Second); !reflect.DeepEqual(m, sent) {
		t.Fatalf("received %+v, sent %+v", m, sent)
	}
	// A node attached in the sending process gets its messages directly.
	b.Send(cluster.Message{Kind: cluster.MsgAck, From: cluster.CoordinatorID, To: cluster.ClientID, WriteIDs: []uint64{5}})
	if m := receive(t, local, time.Second); m.Kind != cluster.MsgAck || m.WriteIDs[0] != 5 {
		t.Fatalf("local delivery: %+v", m)
	}
	// A node nobody advertises: its messages are dropped, Send never blocks.
	done := make(chan struct{})
	go func() {
		for range 100 {
			b.Send(cluster.Message{Kind: cluster.MsgApply, To: "nobody"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Send blocked on a node that is not there")
	}

	// The coordinator is where the election's leader campaigned from.
	s, err := concurrency.NewSession(cli)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	coordGot := make(chan cluster.Message, 16)
	a.Attach(cluster.CoordinatorID, func(m cluster.Message) { coordGot <- m })
	if err := concurrency.NewElection(s, keys.Election()).Campaign(ctx, a.Addr()); err != nil {
		t.Fatal(err)
	}
	b.Send(cluster.Message{Kind: cluster.MsgPrepared, From: "w2", To: cluster.CoordinatorID, Rev: 42, Epoch: 3})
	if m := receive(t, coordGot, 10*time.Second); m.Kind != cluster.MsgPrepared || m.Epoch != 3 || m.From != "w2" {
		t.Fatalf("coordinator received %+v", m)
	}

	// w1's process goes; a new one advertises w1 elsewhere, and messages
	// reach it once the stream to the old address failed.
	a.Close()
	a2 := listenGRPC(t, cli, keys)
	got2 := make(chan cluster.Message, 16)
	a2.Attach("w1", func(m cluster.Message) { got2 <- m })
	if err := a2.Advertise(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.Send(cluster.Message{Kind: cluster.MsgApply, From: cluster.CoordinatorID, To: "w1", Rev: 43, Committed: 4})
		select {
		case m := <-got2:
			if m.Rev != 43 || m.Committed != 4 {
				t.Fatalf("after the move w1 received %+v", m)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("messages did not reach w1 at its new address within 10 s")
		}
	}
}

func TestGRPCNetworkStatusAndAdvertisedKeyGoesOnClose(t *testing.T) {
	e := startEtcd(t)
	cli := connect(t, e.Endpoints())
	keys, _ := NewKeys("status")
	ctx := context.Background()
	n := listenGRPC(t, cli, keys)
	var rep WorkerReport
	if err := NodeStatus(ctx, n.Addr(), false, &rep); err == nil || !strings.Contains(err.Error(), "no status") {
		t.Fatalf("status before SetStatus: %v", err)
	}
	n.SetStatus(func(withState bool) any {
		r := WorkerReport{ID: "w1", Phase: "ready", Applied: 9}
		if withState {
			r.State = cluster.Batch{"a": 2}
		}
		return r
	})
	if err := NodeStatus(ctx, n.Addr(), true, &rep); err != nil || rep.ID != "w1" || rep.Applied != 9 || rep.State["a"] != 2 {
		t.Fatalf("status: %+v %v", rep, err)
	}
	rep = WorkerReport{}
	if err := NodeStatus(ctx, n.Addr(), false, &rep); err != nil || rep.State != nil {
		t.Fatalf("status without state: %+v %v", rep, err)
	}
	if err := n.Advertise(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if addr, err := n.Resolve(ctx, "w1"); err != nil || addr != n.Addr() {
		t.Fatalf("resolve: %q %v", addr, err)
	}
	n.Close()
	if _, err := n.Resolve(ctx, "w1"); err == nil {
		t.Fatal("the endpoint key outlived Close")
	}
}

// ackOdd is a coordinator that takes writes under term 7 and
// acknowledges those with odd IDs; with refuse set it does not lead.
type ackOdd struct {
	net    *LocalNetwork
	refuse bool
}

func (a ackOdd) Submit(_ context.Context, writes []cluster.Write) (Receipt, error) {
	if a.refuse {
		return Receipt{}, ErrNotLeading
	}
	for _, w := range writes {
		if w.ID%2 == 1 {
			go a.net.Send(cluster.Message{Kind: cluster.MsgAck, To: cluster.ClientID, WriteIDs: []uint64{w.ID}})
		}
	}
	return Receipt{Term: 7, After: 3}, nil
}

func TestClientSubmitWaitsForAcks(t *testing.T) {
	net := NewLocalNetwork()
	c := NewClient(ackOdd{net: net})
	net.Attach(cluster.ClientID, c.Receive)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var early Receipt
	receipt, acked, err := c.Submit(ctx, []cluster.Write{{ID: 1, Key: "a", Delta: 1}, {ID: 2, Key: "b", Delta: 1}, {ID: 3, Key: "c", Delta: 1}},
		func(r Receipt) { early = r })
	if err != nil || !reflect.DeepEqual(acked, []uint64{1, 3}) || receipt != (Receipt{Term: 7, After: 3}) || early != receipt {
		t.Fatalf("acked %v receipt %+v err %v, want [1 3] {7 3} nil", acked, receipt, err)
	}
	if len(c.waiting) != 0 {
		t.Fatalf("waiters left behind: %v", c.waiting)
	}
	// A write in flight is not submitted twice: the whole request is refused.
	slow := NewClient(ackOdd{net: net})
	net.Attach(cluster.ClientID, slow.Receive)
	waiting := make(chan struct{})
	go func() {
		defer close(waiting)
		wctx, wcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer wcancel()
		slow.Submit(wctx, []cluster.Write{{ID: 2, Key: "b", Delta: 1}}, nil) // never acknowledged
	}()
	for {
		slow.mu.Lock()
		n := len(slow.waiting)
		slow.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, _, err := slow.Submit(ctx, []cluster.Write{{ID: 4, Key: "d", Delta: 1}, {ID: 2, Key: "b", Delta: 1}}, nil); !errors.Is(err, ErrInFlight) {
		t.Fatalf("a write in flight submitted again: %v", err)
	}
	<-waiting
	if len(slow.waiting) != 0 {
		t.Fatalf("waiters left behind: %v", slow.waiting)
	}

	// A coordinator that does not lead takes nothing, and no waiter is left.
	c = NewClient(ackOdd{net: net, refuse: true})
	if _, acked, err := c.Submit(ctx, []cluster.Write{{ID: 5, Key: "e", Delta: 1}}, nil); !errors.Is(err, ErrNotLeading) || acked != nil || len(c.waiting) != 0 {
		t.Fatalf("a refused submission: acked %v err %v waiting %v", acked, err, c.waiting)
	}
}

func TestObjectStoreLocationAndS3(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	dir := t.TempDir()
	if loc, err := ObjectStoreLocation(getenv, "c1", dir); err != nil || loc != "file://"+dir {
		t.Fatalf("without a bucket: %q %v", loc, err)
	}
	env[storage.EnvObjectStoreEndpoint] = "http://127.0.0.1:1"
	if _, err := ObjectStoreLocation(getenv, "c1", dir); err == nil || !strings.Contains(err.Error(), EnvObjectStoreBucket) {
		t.Fatalf("an endpoint without a bucket: %v", err)
	}
	env[EnvObjectStoreBucket] = "a/b"
	if _, err := ObjectStoreLocation(getenv, "c1", dir); err == nil {
		t.Fatal("a bucket name with a slash was accepted")
	}

	s3 := s3test.Start(t, "cluster")
	t.Setenv(EnvObjectStoreBucket, "cluster")
	loc, err := ObjectStoreLocation(func(k string) string {
		return map[string]string{EnvObjectStoreBucket: "cluster", storage.EnvObjectStoreEndpoint: s3.URL}[k]
	}, "c1", dir)
	if err != nil || loc != "s3://cluster/c1" {
		t.Fatalf("with a bucket: %q %v", loc, err)
	}
	for _, loc := range []string{loc, "file://" + dir + "/objects"} {
		ctx := context.Background()
		o, err := OpenObjects(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		key := cluster.InputKey(1)
		if stored, created, err := o.PutIfAbsent(ctx, key, []byte(`[{"ID":1}]`)); err != nil || !created || string(stored) != `[{"ID":1}]` {
			t.Fatalf("%s: first put: %q %v %v", loc, stored, created, err)
		}
		// The entry is final: a second put returns it and changes nothing.
		if stored, created, err := o.PutIfAbsent(ctx, key, []byte(`[{"ID":2}]`)); err != nil || created || string(stored) != `[{"ID":1}]` {
			t.Fatalf("%s: second put: %q %v %v", loc, stored, created, err)
		}
		if err := o.Put(ctx, "checkpoint/00000001/manifest", []byte("[]")); err != nil {
			t.Fatal(err)
		}
		if data, err := o.Get(ctx, "checkpoint/00000001/manifest"); err != nil || string(data) != "[]" {
			t.Fatalf("%s: get: %q %v", loc, data, err)
		}
		o.Bucket.Close()
	}
	if err := s3.Head("cluster", "c1/"+cluster.InputKey(1)); err != nil {
		t.Fatalf("the input log entry is not under the cluster's prefix in the bucket: %v", err)
	}
}
