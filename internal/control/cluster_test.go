package control

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"gocloud.dev/blob/memblob"

	"github.com/rockstream/rockstream/internal/cluster"
)

// testCluster is one coordinator host and worker hosts in one process, on
// a real embedded etcd, a memblob bucket and a LocalNetwork.
type testCluster struct {
	t       *testing.T
	etcd    *Embedded
	cli     *clientv3.Client
	net     *LocalNetwork
	objects Objects
	coord   *CoordinatorHost
	workers map[cluster.NodeID]*testWorker
	client  *testClient
	wg      sync.WaitGroup
}

type testWorker struct {
	host   *WorkerHost
	cancel context.CancelFunc
	done   chan error
}

const (
	testWorkerTTL   = 800 * time.Millisecond // the worker's own deadline; etcd's lease is 1 s
	testRenewEvery  = 200 * time.Millisecond
	testRequestTime = 300 * time.Millisecond
)

func newTestCluster(t *testing.T) *testCluster {
	t.Helper()
	c := &testCluster{t: t, etcd: startEtcd(t), net: NewLocalNetwork(), workers: map[cluster.NodeID]*testWorker{}}
	c.cli = connect(t, c.etcd.Endpoints())
	bucket := memblob.OpenBucket(nil)
	t.Cleanup(func() { bucket.Close() })
	c.objects = BlobObjects{Bucket: bucket}
	coord, err := NewCoordinatorHost(CoordinatorHostConfig{
		Name: "coord-1", SessionTTL: 2 * time.Second,
		EpochEvery: 20 * time.Millisecond, PollEvery: 100 * time.Millisecond, Resend: 100 * time.Millisecond,
		CheckpointEvery: 10,
	}, c.cli, c.store(c.cli), c.objects, c.net)
	if err != nil {
		t.Fatal(err)
	}
	c.coord = coord
	c.net.Attach(cluster.CoordinatorID, coord.Deliver)
	ctx, cancel := context.WithCancel(context.Background())
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = coord.Run(ctx)
	}()
	c.client = &testClient{coord: coord, acked: map[uint64]bool{}}
	c.net.Attach(cluster.ClientID, c.client.receive)
	t.Cleanup(func() {
		c.client.stop()
		for id := range c.workers {
			c.stopWorker(id)
		}
		cancel()
		c.wg.Wait()
	})
	return c
}

func (c *testCluster) store(cli *clientv3.Client) *Store {
	keys, err := NewKeys("test")
	if err != nil {
		c.t.Fatal(err)
	}
	return NewStore(cli, keys, StoreConfig{LeaseTTL: time.Second, RequestTimeout: testRequestTime})
}

// startWorker runs worker id with its disk in dir, its etcd client
// connected to endpoints.
func (c *testCluster) startWorker(id cluster.NodeID, dir string, endpoints []string, observe func(cluster.LeaseID, cluster.Action)) {
	c.t.Helper()
	disk, err := OpenFileDisk(dir)
	if err != nil {
		c.t.Fatal(err)
	}
	c.startWorkerOn(id, disk, endpoints, observe)
}

func (c *testCluster) startWorkerOn(id cluster.NodeID, disk Disk, endpoints []string, observe func(cluster.LeaseID, cluster.Action)) {
	c.t.Helper()
	h, err := NewWorkerHost(WorkerHostConfig{ID: id, LeaseTTL: testWorkerTTL, RenewEvery: testRenewEvery, Observe: observe},
		c.store(connect(c.t, endpoints)), c.objects, c.net, disk)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &testWorker{host: h, cancel: cancel, done: make(chan error, 1)}
	c.workers[id] = w
	c.net.Attach(id, h.Deliver)
	go func() { w.done <- h.Run(ctx) }()
}

// stopWorker stops a worker host as a crash would: its lease is left to
// expire.
func (c *testCluster) stopWorker(id cluster.NodeID) {
	w := c.workers[id]
	if w == nil {
		return
	}
	c.net.Detach(id)
	w.cancel()
	if err := <-w.done; err != nil {
		c.t.Errorf("worker %s: %v", id, err)
	}
	delete(c.workers, id)
}

// waitFor polls cond until it holds or the time runs out.
func (c *testCluster) waitFor(what string, within time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *testCluster) coordStatus() (CoordinatorStatus, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	st, err := c.coord.Status(ctx)
	return st, err == nil
}

