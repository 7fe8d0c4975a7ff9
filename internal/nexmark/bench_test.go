//go:build unix

package nexmark_test

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/nexmark"
	"github.com/rockstream/rockstream/internal/viewbench"
)

// benchBatch is the number of events per transaction in the benchmarks.
const benchBatch = 1000

// BenchmarkQueries measures maintaining one query's materialized view
// while the standard stream (10,000 events per second of event time, 92%
// bids) is inserted in transactions of 1,000 events into an in-memory
// instance whose tables declare a 10-second lateness. "none" is the cost
// of the inserts alone (parsing the INSERT text, writing the tables), with
// no view. Each iteration is one transaction from one session. events/s
// is wall-clock throughput; events/cpu-s divides by the CPU time the
// process used (user + system), which is throughput per core and less
// sensitive to other load on the machine. commit-cpu-ns/event is the CPU
// time of the COMMITs alone, per event: maintaining the views and writing
// the epoch, without parsing the INSERTs.
//
//	go test -run XXX -bench BenchmarkQueries -benchtime 30x ./internal/nexmark/
//	go test -run XXX -bench 'BenchmarkQueries/(none|q4|q5|q7)$' -benchtime 30x ./internal/nexmark/
//
// Each query runs on 1, 2 and 4 workers with the engine's default
// threshold for splitting a step (a transaction's step is not split, and
// with one view and append-only tables nothing else of it runs beside
// it), and on 2 workers
// splitting every step ("workers=2/split": the COMMIT's view maintenance
// runs in parallel; the INSERTs are parsed on one goroutine either way).
func BenchmarkQueries(b *testing.B) {
	b.Run("none", func(b *testing.B) { benchmarkQuery(b, "none", 1) })
	for _, q := range nexmark.Queries() {
		if q.Unsupported == "" {
			runWorkers(b, q.Name, func(b *testing.B, w int, split bool) { benchmark(b, q.Name, w, split, false) })
		}
	}
}

// runWorkers runs a query's benchmark on 1, 2 and 4 workers, and on 2
// splitting every step.
func runWorkers(b *testing.B, name string, run func(b *testing.B, workers int, split bool)) {
	for _, w := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("%s/workers=%d", name, w), func(b *testing.B) { run(b, w, false) })
	}
	b.Run(name+"/workers=2/split", func(b *testing.B) { run(b, 2, true) })
}

// storedFlag makes BenchmarkNative's event tables materialized, as
// BenchmarkQueries' are, for comparing the two.
var storedFlag = flag.Bool("nexmark.stored", false, "BenchmarkNative: event tables that store their rows (default: materialized = false)")

// boxedFlag makes BenchmarkNative add the events with Batch.Insert and
// Event.Values (each column boxed into an any), for comparing with the
// typed writer.
var boxedFlag = flag.Bool("nexmark.boxed", false, "BenchmarkNative: add events with Batch.Insert(Event.Values()...) instead of typed RowWriters")

// BenchmarkNative is BenchmarkQueries through the embedded API's native
// path: each transaction's 1,000 events are added to a rockstream.Batch
// through typed rockstream.RowWriters (BatchWriter) and applied, with no
// SQL text. The conversion of the values is part of the measured time;
// generating the events is not (every transaction's events are generated
// before the timer starts). -nexmark.boxed adds them with Batch.Insert
// instead. The event tables keep no rows (APPEND ONLY
// WITH (materialized = false)): the view is created before the first
// event and nothing reads the tables but it; -nexmark.stored makes them
// store their rows.
//
//	go test -run XXX -bench BenchmarkNative -benchtime 30x ./internal/nexmark/
func BenchmarkNative(b *testing.B) {
	b.Run("none", func(b *testing.B) { benchmark(b, "none", 1, false, true) })
	for _, q := range nexmark.Queries() {
		if q.Unsupported == "" {
			runWorkers(b, q.Name, func(b *testing.B, w int, split bool) { benchmark(b, q.Name, w, split, true) })
		}
	}
}

func benchmarkQuery(b *testing.B, name string, workers int) {
	benchmark(b, name, workers, false, false)
}

func benchmark(b *testing.B, name string, workers int, split, native bool) {
	setup := []string{}
	for _, t := range nexmark.Tables {
		if native && !*storedFlag {
			setup = append(setup, t.CreateUnmaterialized(10*time.Second))
		} else {
			setup = append(setup, t.CreateTable(10*time.Second, true))
		}
	}
	setup = append(setup, nexmark.SideInputTable, nexmark.SideInputRows())
	if name != "none" {
		q, ok := nexmark.Lookup(name)
		if !ok {
			b.Fatalf("no query %s", name)
		}
		setup = append(setup, q.CreateView())
	}
	gen := nexmark.NewGenerator(nexmark.Config{Seed: 1})
	viewbench.Run(b, viewbench.Workload{
		Setup: setup,
		// Enough events that auctions are open and windows full.
		Warmup: 20,
		Next: func() viewbench.Txn {
			events := gen.NextN(benchBatch)
			if !native {
				return viewbench.Txn{Statements: nexmark.Inserts(events), Units: benchBatch}
			}
			if *boxedFlag {
				return viewbench.Txn{Rows: func(batch *rockstream.Batch) error {
					for _, e := range events {
						if err := batch.Insert(e.Kind.String(), e.Values()...); err != nil {
							return err
						}
					}
					return nil
				}, Units: benchBatch}
			}
			return viewbench.Txn{Rows: func(batch *rockstream.Batch) error {
				w, err := nexmark.NewBatchWriter(batch)
				if err != nil {
					return err
				}
				return w.Insert(events)
			}, Units: benchBatch}
		},
		Unit: "event",
		// The oracle tests check the views; recomputing them here would
		// slow every benchmark run.
		SkipVerify:     true,
		Workers:        workers,
		DefaultMinRows: !split,
	})
}
