package zset

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rockstream/rockstream/internal/types"
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

// cancelBatch is a batch of n entries in random order, a third of them
// duplicates of others, with text keys long enough that the sort recurses.
func cancelBatch(n int) Batch {
	r := rand.New(rand.NewPCG(3, 4))
	b := make(Batch, n)
	for i := range b {
		k := int64(r.IntN(2 * n / 3))
		b[i] = Entry{Row: Row{types.MakeText("a long common prefix to sort past"), types.MakeInt(types.Int8, k)}, Weight: 1}
	}
	return b
}

// TestConsolidateContextStops: a canceled context stops a consolidation
// at whatever stage the cancel finds it (encoding, sorting, summing,
// moving rows), with the context's error itself, leaving the batch as it
// was; the looks at the context are about checkInterval units apart.
func TestConsolidateContextStops(t *testing.T) {
	const n = 40 * checkInterval
	live := &countdown{Context: context.Background(), left: 1 << 30}
	b := cancelBatch(n)
	want, err := Consolidate(append(Batch(nil), b...))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ConsolidateContext(live, append(Batch(nil), b...))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the result differs under a live context")
	}
	// Encoding, sorting (at least two levels), summing and moving rows are
	// each at least n/3 units of work.
	if lo, hi := 2*n/checkInterval, 8*n/checkInterval; live.looks < lo || live.looks > hi {
		t.Fatalf("%d looks at a live context for %d entries, want %d to %d", live.looks, n, lo, hi)
	}
	var c Consolidator
	for left := 0; left < live.looks; left += max(1, live.looks/9) {
		ctx := &countdown{Context: context.Background(), left: left}
		in := append(Batch(nil), b...)
		out, err := c.ConsolidateContext(ctx, in)
		if err != context.Canceled {
			t.Fatalf("canceled at look %d: got %v, want context.Canceled itself", left+1, err)
		}
		if ctx.looks != left+1 {
			t.Fatalf("canceled at look %d: %d looks, want it to stop at the first canceled one", left+1, ctx.looks)
		}
		if !reflect.DeepEqual(in, b) || len(out) != len(b) {
			t.Fatalf("canceled at look %d: the batch changed", left+1)
		}
	}
	// The consolidator still works after being interrupted.
	got, err = c.Consolidate(append(Batch(nil), b...))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after interrupted runs: %v", err)
	}
}
