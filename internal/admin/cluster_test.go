package admin

import (
	"testing"

	"github.com/rockstream/rockstream/internal/runtime"
)

// checkClusterHealth checks the cluster state of a /health body h
// against eng: the role, the frontier, one entry per worker with the
// buckets the engine gives it, and shards that cover the 256 buckets at
// the frontier.
func checkClusterHealth(t *testing.T, h map[string]any, eng *runtime.Engine) {
	t.Helper()
	epoch := float64(eng.Epoch())
	if h["role"] != "all" || h["frontier"] != epoch {
		t.Fatalf("/health role %v, frontier %v, want all and %v", h["role"], h["frontier"], epoch)
	}
	workers, _ := h["workers"].([]any)
	want := eng.Workers()
	if len(workers) != len(want) {
		t.Fatalf("/health lists %d workers, the engine has %d", len(workers), len(want))
	}
	for i, w := range workers {
		m, _ := w.(map[string]any)
		if m["id"] != float64(want[i].ID) || m["role"] != "all" || m["state"] != "serving" ||
			m["applied_epoch"] != epoch || m["bucket_count"] != float64(want[i].BucketCount()) {
			t.Errorf("worker %d: %v, want %+v", i, m, want[i])
		}
		if rs, _ := m["buckets"].([]any); len(rs) != 1 || rs[0] != want[i].BucketText() {
			t.Errorf("worker %d's buckets %v, want %s", i, m["buckets"], want[i].BucketText())
		}
	}
	shards, _ := h["shards"].([]any)
	next := 0.0
	for _, s := range shards {
		m, _ := s.(map[string]any)
		if m["first_bucket"] != next || m["frontier"] != epoch || m["lag_epochs"] != 0.0 {
			t.Errorf("shard %v after bucket %v", m, next-1)
		}
		next = m["last_bucket"].(float64) + 1
	}
	if next != 256 {
		t.Errorf("the shards end at bucket %v", next-1)
	}
}
