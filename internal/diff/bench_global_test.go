package diff

import (
	"context"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/proccpu"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// BenchmarkGlobalOperators measures the global operators over one large
// delta (the backfill of a view over a 200,000-row table): SELECT
// count(*), sum(amount), avg(amount) FROM orders (sums: no partial
// state), SELECT count(*), sum(amount), min(amount), max(amount) FROM
// orders (minmax: the partial arranges each bucket's values), and SELECT
// * FROM orders ORDER BY amount DESC LIMIT 10 (topk). Each runs in its
// one-step form on one worker (what every worker count ran before global
// operators split: the whole step on the first worker) and split into
// partial and final steps on 1 and 2 workers. ns/op is wall time,
// cpu-ns/op the process's CPU time.
//
//	go test -run XXX -bench BenchmarkGlobalOperators -benchtime 5x ./internal/diff
func BenchmarkGlobalOperators(b *testing.B) {
	const rows = 200_000
	cols := []plan.Column{{Name: "id", Type: int8Type}, {Name: "store", Type: int4Type}, {Name: "amount", Type: int8Type}}
	orders := &plan.Scan{Relation: "orders", Cols: cols}
	amount := refCol(cols, 2)
	agg := &plan.Aggregate{Input: orders, Aggs: []plan.AggCall{
		{Func: "count", Type: int8Type},
		{Func: "sum", Arg: amount, Type: types.Of(types.Numeric)},
		{Func: "min", Arg: amount, Type: int8Type},
		{Func: "max", Arg: amount, Type: int8Type},
	}, Cols: []plan.Column{{Name: "count", Type: int8Type}, {Name: "sum", Type: types.Of(types.Numeric)},
		{Name: "min", Type: int8Type}, {Name: "max", Type: int8Type}}}
	sums := &plan.Aggregate{Input: orders, Aggs: []plan.AggCall{
		{Func: "count", Type: int8Type},
		{Func: "sum", Arg: amount, Type: types.Of(types.Numeric)},
		{Func: "avg", Arg: amount, Type: types.Of(types.Numeric)},
	}, Cols: []plan.Column{{Name: "count", Type: int8Type}, {Name: "sum", Type: types.Of(types.Numeric)},
		{Name: "avg", Type: types.Of(types.Numeric)}}}
	topk := plan.NewTopK(orders, nil, []plan.SortKey{{Expr: amount, Desc: true, NullsFirst: true}}, 10, 0, "")
	delta := make(zset.Batch, rows)
	for i := range delta {
		n := int64(i)
		delta[i] = zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, n), types.MakeInt(types.Int4, n%10_000),
			types.MakeInt(types.Int8, n*7919%1_000_003)}, Weight: 1}
	}
	deltas := map[string]zset.Batch{"orders": delta}
	for _, q := range []struct {
		name string
		p    plan.Node
	}{{"sums", sums}, {"minmax", agg}, {"topk", topk}} {
		for _, form := range []struct {
			name    string
			serial  bool
			workers int
		}{{"one-step/workers=1", true, 1}, {"split/workers=1", false, 1}, {"split/workers=2", false, 2}} {
			b.Run(fmt.Sprintf("%s/%s", q.name, form.name), func(b *testing.B) {
				c, err := build(q.p, ops.Prefix{Circuit: []byte("b/")}, false, form.serial)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.instances(form.workers); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				cpu := proccpu.Used()
				for range b.N {
					out, err := c.StepParallel(context.Background(), state.NewMemory(), deltas, Parallelism{Workers: form.workers})
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
}
