package kafka

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
)

// harness is an engine with its connector manager, beside an in-process
// Kafka cluster reached over loopback.
type harness struct {
	t       testing.TB
	cluster *kfake.Cluster
	brokers string
	store   runtime.Store
	opts    runtime.Options
	eng     *runtime.Engine
	mgr     *connectors.Manager
	prod    *kgo.Client
}

func newHarness(t testing.TB, partitions int32, topics ...string) *harness {
	return newHarnessOpts(t, runtime.Options{}, partitions, topics...)
}

// newHarnessOpts is newHarness with an engine opened with opts.
func newHarnessOpts(t testing.TB, opts runtime.Options, partitions int32, topics ...string) *harness {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, cluster: c, brokers: strings.Join(c.ListenAddrs(), ","), store: runtime.NewMemoryStore(), opts: opts}
	h.prod, err = kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	h.open()
	t.Cleanup(func() {
		h.close()
		h.prod.Close()
		c.Close()
	})
	return h
}

func (h *harness) open() {
	eng, err := runtime.Open(h.store, h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.eng = eng
	h.mgr = connectors.Start(eng, connectors.Options{MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond})
}

func (h *harness) close() {
	if h.eng == nil {
		return
	}
	h.mgr.Close()
	if err := h.eng.Close(); err != nil {
		h.t.Error(err)
	}
	h.eng = nil
}

func (h *harness) exec(q string) *runtime.Result {
	h.t.Helper()
	s := h.eng.NewSession()
	defer s.Close()
	q = strings.ReplaceAll(q, "BROKERS", h.brokers)
	r, err := s.Exec(context.Background(), q, nil)
	if err != nil {
		h.t.Fatalf("%s: %v", q, err)
	}
	return r
}

// query returns a query's rows as lines of comma-separated text.
func (h *harness) query(q string) string {
	h.t.Helper()
	r := h.exec(q)
	var lines []string
	for _, row := range r.Rows {
		var f []string
		for i, v := range row {
			if v.IsNull() {
				f = append(f, "NULL")
			} else {
				f = append(f, types.Format(v, r.Columns[i].Type))
			}
		}
		lines = append(lines, strings.Join(f, ","))
	}
	return strings.Join(lines, "\n")
}

// eventually waits until q returns want.
func (h *harness) eventually(q, want string) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		if got = h.query(q); got == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("%s:\n%s\nwant\n%s\nsources: %s", q, got, want, h.query("SELECT name, state, records, errors, last_error FROM rockstream_catalog.sources")+"\n"+h.query("SELECT name, state, records, errors, last_error FROM rockstream_catalog.sinks"))
}