// settled returns the running workers' states once they all serve the
// coordinator's revision at its frontier, and that frontier held still
// while they were read.
func (c *testCluster) settled() (map[cluster.NodeID]WorkerStatus, bool) {
	before, ok := c.coordStatus()
	if !ok || before.Phase != "running" {
		return nil, false
	}
	states := map[cluster.NodeID]WorkerStatus{}
	for id, w := range c.workers {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		st, err := w.host.Status(ctx)
		cancel()
		if err != nil || !st.Serving || st.Rev != before.Rev || st.Applied != before.Committed {
			return nil, false
		}
		states[id] = st
	}
	after, ok := c.coordStatus()
	if !ok || after != before {
		return nil, false
	}
	return states, true
}

// waitSettled waits for settled and returns the workers' states.
func (c *testCluster) waitSettled() map[cluster.NodeID]WorkerStatus {
	c.t.Helper()
	var states map[cluster.NodeID]WorkerStatus
	c.waitFor("the workers serving the frontier", 20*time.Second, func() bool {
		var ok bool
		states, ok = c.settled()
		return ok
	})
	return states
}

// checkExactlyOnce checks the union of the workers' states: every write
// adds 1 to a key of its own, so an acknowledged write's key must be 1
// and no key may be more (a doubled write).
func (c *testCluster) checkExactlyOnce(states map[cluster.NodeID]WorkerStatus) {
	c.t.Helper()
	union := cluster.Batch{}
	var owners [cluster.NumBuckets]cluster.NodeID
	for id, st := range states {
		for b, mine := range st.Owned {
			if !mine {
				continue
			}
			if owners[b] != "" {
				c.t.Fatalf("bucket %d served by %s and %s", b, owners[b], id)
			}
			owners[b] = id
		}
		cluster.Merge(union, st.State)
	}
	for b, o := range owners {
		if o == "" {
			c.t.Fatalf("bucket %d served by no worker", b)
		}
	}
	for k, v := range union {
		if v != 1 {
			c.t.Fatalf("key %s is %d in the workers' union, want 1 (a write applied %d times)", k, v, v)
		}
	}
	acked := c.client.ackedIDs()
	for id := range acked {
		if union[writeKey(id)] != 1 {
			c.t.Fatalf("acknowledged write %d is missing from the workers' union", id)
		}
	}
	c.t.Logf("%d acknowledged writes, %d keys in the union, all exactly once", len(acked), len(union))
}

// testClient sends writes to the coordinator, each once, and records the
// acknowledgements.
type testClient struct {
	coord *CoordinatorHost
	next  uint64

	mu    sync.Mutex
	acked map[uint64]bool

	stopOnce sync.Once
	quit     chan struct{}
	done     chan struct{}
}

func writeKey(id uint64) string { return fmt.Sprintf("k%06d", id) }

func (c *testClient) receive(m cluster.Message) {
	if m.Kind != cluster.MsgAck {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range m.WriteIDs {
		c.acked[id] = true
	}
}

// start sends a write every interval until stop.
func (c *testClient) start(interval time.Duration) {
	c.quit, c.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-c.quit:
				return
			case <-t.C:
				c.next++
				// Refused while no term leads: that write is not taken.
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				_, _ = c.coord.Submit(ctx, []cluster.Write{{ID: c.next, Key: writeKey(c.next), Delta: 1}})
				cancel()
			}
		}
	}()
}

func (c *testClient) stop() {
	c.stopOnce.Do(func() {
		if c.quit != nil {
			close(c.quit)
			<-c.done
		}
	})
}

func (c *testClient) ackedIDs() map[uint64]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[uint64]bool, len(c.acked))
	for id := range c.acked {
		m[id] = true
	}
	return m
}

func (c *testClient) ackCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.acked)
}

