package connectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/connectors/spec"
	"github.com/rockstream/rockstream/internal/runtime"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, line)
		}
		out = append(out, m)
	}
	return out
}

// flakyFailures is how many times the "flaky" test source fails before
// it runs; flakyRuns counts its runs.
var flakyFailures, flakyRuns atomic.Int64

func init() {
	Register(Kind{
		Kind: spec.Kind{Name: "flaky"},
		RunSource: func(ctx context.Context, env *Env) error {
			if flakyRuns.Add(1) <= flakyFailures.Load() {
				return errors.New("upstream refused the connection")
			}
			env.Status.Running()
			<-ctx.Done()
			return ctx.Err()
		},
	})
}

// TestConnectorStateLog runs a source that fails several times with the
// same error, then runs: the log holds one line for the failures (not
// one per retry) and one when it recovers, each with the connector's
// name, and the status counts every failure. Pausing and dropping it are
// logged too.
func TestConnectorStateLog(t *testing.T) {
	flakyFailures.Store(6)
	flakyRuns.Store(0)
	eng := runtime.OpenMemory()
	defer eng.Close()
	var logs syncBuffer
	m := Start(eng, Options{MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	defer m.Close()
	s := eng.NewSession()
	defer s.Close()
	for _, q := range []string{"CREATE TABLE t (a int)", "CREATE SOURCE f FROM FLAKY () INTO t"} {
		if _, err := s.Exec(context.Background(), q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	var st runtime.ConnectorStatus
	for {
		var ok bool
		st, ok = m.status("f")
		if ok && st.State == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the source did not run: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st.Failures != 6 || st.LastError != "upstream refused the connection" {
		t.Errorf("status after 6 failures: %+v", st)
	}
	var msgs []string
	for _, l := range logs.lines(t) {
		if l["component"] != "connector" || l["name"] != "f" || l["kind"] != "source" || l["type"] != "flaky" {
			t.Errorf("log line without the connector's name, kind and type: %v", l)
		}
		msgs = append(msgs, l["msg"].(string)+":"+l["state"].(string))
		if l["msg"] == "connector failed" && (l["error"] != "upstream refused the connection" || l["level"] != "WARN") {
			t.Errorf("failure line: %v", l)
		}
		if l["msg"] == "connector recovered" && l["failures"] != float64(6) {
			t.Errorf("recovery line: %v", l)
		}
	}
	want := "connector state changed:starting,connector failed:failed,connector recovered:running"
	if got := strings.Join(msgs, ","); got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}

	if _, err := s.Exec(context.Background(), "ALTER SOURCE f PAUSE", nil); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		lines := logs.lines(t)
		if last := lines[len(lines)-1]; last["state"] == "paused" && last["previous"] == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line for the pause: %v", lines[len(lines)-1])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := s.Exec(context.Background(), "DROP SOURCE f", nil); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		lines := logs.lines(t)
		if last := lines[len(lines)-1]; last["msg"] == "connector dropped" && last["name"] == "f" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line for the drop: %v", lines[len(lines)-1])
		}
		time.Sleep(5 * time.Millisecond)
	}
}
