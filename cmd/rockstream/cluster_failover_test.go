package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/control"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/s3test"
)

var controlKills = flag.Int("control-kills", 3, "how many times TestClusterControlFailover kills the leading control with SIGKILL")

// The controls' --leader-ttl and the workers' --lease-ttl in the failover
// test; the lease is long enough to stop a worker for a few seconds
// without its buckets moving.
const (
	testLeaderTTL  = "2s"
	failoverLease  = "5s"
	workerStopTime = 3 * time.Second
)

// failoverCluster is two control processes and workers on one etcd,
// which the test process embeds so that either control can be killed,
// with the objects in S3 (gofakes3), which both controls reach.
type failoverCluster struct {
	*testProcCluster
	etcd string

	mu       sync.Mutex
	controls map[string]*server
	httpOf   map[string]string
}

func startFailoverCluster(t *testing.T) *failoverCluster {
	s3test.Start(t, "cluster")
	t.Setenv("ROCKSTREAM_OBJECT_STORE_BUCKET", "cluster")
	emb, err := control.StartEmbedded(control.EmbedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	c := &failoverCluster{testProcCluster: &testProcCluster{t: t, dir: t.TempDir(), workers: map[string]*server{}},
		etcd: strings.Join(emb.Endpoints(), ","), controls: map[string]*server{}, httpOf: map[string]string{}}
	c.workerArgs = func() []string { return []string{"--etcd", c.etcd, "--lease-ttl", failoverLease} }
	c.startControl("c1")
	c.startControl("c2")
	c.http = c.httpOf[c.waitLeader(30*time.Second)]
	return c
}

// startControl starts (or restarts, on its storage) control name.
func (c *failoverCluster) startControl(name string) {
	c.t.Helper()
	s := c.spawnReady("--role", "control", "--storage", filepath.Join(c.dir, name), "--http-addr", "127.0.0.1:0",
		"--etcd", c.etcd, "--leader-ttl", testLeaderTTL, "--epoch-interval", "20ms", "--checkpoint-every", "20")
	addr, _ := s.logLine("ready")["http_addr"].(string)
	c.mu.Lock()
	c.controls[name], c.httpOf[name] = s, addr
	c.mu.Unlock()
}

// other is the HTTP address of a running control other than the one at
// failed (failed itself when there is none): where a client tries next.
func (c *failoverCluster) other(failed string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, addr := range c.httpOf {
		select {
		case <-c.controls[name].done:
			continue
		default:
		}
		if addr != failed {
			return addr
		}
	}
	return failed
}

// waitLeader returns the name of the control whose coordinator runs.
func (c *failoverCluster) waitLeader(within time.Duration) string {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		c.mu.Lock()
		addrs := map[string]string{}
		for name, addr := range c.httpOf {
			addrs[name] = addr
		}
		c.mu.Unlock()
		for name, addr := range addrs {
			if st, err := statusAt(addr, false); err == nil && st.Coordinator != nil && st.Coordinator.Phase == "running" {
				return name
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no control led within %s", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// auditOf reads the cluster decisions in the audit log of the control at
// addr.
func auditOf(t testing.TB, addr string) []runtime.AuditEvent {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/admin/audit")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out []runtime.AuditEvent
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var ev runtime.AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if ev.Kind == "cluster" {
			out = append(out, ev)
		}
	}
	return out
}

var lastCommitRE = regexp.MustCompile(`after (\d+) commits, the last asked of etcd at (\S+):`)

// outcomeAt asks the control at addr for the outcome of write id.
func outcomeAt(t testing.TB, addr string, id uint64, r control.Receipt) control.Outcome {
	t.Helper()
	url := fmt.Sprintf("http://%s/cluster/writes/%d?term=%d&after_epoch=%d", addr, id, r.Term, r.After)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out control.Outcome
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestClusterControlFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two controls and three workers as processes")
	}
	c := startFailoverCluster(t)
	ids := []string{"w1", "w2", "w3"}
	l := c.startWorkersUnderLoad(ids, func() *load { return startLoadPicking(c.http, c.other) })

	// A control that does not lead refuses writes and names the leader.
	resp, err := http.Post("http://"+c.other(c.http)+"/cluster/writes", "application/json",
		strings.NewReader(`{"writes":[{"ID":999999999,"Key":"x","Delta":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var refusal notLeading
	json.NewDecoder(resp.Body).Decode(&refusal)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || refusal.Leader != c.http {
		t.Fatalf("a write to the control that does not lead: %s %+v, want 503 naming %s", resp.Status, refusal, c.http)
	}

	// Kill -9 the leading control, again and again: the other is elected
	// and writes resume within 10 s; the killed one rejoins as a
	// candidate.
	var resumes []time.Duration
	for i := range *controlKills {
		name := c.waitLeader(10 * time.Second)
		s := c.controls[name]
		s.cmd.Process.Signal(syscall.SIGKILL)
		killed := time.Now()
		<-s.done
		resumed := c.waitResumed(l, killed, 10*time.Second)
		resumes = append(resumes, resumed)
		c.startControl(name)
		c.http = c.httpOf[c.waitLeader(10*time.Second)]
		c.waitSettled(ids, 30*time.Second, false)
		t.Logf("kill %d of the leading control %s: writes acknowledged again %s after the kill", i+1, name, resumed.Round(time.Millisecond))
	}
	logResumptions(t, "SIGKILL of the leading control (--leader-ttl "+testLeaderTTL+")", resumes)

	// SIGSTOP the leading control past its leader TTL: the other is
	// elected; woken, the stopped one is deposed and commits nothing more.
	name := c.waitLeader(10 * time.Second)
	zombie, zombieHTTP := c.controls[name], c.httpOf[name]
	zombie.cmd.Process.Signal(syscall.SIGSTOP)
	stoppedAt := time.Now()
	resumed := c.waitResumed(l, stoppedAt, 10*time.Second)
	t.Logf("SIGSTOP of the leading control %s: writes acknowledged again %s after it stopped", name, resumed.Round(time.Millisecond))
	if next := c.waitLeader(5 * time.Second); next == name {
		t.Fatalf("the stopped control %s still leads", name)
	}
	time.Sleep(500 * time.Millisecond)
	contAt := time.Now()
	zombie.cmd.Process.Signal(syscall.SIGCONT)
	var ended *runtime.AuditEvent
	for deadline := time.Now().Add(10 * time.Second); ended == nil; {
		for _, ev := range auditOf(t, zombieHTTP) {
			if ev.Object == "term ended" && ev.Time.After(stoppedAt) {
				ended = &ev
			}
			if ev.Object == "commit" && ev.Outcome == "ok" && ev.Time.After(contAt) {
				t.Fatalf("the deposed control committed after SIGCONT: %+v", ev)
			}
		}
		if ended == nil && time.Now().After(deadline) {
			t.Fatalf("the deposed control %s logged no end of its term within 10 s of SIGCONT", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	m := lastCommitRE.FindStringSubmatch(ended.Detail)
	if m == nil {
		t.Fatalf("term end without its last commit: %s", ended.Detail)
	}
	if last, err := time.Parse(time.RFC3339Nano, m[2]); err == nil && !last.Before(contAt) {
		t.Fatalf("the deposed control committed at %s, after SIGCONT at %s: %s", last, contAt, ended.Detail)
	}
	t.Logf("the deposed control's term: %s", ended.Detail)
	if next := c.waitLeader(5 * time.Second); next == name {
		t.Fatalf("the deposed control %s leads again at once", name)
	}
	c.http = c.httpOf[c.waitLeader(5*time.Second)]
	c.waitSettled(ids, 30*time.Second, false)

	// SIGSTOP a worker for less than its lease: its shard's lag grows on
	// /health while the others' stays 0; woken, it catches up.
	stopped := c.workers["w2"]
	stopped.cmd.Process.Signal(syscall.SIGSTOP)
	wStoppedAt := time.Now()
	var lags []int64
	for time.Since(wStoppedAt) < workerStopTime {
		h, _ := controlHealthOf(t, c.http)
		for _, s := range h.Shards {
			if s.Owner < len(h.Workers) && h.Workers[s.Owner].Name == "w2" {
				lags = append(lags, s.LagMs)
				if h.Workers[s.Owner].State != "unreachable" && time.Since(wStoppedAt) > 1500*time.Millisecond {
					t.Errorf("the stopped worker is %q on /health", h.Workers[s.Owner].State)
				}
			} else if s.LagMs != 0 && time.Since(wStoppedAt) > 1500*time.Millisecond {
				t.Errorf("shard %+v of a worker that answers lags %d ms", s, s.LagMs)
			}
		}
	}
	stopped.cmd.Process.Signal(syscall.SIGCONT)
	t.Logf("lag_ms of w2's shard while it was stopped: %v", lags)
	if len(lags) < 2 || lags[len(lags)-1] <= lags[0] || lags[len(lags)-1] < 1000 {
		t.Errorf("the stopped worker's lag did not grow past 1 s: %v", lags)
	}
	c.waitSettled(ids, 30*time.Second, false)

	l.waitAcked(100)
	l.stop()
	st := c.waitSettled(ids, 30*time.Second, true)
	union := c.checkExactlyOnce(st, l)
	h, code := controlHealthOf(t, c.http)
	if code != http.StatusOK {
		t.Errorf("/health of the settled cluster: %d %+v", code, h)
	}
	for _, s := range h.Shards {
		if s.LagMs != 0 || s.LagEpochs != 0 {
			t.Errorf("shard of the settled cluster lags: %+v", s)
		}
	}

	// Every write whose acknowledgement did not come has a certain
	// outcome now, from either control, and it is what the workers hold.
	counts := map[string]int{}
	var addrs []string
	for _, a := range c.httpOf {
		addrs = append(addrs, a)
	}
	i := 0
	for id, r := range l.unknown {
		out := outcomeAt(t, addrs[i%len(addrs)], id, r)
		i++
		counts[out.State]++
		switch have := union[writeKeyOf(id)]; out.State {
		case "committed":
			if have != 1 {
				t.Errorf("write %d is committed in epoch %d by its outcome but the workers hold %d", id, out.Epoch, have)
			}
		case "not_committed":
			if have != 0 {
				t.Errorf("write %d is not committed by its outcome but the workers hold %d", id, have)
			}
		default:
			t.Errorf("write %d (receipt %+v): outcome %+v after the load stopped", id, r, out)
		}
	}
	lostCommitted := 0
	for id := range l.lost {
		lostCommitted += int(union[writeKeyOf(id)])
	}
	t.Logf("writes not acknowledged: %d with a receipt, outcomes %v; %d without one (the request failed), %d of them committed",
		len(l.unknown), counts, len(l.lost), lostCommitted)

	// The audit log of the control that leads now has its election.
	kinds := map[string]int{}
	for _, ev := range auditOf(t, c.http) {
		kinds[ev.Object]++
	}
	if kinds["elected"] == 0 {
		t.Errorf("the leader's audit log: %v", kinds)
	}
}
