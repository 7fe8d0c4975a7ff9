package diff

import (
	"context"
	"testing"

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
