//go:build unix

// Package viewbench measures materialized view maintenance through the
// embedded API. A workload is a set of tables and views and a stream of
// transactions of SQL text; Run prepares the stream before the timer
// starts, applies it from one session, and reports throughput per second
// of wall time and per second of the process's CPU time. The machine the
// benchmarks run on is shared, and CPU time (user + system, the engine's
// goroutines and the garbage collector included) is the steadier measure.
//
// Metrics, per unit (a row inserted, deleted or updated, or an event):
//
//	<unit>s/s          wall-clock throughput
//	<unit>s/cpu-s      throughput per core
//	cpu-ns/<unit>      CPU time of whole transactions (parsing included)
//	commit-cpu-ns/<unit> CPU time of the COMMITs alone: maintaining the
//	                   views and writing the epoch, without parsing
//	commit-ns/<unit>   wall time of the COMMITs alone, which is what
//	                   more workers shorten
//
// After the timed loop Run checks every view against its query recomputed
// from scratch, so a benchmark cannot report the speed of a wrong result.
package viewbench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/proccpu"
)

// Txn is one transaction of a workload: statements run between BEGIN and
// COMMIT, and the number of units (rows or events) they change.
type Txn struct {
	Statements []string
	// Rows, when set, replaces Statements: it adds the transaction's
	// changes to a batch that is applied without SQL text
	// (rockstream.Batch). Its cost is in the totals; the apply is the
	// commit.
	Rows  func(*rockstream.Batch) error
	Units int
}

// Workload describes a benchmark.
type Workload struct {
	// Setup runs first, each statement on its own (CREATE TABLE, CREATE
	// MATERIALIZED VIEW, initial data).
	Setup []string
	// Warmup is the number of transactions applied before timing.
	Warmup int
	// Next returns the workload's next transaction. It is called Warmup +
	// b.N times, all before the timer starts.
	Next func() Txn
	// Unit names what Txn.Units counts in the metrics ("row" when empty).
	Unit string
	// SkipVerify leaves out the final check of the views, for workloads
	// whose recomputation would dominate the run.
	SkipVerify bool
	// Workers is how many workers step the views (0: the number of
	// cores, with the default threshold for splitting a step). With more
	// than one, every step of the workload is split between them, unless
	// DefaultMinRows is set.
	Workers int
	// DefaultMinRows keeps the engine's default threshold for splitting
	// a step (and stepping views concurrently) on more than one worker.
	DefaultMinRows bool
}

// Run opens an in-memory instance, sets up the workload and measures b.N
// of its transactions.
func Run(b *testing.B, w Workload) {
	ctx := context.Background()
	opts := rockstream.Options{Workers: w.Workers}
	if w.Workers > 1 && !w.DefaultMinRows {
		opts.ParallelMinRows = 1
	}
	db, err := rockstream.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, st := range w.Setup {
		if _, err := db.Exec(ctx, st); err != nil {
			b.Fatalf("%.80s: %v", st, err)
		}
	}
	s := db.Session()
	defer s.Close()
	var commitCPU, commitWall time.Duration
	apply := func(t Txn) {
		if t.Rows != nil {
			batch := db.NewBatch()
			if err := t.Rows(batch); err != nil {
				b.Fatal(err)
			}
			c, t0 := CPUTime(b), time.Now()
			if err := db.Apply(ctx, batch); err != nil {
				b.Fatal(err)
			}
			commitCPU += CPUTime(b) - c
			commitWall += time.Since(t0)
			return
		}
		if _, err := s.Exec(ctx, "BEGIN"); err != nil {
			b.Fatal(err)
		}
		for _, st := range t.Statements {
			if _, err := s.Exec(ctx, st); err != nil {
				b.Fatalf("%.80s: %v", st, err)
			}
		}
		c, t0 := CPUTime(b), time.Now()
		if _, err := s.Exec(ctx, "COMMIT"); err != nil {
			b.Fatal(err)
		}
		commitCPU += CPUTime(b) - c
		commitWall += time.Since(t0)
	}
	for range w.Warmup {
		apply(w.Next())
	}
	txns := make([]Txn, b.N)
	units := 0
	for i := range txns {
		txns[i] = w.Next()
		units += txns[i].Units
	}
	runtime.GC()
	commitCPU, commitWall = 0, 0
	b.ResetTimer()
	start, cpuStart := time.Now(), CPUTime(b)
	for _, t := range txns {
		apply(t)
	}
	elapsed, cpu := time.Since(start), CPUTime(b)-cpuStart
	b.StopTimer()
	unit := w.Unit
	if unit == "" {
		unit = "row"
	}
	n := float64(units)
	b.ReportMetric(n/elapsed.Seconds(), unit+"s/s")
	b.ReportMetric(n/cpu.Seconds(), unit+"s/cpu-s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/"+unit)
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/"+unit)
	b.ReportMetric(float64(commitCPU.Nanoseconds())/n, "commit-cpu-ns/"+unit)
	b.ReportMetric(float64(commitWall.Nanoseconds())/n, "commit-ns/"+unit)
	if !w.SkipVerify {
		if err := db.VerifyViews(); err != nil {
			b.Fatal(err)
		}
	}
}

// CPUTime returns the CPU time (user + system) the process has used.
func CPUTime(testing.TB) time.Duration { return proccpu.Used() }
