package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartConsoleAndConnectorLog runs `rockstream start` over a store
// with a Kafka source whose broker does not answer: the web console and
// its JSON are served on the HTTP address, the source's failures show in
// /metrics, and the log holds one line for them however often the
// source is retried.
func TestStartConsoleAndConnectorLog(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	sqlMust(t, data, `CREATE TABLE events (id int PRIMARY KEY, kind text);
CREATE MATERIALIZED VIEW per_kind AS SELECT kind, count(*) FROM events GROUP BY kind;
CREATE SOURCE events_in FROM KAFKA (brokers = '127.0.0.1:1', topic = 'events', format = 'json') INTO events;
`)
	s := startServer(t, "--storage", data)

	const failures = `rockstream_connector_failures_total{kind="source",name="events_in",type="kafka"}`
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n, ok := s.metric(failures); ok && n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			_, body := s.get("/metrics")
			t.Fatalf("the source did not fail 3 times:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v, ok := s.metric(`rockstream_connector_state{kind="source",name="events_in",state="failed",type="kafka"}`); !ok || v != 1 {
		t.Errorf("connector_state failed = %v (present %v)", v, ok)
	}

	s.mu.Lock()
	var lines []map[string]any
	for _, l := range s.lines {
		if l["component"] == "connector" {
			lines = append(lines, l)
		}
	}
	s.mu.Unlock()
	var msgs []string
	for _, l := range lines {
		msgs = append(msgs, l["msg"].(string))
		if l["name"] != "events_in" || l["kind"] != "source" || l["type"] != "kafka" {
			t.Errorf("connector log line: %v", l)
		}
	}
	if got := strings.Join(msgs, ","); got != "connector state changed,connector failed" {
		t.Errorf("connector log lines after 3 failures: %s\n%s", got, s.stderr())
	}
	if len(lines) == 2 && (lines[1]["level"] != "WARN" || !strings.Contains(lines[1]["error"].(string), "127.0.0.1:1")) {
		t.Errorf("failure line: %v", lines[1])
	}

	if code, body := s.get("/"); code != 200 || !strings.Contains(body, "<title>RockStream console</title>") {
		t.Errorf("GET /: %d\n%s", code, body)
	}
	code, body := s.get("/api/catalog")
	var cat struct {
		Relations []struct {
			Name    string   `json:"name"`
			ReadBy  []string `json:"read_by"`
			Sources []string `json:"sources"`
		} `json:"relations"`
		Connectors []struct {
			Name, State string
		} `json:"connectors"`
	}
	if err := json.Unmarshal([]byte(body), &cat); code != 200 || err != nil {
		t.Fatalf("/api/catalog: %d %v\n%s", code, err, body)
	}
	if len(cat.Connectors) != 1 || cat.Connectors[0].Name != "events_in" || cat.Connectors[0].State != "failed" {
		t.Errorf("/api/catalog connectors: %+v", cat.Connectors)
	}
	if len(cat.Relations) != 2 || cat.Relations[0].Name != "events" || strings.Join(cat.Relations[0].ReadBy, ",") != "per_kind" ||
		strings.Join(cat.Relations[0].Sources, ",") != "events_in" {
		t.Errorf("/api/catalog relations: %+v", cat.Relations)
	}
	if code, body := s.get("/api/views/per_kind"); code != 200 || !strings.Contains(body, `"kind": "aggregate"`) {
		t.Errorf("/api/views/per_kind: %d\n%s", code, body)
	}
}
