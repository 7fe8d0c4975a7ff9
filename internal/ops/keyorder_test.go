package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestKeyGrouperOrdersLikeSort checks that keyGrouper.order gives exactly
// the order of the stable comparison sort, over batches with few keys
// (the counting sort), mostly distinct keys (the fallback), keys that are
// prefixes of one another and empty keys, reusing one grouper throughout.
func TestKeyGrouperOrdersLikeSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var g, colliding keyGrouper
	colliding.hash = func(k []byte) uint64 { return uint64(len(k)) }
	for round := 0; round < 200; round++ {
		n := rng.IntN(3000)
		distinct := 1 + rng.IntN(1+rng.IntN(n+1))
		var keys []byte
		refs := make([]keyRef, n)
		for i := range refs {
			k := rng.IntN(distinct)
			off := len(keys)
			// Lengths vary with the key, so that some keys are prefixes
			// of others ("", "\x00", "\x00\x01", ...).
			for b := 0; b < k%5; b++ {
				keys = append(keys, byte(k>>(8*b)))
			}
			refs[i] = keyRef{off: uint32(off), end: uint32(len(keys)), idx: int32(i)}
		}
		want := slices.Clone(refs)
		sortKeyRefs(want, keys)
		got := slices.Clone(refs)
		g.order(got, keys)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d (%d refs, %d keys): order differs from the stable sort", round, n, distinct)
		}
		// Keys of one length share a hash: the fallback must see it.
		got = slices.Clone(refs)
		colliding.order(got, keys)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d (%d refs, %d keys), colliding hashes: order differs from the stable sort", round, n, distinct)
		}
	}
}

// TestAggregateGroupsLargeBatch steps a grouped SUM/COUNT over batches
// large enough for the hashed grouping, with rows of one group spread over
// the batch, retractions among them, and checks every group against a
// direct count.
func TestAggregateGroupsLargeBatch(t *testing.T) {
	for _, groups := range []int{7, 1000, 5000} {
		t.Run(fmt.Sprint(groups), func(t *testing.T) {
			ctx := context.Background()
			agg, err := NewAggregate(Prefix{Circuit: []byte("c")}, []plan.Expr{ref(0, types.Int4)}, []plan.AggCall{
				{Func: "sum", Arg: ref(1, types.Int4), Type: types.Of(types.Int8)},
				{Func: "count", Type: types.Of(types.Int8)},
			})
			if err != nil {
				t.Fatal(err)
			}
			st := state.NewMemory()
			rng := rand.New(rand.NewPCG(uint64(groups), 3))
			type acc struct{ sum, n int64 }
			want := map[int64]acc{}
			var live [][2]int64
			view := map[string]int64{}
			for step := 0; step < 4; step++ {
				var b zset.Batch
				for i := 0; i < 6000; i++ {
					if len(live) > 0 && rng.IntN(4) == 0 {
						j := rng.IntN(len(live))
						r := live[j]
						live[j] = live[len(live)-1]
						live = live[:len(live)-1]
						b = append(b, zset.Entry{Row: zset.Row{i4(r[0]), i4(r[1])}, Weight: -1})
						a := want[r[0]]
						want[r[0]] = acc{a.sum - r[1], a.n - 1}
						continue
					}
					r := [2]int64{int64(rng.IntN(groups)), int64(rng.IntN(1000))}
					live = append(live, r)
					b = append(b, zset.Entry{Row: zset.Row{i4(r[0]), i4(r[1])}, Weight: 1})
					a := want[r[0]]
					want[r[0]] = acc{a.sum + r[1], a.n + 1}
				}
				out, err := agg.Step(ctx, st, []zset.Batch{b})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range out {
					view[fmt.Sprint(e.Row[0].Int(), e.Row[1].Int(), e.Row[2].Int())] += e.Weight
				}
			}
			wantView := map[string]int64{}
			for g, a := range want {
				if a.n != 0 {
					wantView[fmt.Sprint(g, a.sum, a.n)] = 1
				}
			}
			for k, w := range view {
				if w == 0 {
					delete(view, k)
				}
			}
			if len(view) != len(wantView) {
				t.Fatalf("the view has %d rows, want %d", len(view), len(wantView))
			}
			for k, w := range wantView {
				if view[k] != w {
					t.Fatalf("row %s has weight %d, want %d", k, view[k], w)
				}
			}
		})
	}
}
