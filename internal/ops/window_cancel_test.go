package ops

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// gapTimer is a live context that records the longest time between two
// looks at it (or between the start and the first look).
type gapTimer struct {
	context.Context
	mu      sync.Mutex
	last    time.Time
	longest time.Duration
	looks   int
}

func (g *gapTimer) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	g.longest = max(g.longest, now.Sub(g.last))
	g.last = now
	g.looks++
	return g.Context.Err()
}

// bigWindow returns a window operator (row_number over one partition) and
// an input of n rows in random order for it.
func bigWindow(t *testing.T, n int) (*Window, zset.Batch) {
	x := ref(1, types.Int4)
	op, err := NewWindow(Prefix{Circuit: []byte("w/")}, nil, []plan.SortKey{{Expr: x}}, []plan.WindowFunc{
		{Func: "row_number", Type: types.Of(types.Int8)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	in := make(zset.Batch, n)
	for i := range in {
		in[i] = zset.Entry{Row: zset.Row{i4(int64(i)), i4(int64(r.IntN(n)))}, Weight: 1}
	}
	return op, in
}

// TestBigWindowStepStopsWhenCanceled: a window step over a partition of a
// million rows looks at its context throughout, sorting the delta and
// consolidating the output included, so that a cancel stops it promptly.
// The bound is generous, for a loaded machine: checkInterval units of
// work take well under a millisecond, but growing a slice of a million
// entries or a garbage collection can hold up the next look; a step that
// does not look while it sorts or consolidates goes over a second without
// a look.
func TestBigWindowStepStopsWhenCanceled(t *testing.T) {
	if testing.Short() {
		t.Skip("a million-row window step")
	}
	const n = 1 << 20

	op, in := bigWindow(t, n)
	began := time.Now()
	g := &gapTimer{Context: context.Background(), last: began}
	out, err := op.Step(g, state.NewMemory(), []zset.Batch{in})
	if err != nil {
		t.Fatal(err)
	}
	// The bound is relative to the whole step, so that a loaded machine,
	// which slows both alike, does not fail the test: a step that does
	// not look at its context while it sorts or consolidates spends about
	// half its time without a look.
	bound := max(500*time.Millisecond, time.Since(began)/4)
	if len(out) != n {
		t.Fatalf("%d output rows, want %d", len(out), n)
	}
	t.Logf("longest time between two looks at the context: %v (%d looks)", g.longest, g.looks)
	if g.longest > bound {
		t.Errorf("%v between two looks at the context (%d looks), want at most %v", g.longest, g.looks, bound)
	}

	// Canceled at several points of the step, it stops promptly with the
	// context's error.
	for _, after := range []time.Duration{50 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond} {
		op, in := bigWindow(t, n)
		ctx, cancel := context.WithCancel(context.Background())
		var canceled time.Time
		timer := time.AfterFunc(after, func() { canceled = time.Now(); cancel() })
		_, err := op.Step(ctx, state.NewMemory(), []zset.Batch{in})
		stopped := time.Now()
		timer.Stop()
		cancel()
		if err == nil {
			continue // the step finished first
		}
		if err != context.Canceled {
			t.Fatalf("canceled after %v: got %v, want context.Canceled itself", after, err)
		}
		if d := stopped.Sub(canceled); d > bound {
			t.Errorf("canceled after %v: stopped %v later, want at most %v", after, d, bound)
		}
	}
}

// TestSortKeyRefsInterruptibly: the run-and-merge sort orders refs as
// sortKeyRefs does (by key, ties in batch order), for lengths around the
// run length and across several merge passes, and stops at the first
// canceled look.
func TestSortKeyRefsInterruptibly(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var tmp []keyRef
	for _, n := range []int{0, 1, checkInterval - 1, checkInterval, checkInterval + 1, 5*checkInterval + 17} {
		var keys []byte
		refs := make([]keyRef, n)
		for i := range refs {
			off := len(keys)
			for range r.IntN(4) {
				keys = append(keys, byte('a'+r.IntN(3)))
			}
			refs[i] = keyRef{off: uint32(off), end: uint32(len(keys)), idx: int32(i)}
		}
		want := append([]keyRef(nil), refs...)
		sortKeyRefs(want, keys)
		var err error
		if tmp, err = sortKeyRefsInterruptibly(&work{ctx: context.Background()}, refs, tmp, keys); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(refs, want) && n > 0 {
			t.Fatalf("%d refs: sorted differently from sortKeyRefs", n)
		}
		if n < 2*checkInterval {
			continue
		}
		// Canceled while sorting the runs, then while merging them.
		for _, left := range []int{3, 7} {
			ctx := &countdown{Context: context.Background(), left: left}
			if _, err := sortKeyRefsInterruptibly(&work{ctx: ctx}, refs, tmp, keys); err != context.Canceled || ctx.looks != left+1 {
				t.Fatalf("%d refs, canceled at look %d: got %v after %d looks", n, left+1, err, ctx.looks)
			}
		}
	}
}
