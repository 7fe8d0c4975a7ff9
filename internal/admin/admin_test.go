package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rockstream/rockstream/internal/gateway"
	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func health(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	code, body := get(t, url+"/health")
	var h map[string]any
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("/health is not JSON: %v\n%s", err, body)
	}
	return code, h
}

// scrape reads /metrics into metric families by name.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, url+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	// Legacy validation: every name must be valid for scrapers that know
	// nothing of UTF-8 metric names.
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams
}

// value returns the value of the metric called name whose labels include
// labels (name=value pairs), and false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestEndpoints walks the endpoints through a server's life: starting
// (no engine), ready over a durable engine and a gateway, serving writes,
// and stopping. Metrics are checked against the engine itself.
func TestEndpoints(t *testing.T) {
	dir := t.TempDir()
	srv := New(Config{Version: "v9.9.9-test", StorageDir: dir})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	if code, _ := get(t, hs.URL+"/live"); code != 200 {
		t.Fatalf("/live while starting: %d", code)
	}
	if code, body := get(t, hs.URL+"/ready"); code != 503 || body != "starting\n" {
		t.Fatalf("/ready while starting: %d %q", code, body)
	}
	code, h := health(t, hs.URL)
	if code != 503 || h["status"] != "starting" || h["epoch"] != nil || h["version"] != "v9.9.9-test" || h["storage"] != dir ||
		h["role"] != "all" || h["frontier"] != nil || h["workers"] != nil {
		t.Fatalf("/health while starting: %d %v", code, h)
	}
	fams := scrape(t, hs.URL)
	if v, ok := value(fams, "rockstream_ready"); !ok || v != 0 {
		t.Fatalf("rockstream_ready while starting = %v, %v", v, ok)
	}
	if _, ok := value(fams, "rockstream_committed_epoch"); ok {
		t.Fatal("rockstream_committed_epoch reported before the engine recovered")
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := value(fams, name); !ok {
			t.Errorf("%s missing", name)
		}
	}
	if v, ok := value(fams, "rockstream_build_info", "version", "v9.9.9-test"); !ok || v != 1 {
		t.Errorf("rockstream_build_info = %v, %v", v, ok)
	}

	eng, err := instance.Open(instance.Options{Storage: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	gw := gateway.New(eng, gateway.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gw.Serve(ln)
	defer gw.Shutdown(context.Background())
	srv.SetEngine(eng)
	srv.SetGateway(gw)
	srv.SetReady(true)

	if code, body := get(t, hs.URL+"/ready"); code != 200 || body != "ready\n" {
		t.Fatalf("/ready when ready: %d %q", code, body)
	}

	s := eng.NewSession()
	defer s.Close()
	run := func(sql string) *runtime.Result {
		t.Helper()
		res, err := s.Exec(context.Background(), sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return res
	}
	run("CREATE TABLE t (k int PRIMARY KEY, g int)")
	run("CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) FROM t GROUP BY g")
	run("CREATE VIEW big AS SELECT * FROM t WHERE k > 10")
	var values []string
	for k := 1; k <= 100; k++ {
		values = append(values, fmt.Sprintf("(%d, %d)", k, k%7))
	}
	run("INSERT INTO t VALUES " + strings.Join(values, ", "))
	run("DELETE FROM t WHERE k <= 10")
	if _, err := s.Exec(context.Background(), "SELECT nope", nil); err == nil {
		t.Fatal("SELECT nope succeeded")
	}

	code, h = health(t, hs.URL)
	if code != 200 || h["status"] != "ok" || h["epoch"] != float64(eng.Epoch()) || h["durable_epoch"] != float64(eng.Epoch()) ||
		h["tables"] != float64(1) || h["materialized_views"] != float64(1) || h["views"] != float64(1) ||
		h["sessions"] != float64(1) || h["connections"] != float64(0) || h["in_memory"] != false {
		t.Fatalf("/health when ready: %d %v (epoch %d)", code, h, eng.Epoch())
	}
	if up, ok := h["uptime_seconds"].(float64); !ok || up <= 0 {
		t.Fatalf("uptime_seconds = %v", h["uptime_seconds"])
	}
	checkClusterHealth(t, h, eng)

	fams = scrape(t, hs.URL)
	epoch := float64(eng.Epoch())
	viewRows, err := strconv.ParseFloat(formatOne(run("SELECT count(*) FROM per_g")), 64)
	if err != nil {
		t.Fatal(err)
	}
	gs := gw.Stats()
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"rockstream_ready", nil, 1},
		{"rockstream_committed_epoch", nil, epoch},
		{"rockstream_durable_epoch", nil, epoch},
		{"rockstream_recovered_epoch", nil, 0},
		{"rockstream_epochs_committed_total", nil, epoch},
		{"rockstream_epoch_commit_duration_seconds", nil, epoch},
		{"rockstream_statements_total", []string{"kind", "ddl"}, 3},
		{"rockstream_statements_total", []string{"kind", "insert"}, 1},
		{"rockstream_statements_total", []string{"kind", "select"}, 1},
		{"rockstream_statement_errors_total", []string{"sqlstate_class", "42"}, 1},
		{"rockstream_rows_written_total", []string{"op", "insert"}, 100},
		{"rockstream_rows_written_total", []string{"op", "delete"}, 10},
		{"rockstream_relations", []string{"kind", "table"}, 1},
		{"rockstream_relations", []string{"kind", "materialized_view"}, 1},
		{"rockstream_relations", []string{"kind", "view"}, 1},
		{"rockstream_view_rows", []string{"view", "per_g"}, viewRows},
		{"rockstream_view_last_change_epoch", []string{"view", "per_g"}, epoch},
		{"rockstream_sessions", nil, 1},
		{"rockstream_gateway_connections", nil, float64(gs.Connections)},
		{"rockstream_gateway_connections_accepted_total", nil, float64(gs.ConnectionsTotal)},
		{"rockstream_gateway_connections_rejected_total", nil, float64(gs.Rejected)},
		{"rockstream_gateway_statements_canceled_total", nil, float64(gs.Canceled)},
	} {
		if got, ok := value(fams, c.name, c.labels...); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if viewRows != 7 {
		t.Errorf("per_g has %v rows, want 7", viewRows)
	}
	for _, name := range []string{"rockstream_storage_disk_bytes", "rockstream_storage_memtable_bytes"} {
		if v, ok := value(fams, name); !ok || v <= 0 {
			t.Errorf("%s = %v (present %v), want > 0", name, v, ok)
		}
	}
	for _, name := range []string{"rockstream_storage_degraded", "rockstream_storage_recoveries_total"} {
		if v, ok := value(fams, name); !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", name, v, ok)
		}
	}
	for name, f := range fams {
		if strings.HasPrefix(name, "rockstream_") && f.GetHelp() == "" {
			t.Errorf("%s has no help text", name)
		}
	}

	// The epoch metric follows commits.
	run("INSERT INTO t VALUES (1000, 1)")
	if got, _ := value(scrape(t, hs.URL), "rockstream_committed_epoch"); got != epoch+1 {
		t.Errorf("rockstream_committed_epoch after one more insert = %v, want %v", got, epoch+1)
	}

	srv.SetStopping()
	if code, body := get(t, hs.URL+"/ready"); code != 503 || body != "stopping\n" {
		t.Fatalf("/ready while stopping: %d %q", code, body)
	}
	if code, h := health(t, hs.URL); code != 503 || h["status"] != "stopping" {
		t.Fatalf("/health while stopping: %d %v", code, h)
	}
	if code, _ := get(t, hs.URL+"/live"); code != 200 {
		t.Fatalf("/live while stopping: %d", code)
	}
	srv.SetEngine(nil)
	if _, ok := value(scrape(t, hs.URL), "rockstream_committed_epoch"); ok {
		t.Fatal("engine metrics reported after the engine was withdrawn")
	}
	if code, _ := get(t, hs.URL+"/nope"); code != http.StatusNotFound {
		t.Fatalf("/nope: %d", code)
	}
}

// TestInMemory reports an engine without storage: no durable epoch, no
// storage metrics.
func TestInMemory(t *testing.T) {
	srv := New(Config{Version: "dev"})
	eng := runtime.OpenMemory()
	defer eng.Close()
	srv.SetEngine(eng)
	srv.SetReady(true)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	code, h := health(t, hs.URL)
	if code != 200 || h["in_memory"] != true || h["storage"] != "" || h["durable_epoch"] != nil || h["epoch"] != float64(0) {
		t.Fatalf("/health in memory: %d %v", code, h)
	}
	fams := scrape(t, hs.URL)
	for _, name := range []string{"rockstream_durable_epoch", "rockstream_storage_disk_bytes"} {
		if _, ok := value(fams, name); ok {
			t.Errorf("%s reported for an engine in memory", name)
		}
	}
}

func formatOne(res *runtime.Result) string {
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return ""
	}
	return types.Format(res.Rows[0][0], res.Columns[0].Type)
}

// TestConcurrentScrapes scrapes and reads the system relations while
// sessions open, write and close, so that the race detector sees the
// registry and the counters shared between them.
func TestConcurrentScrapes(t *testing.T) {
	eng := runtime.OpenMemory()
	defer eng.Close()
	srv := New(Config{Version: "dev"})
	srv.SetEngine(eng)
	srv.SetReady(true)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	ctx := context.Background()
	setup := eng.NewSession()
	for _, q := range []string{"CREATE TABLE t (w int, n int)", "CREATE MATERIALIZED VIEW per_w AS SELECT w, count(*) FROM t GROUP BY w"} {
		if _, err := setup.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	setup.Close()

	const writers, rounds = 4, 25
	done := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func() {
			for i := 0; i < rounds; i++ {
				s := eng.NewSession()
				s.SetClient(runtime.ClientInfo{User: fmt.Sprintf("writer%d", w)})
				_, err := s.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", w, i), nil)
				s.Close()
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	reader := eng.NewSession()
	defer reader.Close()
	for finished := 0; finished < writers; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished++
		default:
			scrape(t, hs.URL)
			health(t, hs.URL)
			if _, err := reader.Exec(ctx, "SELECT * FROM rockstream_catalog.sessions", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	fams := scrape(t, hs.URL)
	if v, _ := value(fams, "rockstream_rows_written_total", "op", "insert"); v != writers*rounds {
		t.Errorf("rows written = %v, want %d", v, writers*rounds)
	}
	if v, _ := value(fams, "rockstream_view_rows", "view", "per_w"); v != writers {
		t.Errorf("per_w rows = %v, want %d", v, writers)
	}
	if v, _ := value(fams, "rockstream_sessions"); v != 1 {
		t.Errorf("sessions = %v after the writers closed theirs, want 1", v)
	}
}
