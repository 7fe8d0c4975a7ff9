package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/s3test"

	"github.com/rockstream/rockstream/internal/admin"
	"github.com/rockstream/rockstream/internal/cluster"
	"github.com/rockstream/rockstream/internal/control"
	"github.com/rockstream/rockstream/internal/runtime"
)

var clusterKills = flag.Int("cluster-kills", 3, "how many times TestClusterProcesses kills a worker with SIGKILL (20 for the issue's proof)")

// These tests run the cluster's roles as separate `rockstream start`
// processes on loopback: one control (embedded etcd, coordinator, file://
// object store under its storage) and workers, with the keyed-sum
// workload submitted through the control's /cluster/writes.

const testLease = "2s" // the workers' --lease-ttl

// testProcCluster is a control process and its workers.
type testProcCluster struct {
	t       testing.TB
	dir     string
	control *server
	http    string
	workers map[string]*server
	// workerArgs are the flags each worker starts with besides its own:
	// how it finds etcd and its lease.
	workerArgs func() []string
}

func startProcCluster(t testing.TB) *testProcCluster {
	t.Helper()
	c := &testProcCluster{t: t, dir: t.TempDir(), workers: map[string]*server{}}
	c.control = c.spawnReady("--role", "control", "--storage", filepath.Join(c.dir, "control"), "--http-addr", "127.0.0.1:0",
		"--etcd-port", "0", "--etcd-peer-port", "0", "--epoch-interval", "20ms", "--checkpoint-every", "20")
	c.http, _ = c.control.logLine("ready")["http_addr"].(string)
	return c
}

