package admin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/storage"
)

func post(t *testing.T, url, contentType, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body))
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

// TestCheckpointEndpoint takes online checkpoints through POST
// /admin/checkpoint, and checks the refusals: not ready, a bad body, a
// bad location, an engine in memory.
func TestCheckpointEndpoint(t *testing.T) {
	dir := t.TempDir()
	eng, err := instance.Open(instance.Options{Storage: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.NewSession().Exec(context.Background(), "CREATE TABLE t (k int)", nil); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Version: "test", StorageDir: filepath.Join(dir, "db")})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	url := srv.URL + "/admin/checkpoint"
	to := "file://" + filepath.Join(dir, "bucket")
	body := `{"to": "` + to + `", "keep": 1}`

	if code, out := post(t, url, "application/json", body); code != http.StatusServiceUnavailable || !strings.Contains(out, `"sqlstate": "55000"`) {
		t.Fatalf("checkpoint before ready: %d %s", code, out)
	}
	s.SetEngine(eng)
	s.SetReady(true)
	var ids []string
	for range 2 {
		code, out := post(t, url, "application/json; charset=utf-8", body)
		if code != http.StatusOK {
			t.Fatalf("checkpoint: %d %s", code, out)
		}
		var res runtime.CheckpointResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("answer is not a checkpoint result: %v\n%s", err, out)
		}
		if res.Manifest == nil || res.Manifest.Epoch != eng.Epoch() || res.Pruned == nil || len(res.Pruned.Kept) != 1 {
			t.Fatalf("checkpoint answer: %s", out)
		}
		ids = append(ids, res.Manifest.ID)
	}
	fams := scrape(t, srv.URL)
	if v, ok := value(fams, "rockstream_checkpoints_total", "outcome", "ok"); !ok || v != 2 {
		t.Fatalf("rockstream_checkpoints_total{outcome=ok} = %v %v, want 2", v, ok)
	}
	if v, ok := value(fams, "rockstream_last_checkpoint_epoch"); !ok || v != float64(eng.Epoch()) {
		t.Fatalf("rockstream_last_checkpoint_epoch = %v %v, want %d", v, ok, eng.Epoch())
	}
	if _, ok := value(fams, "rockstream_last_checkpoint_timestamp_seconds"); !ok {
		t.Fatal("no rockstream_last_checkpoint_timestamp_seconds")
	}
	m, err := storage.ReadLatestManifest(context.Background(), to)
	if err != nil || m.ID != ids[1] {
		t.Fatalf("latest checkpoint at %s: %v %v; want %s", to, m, err, ids[1])
	}

	for _, c := range []struct{ contentType, body, want string }{
		{"text/plain", body, "Content-Type: application/json"},
		{"application/json", `{"to": `, "not valid"},
		{"application/json", `{"to": "file:///x", "bogus": 1}`, "unknown field"},
		{"application/json", `{}`, "names no location"},
		{"application/json", `{"to": "ftp://host/x"}`, "unsupported scheme"},
		{"application/json", `{"to": "` + to + `", "keep": -1}`, "at least 1"},
	} {
		code, out := post(t, url, c.contentType, c.body)
		if code != http.StatusBadRequest || !strings.Contains(out, c.want) || !strings.Contains(out, `"sqlstate": "22023"`) {
			t.Errorf("%s %s: %d %s; want 400 with %q", c.contentType, c.body, code, out, c.want)
		}
	}
	if code, _ := get(t, url); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /admin/checkpoint: %d, want 405", code)
	}

	mem, err := instance.Open(instance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetEngine(mem)
	if code, out := post(t, url, "application/json", body); code != http.StatusBadRequest || !strings.Contains(out, "0A000") {
		t.Fatalf("checkpoint of an engine in memory: %d %s", code, out)
	}
	s.SetEngine(eng)
	if v, _ := value(scrape(t, srv.URL), "rockstream_checkpoints_total", "outcome", "error"); v != 1 {
		t.Fatalf("rockstream_checkpoints_total{outcome=error} = %v, want 1 (the bad location)", v)
	}
}
