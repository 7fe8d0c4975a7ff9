package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/internal/runtime"
)

// TestSinkPauseResume pauses a Debezium sink, changes the view's input
// with inserts, updates and deletes, and checks that nothing new reaches
// the topic while the sink is paused; after RESUME the topic, folded by
// key, equals the view, with no change delivered twice (the fold fails on
// a duplicate or a loss).
func TestSinkPauseResume(t *testing.T) {
	h := newHarness(t, 2, "out")
	brokers := h.cluster.ListenAddrs()
	h.exec("CREATE TABLE t (k text PRIMARY KEY, grp int, v int)")
	h.exec("INSERT INTO t VALUES ('a', 1, 1), ('b', 1, 2), ('c', 2, 3)")
	h.exec("CREATE MATERIALIZED VIEW s AS SELECT grp, count(*) AS n, sum(v) AS total FROM t GROUP BY grp")
	h.exec("CREATE SINK s_out FROM s INTO KAFKA (brokers = 'BROKERS', topic = 'out', key = 'grp')")
	cols := []string{"grp", "n", "total"}
	view := func() string { return sortedLines(h.query("SELECT grp, n, total FROM s")) }
	// folded waits until the committed records fold to the view.
	folded := func() []*kgo.Record {
		t.Helper()
		want := view()
		deadline := time.Now().Add(20 * time.Second)
		for {
			recs := consumeCommitted(t, brokers, "out", 1<<30, time.Second)
			got, err := foldDebezium(recs, cols)
			if err != nil {
				t.Fatal(err)
			}
			if got == want {
				return recs
			}
			if time.Now().After(deadline) {
				t.Fatalf("the topic folds to\n%s\nthe view is\n%s", got, want)
			}
		}
	}
	h.exec("INSERT INTO t VALUES ('d', 3, 4)")
	before := len(folded())

	h.exec("ALTER SINK s_out PAUSE")
	h.eventually("SELECT name, state, lag IS NULL FROM rockstream_catalog.sinks", "s_out,paused,t")
	h.exec("INSERT INTO t VALUES ('e', 2, 5), ('f', 4, 6)")
	h.exec("UPDATE t SET v = v * 10 WHERE k IN ('a', 'c')")
	h.exec("UPDATE t SET grp = 3 WHERE k = 'b'")
	h.exec("DELETE FROM t WHERE k = 'd'")
	h.exec("DELETE FROM t WHERE grp = 4")
	if got := h.query("SHOW SINKS"); !strings.Contains(got, "paused") {
		t.Fatalf("SHOW SINKS while paused:\n%s", got)
	}
	time.Sleep(300 * time.Millisecond)
	if recs := consumeCommitted(t, brokers, "out", 1<<30, time.Second); len(recs) != before {
		t.Fatalf("a paused sink delivered: %d committed records, %d before the pause", len(recs), before)
	}

	h.exec("ALTER SINK s_out RESUME")
	h.eventually("SELECT state, lag FROM rockstream_catalog.sinks", "running,0")
	after := folded()
	if len(after) <= before {
		t.Fatalf("nothing delivered after RESUME")
	}
	// Each partition holds its changes in epoch order.
	last := map[int32]uint64{}
	for _, r := range after {
		e := recordEpoch(t, r)
		if e < last[r.Partition] {
			t.Fatalf("epoch %d after epoch %d in partition %d", e, last[r.Partition], r.Partition)
		}
		last[r.Partition] = e
	}

	// Paused again across a restart of the engine, then resumed.
	h.exec("ALTER SINK s_out PAUSE")
	h.close()
	h.open()
	h.eventually("SELECT state FROM rockstream_catalog.sinks", "paused")
	h.exec("INSERT INTO t VALUES ('g', 1, 7)")
	h.exec("ALTER SINK s_out RESUME")
	h.eventually("SELECT state, lag FROM rockstream_catalog.sinks", "running,0")
	folded()
}

// recordEpoch returns a sink record's epoch header.
func recordEpoch(t *testing.T, r *kgo.Record) uint64 {
	t.Helper()
	for _, hd := range r.Headers {
		if hd.Key == epochHeader {
			var e uint64
			for _, c := range hd.Value {
				e = e*10 + uint64(c-'0')
			}
			return e
		}
	}
	t.Fatalf("record %d has no %s header", r.Offset, epochHeader)
	return 0
}

