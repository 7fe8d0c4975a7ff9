package diff

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// routedCircuit builds plan text over t (k int8, g int8, v int8).
func routedCircuit(t *testing.T, text string) *Circuit { return routedCircuitB(t, text) }

func routedCircuitB(t testing.TB, text string) *Circuit {
	t.Helper()
	return buildText(t, map[string][]plan.Column{"t": {
		{Name: "k", Type: types.Of(types.Int8)}, {Name: "g", Type: types.Of(types.Int8)}, {Name: "v", Type: types.Of(types.Int8)},
	}}, text)
}

func routedRows(n int) zset.Batch {
	var b zset.Batch
	for i := range n {
		b = append(b, zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, int64(i)), types.MakeInt(types.Int8, int64(i%7)), types.MakeInt(types.Int8, int64(i%100))}, Weight: 1})
	}
	return b
}

// TestRoutedExchangeMovesNothing checks that an exchange keyed like the
// routing of its input, through a filter and a projection that keeps the
// key, moves no row between workers, while the same step over
// contiguous parts moves rows; and that both write what one worker
// writes.
func TestRoutedExchangeMovesNothing(t *testing.T) {
	const text = "aggregate group=(k) aggs=(count(*), sum(v))\n  project v, k\n    filter v > 3\n      scan t\n"
	rows := routedRows(2000)
	deltas := map[string]zset.Batch{"t": rows}
	serial := state.NewOverlay(state.NewMemory())
	want, err := routedCircuit(t, text).Step(context.Background(), serial, deltas)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 3, 8} {
		routed := map[string]Routed{"t": {Key: []int{0}, Parts: splitByKey(rows, []int{0}, n)}}
		ov := state.NewOverlay(state.NewMemory())
		c := routedCircuit(t, text)
		got, h, err := c.stepRouted(context.Background(), ov, deltas, routed, Parallelism{Workers: n})
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			t.Fatalf("%d workers: the routed parts were not used", n)
		}
		if m := h.moved.Load(); m != 0 {
			t.Errorf("%d workers: the exchange keyed like the routing moved %d rows", n, m)
		}
		if batchText(got) != batchText(want) || writesText(t, ov) != writesText(t, serial) {
			t.Errorf("%d workers: the routed step differs from the serial one", n)
		}

		// The same step over contiguous parts exchanges rows.
		ov = state.NewOverlay(state.NewMemory())
		parts := make([]map[string]zset.Batch, n)
		for i := range parts {
			parts[i] = map[string]zset.Batch{"t": rows[len(rows)*i/n : len(rows)*(i+1)/n]}
		}
		c = routedCircuit(t, text)
		if err := c.instances(n); err != nil {
			t.Fatal(err)
		}
		_, h, err = c.stepParts(context.Background(), ov, parts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if h.moved.Load() == 0 {
			t.Errorf("%d workers: contiguous parts moved no row", n)
		}
	}
}

// TestRoutedNotInPlace checks that a circuit whose first exchange is not
// keyed like the routing (or that has none) does not use the routed
// parts, whose rows it would reorder, and still steps as one worker does.
func TestRoutedNotInPlace(t *testing.T) {
	rows := routedRows(500)
	deltas := map[string]zset.Batch{"t": rows}
	for _, text := range []string{
		"aggregate group=(g) aggs=(count(*), min(v))\n  scan t\n",
		"project k, v\n  scan t\n",
		"aggregate group=(k) aggs=(count(*))\n  project v AS k\n    scan t\n",
	} {
		serial := state.NewOverlay(state.NewMemory())
		want, err := routedCircuit(t, text).Step(context.Background(), serial, deltas)
		if err != nil {
			t.Fatal(err)
		}
		routed := map[string]Routed{"t": {Key: []int{0}, Parts: splitByKey(rows, []int{0}, 3)}}
		ov := state.NewOverlay(state.NewMemory())
		got, h, err := routedCircuit(t, text).stepRouted(context.Background(), ov, deltas, routed, Parallelism{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		if h != nil {
			t.Errorf("%q: used the routed parts", text)
		}
		if batchText(got) != batchText(want) || writesText(t, ov) != writesText(t, serial) {
			t.Errorf("%q: the step differs from the serial one", text)
		}
	}
}

// TestKeyedOutputStaysInPlace checks that an exchange keyed like the
// keyed node before it (a join's key, a group key, a DISTINCT's row) is
// skipped: those rows are on their owners already. The step equals the
// serial one.
func TestKeyedOutputStaysInPlace(t *testing.T) {
	pp := planParser{tables: map[string][]plan.Column{
		"t": {{Name: "k", Type: types.Of(types.Int8)}, {Name: "g", Type: types.Of(types.Int8)}, {Name: "v", Type: types.Of(types.Int8)}},
		"u": {{Name: "j", Type: types.Of(types.Int8)}, {Name: "w", Type: types.Of(types.Int8)}},
	}}
	rows := routedRows(1000)
	var urows zset.Batch
	for i := range 300 {
		urows = append(urows, zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, int64(i*3)), types.MakeInt(types.Int8, int64(i%5))}, Weight: 1})
	}
	deltas := map[string]zset.Batch{"t": rows, "u": urows}
	for _, tc := range []struct {
		text string
		// exchanges is how many inputs each worker splits.
		exchanges int
	}{
		{"aggregate group=(k) aggs=(count(*), sum(w))\n  join on (k = j)\n    scan t\n    scan u\n", 2},
		{"aggregate group=(g) aggs=(count(*))\n  aggregate group=(g) aggs=(sum(v))\n    scan t\n", 1},
		{"distinct\n  distinct\n    scan t\n", 1},
		{"aggregate group=(k) aggs=(count(*))\n  join semi on (k = j)\n    scan t\n    scan u\n", 2},
		{"aggregate group=(g) aggs=(count(*))\n  topk partition=(g) order=(v) limit=3\n    scan t\n", 1},
		// Keyed otherwise: exchanged again.
		{"aggregate group=(w) aggs=(count(*))\n  join on (k = j)\n    scan t\n    scan u\n", 3},
	} {
		p, err := pp.parse(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		build := func() *Circuit {
			c, err := Build(p, []byte("v/"), false)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		serial := state.NewOverlay(state.NewMemory())
		want, err := build().Step(context.Background(), serial, deltas)
		if err != nil {
			t.Fatal(err)
		}
		const n = 3
		c := build()
		if err := c.instances(n); err != nil {
			t.Fatal(err)
		}
		parts := make([]map[string]zset.Batch, n)
		for i := range parts {
			parts[i] = map[string]zset.Batch{}
			for rel, d := range deltas {
				d, err := consolidated(d)
				if err != nil {
					t.Fatal(err)
				}
				parts[i][rel] = d[len(d)*i/n : len(d)*(i+1)/n]
			}
		}
		ov := state.NewOverlay(state.NewMemory())
		got, h, err := c.stepParts(context.Background(), ov, parts, c.placedByKey())
		if err != nil {
			t.Fatal(err)
		}
		if e := h.partitioned.Load(); e != int64(tc.exchanges*n) {
			t.Errorf("%q: the workers split %d inputs, want %d", tc.text, e, tc.exchanges*n)
		}
		if batchText(got) != batchText(want) || writesText(t, ov) != writesText(t, serial) {
			t.Errorf("%q: the step differs from the serial one", tc.text)
		}
	}
}
