package diff

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestRecursiveEqualsReference checks WITH RECURSIVE maintenance against
// an independent evaluator of PostgreSQL's semantics (iterating a working
// table): random graphs with cycles, self-loops, duplicate edges and NULL
// endpoints, random inserts and deletes of edges and of the nodes a query
// may pass through, and after every step the accumulated output must
// equal the reference over the accumulated inputs — and a batch
// evaluation by a fresh circuit.
func TestRecursiveEqualsReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := rapid.SampledFrom(recursiveQueries).Draw(t, "query")
		p := q.plan()
		c, err := Build(p, []byte("inc/"), false)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		st := state.NewMemory()
		inputs := map[string]zset.Batch{}
		var view zset.Batch
		for step, steps := 0, rapid.IntRange(1, 8).Draw(t, "steps"); step < steps; step++ {
			deltas := map[string]zset.Batch{
				"edges":   graphDelta(t, "edge", 2, inputs["edges"]),
				"allowed": graphDelta(t, "node", 1, inputs["allowed"]),
			}
			ov := state.NewOverlay(st)
			out, err := c.StepParallel(live, ov, deltas, workersOf(t))
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if rapid.Bool().Draw(t, "retry") {
				ov.Discard()
				again, err := c.StepParallel(live, ov, deltas, workersOf(t))
				if err != nil {
					t.Fatalf("step %d again: %v", step, err)
				}
				if renderExact(again) != renderExact(out) {
					t.Fatalf("step %d is not deterministic", step)
				}
			}
			if err := ov.Commit(); err != nil {
				t.Fatal(err)
			}
			for rel, d := range deltas {
				inputs[rel] = mustConsolidate(t, append(inputs[rel], d...))
			}
			view = mustConsolidate(t, append(view, out...))
			want := mustConsolidate(t, q.reference(inputs["edges"], inputs["allowed"]))
			if renderExact(view) != renderExact(want) {
				t.Fatalf("step %d: %s: incremental differs from the reference\nedges:\n%s\nincremental:\n%s\nreference:\n%s",
					step, q.name, render(inputs["edges"], edgeCols), render(view, p.Columns()), render(want, p.Columns()))
			}
			batch, err := batchEval(p, false, inputs)
			if err != nil {
				t.Fatalf("batch evaluation: %v", err)
			}
			if renderExact(batch) != renderExact(want) {
				t.Fatalf("step %d: %s: batch evaluation differs from the reference", step, q.name)
			}
		}
	})
}

var (
	int4Type    = types.Of(types.Int4)
	int8Type    = types.Of(types.Int8)
	edgeCols    = []plan.Column{{Name: "src", Type: int4Type}, {Name: "dst", Type: int4Type}}
	allowedCols = []plan.Column{{Name: "node", Type: int4Type}}
)

// graphDelta draws one step's changes to a relation of nodes 0..3 (NULL
// sometimes): inserts, duplicates included, and deletes of rows present.
func graphDelta(t *rapid.T, label string, width int, current zset.Batch) zset.Batch {
	var d zset.Batch
	for i, n := 0, rapid.IntRange(0, 4).Draw(t, label+"s"); i < n; i++ {
		row := make(zset.Row, width)
		for j := range row {
			if v := rapid.IntRange(-1, 3).Draw(t, label); v >= 0 {
				row[j] = types.MakeInt(types.Int4, int64(v))
			}
		}
		d = append(d, zset.Entry{Row: row, Weight: int64(rapid.IntRange(1, 2).Draw(t, "w"))})
	}
	for _, e := range current {
		if rapid.IntRange(0, 2).Draw(t, "delete "+label) == 0 {
			d = append(d, zset.Entry{Row: e.Row, Weight: -int64(rapid.IntRange(1, int(e.Weight)).Draw(t, "dw"))})
		}
	}
	return d
}

// recursiveQuery is a recursive plan and a reference evaluation of it.
type recursiveQuery struct {
	name      string
	plan      func() plan.Node
	reference func(edges, allowed zset.Batch) zset.Batch
}

