package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// countingStore counts the entries Scan visits.
type countingStore struct {
	state.Store
	visited int
}

func (c *countingStore) Scan(lo, hi []byte, fn func(k, v []byte) bool) error {
	return c.Store.Scan(lo, hi, func(k, v []byte) bool {
		c.visited++
		return fn(k, v)
	})
}

// topKFixture is a TopK over rows (g, x) keeping the first k per
// partition by x, with n rows in partition 0 and one row in partition 1.
func topKFixture(t testing.TB, n, k int64) (*TopK, *countingStore) {
	st := &countingStore{Store: state.NewMemory()}
	op := NewTopK(Prefix{Circuit: []byte("t/")}, []plan.Expr{ref(0, types.Int4)},
		[]plan.SortKey{{Expr: ref(1, types.Int4)}}, k, 0, false)
	var in zset.Batch
	for i := int64(0); i < n; i++ {
		in = append(in, zset.Entry{Row: zset.Row{i4(0), i4(i * 10)}, Weight: 1})
	}
	in = append(in, zset.Entry{Row: zset.Row{i4(1), i4(0)}, Weight: 1})
	if _, err := op.Step(context.Background(), st, []zset.Batch{consolidate(t, in)}); err != nil {
		t.Fatal(err)
	}
	return op, st
}

// TestTopKScanIsBounded checks that a change reads a bounded prefix of its
// partition, never the whole partition, and no other partition.
func TestTopKScanIsBounded(t *testing.T) {
	const n, k = 10000, 3
	op, st := topKFixture(t, n, k)
	for _, c := range []struct {
		name  string
		delta zset.Batch
		want  zset.Batch
		max   int
	}{
		{"insert after the window", zset.Batch{{Row: zset.Row{i4(0), i4(55)}, Weight: 1}}, nil, k + 1},
		{"insert into the window", zset.Batch{{Row: zset.Row{i4(0), i4(5)}, Weight: 1}},
			zset.Batch{{Row: zset.Row{i4(0), i4(5)}, Weight: 1}, {Row: zset.Row{i4(0), i4(20)}, Weight: -1}}, k + 1},
		{"delete from the window pulls the next row in", zset.Batch{{Row: zset.Row{i4(0), i4(0)}, Weight: -1}},
			zset.Batch{{Row: zset.Row{i4(0), i4(0)}, Weight: -1}, {Row: zset.Row{i4(0), i4(20)}, Weight: 1}}, k + 2},
	} {
		st.visited = 0
		out, err := op.Step(context.Background(), st, []zset.Batch{consolidate(t, c.delta)})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := render(out), render(consolidate(t, c.want)); got != want {
			t.Errorf("%s: output %s, want %s", c.name, got, want)
		}
		if st.visited > c.max {
			t.Errorf("%s: the scan visited %d entries of a partition of %d, want at most %d", c.name, st.visited, n, c.max)
		}
	}
}

func render(b zset.Batch) string {
	s := ""
	for _, e := range b {
		s += fmt.Sprintf(" %v×%d", e.Row, e.Weight)
	}
	return s
}

// BenchmarkTopKStep measures one single-row change to a partition of
// 100,000 rows: the cost follows k, not the partition.
func BenchmarkTopKStep(b *testing.B) {
	op, st := topKFixture(b, 100000, 10)
	ins := zset.Batch{{Row: zset.Row{i4(0), i4(1)}, Weight: 1}}
	del := zset.Batch{{Row: zset.Row{i4(0), i4(1)}, Weight: -1}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := ins
		if i%2 == 1 {
			d = del
		}
		if _, err := op.Step(context.Background(), st, []zset.Batch{d}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWindowStep measures one single-row change to one partition of
// 1,000 rows among 100 (running sum and rank): the cost follows the
// partition, not the input.
func BenchmarkWindowStep(b *testing.B) {
	st := state.NewMemory()
	x := ref(1, types.Int4)
	op, err := NewWindow(Prefix{Circuit: []byte("w/")}, []plan.Expr{ref(0, types.Int4)}, []plan.SortKey{{Expr: x}}, []plan.WindowFunc{
		{Func: "rank", Type: types.Of(types.Int8)},
		{Func: "sum", Args: []plan.Expr{x}, Frame: plan.DefaultFrame, Type: types.Of(types.Int8)},
	})
	if err != nil {
		b.Fatal(err)
	}
	var in zset.Batch
	for g := int64(0); g < 100; g++ {
		for i := int64(0); i < 1000; i++ {
			in = append(in, zset.Entry{Row: zset.Row{i4(g), i4(i * 2)}, Weight: 1})
		}
	}
	if _, err := op.Step(context.Background(), st, []zset.Batch{consolidate(b, in)}); err != nil {
		b.Fatal(err)
	}
	ins := zset.Batch{{Row: zset.Row{i4(7), i4(501)}, Weight: 1}}
	del := zset.Batch{{Row: zset.Row{i4(7), i4(501)}, Weight: -1}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := ins
		if i%2 == 1 {
			d = del
		}
		if _, err := op.Step(context.Background(), st, []zset.Batch{d}); err != nil {
			b.Fatal(err)
		}
	}
}
