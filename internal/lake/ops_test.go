package lake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/storage"
)

// TestMetricsAndHealth drives two writers into both kinds of conflict
// and reads /metrics and /health: statements by kind, commits,
// conflicts (a 23505 at the INSERT that meets a committed snapshot, as
// DuckLake's concurrent commits meet, and a 40001 at COMMIT), the
// latency histograms and open connections.
func TestMetricsAndHealth(t *testing.T) {
	srv, addr := serveLake(t, Config{Dir: t.TempDir(), Durability: storage.Relaxed})
	defer srv.Close()
	a, b := dialWire(t, addr, "lake"), dialWire(t, addr, "lake")
	defer a.close()
	defer b.close()
	must := func(c *wireClient, sql, wantCode string) {
		t.Helper()
		if _, code := simple(t, c, sql); code != wantCode {
			t.Fatalf("%s: SQLSTATE %q, want %q", sql, code, wantCode)
		}
	}
	const begin = "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ"
	// Both writers read snapshot 0 and write snapshot 1; A commits first.
	must(a, begin, "")
	must(b, begin, "")
	must(a, `SELECT "snapshot_id" FROM "public"."ducklake_snapshot" WHERE "snapshot_id" = '0'`, "")
	must(b, `SELECT "snapshot_id" FROM "public"."ducklake_snapshot" WHERE "snapshot_id" = '0'`, "")
	must(a, `INSERT INTO "public".ducklake_snapshot VALUES (1, NOW(), 1, 1, 0)`, "")
	must(a, "COMMIT", "")
	must(b, `INSERT INTO "public".ducklake_snapshot VALUES (1, NOW(), 1, 1, 0)`, "23505")
	must(b, "ROLLBACK", "")
	// Both end the same row version; the second COMMIT is refused.
	must(a, begin, "")
	must(b, begin, "")
	must(a, `UPDATE "public".ducklake_metadata SET value = 'a' WHERE key = 'created_by'`, "")
	must(b, `UPDATE "public".ducklake_metadata SET value = 'b' WHERE key = 'created_by'`, "")
	must(a, "COMMIT", "")
	must(b, "COMMIT", "40001")

	h := httptest.NewServer(srv.Handler())
	defer h.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(h.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, body := get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	metric := func(name string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("/metrics has no %s:\n%s", name, body)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	for name, want := range map[string]float64{
		`rocklake_statements_total{kind="begin"}`:                    4,
		`rocklake_statements_total{kind="select"}`:                   2,
		`rocklake_statements_total{kind="insert"}`:                   2,
		`rocklake_statements_total{kind="update"}`:                   2,
		`rocklake_statements_total{kind="commit"}`:                   3,
		`rocklake_statements_total{kind="rollback"}`:                 1,
		`rocklake_statement_seconds_count{kind="insert"}`:            2,
		`rocklake_commits_total`:                                     2,
		`rocklake_commit_conflicts_total`:                            2,
		`rocklake_commit_seconds_count`:                              3,
		`rocklake_connections`:                                       2,
		`rocklake_statement_seconds_bucket{kind="insert",le="+Inf"}`: 2,
	} {
		if got := metric(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if metric("rocklake_commit_seconds_sum") <= 0 {
		t.Errorf("rocklake_commit_seconds_sum is not positive")
	}

	code, body = get("/health")
	var hl Health
	if err := json.Unmarshal([]byte(body), &hl); err != nil || code != http.StatusOK {
		t.Fatalf("/health: %d %s (%v)", code, body, err)
	}
	// The bootstrap is revision 1, then A's two commits.
	if hl.Status != "ok" || hl.Revision != 3 || hl.Tables != 28 || hl.UptimeSeconds <= 0 {
		t.Errorf("/health = %+v", hl)
	}

	// POST /admin/checkpoint: refusals, then a checkpoint of revision 3.
	post := func(ctype, body string) (int, string) {
		resp, err := http.Post(h.URL+"/admin/checkpoint", ctype, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct{ ctype, body string }{
		{"text/plain", `{"to": "file:///tmp/x"}`},
		{"application/json", `{}`},
		{"application/json", `{"to": "file:///tmp/x", "extra": 1}`},
		{"application/json", `{"to": "file:///tmp/x", "keep": -1}`},
	} {
		if code, body := post(c.ctype, c.body); code != http.StatusBadRequest || !strings.Contains(body, `"sqlstate": "22023"`) {
			t.Errorf("POST %s %s: %d %s, want 400 with SQLSTATE 22023", c.ctype, c.body, code, body)
		}
	}
	code, body = post("application/json", `{"to": "file://`+t.TempDir()+`", "keep": 1}`)
	var res CheckpointResult
	if err := json.Unmarshal([]byte(body), &res); err != nil || code != http.StatusOK || res.Manifest == nil ||
		res.Manifest.Epoch != 3 || res.Pruned == nil {
		t.Errorf("POST /admin/checkpoint: %d %s", code, body)
	}
}

// TestHealthAfterStoreFailure: once the store fails (a write of the
// log fails, so a commit cannot be made durable), the commit is refused
// and /health answers 503 with the failure.
func TestHealthAfterStoreFailure(t *testing.T) {
	fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData) &&
			strings.HasSuffix(op.Path, ".log") {
			return errorfs.ErrInjected
		}
		return nil
	})}
	srv, addr := serveLake(t, Config{Dir: "lake", fs: errorfs.Wrap(vfs.NewCrashableMem(), fault), Durability: storage.Sync})
	defer srv.Close()
	c := dialWire(t, addr, "lake")
	defer c.close()
	if _, code := simple(t, c, `INSERT INTO "public".ducklake_snapshot VALUES (1, NOW(), 1, 1, 0)`); code != "" {
		t.Fatalf("first commit: SQLSTATE %s", code)
	}
	h := httptest.NewServer(srv.Handler())
	defer h.Close()
	health := func() (int, Health) {
		resp, err := http.Get(h.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var hl Health
		if err := json.NewDecoder(resp.Body).Decode(&hl); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, hl
	}
	if code, hl := health(); code != http.StatusOK || hl.Status != "ok" || hl.Revision != 2 {
		t.Fatalf("/health before the failure: %d %+v", code, hl)
	}
	fault.On()
	if _, code := simple(t, c, `INSERT INTO "public".ducklake_snapshot VALUES (2, NOW(), 1, 1, 0)`); code == "" {
		t.Fatalf("a commit whose log write fails succeeded")
	}
	code, hl := health()
	if code != http.StatusServiceUnavailable || !strings.HasPrefix(hl.Status, "failed: ") || hl.Revision != 2 {
		t.Errorf("/health after the failure: %d %+v", code, hl)
	}
	// The session survives. The store refuses reads until it has reopened
	// itself (it tries when a statement or a health check comes, since
	// the failure was a log write): then a read shows exactly the
	// committed snapshots, the bootstrap's 0 and 1, never the failed 2.
	if rows, code := simple(t, c, `SELECT "snapshot_id" FROM "public"."ducklake_snapshot"`); code == "" &&
		fmt.Sprint(rows) != "[[0] [1]]" {
		t.Errorf("a read after the failure: %v", rows)
	}
	fault.Off()
}