var recursiveQueries = []recursiveQuery{
	{
		// WITH RECURSIVE tc(a, b) AS (SELECT src, dst FROM edges UNION
		//   SELECT tc.a, e.dst FROM tc JOIN edges e ON tc.b = e.src)
		name: "transitive closure (UNION)",
		plan: func() plan.Node {
			return closurePlan(true, false)
		},
		reference: func(edges, _ zset.Batch) zset.Batch {
			return pgRecursion(true, edgeRows(edges), func(w zset.Batch) zset.Batch { return followEdges(w, edges, nil, false, -1) })
		},
	},
	{
		// The same through an allowed(node) table: a second side input.
		name: "closure through allowed nodes (UNION)",
		plan: func() plan.Node {
			return closurePlan(true, true)
		},
		reference: func(edges, allowed zset.Batch) zset.Batch {
			return pgRecursion(true, edgeRows(edges), func(w zset.Batch) zset.Batch { return followEdges(w, edges, allowed, true, -1) })
		},
	},
	{
		// WITH RECURSIVE p(a, b, depth) AS (SELECT src, dst, 1 FROM edges
		//   UNION ALL SELECT p.a, e.dst, depth + 1 FROM p JOIN edges e
		//   ON p.b = e.src WHERE depth < 3): every path of up to 3 edges.
		name: "bounded paths (UNION ALL)",
		plan: func() plan.Node {
			return pathsPlan(false)
		},
		reference: func(edges, allowed zset.Batch) zset.Batch {
			return pgRecursion(false, withDepth(edgeRows(edges)), func(w zset.Batch) zset.Batch { return followEdges(w, edges, nil, false, 3) })
		},
	},
	{
		// The same paths as a set.
		name: "bounded paths (UNION)",
		plan: func() plan.Node {
			return pathsPlan(true)
		},
		reference: func(edges, allowed zset.Batch) zset.Batch {
			return pgRecursion(true, withDepth(edgeRows(edges)), func(w zset.Batch) zset.Batch { return followEdges(w, edges, nil, false, 3) })
		},
	},
	{
		// The closure only through nodes in allowed, by EXISTS: a
		// semi-join over the working table.
		name: "closure through allowed nodes by a semi-join (UNION)",
		plan: func() plan.Node {
			p := closurePlan(true, false).(*plan.Recursive)
			p.Step = filterByAllowed(p.Step, plan.SemiJoin)
			return p
		},
		reference: func(edges, allowed zset.Batch) zset.Batch {
			return pgRecursion(true, edgeRows(edges), func(w zset.Batch) zset.Batch {
				return keepByAllowed(followEdges(w, edges, nil, false, -1), allowed, true)
			})
		},
	},
	{
		// Paths that avoid the nodes in allowed (read as blocked), by
		// NOT EXISTS: an anti-join over the working table.
		name: "bounded paths avoiding nodes by an anti-join (UNION ALL)",
		plan: func() plan.Node {
			p := pathsPlan(false).(*plan.Recursive)
			p.Step = filterByAllowed(p.Step, plan.AntiJoin)
			return p
		},
		reference: func(edges, allowed zset.Batch) zset.Batch {
			return pgRecursion(false, withDepth(edgeRows(edges)), func(w zset.Batch) zset.Batch {
				return keepByAllowed(followEdges(w, edges, nil, false, 3), allowed, false)
			})
		},
	},
	{
		// UNION ALL through allowed nodes, bounded.
		name: "bounded paths through allowed nodes (UNION ALL)",
		plan: func() plan.Node {
			p := pathsPlan(false).(*plan.Recursive)
			p.Step = throughAllowed(p.Step)
			return p
		},
		reference: func(edges, allowed zset.Batch) zset.Batch {
			return pgRecursion(false, withDepth(edgeRows(edges)), func(w zset.Batch) zset.Batch { return followEdges(w, edges, allowed, true, 3) })
		},
	},
}

const testRecursionID = 7

// closurePlan is the transitive closure of edges, optionally only through
// nodes in allowed.
func closurePlan(distinct, allowed bool) plan.Node {
	cols := []plan.Column{{Name: "a", Type: int4Type}, {Name: "b", Type: int4Type}}
	work := &plan.WorkingTable{Name: "tc", ID: testRecursionID, Cols: cols}
	edges := &plan.Scan{Relation: "edges", Cols: edgeCols}
	j := &plan.Join{Kind: plan.InnerJoin, Left: work, Right: edges,
		LeftKeys: []plan.Expr{refCol(cols, 1)}, RightKeys: []plan.Expr{refCol(edgeCols, 0)}, NullSafe: []bool{false},
		Cols: append(append([]plan.Column(nil), cols...), edgeCols...)}
	var step plan.Node = &plan.Project{Input: j, Exprs: []plan.Expr{refCol(j.Cols, 0), refCol(j.Cols, 3)}, Cols: cols}
	if allowed {
		step = throughAllowed(step)
	}
	base := &plan.Project{Input: edges, Exprs: []plan.Expr{refCol(edgeCols, 0), refCol(edgeCols, 1)}, Cols: cols}
	return &plan.Recursive{Name: "tc", ID: testRecursionID, Base: base, Step: step, Distinct: distinct, Cols: cols}
}

