package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/storage"
)

// changeLogEngine opens a Pebble store in dir holding view v (routed by
// the whole row) after epochs epochs of one inserted and one deleted row
// each, and one last epoch of wide rows changed (every bucket).
func changeLogEngine(b *testing.B, epochs, wide int) *Engine {
	ctx := context.Background()
	st, err := storage.Open(storage.Options{Dir: b.TempDir(), Logger: quietLog, Durability: storage.Relaxed})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := Open(st, Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := eng.NewSession()
	exec := func(q string) {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	exec("CREATE TABLE t (k int PRIMARY KEY, v int)")
	exec("CREATE MATERIALIZED VIEW v AS SELECT k, v FROM t")
	for i := 1; i <= epochs; i++ {
		exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", i, i))
		if i > 10 {
			exec(fmt.Sprintf("DELETE FROM t WHERE k = %d", i-10))
		}
	}
	if wide > 0 {
		exec(fmt.Sprintf("INSERT INTO t SELECT k, k FROM generate_series(%d, %d) k", epochs+1, epochs+wide))
	}
	s.Close()
	b.Cleanup(func() { eng.Close() })
	return eng
}

// BenchmarkReadChanges reads a view's changes on Pebble the way a
// SUBSCRIBE poll or a sink does (the last epoch; the last 100 epochs) and
// an AS OF EPOCH read does (everything after an old epoch), through the
// change-log index ("index") and scanning all 256 buckets ("scan", how
// every read went without it). "wide" is an epoch that changed 1,000
// rows, in every bucket, where the index saves nothing.
func BenchmarkReadChanges(b *testing.B) {
	for _, wide := range []int{0, 1000} {
		eng := changeLogEngine(b, 2000, wide)
		eng.mu.RLock()
		frontier, id, store := eng.mu.epoch, eng.mu.cat.lookup("v").id, eng.mu.store
		eng.mu.RUnlock()
		name := "narrow"
		if wide > 0 {
			name = "wide"
		}
		for _, back := range []uint64{0, 1, 100, 2000} {
			for _, indexed := range []bool{true, false} {
				how := "scan"
				if indexed {
					how = "index"
				}
				b.Run(fmt.Sprintf("%s/last=%d/%s", name, back, how), func(b *testing.B) {
					eng.mu.RLock()
					defer eng.mu.RUnlock()
					n := 0
					for b.Loop() {
						var ch []Change
						var err error
						if indexed {
							ch, err = readChanges(currentReader{store, eng}, id, frontier-back, frontier)
						} else {
							ch, err = scanChanges(store, id, frontier-back, frontier, everyBucket)
						}
						if err != nil {
							b.Fatal(err)
						}
						n = len(ch)
					}
					b.ReportMetric(float64(n), "changes")
				})
			}
		}
	}
}

// BenchmarkLastChange finds a view's last changed epoch on Pebble, as
// each row of rockstream_catalog.views does, through the change-log index
// and reading each bucket's last entry.
func BenchmarkLastChange(b *testing.B) {
	eng := changeLogEngine(b, 2000, 0)
	eng.mu.RLock()
	id, store := eng.mu.cat.lookup("v").id, eng.mu.store
	eng.mu.RUnlock()
	for _, indexed := range []bool{true, false} {
		how := "scan"
		if indexed {
			how = "index"
		}
		b.Run(how, func(b *testing.B) {
			eng.mu.RLock()
			defer eng.mu.RUnlock()
			var r interface{} = store
			if indexed {
				r = currentReader{store, eng}
			}
			for b.Loop() {
				var err error
				if indexed {
					_, _, err = lastChange(r.(currentReader), id)
				} else {
					_, _, err = lastChange(store, id)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
