package diff

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
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

// live is a context that could be canceled and never is: the property
// tests step their circuits under it, so that every look at it runs and
// must find nothing.
var live, _ = context.WithCancel(context.Background())

// TestRecursionLooksEveryIteration: reachability along a path of n
// edges iterates n times, looking at the context at least once an
// iteration; canceled, it stops at the next look and the step fails with
// the context's error.
func TestRecursionLooksEveryIteration(t *testing.T) {
	const n = 300
	var path zset.Batch
	for i := int64(0); i < n; i++ {
		path = append(path, edge(i, i+1))
	}
	for _, distinct := range []bool{false, true} {
		c, err := Build(reachPlan(distinct), []byte("c/"), false)
		if err != nil {
			t.Fatal(err)
		}
		ctx := &countdown{Context: context.Background(), left: 1 << 30}
		out, err := c.Step(ctx, state.NewMemory(), map[string]zset.Batch{"edges": path})
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != n+1 {
			t.Fatalf("distinct=%v: %d rows reached, want %d", distinct, len(out), n+1)
		}
		if ctx.looks < n {
			t.Fatalf("distinct=%v: %d looks at the context over %d iterations", distinct, ctx.looks, n)
		}
		stop := &countdown{Context: context.Background(), left: ctx.looks / 2}
		if _, err := c.Step(stop, state.NewMemory(), map[string]zset.Batch{"edges": path}); err != context.Canceled {
			t.Fatalf("distinct=%v, canceled halfway: %v, want context.Canceled", distinct, err)
		}
		if stop.looks != ctx.looks/2+1 {
			t.Fatalf("distinct=%v: %d looks after the cancel, want it to stop at the first", distinct, stop.looks-ctx.looks/2)
		}
	}
}

// sharedCountdown is a countdown the workers of a step may look at
// together.
type sharedCountdown struct {
	context.Context
	left  int64
	looks atomic.Int64
}

func (c *sharedCountdown) Err() error {
	if c.looks.Add(1) > c.left {
		return context.Canceled
	}
	return nil
}

// TestRecursionOnWorkersStops: on 3 workers, a recursive query iterating
// along a path of 300 edges stops at a cancel with the context's error,
// and one going deeper than its iteration limit fails with 54000 as it
// does on one worker.
func TestRecursionOnWorkersStops(t *testing.T) {
	const n = 300
	var path zset.Batch
	for i := int64(0); i < n; i++ {
		path = append(path, edge(i, i+1))
	}
	deltas := map[string]zset.Batch{"edges": path}
	three := Parallelism{Workers: 3}
	for _, distinct := range []bool{false, true} {
		c, err := Build(reachPlan(distinct), []byte("c/"), false)
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.StepParallel(context.Background(), state.NewMemory(), deltas, three)
		if err != nil || len(out) != n+1 {
			t.Fatalf("distinct=%v: %d rows reached (%v), want %d", distinct, len(out), err, n+1)
		}
		stop := &sharedCountdown{Context: context.Background(), left: n}
		if _, err := c.StepParallel(stop, state.NewMemory(), deltas, three); err != context.Canceled {
			t.Fatalf("distinct=%v, canceled: %v, want context.Canceled", distinct, err)
		}

		p := reachPlan(distinct)
		p.(*plan.Recursive).MaxIterations = n / 2
		c, err = Build(p, []byte("c/"), false)
		if err != nil {
			t.Fatal(err)
		}
		_, serr := c.Step(context.Background(), state.NewMemory(), deltas)
		_, perr := c.StepParallel(context.Background(), state.NewMemory(), deltas, three)
		if errs.SQLState(serr) != "54000" || errs.SQLState(perr) != "54000" {
			t.Fatalf("distinct=%v, limited to %d iterations: %v on one worker, %v on three, want 54000", distinct, n/2, serr, perr)
		}
	}
}
