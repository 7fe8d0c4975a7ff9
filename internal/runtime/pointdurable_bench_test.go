package runtime

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/proccpu"
	"github.com/rockstream/rockstream/internal/storage"
)

// BenchmarkDurablePointSelect is BenchmarkPreparedPointSelectStreamed on
// a durable store (relaxed durability, as the pgbench comparison runs
// it), for views of 1,000 and 1,000,000 rows: the read of the key range
// goes to Pebble. cpu-ns/op is the process's CPU time per read:
//
//	go test -c -o /tmp/rt.test ./internal/runtime
//	/tmp/rt.test -test.run XXX -test.bench BenchmarkDurablePointSelect -test.benchtime 200000x
func BenchmarkDurablePointSelect(b *testing.B) {
	for _, rows := range []int{1000, 1000000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			eng := durablePointReadEngine(b, rows)
			cpu := proccpu.Used()
			benchPointReadsOn(b, eng, rows, true)
			b.ReportMetric(float64(proccpu.Used()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// durablePointReadEngines are the engines of BenchmarkDurablePointSelect
// by size, loaded once per process.
var durablePointReadEngines = map[int]*Engine{}

// durablePointReadEngine returns an engine on a durable store holding
// pointReadEngine's table and view of rows rows.
func durablePointReadEngine(b *testing.B, rows int) *Engine {
	if eng, ok := durablePointReadEngines[rows]; ok {
		return eng
	}
	ctx := context.Background()
	// The engine outlives the benchmark's runs (each run ends with its
	// cleanups), so its directory is not the run's TempDir.
	dir, err := os.MkdirTemp("", "pointread")
	if err != nil {
		b.Fatal(err)
	}
	st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog, Durability: storage.Relaxed, CacheBytes: 256 << 20, EpochKey: FrontierKey()})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := Open(st, Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := eng.NewSession()
	for _, q := range append(slices.Clip(pointReadSchema), fmt.Sprintf("INSERT INTO t SELECT g, g %% 7 FROM generate_series(1, %d) g", rows)) {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	// Reads after a load find its rows in tables, as pgbench's reads of
	// a view loaded minutes before do.
	if err := st.Flush(); err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second) // for the compactions the flush starts
	m := st.Metrics()
	b.Logf("%d rows: %d tables, %d bytes on disk, %d bytes in memtables", rows, m.Tables, m.DiskBytes, m.MemTableBytes)
	durablePointReadEngines[rows] = eng
	return eng
}
