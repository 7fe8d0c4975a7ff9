package diff

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// reachPlan is reachability from node 0 over edges: WITH RECURSIVE
// r(n) AS (SELECT 0 UNION [ALL] SELECT e.dst FROM r JOIN edges e ON
// e.src = r.n).
func reachPlan(distinct bool) plan.Node {
	cols := []plan.Column{{Name: "n", Type: int4Type}}
	work := &plan.WorkingTable{Name: "r", ID: testRecursionID, Cols: cols}
	edges := &plan.Scan{Relation: "edges", Cols: edgeCols}
	j := &plan.Join{Kind: plan.InnerJoin, Left: work, Right: edges,
		LeftKeys: []plan.Expr{refCol(cols, 0)}, RightKeys: []plan.Expr{refCol(edgeCols, 0)}, NullSafe: []bool{false},
		Cols: append(append([]plan.Column(nil), cols...), edgeCols...)}
	step := &plan.Project{Input: j, Exprs: []plan.Expr{refCol(j.Cols, 2)}, Cols: cols}
	base := &plan.Values{Rows: [][]plan.Expr{{&plan.Const{Val: types.MakeInt(types.Int4, 0), Typ: int4Type}}}, Cols: cols}
	return &plan.Recursive{Name: "r", ID: testRecursionID, Base: base, Step: step, Distinct: distinct, Cols: cols}
}

func edge(a, b int64) zset.Entry {
	return zset.Entry{Row: zset.Row{types.MakeInt(types.Int4, a), types.MakeInt(types.Int4, b)}, Weight: 1}
}

// BenchmarkReachability maintains reachability over a path 0 → 1 → ... →
// n−1 closed into a cycle, under the insert and delete of one edge far from
// the start (a small change) and of the first edge (everything is
// retracted, and comes back), on 1 and 2 workers (every step split).
func BenchmarkReachability(b *testing.B) {
	const n = 2000
	for _, c := range []struct {
		name    string
		far     int64
		workers int
	}{{"far-edge", n - 10, 1}, {"first-edge", 0, 1}, {"far-edge/workers=2", n - 10, 2}, {"first-edge/workers=2", 0, 2}} {
		b.Run(c.name, func(b *testing.B) {
			par := Parallelism{Workers: c.workers}
			circ, err := Build(reachPlan(true), []byte("b/"), false)
			if err != nil {
				b.Fatal(err)
			}
			st := state.NewMemory()
			var all zset.Batch
			for i := int64(0); i < n; i++ {
				all = append(all, edge(i, (i+1)%n))
			}
			if _, err := circ.Step(context.Background(), st, map[string]zset.Batch{"edges": all}); err != nil {
				b.Fatal(err)
			}
			e := edge(c.far, c.far+1)
			del := zset.Batch{{Row: e.Row, Weight: -1}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := circ.StepParallel(context.Background(), st, map[string]zset.Batch{"edges": del}, par); err != nil {
					b.Fatal(err)
				}
				if _, err := circ.StepParallel(context.Background(), st, map[string]zset.Batch{"edges": {e}}, par); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
