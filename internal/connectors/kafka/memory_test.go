package kafka

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/instance"
)

// TestSourceMemoryBounded lets a source catch up on a topic far larger
// than its buffers, into a durable store and through a view that keeps
// per-group state, and checks that the heap does not grow with the
// backlog: the reader waits for the epochs instead of buffering ahead.
func TestSourceMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("produces 60 MB")
	}
	const records, size = 300_000, 200
	dir := t.TempDir() // removed after the harness closes
	h := newHarness(t, 4, "big")
	h.close() // reopened below on a durable store
	pad := strings.Repeat("x", size-30)
	for done := 0; done < records; {
		var recs []*kgo.Record
		for i := 0; i < 5000; i++ {
			id := done + i
			recs = append(recs, &kgo.Record{Topic: "big", Partition: int32(id % 4), Value: fmt.Appendf(nil, "%d,%d,%s", id, id%50, pad)})
		}
		if err := h.prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		done += len(recs)
	}
	eng, err := instance.Open(instance.Options{Storage: filepath.Join(dir, "db"), CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	h.eng = eng
	h.mgr = connectors.Start(eng, connectors.Options{})
	h.exec("CREATE TABLE big (id int, grp int, pad text)")
	h.exec("CREATE MATERIALIZED VIEW g AS SELECT grp, count(*) AS n, max(id) AS top FROM big GROUP BY grp")

	// The live heap (as of the last collection) measures what is held;
	// HeapAlloc would also count garbage not yet collected.
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	liveHeap := func() uint64 {
		metrics.Read(live)
		return live[0].Value.Uint64()
	}
	goruntime.GC()
	base := liveHeap()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if l := liveHeap(); l > peak.Load() {
				peak.Store(l)
			}
		}
	}()
	h.exec("CREATE SOURCE big_in FROM KAFKA (brokers = 'BROKERS', topic = 'big', format = 'csv', max_batch = 5000) INTO big")
	deadline := time.Now().Add(3 * time.Minute)
	for h.query("SELECT sum(n)::int8 FROM g") != fmt.Sprint(records) {
		if time.Now().After(deadline) {
			t.Fatalf("the source did not catch up: %s", h.query("SELECT * FROM rockstream_catalog.sources"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	<-sampled
	growth := int64(peak.Load()) - int64(base)
	t.Logf("heap: %d MB before, peak growth %d MB, backlog %d MB", base>>20, growth>>20, records*size>>20)
	// What the source holds is bounded: about 20 MB of fetched and
	// decompressed records in the Kafka client, two decoded batches, the
	// store's write buffers. Buffering the backlog would hold it several
	// times over once decoded.
	if growth > 96<<20 {
		t.Fatalf("the heap grew by %d MB while catching up on a %d MB backlog", growth>>20, records*size>>20)
	}
}