// spawnReady starts a role and waits for its "ready" line.
func (c *testProcCluster) spawnReady(args ...string) *server {
	c.t.Helper()
	s := spawn(c.t, append([]string{"start", "--log-format", "json"}, args...))
	deadline := time.After(60 * time.Second)
	for s.logLine("ready") == nil {
		select {
		case <-s.done:
			c.t.Fatalf("%v exited with %d before it was ready:\n%s", args, s.exit, s.stderr())
		case <-deadline:
			c.t.Fatalf("%v was not ready within 60s:\n%s", args, s.stderr())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return s
}

func (c *testProcCluster) startWorker(id string) {
	c.t.Helper()
	args := []string{"--control", c.http, "--lease-ttl", testLease}
	if c.workerArgs != nil {
		args = c.workerArgs()
	}
	c.workers[id] = c.spawnReady(append([]string{"--role", "worker", "--node-id", id, "--storage", filepath.Join(c.dir, id)}, args...)...)
}

func (c *testProcCluster) workerList() []*server {
	var out []*server
	for _, s := range c.workers {
		out = append(out, s)
	}
	return out
}

func (c *testProcCluster) status(withState bool) (controlStatus, error) {
	return statusAt(c.http, withState)
}

// statusAt reads the /cluster/status of the control at addr, within 5 s
// (a stopped process does not answer).
func statusAt(addr string, withState bool) (controlStatus, error) {
	path := "/cluster/status"
	if withState {
		path += "?state=1"
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + path)
	if err != nil {
		return controlStatus{}, err
	}
	defer resp.Body.Close()
	var st controlStatus
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return st, fmt.Errorf("status: %s %s", resp.Status, b)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// settled returns the status once the coordinator runs and every worker
// named serves its revision at its frontier, and no other worker is a
// member or serves.
func (c *testProcCluster) settled(ids []string, withState bool) (controlStatus, bool) {
	st, err := c.status(withState)
	if err != nil || st.Coordinator == nil || st.Coordinator.Phase != "running" || st.Coordinator.Rev != st.Revision {
		return st, false
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	serving := 0
	for _, w := range st.Workers {
		r := w.Report
		if !want[string(w.ID)] {
			if w.Member || r != nil && r.Serving && r.Revision == st.Revision {
				return st, false
			}
			continue
		}
		if !w.Member || r == nil || !r.Serving || r.Revision != st.Revision || r.Applied != st.Committed {
			return st, false
		}
		serving++
	}
	return st, serving == len(ids)
}

func (c *testProcCluster) waitSettled(ids []string, within time.Duration, withState bool) controlStatus {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, ok := c.settled(ids, withState)
		if ok {
			// The frontier held still while the states were read.
			if after, err := c.status(false); err == nil && after.Committed == st.Committed && after.Revision == st.Revision {
				return st
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the cluster did not settle on %v within %s: %+v", ids, within, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// load submits writes of 1 to keys of their own, one request at a time,
// and records which were acknowledged and when, and the receipt of each
// write whose outcome is unknown.
type load struct {
	next atomic.Uint64
	// pick, when set, names another control to send to after one failed
	// or refused (it does not lead).
	pick func(failed string) string

	mu      sync.Mutex
	http    string
	acked   map[uint64]bool
	ackedAt []time.Time
	// unknown are the writes taken but not acknowledged, with their
	// receipts; lost those whose request failed before a receipt came.
	unknown map[uint64]control.Receipt
	lost    map[uint64]bool

	quit, done chan struct{}
}

func writeKeyOf(id uint64) string { return fmt.Sprintf("k%07d", id) }

func (l *load) target() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.http
}

// failed moves the load to another control after addr failed.
func (l *load) failed(addr string) {
	if l.pick == nil {
		return
	}
	next := l.pick(addr)
	l.mu.Lock()
	if l.http == addr {
		l.http = next
	}
	l.mu.Unlock()
}

func (l *load) submit(n int, timeout time.Duration) ([]uint64, error) {
	req := writesRequest{TimeoutMs: int(timeout / time.Millisecond)}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = l.next.Add(1)
		req.Writes = append(req.Writes, cluster.Write{ID: ids[i], Key: writeKeyOf(ids[i]), Delta: 1})
	}
	body, _ := json.Marshal(req)
	addr := l.target()
	hc := &http.Client{Timeout: timeout + time.Second} // a stopped control does not answer
	resp, err := hc.Post("http://"+addr+"/cluster/writes", "application/json", bytes.NewReader(body))
	if err != nil {
		// Taken or not, nobody can say: no receipt came.
		l.record(ids, nil, nil)
		l.failed(addr)
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Refused: not taken. A control that does not lead names the one
		// that does, if it knows.
		b, _ := io.ReadAll(resp.Body)
		var refusal notLeading
		if json.Unmarshal(b, &refusal) == nil && refusal.Leader != "" && l.pick != nil {
			l.mu.Lock()
			l.http = refusal.Leader
			l.mu.Unlock()
		} else {
			l.failed(addr)
		}
		return nil, fmt.Errorf("writes: %s %s", resp.Status, b)
	}
	term, err1 := strconv.ParseInt(resp.Header.Get(receiptTermHeader), 10, 64)
	after, err2 := strconv.ParseUint(resp.Header.Get(receiptAfterHeader), 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("writes: an answer without a receipt: %v", resp.Header)
	}
	receipt := &control.Receipt{Term: term, After: cluster.Epoch(after)}
	var ans writesAnswer
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		// Cut off after the receipt: the control went away.
		l.record(ids, receipt, nil)
		l.failed(addr)
		return nil, err
	}
	if ans.Receipt != *receipt {
		return nil, fmt.Errorf("writes: the answer's receipt %+v differs from its headers' %+v", ans.Receipt, *receipt)
	}
	l.record(ids, receipt, ans.Acked)
	return ans.Acked, nil
}

// record notes the outcome of one submission of ids: those in acked are
// acknowledged, the others unknown with receipt (lost without one).
func (l *load) record(ids []uint64, receipt *control.Receipt, acked []uint64) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	yes := map[uint64]bool{}
	for _, id := range acked {
		yes[id] = true
		l.acked[id] = true
		l.ackedAt = append(l.ackedAt, now)
	}
	for _, id := range ids {
		switch {
		case yes[id]:
		case receipt == nil:
			l.lost[id] = true
		default:
			l.unknown[id] = *receipt
		}
	}
}

func startLoad(http string) *load { return startLoadPicking(http, nil) }

// loadAckTimeout is how long each request of a load waits for its
// acknowledgements: long enough to span a worker's failover; with a
// pick, short enough that a request stuck on a stopped control moves on.
func loadAckTimeout(pick func(string) string) time.Duration {
	if pick != nil {
		return 3 * time.Second
	}
	return 15 * time.Second
}

// startLoadPicking starts a load at the control http, moving to the one
// pick names whenever a control fails or refuses.
func startLoadPicking(http string, pick func(failed string) string) *load {
	l := &load{http: http, pick: pick, acked: map[uint64]bool{}, unknown: map[uint64]control.Receipt{}, lost: map[uint64]bool{},
		quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.quit:
				return
			case <-time.After(20 * time.Millisecond):
			}
			_, _ = l.submit(5, loadAckTimeout(l.pick))
		}
	}()
	return l
}

func (l *load) stop() {
	close(l.quit)
	<-l.done
}

// waitAcked waits until more writes than now are acknowledged.
func (l *load) waitAcked(more int) {
	n := l.count()
	for l.count() < n+more {
		time.Sleep(50 * time.Millisecond)
	}
}

func (l *load) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// firstAckAfter is when the first write acknowledged after t was.
func (l *load) firstAckAfter(t time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, at := range l.ackedAt {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// waitResumed waits until a write submitted after since is acknowledged,
// and returns how long after since that was.
func (c *testProcCluster) waitResumed(l *load, since time.Time, within time.Duration) time.Duration {
	c.t.Helper()
	deadline := since.Add(within)
	for {
		// A write acknowledged after since may have been submitted before;
		// a probe submitted now is certain to be new.
		// Each probe waits 2 s at most: a probe lost with a coordinator's
		// term is not waited for past the deadline.
		acked, err := l.submit(1, max(100*time.Millisecond, min(2*time.Second, time.Until(deadline))))
		if err == nil && len(acked) == 1 {
			return time.Since(since)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no write acknowledged within %s of %s (last error %v)", within, since.Format(time.StampMilli), err)
		}
		if err != nil {
			time.Sleep(20 * time.Millisecond) // refused or failed at once: no leader yet
		}
	}
}

// startWorkersUnderLoad starts workers ids, waits for them to serve,
// starts a load and returns it once 100 writes are acknowledged; the load
// stops when the test ends, if it still runs.
func (c *testProcCluster) startWorkersUnderLoad(ids []string, start func() *load) *load {
	c.t.Helper()
	for _, id := range ids {
		c.startWorker(id)
	}
	c.waitSettled(ids, 30*time.Second, false)
	l := start()
	c.t.Cleanup(func() {
		select {
		case <-l.done:
		default:
			l.stop()
		}
	})
	for l.count() < 100 {
		time.Sleep(50 * time.Millisecond)
	}
	return l
}

// logResumptions logs the least, median and greatest of the times
// writes took to resume after each of a series of faults.
func logResumptions(t testing.TB, after string, resumes []time.Duration) {
	if len(resumes) == 0 {
		return
	}
	sorted := append([]time.Duration(nil), resumes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	t.Logf("resumption after %s over %d faults: min %s, median %s, max %s", after, len(sorted),
		sorted[0].Round(time.Millisecond), sorted[len(sorted)/2].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond))
}

// checkExactlyOnce checks the union of the workers' states: buckets served
// once each, every key 1 (a write applied once), every acknowledged write
// present; it returns the union.
func (c *testProcCluster) checkExactlyOnce(st controlStatus, l *load) cluster.Batch {
	c.t.Helper()
	union := cluster.Batch{}
	owners := map[int]string{}
	for _, w := range st.Workers {
		r := w.Report
		if r == nil || !r.Serving || r.Revision != st.Revision {
			continue
		}
		for _, rg := range r.Buckets {
			var first, last int
			if _, err := fmt.Sscanf(rg, "%d-%d", &first, &last); err != nil {
				c.t.Fatalf("bucket range %q: %v", rg, err)
			}
			for b := first; b <= last; b++ {
				if o, dup := owners[b]; dup {
					c.t.Fatalf("bucket %d served by %s and %s", b, o, w.ID)
				}
				owners[b] = string(w.ID)
			}
		}
		for k, v := range r.State {
			if b := cluster.BucketOf(k); owners[b] != string(w.ID) {
				c.t.Fatalf("worker %s holds key %s of bucket %d, which it does not serve", w.ID, k, b)
			}
			union[k] += v
		}
	}
	if len(owners) != cluster.NumBuckets {
		c.t.Fatalf("%d of %d buckets served", len(owners), cluster.NumBuckets)
	}
	for k, v := range union {
		if v != 1 {
			c.t.Fatalf("key %s is %d in the workers' union: a write applied %d times", k, v, v)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.acked {
		if union[writeKeyOf(id)] != 1 {
			c.t.Fatalf("acknowledged write %d is missing from the workers' union", id)
		}
	}
	c.t.Logf("%d acknowledged writes, %d keys committed, all exactly once, frontier %d", len(l.acked), len(union), st.Committed)
	return union
}

// leaseLeft returns the worker's "lease left" log line for lease, or nil.
func leaseLeft(s *server, lease cluster.LeaseID) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lines {
		if l["msg"] == "lease left" && l["lease"] == fmt.Sprintf("%x", lease) {
			return l
		}
	}
	return nil
}

// report reads worker id's report, trying for a few seconds: on a loaded
// machine one status call may miss a worker's answer.
func (c *testProcCluster) report(id string) *workerView {
	for try := 0; try < 20; try++ {
		if try > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		st, err := c.status(false)
		if err != nil {
			continue
		}
		for _, w := range st.Workers {
			if string(w.ID) == id && w.Report != nil && w.Report.Phase != "not answering" {
				return &workerView{Lease: w.Report.Lease, Serving: w.Report.Serving, Revision: w.Report.Revision, Current: st.Revision, Member: w.Member}
			}
		}
	}
	return nil
}

// workerView is what the tests read of one worker.
type workerView struct {
	Lease             cluster.LeaseID
	Serving, Member   bool
	Revision, Current cluster.Revision
}

func TestClusterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a control and four workers as processes")
	}
	c := startProcCluster(t)
	ids := []string{"w1", "w2", "w3"}
	l := c.startWorkersUnderLoad(ids, func() *load { return startLoad(c.http) })

	// Kill -9 a worker, again and again; each time the service resumes
	// within 10 s, and the worker, restarted on its disk, rejoins.
	var resumes []time.Duration
	for i := range *clusterKills {
		id := ids[i%len(ids)]
		c.workers[id].cmd.Process.Signal(syscall.SIGKILL)
		killed := time.Now()
		<-c.workers[id].done
		resumed := c.waitResumed(l, killed, 10*time.Second)
		resumes = append(resumes, resumed)
		c.startWorker(id)
		c.waitSettled(ids, 30*time.Second, false)
		t.Logf("kill %d of %s: writes acknowledged again %s after the kill", i+1, id, resumed.Round(time.Millisecond))
	}
	logResumptions(t, "SIGKILL of a worker", resumes)

	// SIGSTOP a worker past its lease: the others take its buckets; woken,
	// it finds its lease expired, does nothing more under it and joins
	// again under a new one.
	stopped := c.workers["w1"]
	before := c.report("w1")
	if before == nil || !before.Serving {
		t.Fatalf("w1 not serving before SIGSTOP: %+v", before)
	}
	stopped.cmd.Process.Signal(syscall.SIGSTOP)
	stoppedAt := time.Now()
	resumed := c.waitResumed(l, stoppedAt, 10*time.Second)
	t.Logf("SIGSTOP of w1: writes acknowledged again %s after it stopped", resumed.Round(time.Millisecond))
	st := c.waitSettled([]string{"w2", "w3"}, 20*time.Second, false)
	for _, w := range st.Workers {
		if w.ID == "w1" && w.Member {
			t.Fatalf("w1 is still a member %s after SIGSTOP: its lease did not expire", time.Since(stoppedAt))
		}
	}
	contAt := time.Now()
	stopped.cmd.Process.Signal(syscall.SIGCONT)
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := c.report("w1")
		if r != nil && r.Serving && r.Lease != before.Lease && r.Revision == r.Current {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("w1 did not serve under a new lease within 20 s of SIGCONT: %+v", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	left := leaseLeft(stopped, before.Lease)
	if left == nil {
		t.Fatalf("w1 logged no end of its lease %x:\n%s", before.Lease, stopped.stderr())
	}
	last, err := time.Parse(time.RFC3339Nano, left["last_effect"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if !last.Before(contAt) {
		t.Fatalf("w1 acted under its expired lease %x at %s, after SIGCONT at %s", before.Lease, last, contAt)
	}
	t.Logf("w1's last effect under lease %x was %s before SIGSTOP; none after SIGCONT", before.Lease, stoppedAt.Sub(last).Round(time.Millisecond))

	// Scale out: a fourth worker takes a quarter of the buckets.
	c.startWorker("w4")
	ids = append(ids, "w4")
	st = c.waitSettled(ids, 30*time.Second, false)
	for _, w := range st.Workers {
		if w.Report == nil || w.Report.BucketCount != cluster.NumBuckets/4 {
			t.Fatalf("after w4 joined, %s serves %+v, want %d buckets", w.ID, w.Report, cluster.NumBuckets/4)
		}
	}
	l.waitAcked(100)
	l.stop()
	c.checkExactlyOnce(c.waitSettled(ids, 30*time.Second, true), l)

	// Every decision is in the audit log with its reading.
	resp, err := http.Get("http://" + c.http + "/admin/audit")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var ev runtime.AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if ev.Kind == "cluster" {
			kinds[ev.Object]++
			if !strings.Contains(ev.Detail, "reading: ") {
				t.Errorf("audit event without its reading: %s", line)
			}
		}
	}
	for _, k := range []string{"elected", "placement", "assignment", "commit", "checkpoint"} {
		if kinds[k] == 0 {
			t.Errorf("no %q decision in the audit log: %v", k, kinds)
		}
	}
	if want := 2*(*clusterKills) + 3; kinds["assignment"] < want {
		t.Errorf("%d assignments audited, want at least %d (start-up, each kill and rejoin, the SIGSTOP, w4)", kinds["assignment"], want)
	}
	t.Logf("audited decisions: %v", kinds)
}

func TestClusterRoleFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--role", "gateway"}, `--role must be all, control or worker, not "gateway"`},
		{[]string{"--role", "control", "--storage", dir, "--pg-addr", "127.0.0.1:0"}, "--role control does not take --pg-addr"},
		{[]string{"--role", "worker", "--storage", dir, "--http-addr", "127.0.0.1:0", "--control", "x:1"}, "--role worker does not take --http-addr"},
		{[]string{"--role", "control", "--storage", dir, "--node-id", "w1"}, "--role control does not take --node-id"},
		{[]string{"--etcd", "http://127.0.0.1:2379"}, "--role all does not take --etcd"},
		{[]string{"--role", "worker", "--storage", dir}, "--role worker needs --control ADDR"},
		{[]string{"--role", "worker", "--storage", dir, "--control", "a:1", "--etcd", "http://b:2"}, "give --control or --etcd, not both"},
		{[]string{"--role", "worker", "--storage", dir, "--control", "a:1", "--lease-ttl", "500ms"}, "--lease-ttl must be at least 1s"},
		{[]string{"--role", "control", "--storage", dir, "--cluster", "a/b"}, "--cluster: control: invalid cluster name"},
		{[]string{"--role", "control"}, "--role control needs --storage DIR"},
		{[]string{"--role", "control", "--storage", dir, "--http-addr", ""}, "--role control needs --http-addr"},
		{[]string{"--role", "control", "--storage", dir, "--shutdown-timeout", "1s"}, "--role control does not take --shutdown-timeout"},
		{[]string{"--role", "worker", "--storage", dir, "--control", "a:1", "--cluster-addr", "0.0.0.0:0"}, "not a wildcard"},
		{[]string{"--role", "worker", "--control", "a:1"}, "--role worker needs --storage DIR"},
	} {
		out := runProg(t, dir, "", binary(t), append([]string{"start"}, c.args...)...)
		if out.exit != exitUsage || !strings.Contains(out.stderr, c.want) {
			t.Errorf("start %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(c.args, " "), out.exit, out.stderr, exitUsage, c.want)
		}
	}

	// The control's endpoints refuse bad writes precisely.
	ctl := startProcCluster(t)
	for _, c := range []struct{ body, want string }{
		{`{"writes":[`, "the body is not a writes request"},
		{`{"writes":[{"ID":1,"Key":"a","Delta":1}],"extra":1}`, "unknown field"},
		{`{"writes":[]}`, "a request carries 1 to 10000 writes, not 0"},
		{`{"writes":[{"ID":0,"Key":"a","Delta":1}]}`, "unique nonzero ID and a key"},
		{`{"writes":[{"ID":1,"Key":"a"},{"ID":1,"Key":"b"}]}`, "unique nonzero ID and a key"},
		{`{"writes":[{"ID":1,"Key":"a"}],"timeout_ms":70000}`, "timeout_ms must be between 0 and 60000"},
	} {
		resp, err := http.Post("http://"+ctl.http+"/cluster/writes", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), c.want) {
			t.Errorf("POST %s: %s %s, want 400 and %q", c.body, resp.Status, b, c.want)
		}
	}
	status := runProg(t, dir, "", binary(t), "cluster", "status", "--control", ctl.http)
	if status.exit != 0 || !strings.Contains(status.stdout, "cluster rockstream, leader 127.0.0.1:") || !strings.Contains(status.stdout, "this control leads") {
		t.Errorf("cluster status --control: exit %d\n%s%s", status.exit, status.stdout, status.stderr)
	}
	// With no worker, the control's /health is degraded, in the
	// single-node shape, and cluster status --server prints it.
	if h, code := controlHealthOf(t, ctl.http); code != http.StatusServiceUnavailable || h.Role != "control" || h.Status != "degraded" ||
		!strings.Contains(h.Problem, "no buckets are assigned") || len(h.Workers) != 0 {
		t.Errorf("/health of a control without workers: %d %+v", code, h)
	}
	status = runProg(t, dir, "", binary(t), "cluster", "status", "--server", ctl.http)
	if status.exit != 0 || !strings.Contains(status.stdout, "role control, status degraded, frontier ") {
		t.Errorf("cluster status --server of the control: exit %d\n%s%s", status.exit, status.stdout, status.stderr)
	}
	audit := runProg(t, dir, "", binary(t), "audit", "tail", "--server", ctl.http)
	if audit.exit != 0 || !strings.Contains(audit.stdout, `"kind":"cluster","object":"elected"`) {
		t.Errorf("audit tail --server of the control: exit %d\n%s%s", audit.exit, audit.stdout, audit.stderr)
	}

	// A control whose cluster keeps its objects elsewhere is refused.
	etcd, _ := ctl.control.logLine("ready")["etcd"].(string)
	out := runProg(t, dir, "", binary(t), "start", "--role", "control", "--storage", filepath.Join(dir, "other"),
		"--etcd", etcd, "--http-addr", "127.0.0.1:0")
	if out.exit != exitUsage || !strings.Contains(out.stderr, "keeps its input log and checkpoints in file://") {
		t.Errorf("a second control on another object store: exit %d, stderr:\n%s", out.exit, out.stderr)
	}
}

// TestClusterProcessesOnS3 runs the cluster with its input log and
// checkpoints in S3 (gofakes3 on loopback, configured through the
// ROCKSTREAM_OBJECT_STORE_* variables the processes inherit).
func TestClusterProcessesOnS3(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a control and two workers as processes")
	}
	s3 := s3test.Start(t, "cluster")
	t.Setenv("ROCKSTREAM_OBJECT_STORE_BUCKET", "cluster")
	c := startProcCluster(t)
	if got := c.control.logLine("ready")["objects"]; got != "s3://cluster/rockstream" {
		t.Fatalf("the control's object store is %v, want s3://cluster/rockstream", got)
	}
	ids := []string{"w1", "w2"}
	for _, id := range ids {
		c.startWorker(id)
	}
	c.waitSettled(ids, 30*time.Second, false)
	l := startLoad(c.http)
	for l.count() < 100 {
		time.Sleep(50 * time.Millisecond)
	}
	c.workers["w2"].cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	<-c.workers["w2"].done
	t.Logf("writes acknowledged again %s after w2 was killed", c.waitResumed(l, killed, 10*time.Second).Round(time.Millisecond))
	c.startWorker("w2")
	c.waitSettled(ids, 30*time.Second, false)
	l.waitAcked(50)
	// A checkpoint under way when w2 was killed is abandoned with its
	// assignment: wait for the next one (every 20 epochs).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if st, err := c.status(false); err == nil && st.Checkpoint > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint recorded within 30 s under load")
		}
	}
	l.stop()
	st := c.waitSettled(ids, 30*time.Second, true)
	c.checkExactlyOnce(st, l)
	c.checkHealth(st, ids)
	if st.Checkpoint == 0 {
		t.Fatalf("no checkpoint recorded by frontier %d", st.Committed)
	}
	for _, key := range []string{"rockstream/" + cluster.InputKey(st.Committed), "rockstream/" + cluster.ManifestKey(st.Checkpoint)} {
		if err := s3.Head("cluster", key); err != nil {
			t.Errorf("%s is not in the bucket: %v", key, err)
		}
	}
}

