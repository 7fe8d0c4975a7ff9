package runtime

import (
	"context"
	"testing"
)

// TestDropReleasesWatermark checks that dropping a table with a lateness
// declaration deletes its watermark state.
func TestDropReleasesWatermark(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	for _, q := range []string{
		"CREATE TABLE bids (ts timestamp) WITH (event_time = 'ts', lateness = '1 minute')",
		"INSERT INTO bids VALUES ('2026-01-01 10:00')",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	eng.mu.RLock()
	id := eng.mu.cat.lookup("bids").id
	_, ok, err := eng.mu.store.Get(latenessKey(id))
	eng.mu.RUnlock()
	if err != nil || !ok {
		t.Fatalf("no watermark state before DROP (%v)", err)
	}
	if _, err := s.Exec(ctx, "DROP TABLE bids", nil); err != nil {
		t.Fatal(err)
	}
	eng.mu.RLock()
	defer eng.mu.RUnlock()
	if _, ok, err := eng.mu.store.Get(latenessKey(id)); err != nil || ok {
		t.Fatalf("watermark state left after DROP (%v)", err)
	}
}
