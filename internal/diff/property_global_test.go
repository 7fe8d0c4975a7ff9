package diff

import (
	"context"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Global operators (an aggregate without GROUP BY) run as a partial step
// on every worker and a final one on the first. For random such plans
// over large random deltas of inserts and deletes, every step gives the
// same output and the same state writes, byte for byte, on 1, 2, 3 and 8
// workers, and the accumulated output equals the batch evaluation.
func TestGlobalOnWorkers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkOnWorkers(t, func(g *planGen) plan.Node { return g.globalAggregate(t) })
	})
}

// The same for a top-k without PARTITION BY (ORDER BY ... LIMIT ...
// OFFSET, with or without row numbers) over a table or a filter of one,
// with deletes of rows in the window.
func TestGlobalTopKOnWorkers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkOnWorkers(t, func(g *planGen) plan.Node {
			rel := rapid.SampledFrom([]string{"r", "s"}).Draw(t, "rel")
			var in plan.Node = &plan.Scan{Relation: rel, Cols: g.tables[rel], AppendOnly: g.appendOnly[rel]}
			if rapid.IntRange(0, 3).Draw(t, "filtered") == 0 {
				in = g.filter(t, in)
			}
			cols := in.Columns()
			count := int64(rapid.IntRange(0, 5).Draw(t, "count"))
			offset := int64(rapid.IntRange(0, 4).Draw(t, "offset"))
			rn := ""
			if rapid.Bool().Draw(t, "rownumber") {
				rn = "rn"
			}
			return plan.NewTopK(in, nil, g.sortKeys(t, cols, "keys"), count, offset, rn)
		})
	})
}

// checkOnWorkers checks the plan draw returns over the tables r and s on
// 1, 2, 3 and 8 workers, step by step.
func checkOnWorkers(t *rapid.T, draw func(*planGen) plan.Node) {
	g := &planGen{tables: map[string][]plan.Column{
		"r": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "b", Type: types.Of(types.Int4)}, {Name: "c", Type: types.Of(types.Text)}},
		"s": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "d", Type: types.Of(types.Int8)}, {Name: "n", Type: types.Of(types.Numeric)}},
	}}
	g.appendOnly = map[string]bool{"r": rapid.IntRange(0, 3).Draw(t, "r append-only") == 0, "s": false}
	p := draw(g)
	t.Logf("plan:\n%s", describePlan(p, 0))
	c, err := Build(p, []byte("inc/"), false)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := c.instances(maxTestWorkers); err != nil {
		t.Fatal(err)
	}
	forgetAppendOnly(p)
	st := state.NewMemory()
	inputs := map[string]zset.Batch{}
	var view zset.Batch
	for step, steps := 0, rapid.IntRange(1, 6).Draw(t, "steps"); step < steps; step++ {
		deltas := map[string]zset.Batch{}
		for _, rel := range []string{"r", "s"} {
			deltas[rel] = g.largeDelta(t, rel, inputs[rel])
		}
		ov := state.NewOverlay(st)
		out, err := c.Step(context.Background(), ov, deltas)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		sameOnWorkers(t, fmt.Sprintf("step %d", step), c, st, deltas, ov, out, err)
		if err := ov.Commit(); err != nil {
			t.Fatal(err)
		}
		for rel, d := range deltas {
			inputs[rel] = mustConsolidate(t, append(inputs[rel], d...))
		}
		view = mustConsolidate(t, append(view, out...))
		batch, err := batchEval(p, false, inputs)
		if err != nil {
			t.Fatalf("batch evaluation: %v", err)
		}
		if renderExact(view) != renderExact(batch) {
			t.Fatalf("step %d: incremental differs from batch\nincremental:\n%s\nbatch:\n%s", step, render(view, p.Columns()), render(batch, p.Columns()))
		}
	}
}

// largeDelta draws one step's changes to rel: up to 60 inserts (of up to
// 3 copies) from a small domain and deletes of about a third of the rows present, enough
// rows for every worker to get some.
func (g *planGen) largeDelta(t *rapid.T, rel string, current zset.Batch) zset.Batch {
	var d zset.Batch
	for i, n := 0, rapid.IntRange(0, 60).Draw(t, "inserts"); i < n; i++ {
		var row zset.Row
		for _, c := range g.tables[rel] {
			row = append(row, g.value(t, c.Type))
		}
		d = append(d, zset.Entry{Row: row, Weight: int64(rapid.IntRange(1, 3).Draw(t, "w"))})
	}
	for _, e := range current {
		if g.appendOnly[rel] {
			break
		}
		if rapid.IntRange(0, 2).Draw(t, "delete") == 0 {
			d = append(d, zset.Entry{Row: e.Row, Weight: -int64(rapid.IntRange(1, int(e.Weight)).Draw(t, "dw"))})
		}
	}
	return d
}

// globalAggregate draws an aggregate without GROUP BY over a table (or a
// filter of one), mostly of aggregates that split into partial and final
// steps, MIN and MAX among them.
func (g *planGen) globalAggregate(t *rapid.T) plan.Node {
	rel := rapid.SampledFrom([]string{"r", "s"}).Draw(t, "rel")
	var in plan.Node = &plan.Scan{Relation: rel, Cols: g.tables[rel], AppendOnly: g.appendOnly[rel]}
	if rapid.IntRange(0, 3).Draw(t, "filtered") == 0 {
		in = g.filter(t, in)
	}
	cols := in.Columns()
	a := &plan.Aggregate{Input: in}
	nums := colsOf(cols, types.Int4, types.Int8, types.Numeric)
	for i, n := 0, rapid.IntRange(1, 4).Draw(t, "naggs"); i < n; i++ {
		c := plan.AggCall{Func: rapid.SampledFrom([]string{"min", "max", "min", "max", "count", "sum", "avg",
			"bool_and", "bool_or", "var_samp", "stddev_pop", "count distinct"}).Draw(t, "fn")}
		switch c.Func {
		case "min", "max":
			ordered := colsOf(cols, types.Int4, types.Int8, types.Numeric, types.Text)
			c.Arg = col(cols, rapid.SampledFrom(ordered).Draw(t, "arg"))
		case "count":
			if rapid.Bool().Draw(t, "star") {
				break
			}
			c.Arg = col(cols, rapid.IntRange(0, len(cols)-1).Draw(t, "arg"))
		case "count distinct":
			c.Func, c.Distinct = "count", true
			c.Arg = col(cols, rapid.IntRange(0, len(cols)-1).Draw(t, "arg"))
		case "bool_and", "bool_or":
			c.Arg = g.predicate(t, cols)
		default:
			c.Arg = col(cols, rapid.SampledFrom(nums).Draw(t, "arg"))
		}
		if rapid.IntRange(0, 3).Draw(t, "filter") == 0 {
			c.Filter = g.predicate(t, cols)
		}
		c.Type = types.Of(types.Int8)
		if c.Arg != nil {
			var err error
			if c.Type, err = types.AggregateType(c.Func, c.Arg.Type()); err != nil {
				t.Fatalf("%s(%s): %v", c.Func, c.Arg.Type(), err)
			}
		}
		a.Aggs = append(a.Aggs, c)
		a.Cols = append(a.Cols, plan.Column{Name: c.Func, Type: c.Type})
	}
	return a
}
