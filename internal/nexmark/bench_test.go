//go:build unix

package nexmark_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/nexmark"
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
func BenchmarkQueries(b *testing.B) {
	b.Run("none", func(b *testing.B) { benchmarkQuery(b, "none") })
	for _, q := range nexmark.Queries() {
		if q.Unsupported == "" {
			b.Run(q.Name, func(b *testing.B) { benchmarkQuery(b, q.Name) })
		}
	}
}

func benchmarkQuery(b *testing.B, name string) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, t := range nexmark.Tables {
		if _, err := db.Exec(ctx, t.CreateTable(10*time.Second)); err != nil {
			b.Fatal(err)
		}
	}
	for _, st := range []string{nexmark.SideInputTable, nexmark.SideInputRows()} {
		if _, err := db.Exec(ctx, st); err != nil {
			b.Fatal(err)
		}
	}
	if name != "none" {
		q, ok := nexmark.Lookup(name)
		if !ok {
			b.Fatalf("no query %s", name)
		}
		if _, err := db.Exec(ctx, q.CreateView()); err != nil {
			b.Fatal(err)
		}
	}
	gen := nexmark.NewGenerator(nexmark.Config{Seed: 1})
	s := db.Session()
	defer s.Close()
	// commitCPU sums the CPU time of the COMMITs, where the views are
	// maintained from the transaction's changes.
	var commitCPU time.Duration
	insert := func(stmts []string) {
		if _, err := s.Exec(ctx, "BEGIN"); err != nil {
			b.Fatal(err)
		}
		for _, st := range stmts {
			if _, err := s.Exec(ctx, st); err != nil {
				b.Fatal(err)
			}
		}
		c := cpuTime(b)
		if _, err := s.Exec(ctx, "COMMIT"); err != nil {
			b.Fatal(err)
		}
		commitCPU += cpuTime(b) - c
	}
	// Warm up: enough events that auctions are open and windows full.
	for range 20 {
		insert(nexmark.Inserts(gen.NextN(benchBatch)))
	}
	batches := make([][]string, b.N)
	for i := range batches {
		batches[i] = nexmark.Inserts(gen.NextN(benchBatch))
	}
	runtime.GC()
	commitCPU = 0
	b.ResetTimer()
	start, cpuStart := time.Now(), cpuTime(b)
	for i := range b.N {
		insert(batches[i])
	}
	elapsed, cpu := time.Since(start), cpuTime(b)-cpuStart
	b.StopTimer()
	events := float64(b.N * benchBatch)
	b.ReportMetric(events/elapsed.Seconds(), "events/s")
	b.ReportMetric(events/cpu.Seconds(), "events/cpu-s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(commitCPU.Nanoseconds())/events, "commit-cpu-ns/event")
}

// cpuTime returns the CPU time (user + system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