// throughAllowed keeps a step's rows whose column 1 is an allowed node,
// by a join with allowed on the other side.
func throughAllowed(step plan.Node) plan.Node {
	cols := step.Columns()
	allowed := &plan.Scan{Relation: "allowed", Cols: allowedCols}
	j := &plan.Join{Kind: plan.InnerJoin, Left: allowed, Right: step,
		LeftKeys: []plan.Expr{refCol(allowedCols, 0)}, RightKeys: []plan.Expr{refCol(cols, 1)}, NullSafe: []bool{false},
		Cols: append(append([]plan.Column(nil), allowedCols...), cols...)}
	var exprs []plan.Expr
	for i := range cols {
		exprs = append(exprs, refCol(j.Cols, i+1))
	}
	return &plan.Project{Input: j, Exprs: exprs, Cols: cols}
}

// pathsPlan is every path of up to 3 edges, with its length.
func pathsPlan(distinct bool) plan.Node {
	cols := []plan.Column{{Name: "a", Type: int4Type}, {Name: "b", Type: int4Type}, {Name: "depth", Type: int8Type}}
	work := &plan.WorkingTable{Name: "p", ID: testRecursionID, Cols: cols}
	edges := &plan.Scan{Relation: "edges", Cols: edgeCols}
	jcols := append(append([]plan.Column(nil), cols...), edgeCols...)
	less, _ := binop("<", refCol(jcols, 2), &plan.Const{Val: types.MakeInt(types.Int8, 3), Typ: int8Type})
	j := &plan.Join{Kind: plan.InnerJoin, Left: work, Right: edges,
		LeftKeys: []plan.Expr{refCol(cols, 1)}, RightKeys: []plan.Expr{refCol(edgeCols, 0)}, NullSafe: []bool{false},
		Residual: less, Cols: jcols}
	plus, _ := binop("+", refCol(jcols, 2), &plan.Const{Val: types.MakeInt(types.Int8, 1), Typ: int8Type})
	step := &plan.Project{Input: j, Exprs: []plan.Expr{refCol(jcols, 0), refCol(jcols, 4), plus}, Cols: cols}
	base := &plan.Project{Input: edges, Exprs: []plan.Expr{refCol(edgeCols, 0), refCol(edgeCols, 1),
		&plan.Const{Val: types.MakeInt(types.Int8, 1), Typ: int8Type}}, Cols: cols}
	return &plan.Recursive{Name: "p", ID: testRecursionID, Base: base, Step: step, Distinct: distinct, Cols: cols}
}

func refCol(cols []plan.Column, i int) *plan.ColRef {
	return &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}
}

// The reference: PostgreSQL's evaluation of a recursive query, row by
// row with Go maps.

// pgRecursion evaluates base UNION [ALL] step(working table) as
// PostgreSQL does: the working table starts as the base (duplicates
// removed for UNION); each iteration evaluates step over the working
// table alone; for UNION rows already in the result (or repeated in the
// iteration) are dropped; the iteration's rows join the result and become
// the working table, until an iteration yields nothing.
func pgRecursion(distinct bool, base zset.Batch, step func(zset.Batch) zset.Batch) zset.Batch {
	seen := map[string]bool{}
	keep := func(b zset.Batch) zset.Batch {
		if !distinct {
			return b
		}
		var out zset.Batch
		for _, e := range b {
			k := string(zset.EncodeRow(nil, e.Row))
			if !seen[k] {
				seen[k] = true
				out = append(out, zset.Entry{Row: e.Row, Weight: 1})
			}
		}
		return out
	}
	var result zset.Batch
	work := keep(base)
	for iter := 0; len(work) > 0; iter++ {
		if iter > 1000 {
			panic("reference recursion does not end")
		}
		result = append(result, work...)
		work = keep(step(work))
	}
	return result
}

// edgeRows returns the rows (src, dst) of edges, with their weights.
func edgeRows(edges zset.Batch) zset.Batch { return append(zset.Batch(nil), edges...) }

