package runtime

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortStable: sortStable orders as the library's stable sort does,
// equal elements in their order, at every size around its run length and
// merge widths.
func TestSortStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 31, 32, 33, 63, 64, 65, 100, 1000, 5000, 70000} {
		keys := make([]int, n)
		for i := range keys {
			keys[i] = rng.IntN(n/3 + 1)
		}
		cmp := func(a, b int) int { return keys[a] - keys[b] }
		got, want := make([]int, n), make([]int, n)
		for i := range got {
			got[i], want[i] = i, i
		}
		if err := sortStable(context.Background(), got, cmp); err != nil {
			t.Fatal(err)
		}
		slices.SortStableFunc(want, cmp)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: sortStable differs from a stable sort", n)
		}
	}
}

// TestSortStableStops: a sort under a context that ends stops with the
// context's error.
func TestSortStableStops(t *testing.T) {
	const n = 1 << 16
	idx := make([]int, n)
	for i := range idx {
		idx[i] = n - i
	}
	ctx, cancel := context.WithCancel(context.Background())
	looks := 0
	err := sortStable(ctx, idx, func(a, b int) int {
		if looks++; looks == 100000 {
			cancel()
		}
		return a - b
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if looks >= n*16 {
		t.Errorf("the sort went on for %d comparisons after it was canceled", looks-100000)
	}
}

// TestTopIndexes: the top-N selection keeps the indexes of the first n
// elements of a stable sort, ties included.
func TestTopIndexes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, count := range []int{0, 1, 2, 10, 100, 1000} {
		keys := make([]int, count)
		for i := range keys {
			keys[i] = rng.IntN(count/4 + 1)
		}
		cmp := func(a, b int) int { return keys[a] - keys[b] }
		sorted := make([]int, count)
		for i := range sorted {
			sorted[i] = i
		}
		slices.SortStableFunc(sorted, cmp)
		for _, n := range []int{0, 1, 2, 3, count / 2, count - 1} {
			if n < 0 || n > count {
				continue
			}
			got, err := topIndexes(context.Background(), count, n, cmp)
			if err != nil {
				t.Fatal(err)
			}
			if err := sortStable(context.Background(), got, cmp); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, sorted[:n]) {
				t.Fatalf("count=%d n=%d: %v, want %v", count, n, got, sorted[:n])
			}
		}
	}
}