func TestClusterRunsAndFailsOverOnRealEtcd(t *testing.T) {
	c := newTestCluster(t)
	for _, id := range []cluster.NodeID{"w1", "w2", "w3"} {
		c.startWorker(id, t.TempDir(), c.etcd.Endpoints(), nil)
	}
	c.client.start(3 * time.Millisecond)
	c.waitFor("200 acknowledged writes", 30*time.Second, func() bool { return c.client.ackCount() >= 200 })
	st, _ := c.coordStatus()
	before := st.Rev
	t.Logf("running at revision %d, committed %d", st.Rev, st.Committed)

	c.stopWorker("w2")
	stopped := time.Now()
	c.waitFor("an assignment without w2", 20*time.Second, func() bool {
		st, ok := c.coordStatus()
		return ok && st.Rev != before && st.Phase == "running"
	})
	t.Logf("reassigned %s after w2 stopped", time.Since(stopped).Round(10*time.Millisecond))
	acked := c.client.ackCount()
	c.waitFor("200 more acknowledged writes", 30*time.Second, func() bool { return c.client.ackCount() >= acked+200 })

	c.client.stop()
	states := c.waitSettled()
	if len(states) != 2 {
		t.Fatalf("settled with %d workers, want w1 and w3", len(states))
	}
	c.checkExactlyOnce(states)
}

// fenceLog records, from a worker host's Observe hook, the actions with an
// effect it performed under each lease and when the worker fenced itself.
type fenceLog struct {
	mu       sync.Mutex
	lease    cluster.LeaseID // the lease of the actions seen last
	fenced   map[cluster.LeaseID]time.Time
	lastAct  map[cluster.LeaseID]time.Time
	fenceSig chan cluster.LeaseID
}

func newFenceLog() *fenceLog {
	return &fenceLog{fenced: map[cluster.LeaseID]time.Time{}, lastAct: map[cluster.LeaseID]time.Time{},
		fenceSig: make(chan cluster.LeaseID, 16)}
}

func (f *fenceLog) observe(lease cluster.LeaseID, a cluster.Action) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if lease == 0 && f.lease != 0 && a.Kind == cluster.ActRegister {
		// The machine dropped its lease and registers again: it fenced
		// itself.
		f.fenced[f.lease] = now
		select {
		case f.fenceSig <- f.lease:
		default:
		}
		f.lease = 0
	}
	if lease != 0 {
		f.lease = lease
	}
	if hasEffect(a) {
		f.lastAct[lease] = now
	}
}

func TestWorkerCutOffFromEtcdFencesItselfBeforeItsLeaseExpires(t *testing.T) {
	c := newTestCluster(t)
	p := startProxy(t, c.etcd.Endpoints()[0][len("http://"):])
	fl := newFenceLog()
	c.startWorker("w1", t.TempDir(), []string{p.endpoint()}, fl.observe)
	c.startWorker("w2", t.TempDir(), c.etcd.Endpoints(), nil)
	c.client.start(3 * time.Millisecond)
	c.waitFor("100 acknowledged writes", 30*time.Second, func() bool { return c.client.ackCount() >= 100 })
	ctx := context.Background()
	st, err := c.workers["w1"].host.Status(ctx)
	if err != nil || !st.Serving {
		t.Fatalf("w1 not serving: %+v %v", st, err)
	}
	lease := st.Lease

	// w1 loses etcd; the coordinator still reaches it over the network, so
	// only its own deadline stops it.
	p.setCut(true)
	cut := time.Now()
	var fencedAt time.Time
	timeout := time.After(5 * time.Second)
	for fencedAt.IsZero() {
		var l cluster.LeaseID
		select {
		case l = <-fl.fenceSig:
		case <-timeout:
			t.Fatal("w1 did not fence itself within 5 s of losing etcd")
		}
		if l != lease {
			continue // a fence of an earlier lease, on a machine too loaded to renew in time
		}
		// Right after the fence etcd still holds the lease: the worker
		// stopped before etcd could have given its buckets to another.
		ttl, err := c.cli.TimeToLive(ctx, clientv3.LeaseID(lease))
		if err != nil {
			t.Fatal(err)
		}
		// TTL counts whole seconds left (0 under one); -1 is expired.
		if ttl.TTL < 0 {
			t.Fatalf("when w1 fenced itself etcd had expired its lease already (TTL %d)", ttl.TTL)
		}
		fl.mu.Lock()
		fencedAt = fl.fenced[lease]
		fl.mu.Unlock()
		t.Logf("w1 fenced itself %s after the cut, its lease still live in etcd", fencedAt.Sub(cut).Round(time.Millisecond))
	}

	// etcd expires the lease and deletes the membership key; the
	// coordinator places every bucket on w2.
	c.waitFor("w1's membership key to expire", 10*time.Second, func() bool {
		resp, err := c.cli.Get(ctx, c.store(c.cli).Keys().Member("w1"))
		return err == nil && (len(resp.Kvs) == 0 || resp.Kvs[0].Lease != int64(lease))
	})
	expired := time.Now()
	acked := c.client.ackCount()
	c.waitFor("100 more acknowledged writes on w2 alone", 20*time.Second, func() bool { return c.client.ackCount() >= acked+100 })

	fl.mu.Lock()
	last := fl.lastAct[lease]
	fl.mu.Unlock()
	if last.After(fencedAt) {
		t.Fatalf("w1 acted under lease %d at %s, after fencing itself at %s", lease, last, fencedAt)
	}
	if !fencedAt.Before(expired) {
		t.Fatal("w1 fenced itself only after etcd expired its lease")
	}

	// With etcd back, w1 registers under a new lease and serves again.
	p.setCut(false)
	c.waitFor("w1 serving under a new lease", 20*time.Second, func() bool {
		st, err := c.workers["w1"].host.Status(ctx)
		return err == nil && st.Serving && st.Lease != lease && st.Lease != 0
	})
	fl.mu.Lock()
	if fl.lastAct[lease] != last {
		t.Error("w1 acted under its old lease after fencing itself")
	}
	fl.mu.Unlock()
	c.client.stop()
	states := c.waitSettled()
	c.checkExactlyOnce(states)
}

