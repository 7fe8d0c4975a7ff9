package tpch

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/viewbench"
)

var benchScaleFlag = flag.Float64("tpch.bench.sf", 0.01, "scale factor of BenchmarkRefresh")

// refreshBench is the loaded instance BenchmarkRefresh reuses across the
// runs the testing package makes with growing b.N: loading it is far
// slower than the refresh steps measured.
var refreshBench struct {
	sf   float64
	db   *rockstream.DB
	gen  *Generator
	load time.Duration
}

// BenchmarkRefresh maintains the 22 TPC-H queries as materialized views
// of an in-memory instance loaded at -tpch.bench.sf while it applies the
// specification's refresh functions: each iteration is one RF1
// transaction (SF·1,500 new orders with their lineitems) and one RF2
// transaction (as many orders deleted with theirs). rows/s counts the
// rows inserted and deleted, through SQL text, per second of wall time.
func BenchmarkRefresh(b *testing.B) {
	ctx := context.Background()
	sf := *benchScaleFlag
	if refreshBench.db == nil || refreshBench.sf != sf {
		start := time.Now()
		db, err := rockstream.Open(rockstream.Options{})
		if err != nil {
			b.Fatal(err)
		}
		g, data, err := New(Config{ScaleFactor: sf, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range append(append([]string{}, Schema...), data.Statements()...) {
			if _, err := db.Exec(ctx, s); err != nil {
				b.Fatalf("%.60s: %v", s, err)
			}
		}
		for _, q := range Queries(sf) {
			if _, err := db.Exec(ctx, "CREATE MATERIALIZED VIEW "+q.Name+" AS "+q.SQL); err != nil {
				b.Fatalf("%s: %v", q.Name, err)
			}
		}
		refreshBench.sf, refreshBench.db, refreshBench.gen, refreshBench.load = sf, db, g, time.Since(start)
		b.Logf("SF %g: %d rows loaded and 22 views created in %v", sf, data.Rows(), refreshBench.load)
	}
	db, g := refreshBench.db, refreshBench.gen
	s := db.Session()
	defer s.Close()
	run := func(tx Transaction) {
		for _, stmt := range append(append([]string{"BEGIN"}, tx.Statements...), "COMMIT") {
			if _, err := s.Exec(ctx, stmt); err != nil {
				b.Fatalf("%s: %.60s: %v", tx.Name, stmt, err)
			}
		}
	}
	rows := 0
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		rf1, rf2 := g.RF1(g.RefreshSize()), g.RF2(g.RefreshSize())
		start := viewbench.CPUTime(b)
		b.StartTimer()
		run(rf1)
		run(rf2)
		b.StopTimer()
		cpu += viewbench.CPUTime(b) - start
		b.StartTimer()
		rows += rf1.Rows + rf2.Rows
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	// CPU time of the whole process (the engine's goroutines and the
	// garbage collector included) is steadier than wall time on a shared
	// machine.
	b.ReportMetric(float64(rows)/cpu.Seconds(), "rows/cpu-s")
}
