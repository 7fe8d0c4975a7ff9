package diff

import (
	"context"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/proccpu"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// BenchmarkRoutedStep measures what a split keyed like the first
// exchange saves: one step of SELECT k, count(*), sum(v) FROM t GROUP BY
// k over a 200,000-row delta of distinct keys (a backfill, or a large
// write to a table whose primary key is k), on 2 workers, from
// contiguous parts of the delta (the exchange encodes, hashes and moves
// every row) and from parts already split by the bucket of k (the
// exchange moves nothing and is skipped). ns/op is wall time, cpu-ns/op
// the process's CPU time.
//
//	go test -run XXX -bench BenchmarkRoutedStep -benchtime 10x ./internal/diff
func BenchmarkRoutedStep(b *testing.B) {
	const rows, workers = 200_000, 2
	delta := make(zset.Batch, rows)
	for i := range delta {
		n := int64(i)
		delta[i] = zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, n), types.MakeInt(types.Int8, n%7), types.MakeInt(types.Int8, n%1000)}, Weight: 1}
	}
	deltas := map[string]zset.Batch{"t": delta}
	routed := map[string]Routed{"t": {Key: []int{0}, Parts: splitByKey(delta, []int{0}, workers)}}
	for _, form := range []string{"contiguous", "routed"} {
		b.Run(fmt.Sprintf("%s/workers=%d", form, workers), func(b *testing.B) {
			c := routedCircuitB(b, "aggregate group=(k) aggs=(count(*), sum(v))\n  scan t\n")
			if err := c.instances(workers); err != nil {
				b.Fatal(err)
			}
			par := Parallelism{Workers: workers}
			b.ResetTimer()
			cpu := proccpu.Used()
			for range b.N {
				var out zset.Batch
				var err error
				if form == "routed" {
					out, err = c.StepRouted(context.Background(), state.NewMemory(), deltas, routed, par)
				} else {
					out, err = c.StepParallel(context.Background(), state.NewMemory(), deltas, par)
				}
				if err != nil {
					b.Fatal(err)
				}
				if len(out) != rows {
					b.Fatalf("%d rows out", len(out))
				}
			}
			b.ReportMetric(float64((proccpu.Used()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkKeyedInPlace measures the exchange a keyed node's placement
// saves: SELECT k, count(*), sum(w) FROM t JOIN u ON k = j GROUP BY k
// over 200,000 rows of t and 100,000 of u on 2 workers, the aggregate's
// exchange done again (exchanged) or skipped because the join has placed
// its rows by k already (skipped).
//
//	go test -run XXX -bench BenchmarkKeyedInPlace -benchtime 10x ./internal/diff
func BenchmarkKeyedInPlace(b *testing.B) {
	const rows, workers = 200_000, 2
	t := make(zset.Batch, rows)
	for i := range t {
		n := int64(i)
		t[i] = zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, n%100_000), types.MakeInt(types.Int8, n%7), types.MakeInt(types.Int8, n%1000)}, Weight: 1}
	}
	u := make(zset.Batch, rows/2)
	for i := range u {
		u[i] = zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, int64(i)), types.MakeInt(types.Int8, int64(i%5))}, Weight: 1}
	}
	pp := planParser{tables: map[string][]plan.Column{
		"t": {{Name: "k", Type: int8Type}, {Name: "g", Type: int8Type}, {Name: "v", Type: int8Type}},
		"u": {{Name: "j", Type: int8Type}, {Name: "w", Type: int8Type}},
	}}
	p, err := pp.parse("aggregate group=(k) aggs=(count(*), sum(w))\n  join on (k = j)\n    scan t\n    scan u\n")
	if err != nil {
		b.Fatal(err)
	}
	for _, form := range []string{"exchanged", "skipped"} {
		b.Run(fmt.Sprintf("%s/workers=%d", form, workers), func(b *testing.B) {
			c, err := Build(p, []byte("b/"), false)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.instances(workers); err != nil {
				b.Fatal(err)
			}
			parts := make([]map[string]zset.Batch, workers)
			for i := range parts {
				parts[i] = map[string]zset.Batch{}
				for rel, d := range map[string]zset.Batch{"t": t, "u": u} {
					d, err := consolidated(d)
					if err != nil {
						b.Fatal(err)
					}
					parts[i][rel] = d[len(d)*i/workers : len(d)*(i+1)/workers]
				}
			}
			var marks map[int][]bool
			if form == "skipped" {
				marks = c.placedByKey()
			}
			b.ResetTimer()
			cpu := proccpu.Used()
			for range b.N {
				out, _, err := c.stepParts(context.Background(), state.NewMemory(), parts, marks)
				if err != nil {
					b.Fatal(err)
				}
				if len(out) == 0 {
					b.Fatal("no output")
				}
			}
			b.ReportMetric(float64((proccpu.Used()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