// withDepth appends depth 1 to each row.
func withDepth(b zset.Batch) zset.Batch {
	out := make(zset.Batch, len(b))
	for i, e := range b {
		out[i] = zset.Entry{Row: zset.Row{e.Row[0], e.Row[1], types.MakeInt(types.Int8, 1)}, Weight: e.Weight}
	}
	return out
}

// followEdges extends each working row (a, b[, depth]) by every edge
// b → c (and, with throughAllowed, only to nodes c in allowed), with
// depth + 1 while depth < maxDepth (no depth when maxDepth < 0). Weights
// multiply; NULL never equals anything.
func followEdges(work, edges, allowed zset.Batch, throughAllowed bool, maxDepth int64) zset.Batch {
	var out zset.Batch
	for _, w := range work {
		if maxDepth >= 0 && w.Row[2].Int() >= maxDepth {
			continue
		}
		for _, e := range edges {
			if w.Row[1].IsNull() || e.Row[0].IsNull() || w.Row[1].Int() != e.Row[0].Int() {
				continue
			}
			weight := w.Weight * e.Weight
			if throughAllowed {
				n := int64(0)
				for _, a := range allowed {
					if !a.Row[0].IsNull() && !e.Row[1].IsNull() && a.Row[0].Int() == e.Row[1].Int() {
						n += a.Weight
					}
				}
				weight *= n
			}
			if weight == 0 {
				continue
			}
			row := zset.Row{w.Row[0], e.Row[1]}
			if maxDepth >= 0 {
				row = append(row, types.MakeInt(types.Int8, w.Row[2].Int()+1))
			}
			out = append(out, zset.Entry{Row: row, Weight: weight})
		}
	}
	return out
}

func (q recursiveQuery) String() string { return fmt.Sprintf("%q", q.name) }

// filterByAllowed keeps a step's rows whose column 1 is (semi) or is not
// (anti) a node in allowed.
func filterByAllowed(step plan.Node, kind plan.JoinKind) plan.Node {
	cols := step.Columns()
	allowed := &plan.Scan{Relation: "allowed", Cols: allowedCols}
	return &plan.Join{Kind: kind, Left: step, Right: allowed,
		LeftKeys: []plan.Expr{refCol(cols, 1)}, RightKeys: []plan.Expr{refCol(allowedCols, 0)}, NullSafe: []bool{false},
		Cols: cols}
}

// keepByAllowed keeps the rows whose column 1 equals (in) or equals no
// (!in) node of allowed, weights unchanged: EXISTS and NOT EXISTS.
func keepByAllowed(rows, allowed zset.Batch, in bool) zset.Batch {
	var out zset.Batch
	for _, r := range rows {
		found := false
		for _, a := range allowed {
			if !a.Row[0].IsNull() && !r.Row[1].IsNull() && a.Row[0].Int() == r.Row[1].Int() {
				found = true
			}
		}
		if found == in {
			out = append(out, r)
		}
	}
	return out
}

// TestRecursiveOnWorkers: a recursive query iterates to its fixpoint on
// every worker at once (the fixpoint's rows by bucket, the body's
// exchanges per iteration, the workers agreeing on each iteration), and
// every step gives the same output and the same state writes, byte for
// byte, on 1, 2, 3 and 8 workers.
func TestRecursiveOnWorkers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := rapid.SampledFrom(recursiveQueries).Draw(t, "query")
		p := q.plan()
		c, err := Build(p, []byte("inc/"), false)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		st := state.NewMemory()
		inputs := map[string]zset.Batch{}
		var view zset.Batch
		for step, steps := 0, rapid.IntRange(1, 8).Draw(t, "steps"); step < steps; step++ {
			deltas := map[string]zset.Batch{
				"edges":   graphDelta(t, "edge", 2, inputs["edges"]),
				"allowed": graphDelta(t, "node", 1, inputs["allowed"]),
			}
			ov := state.NewOverlay(st)
			out, err := c.Step(live, ov, deltas)
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			sameOnWorkers(t, fmt.Sprintf("step %d (%s)", step, q.name), c, st, deltas, ov, out, err)
			if err := ov.Commit(); err != nil {
				t.Fatal(err)
			}
			for rel, d := range deltas {
				inputs[rel] = mustConsolidate(t, append(inputs[rel], d...))
			}
			view = mustConsolidate(t, append(view, out...))
			if want := mustConsolidate(t, q.reference(inputs["edges"], inputs["allowed"])); renderExact(view) != renderExact(want) {
				t.Fatalf("step %d: %s: incremental differs from the reference", step, q.name)
			}
		}
	})
}