// TestSinkCreatesTopic checks that a sink creates its topic when the
// cluster does not have it: with the partitions and replication factor
// asked for, or the broker's defaults; that a refusal by the broker is the
// sink's error; and that bad values fail CREATE SINK.
func TestSinkCreatesTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(5))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := &harness{t: t, cluster: c, brokers: strings.Join(c.ListenAddrs(), ","), store: runtime.NewMemoryStore()}
	h.open()
	defer h.close()
	h.exec("CREATE TABLE t (k int PRIMARY KEY, v int)")
	h.exec("INSERT INTO t VALUES (1, 10), (2, 20)")
	h.exec("CREATE MATERIALIZED VIEW s AS SELECT k, v FROM t")
	h.exec("CREATE SINK four FROM s INTO KAFKA (brokers = 'BROKERS', topic = 'four', key = 'k', partitions = 4, replication_factor = 1)")
	h.exec("CREATE SINK dflt FROM s INTO KAFKA (brokers = 'BROKERS', topic = 'dflt', format = 'upsert', key = 'k')")
	h.exec("CREATE SINK refused FROM s INTO KAFKA (brokers = 'BROKERS', topic = 'refused', key = 'k', replication_factor = 3)")
	h.eventually("SELECT name, state FROM rockstream_catalog.sinks WHERE name <> 'refused' ORDER BY name", "dflt,running\nfour,running")
	h.exec("UPDATE t SET v = 11 WHERE k = 1")
	h.eventually("SELECT name, lag FROM rockstream_catalog.sinks WHERE name <> 'refused' ORDER BY name", "dflt,0\nfour,0")

	adm := kadm.NewClient(h.newClient())
	details, err := adm.ListTopics(context.Background(), "four", "dflt", "refused")
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]int{"four": 4, "dflt": 5} {
		d, ok := details[topic]
		if !ok || d.Err != nil || len(d.Partitions) != want || d.Partitions.NumReplicas() != 1 {
			t.Errorf("topic %s: %+v, want %d partitions with 1 replica", topic, d, want)
		}
	}
	if d, ok := details["refused"]; ok && d.Err == nil {
		t.Errorf("topic refused exists: %+v", d)
	}
	recs := consumeCommitted(t, c.ListenAddrs(), "four", 3, 10*time.Second)
	if got, err := foldDebezium(recs, []string{"k", "v"}); err != nil || got != "1,11\n2,20" {
		t.Errorf("topic four folds to %q (%v)", got, err)
	}
	if got := foldUpsert(consumeCommitted(t, c.ListenAddrs(), "dflt", 3, 10*time.Second)); got != `{"k":1,"v":11}
{"k":2,"v":20}` {
		t.Errorf("topic dflt folds to\n%s", got)
	}

	deadline := time.Now().Add(20 * time.Second)
	var status string
	for time.Now().Before(deadline) {
		if status = h.query("SELECT state, last_error FROM rockstream_catalog.sinks WHERE name = 'refused'"); strings.HasPrefix(status, "failed") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if want := "failed,the broker refused to create topic refused (the broker's default partition count, replication factor 3): INVALID_REPLICATION_FACTOR"; !strings.HasPrefix(status, want) {
		t.Errorf("the refused sink shows\n%s\nwant a prefix\n%s", status, want)
	}

	s := h.eng.NewSession()
	defer s.Close()
	for _, opt := range []string{"partitions = 0", "partitions = '-1'", "replication_factor = 0", "partitions = 'many'", "replication_factor = 40000"} {
		q := "CREATE SINK bad FROM s INTO KAFKA (brokers = 'b', topic = 'x', " + opt + ")"
		if _, err := s.Exec(context.Background(), q, nil); err == nil {
			t.Errorf("%s: no error", q)
		} else if !strings.Contains(err.Error(), strings.Fields(opt)[0]) {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// newClient returns a Kafka client of the harness's cluster, closed with
// the test.
func (h *harness) newClient() *kgo.Client {
	h.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(h.cluster.ListenAddrs()...))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(cl.Close)
	return cl
}

// TestSinkPausedPastRetention pauses a sink for longer than the change-log
// retention: the changes it has not delivered are kept for it, so that
// after RESUME the topic still folds to the view; once it has delivered,
// the older part of the log is released.
func TestSinkPausedPastRetention(t *testing.T) {
	const retention = 16
	h := newHarnessOpts(t, runtime.Options{ChangeLogRetention: retention}, 1, "out")
	h.exec("CREATE TABLE t (k int PRIMARY KEY, v int)")
	h.exec("CREATE MATERIALIZED VIEW s AS SELECT k % 7 AS g, count(*) AS n, sum(v) AS total FROM t GROUP BY k % 7")
	h.exec("CREATE SINK s_out FROM s INTO KAFKA (brokers = 'BROKERS', topic = 'out', key = 'g')")
	h.eventually("SELECT state FROM rockstream_catalog.sinks", "running")
	h.exec("INSERT INTO t VALUES (1, 1)")
	if recs := consumeCommitted(t, h.cluster.ListenAddrs(), "out", 1, 10*time.Second); len(recs) != 1 {
		t.Fatalf("the sink delivered %d records, want 1", len(recs))
	}
	h.exec("ALTER SINK s_out PAUSE")
	h.eventually("SELECT state FROM rockstream_catalog.sinks", "paused")
	for i := 2; i < 10*retention; i++ {
		// One epoch each: past the retention many times over.
		h.exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", i, i))
		if i%3 == 0 {
			h.exec(fmt.Sprintf("DELETE FROM t WHERE k = %d", i-2))
		}
	}
	h.exec("ALTER SINK s_out RESUME")
	h.eventually("SELECT state, lag FROM rockstream_catalog.sinks", "running,0")
	recs := consumeCommitted(t, h.cluster.ListenAddrs(), "out", 1<<30, 2*time.Second)
	if got, err := foldDebezium(recs, []string{"g", "n", "total"}); err != nil {
		t.Fatal(err)
	} else if want := sortedLines(h.query("SELECT g, n, total FROM s")); got != want {
		t.Fatalf("the topic folds to\n%s\nthe view is\n%s", got, want)
	}

	// Delivered: the log before the sink's position is trimmed again.
	for i := 0; i < 5*retention; i++ {
		h.exec(fmt.Sprintf("UPDATE t SET v = v + 1 WHERE k = %d", 10*retention-1))
	}
	frontier, _ := h.eng.CommitWait()
	if _, _, err := h.eng.ChangesBetween("s", 0, frontier); err == nil || !strings.Contains(err.Error(), "change-log horizon") {
		t.Fatalf("reading the change log from epoch 0 after the sink delivered: %v", err)
	}
}