// controlHealthOf reads the /health of the control at addr.
func controlHealthOf(t testing.TB, addr string) (admin.Health, int) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h admin.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("/health of the control: %v", err)
	}
	return h, resp.StatusCode
}

// checkHealth checks the control's /health against its settled status
// st: ok, the frontier at least st's, the workers ids by name, every
// bucket in exactly one shard owned by one of them; and that cluster
// status --server prints it.
func (c *testProcCluster) checkHealth(st controlStatus, ids []string) {
	c.t.Helper()
	h, code := controlHealthOf(c.t, c.http)
	if code != http.StatusOK || h.Status != "ok" || h.Role != "control" || h.Frontier == nil || *h.Frontier < uint64(st.Committed) {
		c.t.Fatalf("/health of the settled cluster (committed %d): %d %+v", st.Committed, code, h)
	}
	var names []string
	for i, w := range h.Workers {
		if w.ID != i || w.State != "serving" || w.BucketCount != cluster.NumBuckets/len(ids) || w.AppliedEpoch < uint64(st.Committed) {
			c.t.Errorf("/health worker %+v", w)
		}
		names = append(names, w.Name)
	}
	if strings.Join(names, ",") != strings.Join(ids, ",") {
		c.t.Errorf("/health names workers %v, want %v", names, ids)
	}
	next := 0
	for _, s := range h.Shards {
		if s.FirstBucket != next || s.LastBucket < s.FirstBucket || s.Owner < 0 || s.Owner >= len(h.Workers) ||
			s.Frontier < uint64(st.Committed) || s.Frontier+s.LagEpochs < *h.Frontier {
			c.t.Errorf("/health shard %+v (frontier %d)", s, *h.Frontier)
		}
		next = s.LastBucket + 1
	}
	if next != cluster.NumBuckets {
		c.t.Errorf("/health shards cover buckets 0-%d, want 0-%d: %+v", next-1, cluster.NumBuckets-1, h.Shards)
	}
	out := runProg(c.t, c.dir, "", binary(c.t), "cluster", "status", "--server", c.http)
	if out.exit != 0 || !strings.Contains(out.stdout, "role control, status ok, frontier ") || !strings.Contains(out.stdout, "\n"+ids[0]+" ") {
		c.t.Errorf("cluster status --server of the control: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
	}
	c.t.Logf("cluster status --server %s:\n%s", c.http, out.stdout)
}
