package ops

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestOrderedSetAgainstSorting checks percentile_cont, percentile_disc
// (one fraction and an array of them, ascending and descending), mode()
// and the hypothetical-set aggregates over random sequences of inserts and deletes in batches against
// the same results computed from the sorted multiset, so that the
// cursors that follow each fraction's position from step to step stay
// exact however the values move around them.
func TestOrderedSetAgainstSorting(t *testing.T) {
	f8 := types.Of(types.Float8)
	x := ref(0, types.Float8)
	fraction := func(p float64) plan.Expr { return &plan.Const{Val: types.MakeFloat8(p), Typ: f8} }
	fractions := func(ps ...float64) plan.Expr {
		vs := make([]types.Value, len(ps))
		for i, p := range ps {
			vs[i] = types.MakeFloat8(p)
		}
		return &plan.Const{Val: types.MakeArray(types.Float8, vs), Typ: types.ArrayType(f8)}
	}
	order := func(desc bool) []plan.SortKey { return []plan.SortKey{{Expr: x, Desc: desc, NullsFirst: desc}} }
	calls := []plan.AggCall{
		{Func: "percentile_cont", Arg: x, Order: order(false), Direct: []plan.Expr{fraction(0.5)}, Type: f8},
		{Func: "percentile_cont", Arg: x, Order: order(true), Direct: []plan.Expr{fraction(0.3)}, Type: f8},
		{Func: "percentile_disc", Arg: x, Order: order(false), Direct: []plan.Expr{fractions(0.9, 0, 0.25, 1)}, Type: types.ArrayType(f8)},
		{Func: "percentile_disc", Arg: x, Order: order(true), Direct: []plan.Expr{fraction(0.7)}, Type: f8},
		{Func: "mode", Arg: x, Order: order(false), Type: f8},
		{Func: "mode", Arg: x, Order: order(true), Type: f8},
		{Func: "rank", Arg: x, Order: order(false), Direct: []plan.Expr{fraction(3)}, Type: types.Of(types.Int8)},
		{Func: "dense_rank", Arg: x, Order: order(true), Direct: []plan.Expr{fraction(3)}, Type: types.Of(types.Int8)},
		{Func: "percent_rank", Arg: x, Order: order(true), Direct: []plan.Expr{fraction(20)}, Type: f8},
		{Func: "cume_dist", Arg: x, Order: order(false), Direct: []plan.Expr{fraction(4)}, Type: f8},
	}
	rapid.Check(t, func(rt *rapid.T) {
		a, err := NewAggregate(Prefix{Circuit: []byte("os/")}, nil, calls)
		if err != nil {
			rt.Fatal(err)
		}
		st := state.NewMemory()
		model := map[float64]int64{}
		span := rapid.SampledFrom([]int64{5, 40, 1000}).Draw(rt, "span")
		var cur zset.Row
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			var d zset.Batch
			for range rapid.IntRange(0, 12).Draw(rt, "batch") {
				v := float64(rapid.Int64Range(0, span).Draw(rt, "value"))
				w := int64(1)
				if model[v] > 0 && rapid.Bool().Draw(rt, "delete") {
					w = -1
				}
				model[v] += w
				d = append(d, zset.Entry{Row: zset.Row{types.MakeFloat8(v)}, Weight: w})
			}
			d, err := zset.Consolidate(d)
			if err != nil {
				rt.Fatal(err)
			}
			ov := state.NewOverlay(st)
			out, err := a.Step(context.Background(), ov, []zset.Batch{d})
			if err != nil {
				rt.Fatalf("step %d: %v", step, err)
			}
			if err := ov.Commit(); err != nil {
				rt.Fatal(err)
			}
			for _, e := range out {
				if e.Weight == 1 {
					cur = e.Row
				}
			}
			want := orderedSetReference(model, calls)
			if cur == nil || len(cur) != len(want) {
				rt.Fatalf("step %d: got %v, want %v", step, cur, want)
			}
			for i := range want {
				if types.Compare(cur[i], want[i]) != 0 || cur[i].IsNull() != want[i].IsNull() {
					rt.Fatalf("step %d: %s got %s, want %s (values %v)", step, calls[i].String(),
						types.Format(cur[i], calls[i].Type), types.Format(want[i], calls[i].Type), model)
				}
			}
		}
	})
}

