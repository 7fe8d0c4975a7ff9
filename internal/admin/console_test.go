package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/connectors/spec"
	"github.com/rockstream/rockstream/internal/gateway"
	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/runtime"
)

// Two connector kinds for the tests: "steady" runs, reporting a lag of
// 42 records and 7 records handled, one rejected; "broken" fails at
// every start.
func init() {
	connectors.Register(connectors.Kind{
		Kind: spec.Kind{Name: "steady"},
		RunSource: func(ctx context.Context, env *connectors.Env) error {
			env.Status.SetLag(42)
			env.Status.Report(7, 1, nil)
			env.Status.Running()
			<-ctx.Done()
			return ctx.Err()
		},
	})
	connectors.Register(connectors.Kind{
		Kind: spec.Kind{Name: "broken"},
		RunSource: func(ctx context.Context, env *connectors.Env) error {
			return errors.New("the upstream is unreachable")
		},
	})
}

// live is a server as `rockstream start` runs it: a durable engine, the
// gateway, the connectors and the HTTP endpoints.
type live struct {
	srv *Server
	hs  *httptest.Server
	eng *runtime.Engine
	s   *runtime.Session
}

func startLive(t *testing.T, wrap func(http.Handler) http.Handler) *live {
	t.Helper()
	dir := t.TempDir()
	srv := New(Config{Version: "v0.0.0-console", StorageDir: dir})
	eng, err := instance.Open(instance.Options{Storage: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	conns := connectors.Start(eng, connectors.Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { conns.Close() })
	gw := gateway.New(eng, gateway.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gw.Serve(ln)
	t.Cleanup(func() { gw.Shutdown(context.Background()) })
	srv.SetEngine(eng)
	srv.SetGateway(gw)
	srv.SetReady(true)
	h := srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	l := &live{srv: srv, hs: hs, eng: eng, s: eng.NewSession()}
	t.Cleanup(func() { l.s.Close() })
	l.s.SetClient(runtime.ClientInfo{User: "console_tester", ApplicationName: "console-test"})
	return l
}

func (l *live) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := l.s.Exec(context.Background(), sql, nil); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// schema creates two tables, two materialized views (one over the
// other), a view, a running source and a failing one, and runs
// statements that write and one that fails.
func (l *live) schema(t *testing.T) {
	t.Helper()
	for _, q := range []string{
		"CREATE TABLE orders (id int PRIMARY KEY, customer int, amount int)",
		"CREATE TABLE customers (id int PRIMARY KEY, name text)",
		"CREATE MATERIALIZED VIEW spend AS SELECT customer, count(*) AS n, sum(amount) AS total FROM orders GROUP BY customer",
		"CREATE VIEW named_spend AS SELECT c.name, s.total FROM spend s JOIN customers c ON c.id = s.customer",
		"CREATE MATERIALIZED VIEW big_spenders AS SELECT name, total FROM named_spend WHERE total > 100",
		"CREATE SOURCE orders_feed FROM STEADY () INTO orders",
		"CREATE SOURCE customers_feed FROM BROKEN (secret_note = 'x') INTO customers",
	} {
		l.exec(t, q)
	}
	var values []string
	for i := 1; i <= 60; i++ {
		values = append(values, fmt.Sprintf("(%d, %d, %d)", i, i%6, i))
	}
	l.exec(t, "INSERT INTO orders VALUES "+strings.Join(values, ", "))
	l.exec(t, "INSERT INTO customers VALUES (0, 'ada'), (1, 'bob'), (2, 'cy'), (3, 'di'), (4, 'ed'), (5, 'flo')")
	// A failed statement: the error counters, labelled by SQLSTATE
	// class, have a series only once one is counted.
	if _, err := l.s.Exec(context.Background(), "SELECT * FROM no_such_table", nil); err == nil {
		t.Fatal("reading a missing table succeeded")
	}
}

// waitConnectors waits until the steady source runs and the broken one
// failed at least twice.
func (l *live) waitConnectors(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := l.eng.Catalog()
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]runtime.ConnectorStatus{}
		for _, c := range info.Connectors {
			states[c.Name] = c.Status
		}
		if states["orders_feed"].State == "running" && states["customers_feed"].State == "failed" && states["customers_feed"].Failures >= 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connectors: %+v", states)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func getJSON(t *testing.T, url string, wantCode int, v any) {
	t.Helper()
	code, body := get(t, url)
	if code != wantCode {
		t.Fatalf("GET %s: %d, want %d\n%s", url, code, wantCode, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: not JSON: %v\n%s", url, err, body)
	}
}

// TestConsoleAPI checks the console's JSON endpoints against the engine:
// the catalog and its lineage, a view's circuit with the state and rows
// of each operator, the connectors and the sessions; and their answers
// before the engine recovered and for names that are not views.
func TestConsoleAPI(t *testing.T) {
	starting := httptest.NewServer(New(Config{Version: "dev"}).Handler())
	defer starting.Close()
	var e ActionError
	getJSON(t, starting.URL+"/api/catalog", http.StatusServiceUnavailable, &e)
	if e.Error != "the server is starting" {
		t.Errorf("/api/catalog while starting: %+v", e)
	}

	l := startLive(t, nil)
	l.schema(t)
	l.waitConnectors(t)

	var cat Catalog
	getJSON(t, l.hs.URL+"/api/catalog", http.StatusOK, &cat)
	rels := map[string]Relation{}
	var names []string
	for _, r := range cat.Relations {
		rels[r.Name] = r
		names = append(names, r.Name)
	}
	if got := strings.Join(names, ","); got != "big_spenders,customers,named_spend,orders,spend" {
		t.Fatalf("relations: %s", got)
	}
	if cat.Epoch != l.eng.Epoch() {
		t.Errorf("catalog epoch %d, engine %d", cat.Epoch, l.eng.Epoch())
	}
	for _, c := range []struct {
		name, kind    string
		reads, readBy []string
		sources       []string
	}{
		{"orders", "table", []string{}, []string{"spend"}, []string{"orders_feed"}},
		{"customers", "table", []string{}, []string{"named_spend"}, []string{"customers_feed"}},
		{"spend", "materialized view", []string{"orders"}, []string{"named_spend"}, []string{}},
		{"named_spend", "view", []string{"customers", "spend"}, []string{"big_spenders"}, []string{}},
		{"big_spenders", "materialized view", []string{"named_spend"}, []string{}, []string{}},
	} {
		r := rels[c.name]
		if r.Kind != c.kind || !slices.Equal(r.Reads, c.reads) || !slices.Equal(r.ReadBy, c.readBy) || !slices.Equal(r.Sources, c.sources) {
			t.Errorf("%s: %s reads %v read by %v sources %v; want %s %v %v %v", c.name, r.Kind, r.Reads, r.ReadBy, r.Sources, c.kind, c.reads, c.readBy, c.sources)
		}
	}
	spend := rels["spend"]
	if spend.Rows == nil || *spend.Rows != 6 || spend.FrontierEpoch == nil || *spend.FrontierEpoch != cat.Epoch ||
		spend.LastChangeEpoch == nil || spend.CreatedEpoch == nil || *spend.CreatedEpoch >= *spend.LastChangeEpoch {
		t.Errorf("spend: %+v", spend)
	}
	if spend.LastChangeAt == nil || spend.LastChangeAgeSeconds == nil || *spend.LastChangeAgeSeconds < 0 || *spend.LastChangeAgeSeconds > 60 {
		t.Errorf("spend's last change time: %v, %v", spend.LastChangeAt, spend.LastChangeAgeSeconds)
	} else if at, ok := l.eng.CommitTime(*spend.LastChangeEpoch); !ok || !at.Equal(*spend.LastChangeAt) {
		t.Errorf("spend last changed at %v, epoch %d committed at %v", spend.LastChangeAt, *spend.LastChangeEpoch, at)
	}
	if rels["orders"].Rows != nil || rels["orders"].FrontierEpoch != nil {
		t.Errorf("a table with view fields: %+v", rels["orders"])
	}
	if len(spend.Columns) != 3 || spend.Columns[2] != (Column{"total", "bigint"}) {
		t.Errorf("spend columns: %+v", spend.Columns)
	}

	var vc ViewCircuit
	getJSON(t, l.hs.URL+"/api/views/spend", http.StatusOK, &vc)
	if vc.View != "spend" || vc.Rows != 6 || !vc.StateComplete || vc.FrontierEpoch != cat.Epoch {
		t.Errorf("spend circuit: %+v", vc)
	}
	var scan, agg *Operator
	var keys int64
	for i := range vc.Operators {
		op := &vc.Operators[i]
		keys += op.StateKeys
		switch op.Kind {
		case "scan":
			scan = op
		case "aggregate":
			agg = op
		}
		for _, in := range op.Inputs {
			if vc.Operators[in].Layer >= op.Layer {
				t.Errorf("operator %d in layer %d reads %d in layer %d", op.ID, op.Layer, in, vc.Operators[in].Layer)
			}
		}
	}
	if scan == nil || agg == nil || scan.Relation != "orders" || scan.Rows != 60 || agg.StateKeys == 0 || keys != vc.StateKeys {
		t.Fatalf("spend operators: %+v", vc.Operators)
	}
	// One more order of a new customer: one more group in the state.
	l.exec(t, "INSERT INTO orders VALUES (1000, 77, 5)")
	var after ViewCircuit
	getJSON(t, l.hs.URL+"/api/views/spend", http.StatusOK, &after)
	for _, op := range after.Operators {
		if op.Kind == "scan" && op.Rows != 61 {
			t.Errorf("scan rows after one insert: %d", op.Rows)
		}
		if op.Kind == "aggregate" && op.StateKeys <= agg.StateKeys {
			t.Errorf("aggregate state after a new group: %d keys, was %d", op.StateKeys, agg.StateKeys)
		}
	}
	if after.Rows != 7 || after.LastChangeEpoch == nil || *after.LastChangeEpoch != l.eng.Epoch() {
		t.Errorf("spend after one insert: rows %d last change %v (epoch %d)", after.Rows, after.LastChangeEpoch, l.eng.Epoch())
	}

	getJSON(t, l.hs.URL+"/api/views/nope", http.StatusNotFound, &e)
	if e.SQLState != "42P01" {
		t.Errorf("/api/views/nope: %+v", e)
	}
	getJSON(t, l.hs.URL+"/api/views/orders", http.StatusBadRequest, &e)
	if e.SQLState != "42809" {
		t.Errorf("/api/views/orders: %+v", e)
	}

	var ov Overview
	getJSON(t, l.hs.URL+"/api/overview", http.StatusOK, &ov)
	if ov.Status != "ok" || ov.Epoch == nil || *ov.Epoch != l.eng.Epoch() || ov.FrontierAgeSeconds < 0 || ov.FrontierAgeSeconds > 60 {
		t.Errorf("overview: %+v", ov)
	}
	conns := map[string]Connector{}
	for _, c := range ov.Connectors {
		conns[c.Name] = c
	}
	if c := conns["orders_feed"]; c.State != "running" || c.Lag == nil || *c.Lag != 42 || *c.Records != 7 || *c.Errors != 1 || c.Kind != "source" || c.Type != "steady" || c.Target != "orders" {
		t.Errorf("orders_feed: %+v", c)
	}
	if c := conns["customers_feed"]; c.State != "failed" || c.LastError != "the upstream is unreachable" || *c.Failures < 2 || c.Lag != nil {
		t.Errorf("customers_feed: %+v", c)
	}
	found := false
	for _, s := range ov.SessionList {
		if s.ID == l.s.ID() {
			found = s.User == "console_tester" && s.ApplicationName == "console-test" && strings.HasPrefix(s.Query, "INSERT INTO orders") && s.State == "idle"
		}
	}
	if !found {
		t.Errorf("session %d not listed as idle after its INSERT: %+v", l.s.ID(), ov.SessionList)
	}
	var sessions []Session
	getJSON(t, l.hs.URL+"/api/sessions", http.StatusOK, &sessions)
	if len(sessions) != len(ov.SessionList) {
		t.Errorf("/api/sessions lists %d sessions, the overview %d", len(sessions), len(ov.SessionList))
	}

	// The page and its files, which load nothing from elsewhere.
	for path, want := range map[string]string{"/": "<title>RockStream console</title>", "/console.js": "/api/overview", "/console.css": "#circuit-graph"} {
		resp, err := http.Get(l.hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		sb.WriteString(readAll(t, resp))
		if resp.StatusCode != 200 || !strings.Contains(sb.String(), want) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("GET %s: %d, CSP %q, contains %q: %v", path, resp.StatusCode, resp.Header.Get("Content-Security-Policy"), want, strings.Contains(sb.String(), want))
		}
		// The SVG namespace is a name, not an address that is loaded.
		if body := strings.ReplaceAll(sb.String(), "http://www.w3.org/2000/svg", ""); strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s refers to another site", path)
		}
	}
	// Read-only: nothing but GET.
	resp, err := http.Post(l.hs.URL+"/api/catalog", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/catalog: %d", resp.StatusCode)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLayout places a diamond and a chain in layers.
func TestLayout(t *testing.T) {
	// 0 and 1 are scans; 2 reads 0; 3 joins 2 and 1; 4 reads 3.
	layer, column, layers := layout([][]int{nil, nil, {0}, {2, 1}, {3}})
	if fmt.Sprint(layer, column, layers) != "[0 0 1 2 3] [0 1 0 0 0] 4" {
		t.Errorf("layout: %v %v %d", layer, column, layers)
	}
	if layer, column, layers := layout(nil); len(layer) != 0 || len(column) != 0 || layers != 0 {
		t.Errorf("empty layout: %v %v %d", layer, column, layers)
	}
}

// TestConsoleWhileWriting reads the console's endpoints while sessions
// write, so that the race detector sees the circuits' counters and the
// commit times shared between them; the counts read only grow.
func TestConsoleWhileWriting(t *testing.T) {
	eng := runtime.OpenMemory()
	defer eng.Close()
	srv := New(Config{Version: "dev"})
	srv.SetEngine(eng)
	srv.SetReady(true)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	ctx := context.Background()
	setup := eng.NewSession()
	for _, q := range []string{"CREATE TABLE t (w int, n int)", "CREATE MATERIALIZED VIEW per_w AS SELECT w, count(*), max(n) FROM t GROUP BY w"} {
		if _, err := setup.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	setup.Close()
	const writers, rounds = 3, 20
	done := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func() {
			s := eng.NewSession()
			defer s.Close()
			for i := 0; i < rounds; i++ {
				if _, err := s.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", w, i), nil); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	var lastRows uint64
	for finished := 0; finished < writers; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished++
		default:
			var vc ViewCircuit
			getJSON(t, hs.URL+"/api/views/per_w", http.StatusOK, &vc)
			var cat Catalog
			getJSON(t, hs.URL+"/api/catalog", http.StatusOK, &cat)
			for _, op := range vc.Operators {
				if op.Kind == "scan" {
					if op.Rows < lastRows {
						t.Fatalf("the scan's rows went from %d to %d", lastRows, op.Rows)
					}
					lastRows = op.Rows
				}
			}
		}
	}
	var vc ViewCircuit
	getJSON(t, hs.URL+"/api/views/per_w", http.StatusOK, &vc)
	if vc.Rows != writers || vc.Operators[0].Rows != writers*rounds {
		t.Errorf("after the writes: %d rows, the scan emitted %d", vc.Rows, vc.Operators[0].Rows)
	}
}
