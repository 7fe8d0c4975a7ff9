package ops

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

func i4(n int64) types.Value { return types.MakeInt(types.Int4, n) }

func ref(i int, id types.TypeID) *plan.ColRef { return &plan.ColRef{Index: i, Typ: types.Of(id)} }

func consolidate(t testing.TB, b zset.Batch) zset.Batch {
	t.Helper()
	c, err := zset.Consolidate(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNegateAndUnion(t *testing.T) {
	a := consolidate(t, zset.Batch{{Row: zset.Row{i4(1)}, Weight: 2}, {Row: zset.Row{i4(2)}, Weight: 1}})
	n, err := Negate{}.Step(context.Background(), nil, []zset.Batch{a})
	if err != nil {
		t.Fatal(err)
	}
	if n[0].Weight != -2 || n[1].Weight != -1 || a[0].Weight != 2 {
		t.Fatalf("Negate = %v (input %v)", n, a)
	}
	sum, err := Union{}.Step(context.Background(), nil, []zset.Batch{a, n})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum) != 0 {
		t.Fatalf("a + (−a) = %v, want empty", sum)
	}
	if _, err := (Negate{}).Step(context.Background(), nil, []zset.Batch{{{Row: zset.Row{i4(1)}, Weight: math.MinInt64}}}); errs.SQLState(err) != "22003" {
		t.Fatalf("negating MinInt64: %v", err)
	}
}

func TestMap(t *testing.T) {
	in := consolidate(t, zset.Batch{{Row: zset.Row{i4(1)}, Weight: 1}, {Row: zset.Row{i4(-1)}, Weight: 2}})
	abs := &Map{Fn: func(r zset.Row) (zset.Row, error) {
		if r[0].Int() < 0 {
			return zset.Row{i4(-r[0].Int())}, nil
		}
		return r, nil
	}}
	out, err := abs.Step(context.Background(), nil, []zset.Batch{in})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Weight != 3 || out[0].Row[0].Int() != 1 {
		t.Fatalf("Map = %v", out)
	}
	boom := errors.New("boom")
	if _, err := (&Map{Fn: func(zset.Row) (zset.Row, error) { return nil, boom }}).Step(context.Background(), nil, []zset.Batch{in}); err != boom {
		t.Fatalf("Map error = %v", err)
	}
}

// TestAggregateRejectsNegativeGroups checks that deleting rows that were
// never inserted is reported rather than maintained into nonsense.
func TestAggregateRejectsNegativeGroups(t *testing.T) {
	a, err := NewAggregate(Prefix{Circuit: []byte("p")}, []plan.Expr{ref(0, types.Int4)}, []plan.AggCall{{Func: "count", Type: types.Of(types.Int8)}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Step(context.Background(), state.NewMemory(), []zset.Batch{{{Row: zset.Row{i4(1)}, Weight: -1}}})
	if errs.SQLState(err) != "XX000" {
		t.Fatalf("negative group count: %v", err)
	}
}

// TestOperatorsStayUnderPrefix checks that operators write only under
// their prefix, in the bucket of their key: Circuit | bucket | Op.
func TestOperatorsStayUnderPrefix(t *testing.T) {
	st := state.NewMemory()
	prefix := Prefix{Circuit: []byte("op"), Op: []byte{0, 0, 0, 7}}
	// The join key and the distinct row are both (1).
	b := byte(zset.Bucket(zset.EncodeKey(nil, i4(1))))
	want := append(append([]byte("op"), b), 0, 0, 0, 7)
	j := NewJoin(prefix, []plan.Expr{ref(0, types.Int4)}, []plan.Expr{ref(0, types.Int4)}, nil, nil, 1, 1)
	d := NewDistinct(prefix)
	in := zset.Batch{{Row: zset.Row{i4(1)}, Weight: 1}}
	if _, err := j.Step(context.Background(), st, []zset.Batch{in, in}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Step(context.Background(), st, []zset.Batch{in}); err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = st.Scan(nil, nil, func(k, _ []byte) bool {
		n++
		if len(k) < len(want) || string(k[:len(want)]) != string(want) {
			t.Errorf("key %q outside prefix %q", k, want)
		}
		return true
	})
	if n != 3 {
		t.Fatalf("%d keys written, want 3 (two arrangements, one distinct count)", n)
	}
}

// BenchmarkAggregateGroupedSum measures a grouped SUM receiving 100k rows
// of inserts in batches of 1k rows, over 1k groups: the view
//
//	SELECT store, sum(amount), count(*) FROM orders GROUP BY store
//
// Each batch runs in an overlay committed to the in-memory store, as the
// runtime runs an epoch.
func BenchmarkAggregateGroupedSum(b *testing.B) {
	benchAggregateGroupedSum(b, 100_000, 1_000, 1_000)
}

// BenchmarkAggregateOneLargeBatch is the same view receiving 1M rows over
// 10k groups in one batch, as a bulk COPY delivers them: what it measures
// is mostly the evaluation and ordering of a batch far larger than the
// CPU's caches.
func BenchmarkAggregateOneLargeBatch(b *testing.B) {
	benchAggregateGroupedSum(b, 1_000_000, 1_000_000, 10_000)
}

func benchAggregateGroupedSum(b *testing.B, rows, batch, groups int) {
	rng := rand.New(rand.NewPCG(1, 2))
	var batches []zset.Batch
	for i := 0; i < rows; i += batch {
		d := make(zset.Batch, batch)
		for j := range d {
			d[j] = zset.Entry{Row: zset.Row{i4(int64(i + j)), i4(rng.Int64N(int64(groups))), i4(rng.Int64N(10_000))}, Weight: 1}
		}
		batches = append(batches, consolidate(b, d))
	}
	b.ReportAllocs()
	for b.Loop() {
		a, err := NewAggregate(Prefix{Circuit: []byte("agg/")}, []plan.Expr{ref(1, types.Int4)}, []plan.AggCall{
			{Func: "sum", Arg: ref(2, types.Int4), Type: types.Of(types.Int8)},
			{Func: "count", Type: types.Of(types.Int8)},
		})
		if err != nil {
			b.Fatal(err)
		}
		st := state.NewMemory()
		for _, d := range batches {
			ov := state.NewOverlay(st)
			if _, err := a.Step(context.Background(), ov, []zset.Batch{d}); err != nil {
				b.Fatal(err)
			}
			if err := ov.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}

// BenchmarkJoinDelta measures a two-way equi-join whose sides hold 10k
// keys each, receiving 1k-row deltas on one side: every delta row probes
// the other side's arrangement (one prefix scan) and finds one match.
// Iterations alternately insert and delete the delta, so state stays the
// same size.
func BenchmarkJoinDelta(b *testing.B) {
	j := NewJoin(Prefix{Circuit: []byte("join/")}, []plan.Expr{ref(0, types.Int4)}, []plan.Expr{ref(0, types.Int4)}, nil, nil, 2, 2)
	benchJoinDeltas(b, j, 0, func(out, d zset.Batch) error {
		if len(out) != len(d) {
			return fmt.Errorf("%d output rows, want %d", len(out), len(d))
		}
		return nil
	})
}
