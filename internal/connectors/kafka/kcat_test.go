package kafka

import (
	"context"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestSinkKcat reads an upsert sink's topic with kcat (librdkafka) in
// read_committed mode: a client other than ours sees the committed view.
func TestSinkKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("ROCKSTREAM_REQUIRE_CLIENTS") == "1" {
			t.Fatal("kcat is not installed (apt-get install kcat)")
		}
		t.Skip("kcat is not installed")
	}
	h := newHarness(t, 2, "ups")
	h.exec("CREATE TABLE t (k text PRIMARY KEY, v int)")
	h.exec("INSERT INTO t VALUES ('a', 1), ('b', 2)")
	h.exec("CREATE MATERIALIZED VIEW s AS SELECT k, sum(v) AS total FROM t GROUP BY k")
	h.exec("CREATE SINK s_ups FROM s INTO KAFKA (brokers = 'BROKERS', topic = 'ups', format = 'upsert', key = 'k')")
	h.eventually("SELECT state FROM rockstream_catalog.sinks", "running")
	h.exec("UPDATE t SET v = 7 WHERE k = 'b'")
	h.exec("DELETE FROM t WHERE k = 'a'")
	h.eventually("SELECT lag FROM rockstream_catalog.sinks", "0")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-b", h.brokers, "-C", "-t", "ups", "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-Z", "-f", "%k|%s\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	// Fold by key: the last value wins, NULL (-Z) is a tombstone.
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "|")
		if v == "NULL" {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	var rows []string
	for _, v := range m {
		rows = append(rows, v)
	}
	sort.Strings(rows)
	if got := strings.Join(rows, "\n"); got != `{"k":"b","total":7}` {
		t.Fatalf("kcat folds the topic to\n%s\nfrom\n%s", got, out)
	}
}