// orderedSetReference computes the calls over the multiset model by
// sorting it, as PostgreSQL's final functions do.
func orderedSetReference(model map[float64]int64, calls []plan.AggCall) zset.Row {
	var asc []float64
	for v, c := range model {
		for range c {
			asc = append(asc, v)
		}
	}
	slices.Sort(asc)
	n := len(asc)
	row := make(zset.Row, len(calls))
	for i, c := range calls {
		vals := slices.Clone(asc)
		if c.Order[0].Desc {
			slices.Reverse(vals)
		}
		if c.Hypothetical() {
			h := c.Direct[0].(*plan.Const).Val.Float()
			before := func(v float64) bool { return v < h != c.Order[0].Desc && v != h }
			var lt, le, distinct int
			for j, v := range vals {
				if before(v) {
					lt++
					if j == 0 || vals[j-1] != v {
						distinct++
					}
				}
				if before(v) || v == h {
					le++
				}
			}
			switch c.Func {
			case "rank":
				row[i] = types.MakeInt(types.Int8, int64(lt+1))
			case "dense_rank":
				row[i] = types.MakeInt(types.Int8, int64(distinct+1))
			case "percent_rank":
				row[i] = types.MakeFloat8(0)
				if n > 0 {
					row[i] = types.MakeFloat8(float64(lt) / float64(n))
				}
			default:
				row[i] = types.MakeFloat8(float64(le+1) / float64(n+1))
			}
			continue
		}
		if n == 0 {
			row[i] = types.Null
			continue
		}
		at := func(p float64) types.Value {
			if c.Func == "percentile_disc" {
				r := int(math.Ceil(p * float64(n)))
				return types.MakeFloat8(vals[max(r, 1)-1])
			}
			x := p * float64(n-1)
			lo, hi := math.Floor(x), math.Ceil(x)
			l, h := vals[int(lo)], vals[int(hi)]
			if lo == hi {
				return types.MakeFloat8(l)
			}
			return types.MakeFloat8(l + float64((x-lo)*(h-l)))
		}
		switch {
		case c.Func == "mode":
			best, bestN := 0.0, 0
			for j := 0; j < n; {
				k := j
				for k < n && vals[k] == vals[j] {
					k++
				}
				if k-j > bestN {
					best, bestN = vals[j], k-j
				}
				j = k
			}
			row[i] = types.MakeFloat8(best)
		case c.Type.ID.IsArray():
			ps := c.Direct[0].(*plan.Const).Val.Elems()
			out := make([]types.Value, len(ps))
			for j, p := range ps {
				out[j] = at(p.Float())
			}
			row[i] = types.MakeArray(types.Float8, out)
		default:
			row[i] = at(c.Direct[0].(*plan.Const).Val.Float())
		}
	}
	return row
}

// BenchmarkOrderedSetSmallChanges measures a global percentile_cont(0.5), a
// mode() and a rank(n) WITHIN GROUP over a group of n values receiving
// steps of one insert and one delete each: with the fraction's cursor, the
// mode's index by count and the hypothetical row's cursor a step reads a
// few entries whatever n is.
func BenchmarkOrderedSetSmallChanges(b *testing.B) {
	f8 := types.Of(types.Float8)
	x := ref(0, types.Float8)
	half := []plan.Expr{&plan.Const{Val: types.MakeFloat8(0.5), Typ: f8}}
	for _, c := range []struct {
		name string
		call plan.AggCall
	}{
		{"median", plan.AggCall{Func: "percentile_cont", Arg: x, Order: []plan.SortKey{{Expr: x}}, Direct: half, Type: f8}},
		{"mode", plan.AggCall{Func: "mode", Arg: x, Order: []plan.SortKey{{Expr: x}}, Type: f8}},
		{"rank", plan.AggCall{Func: "rank", Arg: x, Order: []plan.SortKey{{Expr: x}}, Direct: half, Type: types.Of(types.Int8)}},
	} {
		for _, n := range []int{1_000, 100_000} {
			benchmarkSmallChanges(b, c.name, c.call, n)
		}
	}
}

func benchmarkSmallChanges(b *testing.B, name string, call plan.AggCall, n int) {
	b.Run(name+"/n="+strconv.Itoa(n), func(b *testing.B) {
		a, err := NewAggregate(Prefix{Circuit: []byte("os/")}, nil, []plan.AggCall{call})
		if err != nil {
			b.Fatal(err)
		}
		st := state.NewMemory()
		load := make(zset.Batch, n)
		for i := range load {
			load[i] = zset.Entry{Row: zset.Row{types.MakeFloat8(float64(i * 2))}, Weight: 1}
		}
		step := func(d zset.Batch) {
			d, err := zset.Consolidate(d)
			if err != nil {
				b.Fatal(err)
			}
			ov := state.NewOverlay(st)
			if _, err := a.Step(context.Background(), ov, []zset.Batch{d}); err != nil {
				b.Fatal(err)
			}
			if err := ov.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		step(load)
		rng := rand.New(rand.NewPCG(1, 2))
		b.ReportAllocs()
		for b.Loop() {
			// Insert an odd value and delete it again: the median moves
			// back and forth by half a position.
			v := types.MakeFloat8(float64(rng.IntN(n)*2 + 1))
			step(zset.Batch{{Row: zset.Row{v}, Weight: 1}})
			step(zset.Batch{{Row: zset.Row{v}, Weight: -1}})
		}
	})
}
