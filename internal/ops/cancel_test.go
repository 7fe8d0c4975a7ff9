package ops

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// countdown is a context that reports itself canceled from its
// (left+1)-th look on, and counts the looks.
type countdown struct {
	context.Context
	left, looks int
}

func (c *countdown) Err() error {
	c.looks++
	if c.looks > c.left {
		return context.Canceled
	}
	return nil
}

// longSteps are operator steps with many units of work each.
func longSteps(t *testing.T) []struct {
	name  string
	op    func() Operator
	in    []zset.Batch
	units int // units of work, at least
} {
	const n = 5 * checkInterval
	rows := make(zset.Batch, n)
	for i := range rows {
		rows[i] = zset.Entry{Row: zset.Row{i4(int64(i)), i4(int64(i % 3))}, Weight: 1}
	}
	side := rows[:200]
	agg := func() Operator {
		a, err := NewAggregate(Prefix{Circuit: []byte("agg/")}, []plan.Expr{ref(0, types.Int4)}, []plan.AggCall{{Func: "count", Type: types.Of(types.Int8)}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	return []struct {
		name  string
		op    func() Operator
		in    []zset.Batch
		units int
	}{
		// A cross join: every pair of 200 × 200 rows.
		{"cross join", func() Operator { return NewJoin(Prefix{Circuit: []byte("j/")}, nil, nil, nil, nil, 2, 2) }, []zset.Batch{side, side}, 200 * 200},
		// An equi-join on a key with three values: 200 × 67 pairs a key.
		{"join", func() Operator {
			return NewJoin(Prefix{Circuit: []byte("j/")}, []plan.Expr{ref(1, types.Int4)}, []plan.Expr{ref(1, types.Int4)}, nil, nil, 2, 2)
		}, []zset.Batch{side, side}, 200 * 200 / 3},
		{"left join", func() Operator {
			return NewOuterJoin(Prefix{Circuit: []byte("o/")}, plan.LeftJoin, []plan.Expr{ref(1, types.Int4)}, []plan.Expr{ref(1, types.Int4)}, nil, nil, 2, 2, false)
		}, []zset.Batch{side, side}, 200 * 200 / 3},
		{"aggregate, one group a row", agg, []zset.Batch{rows}, n},
		{"filter", func() Operator {
			return &Filter{Pred: &plan.Const{Val: types.MakeBool(true), Typ: types.Of(types.Bool)}}
		}, []zset.Batch{rows}, n},
		{"distinct", func() Operator { return NewDistinct(Prefix{Circuit: []byte("d/")}) }, []zset.Batch{rows}, n},
	}
}

// TestLongStepsStopWhenCanceled: an operator's long loops look at the
// context every checkInterval units of work, stop at the first look that
// finds it canceled, and return its error unwrapped.
func TestLongStepsStopWhenCanceled(t *testing.T) {
	for _, c := range longSteps(t) {
		t.Run(c.name, func(t *testing.T) {
			ctx := &countdown{Context: context.Background(), left: 2}
			_, err := c.op().Step(ctx, state.NewMemory(), c.in)
			if err != context.Canceled {
				t.Fatalf("got %v, want context.Canceled itself", err)
			}
			if ctx.looks != 3 {
				t.Fatalf("%d looks at the context, want 3 (stopping at the first canceled one)", ctx.looks)
			}
		})
	}
}

// TestLiveContextChangesNothing: under a context that is never canceled,
// a step gives what it gives under context.Background, looking at the
// context about once per checkInterval units of work.
func TestLiveContextChangesNothing(t *testing.T) {
	for _, c := range longSteps(t) {
		t.Run(c.name, func(t *testing.T) {
			want, err := c.op().Step(context.Background(), state.NewMemory(), c.in)
			if err != nil {
				t.Fatal(err)
			}
			ctx := &countdown{Context: context.Background(), left: 1 << 30}
			got, err := c.op().Step(ctx, state.NewMemory(), c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal("the output differs under a live context")
			}
			if lo, hi := c.units/checkInterval, 4+2*c.units/checkInterval; ctx.looks < lo || ctx.looks > hi {
				t.Fatalf("%d looks at the context for %d units of work, want %d to %d", ctx.looks, c.units, lo, hi)
			}
		})
	}
}

func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		n    int
		want error
	}{{0, context.Canceled}, {1, nil}, {checkInterval - 1, nil}, {checkInterval, context.Canceled}, {3 * checkInterval, context.Canceled}} {
		if err := Interrupted(ctx, c.n); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Interrupted(canceled, %d) = %v, want %v", c.n, err, c.want)
		}
		if err := Interrupted(context.Background(), c.n); err != nil {
			t.Errorf("Interrupted(live, %d) = %v", c.n, err)
		}
	}
}