func (h *harness) produce(topic string, partition int32, values ...string) {
	h.t.Helper()
	var recs []*kgo.Record
	for _, v := range values {
		var val []byte
		if v != "<tombstone>" {
			val = []byte(v)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: val})
	}
	// A partition just added is unknown to the producer until its
	// metadata refreshes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := h.prod.ProduceSync(context.Background(), recs...).FirstErr()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal(err)
		}
		h.prod.ForceMetadataRefresh()
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSourceJSON reads JSON objects into a keyed table: fields map to
// columns by name, missing ones are NULL, extra ones ignored, later records
// replace earlier ones with the same key; malformed records and
// constraint violations go to the error table and the source goes on.
func TestSourceJSON(t *testing.T) {
	h := newHarness(t, 2, "orders")
	h.exec("CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2), at timestamptz)")
	h.exec("CREATE MATERIALIZED VIEW totals AS SELECT customer, sum(amount) AS total, count(*) AS n FROM orders GROUP BY customer")
	h.exec("CREATE SOURCE orders_in FROM KAFKA (brokers = 'BROKERS', topic = 'orders', format = 'json', error_table = 'orders_errors') INTO orders")
	h.produce("orders", 0,
		`{"id": 1, "customer": "ann", "amount": 10.5, "at": "2024-01-02 03:04:05+00"}`,
		`{"id": 2, "customer": "bob", "amount": "2.25", "extra": [1, 2]}`,
		`{"id": 3, "customer": "ann"}`,
		`not json`,
		`{"id": 4, "amount": 1}`,
		`<tombstone>`,
		`{"id": 2, "customer": "bob", "amount": 3}`,
	)
	h.produce("orders", 1, `{"id": 5, "customer": "cy", "amount": 11}`, `{"id": "x", "customer": "c"}`)
	h.eventually("SELECT * FROM orders ORDER BY id",
		"1,ann,10.50,2024-01-02 03:04:05+00\n2,bob,3.00,NULL\n3,ann,NULL,NULL\n5,cy,11.00,NULL")
	h.eventually("SELECT * FROM totals ORDER BY customer", "ann,10.50,2\nbob,3.00,1\ncy,11.00,1")
	h.eventually(`SELECT partition, "offset", raw, error FROM orders_errors ORDER BY partition, "offset"`,
		`0,3,not json,the value is not a JSON object: invalid character 'o' in literal null (expecting 'u')
0,4,{"id": 4, "amount": 1},null value in column "customer" of relation "orders" violates not-null constraint
1,1,{"id": "x", "customer": "c"},column "id": invalid input syntax for type integer: "x"`)
	h.eventually("SELECT name, connector, target, state, lag, records, errors FROM rockstream_catalog.sources",
		"orders_in,kafka,orders,running,0,9,3")
	if err := h.eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestSourceJSONIntoJSONB reads a JSON field of any kind into a jsonb
// column as that JSON value: a string stays a JSON string, and objects,
// arrays, numbers and booleans keep their JSON.
func TestSourceJSONIntoJSONB(t *testing.T) {
	h := newHarness(t, 1, "docs")
	h.exec("CREATE TABLE docs (id int PRIMARY KEY, doc jsonb)")
	h.exec("CREATE MATERIALIZED VIEW kinds AS SELECT jsonb_typeof(doc) AS kind, count(*) AS n FROM docs GROUP BY jsonb_typeof(doc)")
	h.exec("CREATE SOURCE docs_in FROM KAFKA (brokers = 'BROKERS', topic = 'docs', format = 'json') INTO docs")
	h.produce("docs", 0,
		`{"id": 1, "doc": "hello"}`,
		`{"id": 2, "doc": {"b": [1, 2.50], "a": true}}`,
		`{"id": 3, "doc": 12.0}`,
		`{"id": 4, "doc": null}`,
		`{"id": 5, "doc": [false, "x"]}`,
	)
	h.eventually("SELECT * FROM docs ORDER BY id",
		"1,\"hello\"\n2,{\"a\": true, \"b\": [1, 2.50]}\n3,12.0\n4,NULL\n5,[false, \"x\"]")
	h.eventually("SELECT * FROM kinds ORDER BY kind", "array,1\nnumber,1\nobject,1\nstring,1\nNULL,1")
	if err := h.eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestSourceCSV reads CSV lines, columns in table order, into a table
// without a key: every record is a row.
func TestSourceCSV(t *testing.T) {
	h := newHarness(t, 1, "points")
	h.exec("CREATE TABLE points (x int, y int, label text)")
	h.exec("CREATE SOURCE points_in FROM KAFKA (brokers = 'BROKERS', topic = 'points', format = 'csv') INTO points")
	h.produce("points", 0, `1,2,a`, `1,2,a`, `3,4,"b, with comma"`, `5,,`, `1,2`)
	h.eventually("SELECT * FROM points ORDER BY x, y", "1,2,a\n1,2,a\n3,4,b, with comma\n5,NULL,NULL")
	h.eventually("SELECT state, records, errors, last_error FROM rockstream_catalog.sources",
		"running,5,1,the CSV line has 2 fields, table points has 3 columns")
}

// TestSourceDebezium applies Debezium change events: creates, snapshot
// reads, updates as delete-before + insert-after, deletes; tombstones are
// ignored. Both a keyed and an unkeyed table are fed.
func TestSourceDebezium(t *testing.T) {
	h := newHarness(t, 1, "cdc", "cdc2")
	h.exec("CREATE TABLE accounts (id int PRIMARY KEY, balance int)")
	h.exec("CREATE TABLE ledger (id int, balance int)")
	h.exec("CREATE SOURCE acc FROM KAFKA (brokers = 'BROKERS', topic = 'cdc', format = 'debezium') INTO accounts")
	h.exec("CREATE SOURCE led FROM KAFKA (brokers = 'BROKERS', topic = 'cdc2', format = 'debezium') INTO ledger")
	events := []string{
		`{"before": null, "after": {"id": 1, "balance": 10}, "op": "r"}`,
		`{"payload": {"before": null, "after": {"id": 2, "balance": 20}, "op": "c"}}`,
		`{"before": {"id": 1, "balance": 10}, "after": {"id": 1, "balance": 15}, "op": "u"}`,
		`<tombstone>`,
		`{"before": {"id": 2, "balance": 20}, "after": null, "op": "d"}`,
		`<tombstone>`,
		`{"before": {"id": 3, "balance": 30}, "after": {"id": 4, "balance": 40}, "op": "u"}`,
		`{"op": "x"}`,
	}
	h.produce("cdc", 0, events...)
	h.produce("cdc2", 0, events...)
	h.eventually("SELECT * FROM accounts ORDER BY id", "1,15\n4,40")
	h.eventually("SELECT * FROM ledger ORDER BY id", "1,15\n4,40")
	h.eventually("SELECT name, records, errors FROM rockstream_catalog.sources ORDER BY name", "acc,8,1\nled,8,1")
}

// TestSourceLifecycle covers added partitions, PAUSE and RESUME, a
// restart of the engine (no loss, no duplicates) and DROP.
func TestSourceLifecycle(t *testing.T) {
	h := newHarness(t, 1, "ev")
	h.exec("CREATE TABLE ev (n int)")
	h.exec("CREATE MATERIALIZED VIEW c AS SELECT count(*) AS n, sum(n) AS s FROM ev")
	h.exec("CREATE SOURCE ev_in FROM KAFKA (brokers = 'BROKERS', topic = 'ev', format = 'csv', metadata_refresh = '100ms') INTO ev")
	h.produce("ev", 0, "1", "2")
	h.eventually("SELECT * FROM c", "2,3")

	adm := kadm.NewClient(h.prod)
	if _, err := adm.CreatePartitions(context.Background(), 2, "ev"); err != nil {
		t.Fatal(err)
	}
	h.produce("ev", 2, "10")
	h.produce("ev", 1, "20")
	h.eventually("SELECT * FROM c", "4,33")

	h.exec("ALTER SOURCE ev_in PAUSE")
	h.eventually("SELECT state FROM rockstream_catalog.sources", "paused")
	h.produce("ev", 0, "100")
	time.Sleep(300 * time.Millisecond)
	if got := h.query("SELECT * FROM c"); got != "4,33" {
		t.Fatalf("a paused source ingested: %s", got)
	}
	h.exec("ALTER SOURCE ev_in RESUME")
	h.eventually("SELECT * FROM c", "5,133")

	h.close()
	h.produce("ev", 1, "1000")
	h.open()
	h.eventually("SELECT * FROM c", "6,1133")

	h.exec("DROP SOURCE ev_in")
	h.produce("ev", 0, "5")
	time.Sleep(300 * time.Millisecond)
	if got := h.query("SELECT * FROM c"); got != "6,1133" {
		t.Fatalf("a dropped source ingested: %s", got)
	}
	if got := h.query("SHOW SOURCES"); got != "" {
		t.Fatalf("SHOW SOURCES after DROP: %s", got)
	}
	if err := h.eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestSourceStartLatest skips what the topic held when the source was
// created.
func TestSourceStartLatest(t *testing.T) {
	h := newHarness(t, 1, "t")
	h.produce("t", 0, "1", "2")
	h.exec("CREATE TABLE t (n int)")
	h.exec("CREATE SOURCE t_in FROM KAFKA (brokers = 'BROKERS', topic = 't', format = 'csv', start = 'latest') INTO t")
	h.eventually("SELECT state FROM rockstream_catalog.sources", "running")
	time.Sleep(200 * time.Millisecond)
	h.produce("t", 0, "3")
	h.eventually("SELECT * FROM t", "3")
}

// TestSecretsRedacted checks that a SASL password never shows in the
// status relation, SHOW SOURCES or an error, with a cluster that requires
// SASL.
func TestSecretsRedacted(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "sec"), kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := &harness{t: t, cluster: c, brokers: strings.Join(c.ListenAddrs(), ","), store: runtime.NewMemoryStore()}
	h.open()
	defer h.close()
	h.exec("CREATE TABLE sec (n int)")
	h.exec("CREATE SOURCE good FROM KAFKA (brokers = 'BROKERS', topic = 'sec', format = 'csv', sasl_username = 'admin', sasl_password = 's3cret-pw') INTO sec")
	h.exec("CREATE SOURCE bad FROM KAFKA (brokers = 'BROKERS', topic = 'sec', format = 'csv', sasl_username = 'admin', sasl_password = 'wrong-pw') INTO sec")
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(plain.Auth{User: "admin", Pass: "s3cret-pw"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "sec", Value: []byte("7")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	h.eventually("SELECT * FROM sec", "7")
	deadline := time.Now().Add(20 * time.Second)
	for h.query("SELECT state FROM rockstream_catalog.sources WHERE name = 'bad'") != "failed" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	all := h.query("SELECT * FROM rockstream_catalog.sources") + h.query("SHOW SOURCES")
	if strings.Contains(all, "s3cret-pw") || strings.Contains(all, "wrong-pw") {
		t.Fatalf("a password is shown:\n%s", all)
	}
	if !strings.Contains(all, "sasl_password = '********'") || !strings.Contains(all, "failed") {
		t.Fatalf("status:\n%s", all)
	}
	s := h.eng.NewSession()
	defer s.Close()
	_, err = s.Exec(context.Background(), "CREATE SOURCE x FROM KAFKA (brokers = 'b', topic = 't', format = 'xml', sasl_password = 'p4ss', sasl_username = 'u') INTO sec", nil)
	if err == nil || strings.Contains(err.Error(), "p4ss") {
		t.Fatalf("err = %v", err)
	}
}

// consumeCommitted reads every committed record of topic with a
// read_committed consumer until idle.
func consumeCommitted(t *testing.T, brokers []string, topic string, want int, wait time.Duration) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	deadline := time.Now().Add(wait)
	for len(out) < want && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		out = append(out, fs.Records()...)
	}
	return out
}

// foldUpsert folds upsert records by key: the last value wins and a
// tombstone deletes.
func foldUpsert(recs []*kgo.Record) string {
	m := map[string]string{}
	for _, r := range recs {
		if r.Value == nil {
			delete(m, string(r.Key))
		} else {
			m[string(r.Key)] = string(r.Value)
		}
	}
	var lines []string
	for _, v := range m {
		lines = append(lines, v)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestSinks writes a view to Kafka in both formats and reads the topics
// back with read_committed consumers.
func TestSinks(t *testing.T) {
	h := newHarness(t, 3, "dbz", "ups")
	h.exec("CREATE TABLE t (k text PRIMARY KEY, v int)")
	h.exec("INSERT INTO t VALUES ('a', 1), ('b', 2)")
	h.exec("CREATE MATERIALIZED VIEW s AS SELECT k, sum(v) AS total FROM t GROUP BY k")
	h.exec("CREATE SINK s_dbz FROM s INTO KAFKA (brokers = 'BROKERS', topic = 'dbz', format = 'debezium', key = 'k')")
	h.exec("CREATE SINK s_ups FROM s INTO KAFKA (brokers = 'BROKERS', topic = 'ups', format = 'upsert', key = 'k')")
	h.eventually("SELECT name, state FROM rockstream_catalog.sinks ORDER BY name", "s_dbz,running\ns_ups,running")
	h.exec("UPDATE t SET v = 5 WHERE k = 'a'")
	h.exec("DELETE FROM t WHERE k = 'b'")
	h.exec("INSERT INTO t VALUES ('c', 3)")

	brokers := h.cluster.ListenAddrs()
	dbz := consumeCommitted(t, brokers, "dbz", 5, 20*time.Second)
	var ops []string
	for _, r := range dbz {
		v := string(r.Value)
		ops = append(ops, v[strings.Index(v, `"op"`):strings.Index(v, `,"epoch"`)]+" "+string(r.Key))
	}
	sort.Strings(ops)
	want := `"op":"c" {"k":"c"}
"op":"d" {"k":"b"}
"op":"r" {"k":"a"}
"op":"r" {"k":"b"}
"op":"u" {"k":"a"}`
	if got := strings.Join(ops, "\n"); got != want {
		t.Fatalf("debezium records:\n%s\nwant\n%s", got, want)
	}
	for _, r := range dbz {
		if strings.Contains(string(r.Value), `"op":"u"`) && !strings.Contains(string(r.Value), `{"before":{"k":"a","total":1},"after":{"k":"a","total":5}`) {
			t.Fatalf("update record %s", r.Value)
		}
	}
	ups := consumeCommitted(t, brokers, "ups", 5, 20*time.Second)
	if got := foldUpsert(ups); got != `{"k":"a","total":5}
{"k":"c","total":3}` {
		t.Fatalf("upsert topic folds to\n%s", got)
	}

	// A restarted sink resumes after what the topic holds: no change is
	// written twice.
	h.close()
	h.open()
	h.exec("INSERT INTO t VALUES ('d', 4)")
	h.eventually("SELECT name, state FROM rockstream_catalog.sinks ORDER BY name", "s_dbz,running\ns_ups,running")
	dbz = consumeCommitted(t, brokers, "dbz", 6, 20*time.Second)
	time.Sleep(300 * time.Millisecond)
	if dbz = consumeCommitted(t, brokers, "dbz", 7, time.Second); len(dbz) != 6 {
		t.Fatalf("after a restart the debezium topic holds %d records, want 6", len(dbz))
	}
}

func TestSinkErrors(t *testing.T) {
	h := newHarness(t, 1, "x")
	h.exec("CREATE TABLE t (k int)")
	h.exec("CREATE MATERIALIZED VIEW v AS SELECT k FROM t")
	s := h.eng.NewSession()
	defer s.Close()
	for _, q := range []string{
		"CREATE SINK a FROM t INTO KAFKA (brokers = 'b', topic = 'x')",
		"CREATE SINK a FROM v INTO KAFKA (brokers = 'b', topic = 'x', format = 'upsert')",
		"CREATE SINK a FROM v INTO KAFKA (brokers = 'b', topic = 'x', format = 'json')",
		"CREATE SINK a FROM v INTO KAFKA (topic = 'x')",
		"CREATE SINK a FROM v INTO KAFKA (brokers = 'b', topic = 'x', nonsense = 1)",
		"CREATE SOURCE a FROM KAFKA (brokers = 'b', topic = 'x', start = 'middle') INTO t",
		"CREATE SOURCE a FROM KAFKA (brokers = 'b', topic = 'x') INTO v",
		"CREATE SOURCE a FROM KAFKA (brokers = 'b', topic = 'x')",
	} {
		if _, err := s.Exec(context.Background(), q, nil); err == nil {
			t.Errorf("%s: no error", q)
		} else {
			t.Log(err)
		}
	}
}
