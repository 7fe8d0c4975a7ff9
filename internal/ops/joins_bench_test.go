package ops

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// benchJoinDeltas measures a two-input operator whose inputs hold 10k
// keys, one row each, receiving 1k-row deltas on input side (0 left, 1
// right), each row matching one row of the other input. Iterations
// alternately insert and delete the delta, so state stays the same size.
// check, when not nil, checks each step's output against its delta.
func benchJoinDeltas(b *testing.B, op Operator, side int, check func(out, delta zset.Batch) error) {
	const keys, batch = 10_000, 1_000
	rng := rand.New(rand.NewPCG(3, 4))
	st := state.NewMemory()
	left, right := make(zset.Batch, keys), make(zset.Batch, keys)
	for k := range keys {
		left[k] = zset.Entry{Row: zset.Row{i4(int64(k)), i4(int64(k))}, Weight: 1}
		right[k] = zset.Entry{Row: zset.Row{i4(int64(k)), i4(int64(-k))}, Weight: 1}
	}
	if _, err := op.Step(context.Background(), st, []zset.Batch{consolidate(b, left), consolidate(b, right)}); err != nil {
		b.Fatal(err)
	}
	ins := make(zset.Batch, batch)
	for i := range ins {
		ins[i] = zset.Entry{Row: zset.Row{i4(rng.Int64N(keys)), i4(int64(keys + i))}, Weight: 1}
	}
	ins = consolidate(b, ins)
	del := make(zset.Batch, len(ins))
	for i, e := range ins {
		del[i] = zset.Entry{Row: e.Row, Weight: -1}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d := ins
		if i%2 == 1 {
			d = del
		}
		in := []zset.Batch{d, nil}
		if side == 1 {
			in = []zset.Batch{nil, d}
		}
		ov := state.NewOverlay(st)
		out, err := op.Step(context.Background(), ov, in)
		if err != nil {
			b.Fatal(err)
		}
		if check != nil {
			if err := check(out, d); err != nil {
				b.Fatal(err)
			}
		}
		if err := ov.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/row")
}

var benchKey = []plan.Expr{&plan.ColRef{Index: 0, Typ: types.Of(types.Int4)}}

// BenchmarkOuterJoinDelta is BenchmarkJoinDelta for a LEFT join, with the
// deltas on the preserved side (each row finds its match and stores its
// count) and on the other (each row updates a preserved row's count).
func BenchmarkOuterJoinDelta(b *testing.B) {
	for _, side := range []struct {
		name string
		side int
	}{{"preserved", 0}, {"other", 1}} {
		b.Run(side.name, func(b *testing.B) {
			benchJoinDeltas(b, NewOuterJoin(Prefix{Circuit: []byte("oj/")}, plan.LeftJoin, benchKey, benchKey, nil, nil, 2, 2, false), side.side, nil)
		})
	}
}

// BenchmarkSemiJoinDelta measures an EXISTS semi-join (keyed: the right
// input kept as counts per key) and a NOT EXISTS with a residual (row
// mode), with deltas on either side.
func BenchmarkSemiJoinDelta(b *testing.B) {
	residual := &plan.BinOp{Op: mustResolve(b, "<>", types.Int4), Left: &plan.ColRef{Index: 1, Typ: types.Of(types.Int4)},
		Right: &plan.ColRef{Index: 3, Typ: types.Of(types.Int4)}}
	for _, c := range []struct {
		name     string
		kind     plan.JoinKind
		residual plan.Expr
		side     int
	}{
		{"exists/left", plan.SemiJoin, nil, 0},
		{"exists/right", plan.SemiJoin, nil, 1},
		{"not-exists-residual/left", plan.AntiJoin, residual, 0},
		{"not-exists-residual/right", plan.AntiJoin, residual, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchJoinDeltas(b, NewSemiJoin(Prefix{Circuit: []byte("sj/")}, c.kind, benchKey, benchKey, nil, c.residual, nil, 2, 2), c.side, nil)
		})
	}
}

func mustResolve(b *testing.B, op string, t types.TypeID) *types.Operator {
	o, err := types.ResolveBinary(op, types.Of(t), types.Of(t))
	if err != nil {
		b.Fatal(err)
	}
	return o
}