// stallingDisk is a FileDisk whose next Prepare, once armed, takes stall
// longer: a disk too slow for the worker to renew its lease in time.
type stallingDisk struct {
	*FileDisk
	stall   time.Duration
	armed   chan struct{} // closed to arm
	stalled chan struct{} // closed when the stall began
	once    sync.Once
}

func (d *stallingDisk) Prepare(e cluster.Epoch, delta cluster.Batch) error {
	select {
	case <-d.armed:
		stalls := false
		d.once.Do(func() { stalls = true; close(d.stalled) })
		if stalls {
			time.Sleep(d.stall)
		}
	default:
	}
	return d.FileDisk.Prepare(e, delta)
}

func TestWorkerPastItsDeadlineAfterASlowDiskDoesNotReport(t *testing.T) {
	c := newTestCluster(t)
	fd, err := OpenFileDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	disk := &stallingDisk{FileDisk: fd, stall: testWorkerTTL + 200*time.Millisecond,
		armed: make(chan struct{}), stalled: make(chan struct{})}
	var mu sync.Mutex
	var lease cluster.LeaseID
	var stalledEpoch cluster.Epoch
	var reportedAfter []string
	c.startWorkerOn("w1", disk, c.etcd.Endpoints(), func(l cluster.LeaseID, a cluster.Action) {
		mu.Lock()
		defer mu.Unlock()
		if stalledEpoch == 0 && a.Kind == cluster.ActDiskPrepare && l == lease && lease != 0 {
			select {
			case <-disk.armed:
				stalledEpoch = a.Epoch
			default:
			}
		}
		if stalledEpoch != 0 && l == lease && hasEffect(a) && a.Kind != cluster.ActDiskPrepare {
			reportedAfter = append(reportedAfter, a.String())
		}
	})
	c.startWorker("w2", t.TempDir(), c.etcd.Endpoints(), nil)
	c.client.start(3 * time.Millisecond)
	c.waitFor("50 acknowledged writes", 30*time.Second, func() bool { return c.client.ackCount() >= 50 })
	st, err := c.workers["w1"].host.Status(context.Background())
	if err != nil || !st.Serving {
		t.Fatalf("w1 not serving: %+v %v", st, err)
	}
	mu.Lock()
	lease = st.Lease
	mu.Unlock()
	close(disk.armed)
	select {
	case <-disk.stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("w1 prepared nothing")
	}
	c.waitFor("w1 serving under a new lease", 20*time.Second, func() bool {
		st, err := c.workers["w1"].host.Status(context.Background())
		return err == nil && st.Serving && st.Lease != lease
	})
	mu.Lock()
	if len(reportedAfter) > 0 {
		t.Errorf("after the stalled prepare of epoch %d, w1 acted under its old lease: %v", stalledEpoch, reportedAfter)
	}
	mu.Unlock()
	c.client.stop()
	c.checkExactlyOnce(c.waitSettled())
}
