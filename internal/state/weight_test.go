package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// weighted returns the value `w varint | payload`.
func weighted(w int64, payload string) []byte {
	return append(binary.AppendVarint(nil, w), payload...)
}

// showWeighted renders a weighted value as "w:payload".
func showWeighted(t *testing.T, v []byte) string {
	t.Helper()
	w, n := binary.Varint(v)
	if n <= 0 {
		t.Fatalf("not a weighted value: %q", v)
	}
	return fmt.Sprintf("%d:%s", w, v[n:])
}

// weightChain is a store as the engine stacks it: a Memory wrapped as the
// engine wraps it, an epoch overlay over it, and a statement overlay and a
// worker's overlay over that.
type weightChain struct {
	mem                   *Memory
	epoch, stmt, worker   *Overlay
	model                 map[string]string // what every read must see
	committedTo           []*Overlay        // the commit order, innermost first
	stores                []Store
	hints                 [2]Hint
	mergesSeen, sumsAdded int
}

func newWeightChain() *weightChain {
	m := NewMemory().(*Memory)
	c := &weightChain{mem: m, model: map[string]string{}}
	c.epoch = NewOverlay(struct{ *Memory }{m})
	c.stmt = NewOverlay(c.epoch)
	c.worker = NewOverlay(c.stmt)
	c.committedTo = []*Overlay{c.worker, c.stmt, c.epoch}
	c.stores = []Store{c.epoch, c.stmt, c.worker}
	return c
}

// check compares every read of the chain's top with the model.
func (c *weightChain) check(t *testing.T, step int) {
	t.Helper()
	want := make([]string, 0, len(c.model))
	for _, k := range slices.Sorted(maps.Keys(c.model)) {
		want = append(want, k+"="+c.model[k])
	}
	for _, st := range []Store{c.worker, c.mem} {
		if st == Store(c.mem) && (c.worker.Len()+c.stmt.Len()+c.epoch.Len()) > 0 {
			continue
		}
		var got, rev []string
		if err := st.Scan(nil, nil, func(k, v []byte) bool {
			got = append(got, string(k)+"="+showWeighted(t, v))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if err := st.ScanReverse(nil, nil, func(k, v []byte) bool {
			rev = append(rev, string(k)+"="+showWeighted(t, v))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(rev)
		if !slices.Equal(got, want) || !slices.Equal(rev, want) {
			t.Fatalf("step %d: scan %v, reverse %v, want %v", step, got, rev, want)
		}
	}
	for i := range 40 {
		k := fmt.Sprintf("k%02d", i)
		v, ok, err := c.worker.Get([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		hv, hok, err := GetHinted(c.worker, []byte(k), &c.hints[i%2])
		if err != nil {
			t.Fatal(err)
		}
		want, wok := c.model[k]
		if ok != wok || hok != wok || (ok && (showWeighted(t, v) != want || showWeighted(t, hv) != want)) {
			t.Fatalf("step %d: Get(%s) = %q %v, hinted %q %v, want %q %v", step, k, v, ok, hv, hok, want, wok)
		}
	}
}

// TestMergeWeightIsAddition drives a chain of stores with random weight
// merges, sets and deletions, at every level, with commits between the
// levels now and then: every scan (both ways) and every point read, plain
// and hinted, sees what a map where a merge adds the weight and replaces
// the payload holds, before and after each commit.
func TestMergeWeightIsAddition(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			c := newWeightChain()
			for step := range 2000 {
				k := fmt.Sprintf("k%02d", rng.IntN(40))
				payload := fmt.Sprintf("p%d", step)
				level := rng.IntN(3)
				st := c.stores[level]
				// Only the top level is written while the levels above it
				// hold writes: commit those first.
				for _, o := range c.committedTo[:2-level] {
					if err := o.Commit(); err != nil {
						t.Fatal(err)
					}
				}
				switch op := rng.IntN(10); {
				case op < 6:
					w := int64(1 + rng.IntN(3))
					if err := MergeWeight(st, []byte(k), weighted(w, payload), &c.hints[rng.IntN(2)]); err != nil {
						t.Fatal(err)
					}
					if old, ok := c.model[k]; ok {
						var ow int64
						fmt.Sscanf(old, "%d:", &ow)
						w += ow
					}
					c.model[k] = fmt.Sprintf("%d:%s", w, payload)
				case op < 8:
					w := int64(1 + rng.IntN(3))
					if err := st.Set([]byte(k), weighted(w, payload)); err != nil {
						t.Fatal(err)
					}
					c.model[k] = fmt.Sprintf("%d:%s", w, payload)
				default:
					if err := st.Delete([]byte(k)); err != nil {
						t.Fatal(err)
					}
					delete(c.model, k)
				}
				if rng.IntN(50) == 0 {
					for _, o := range c.committedTo {
						if err := o.Commit(); err != nil {
							t.Fatal(err)
						}
					}
				}
				if step%25 == 0 {
					c.check(t, step)
				}
			}
			for _, o := range c.committedTo {
				if err := o.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			c.check(t, -1)
		})
	}
}

// TestMergeWeightOverflowChangesNothing: a weight merge whose sum with the
// parent's weight leaves int64 fails the read that meets it and the commit
// that would store it, and a failed commit leaves both stores as they
// were, into a Memory and into an Overlay.
func TestMergeWeightOverflowChangesNothing(t *testing.T) {
	for _, into := range []string{"memory", "overlay"} {
		t.Run(into, func(t *testing.T) {
			m := NewMemory().(*Memory)
			var parent Store = struct{ *Memory }{m}
			var parentOverlay *Overlay
			if into == "overlay" {
				parentOverlay = NewOverlay(parent)
				parent = parentOverlay
			}
			for i, w := range []int64{5, math.MaxInt64 - 1, 7} {
				if err := parent.Set(fmt.Appendf(nil, "k%d", i), weighted(w, "old")); err != nil {
					t.Fatal(err)
				}
			}
			before := dump(t, parent)
			o := NewOverlay(parent)
			var h Hint
			for i := range 4 {
				if err := MergeWeight(o, fmt.Appendf(nil, "k%d", i), weighted(2, "new"), &h); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := o.Get([]byte("k1")); !errors.Is(err, ErrWeightOverflow) {
				t.Fatalf("Get of the overflowing key: %v", err)
			}
			if err := o.Scan(nil, nil, func(k, v []byte) bool { return true }); !errors.Is(err, ErrWeightOverflow) {
				t.Fatalf("Scan over the overflowing key: %v", err)
			}
			if err := o.Commit(); !errors.Is(err, ErrWeightOverflow) {
				t.Fatalf("Commit: %v", err)
			}
			if got := dump(t, parent); got != before {
				t.Fatalf("after the failed commit the parent holds\n%s\nwant\n%s", got, before)
			}
			if o.Len() != 4 {
				t.Fatalf("the overlay holds %d writes after the failed commit, want its 4", o.Len())
			}
			// Without the overflowing key the commit goes through.
			if err := o.Delete([]byte("k1")); err != nil {
				t.Fatal(err)
			}
			if err := o.Commit(); err != nil {
				t.Fatal(err)
			}
			want := "k0=7:new\nk2=9:new\nk3=2:new\n"
			if got := dump(t, parent); got != want {
				t.Fatalf("after the commit the parent holds\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestMergeWeightOverflowInOverlayKeepsItsWrite: an operand that
// overflows the weight an overlay itself holds for its key (a value or
// an earlier operand) fails with ErrWeightOverflow and leaves that write
// as it was.
func TestMergeWeightOverflowInOverlayKeepsItsWrite(t *testing.T) {
	parent := NewMemory()
	if err := parent.Set([]byte("m"), weighted(3, "parent")); err != nil {
		t.Fatal(err)
	}
	o := NewOverlay(parent)
	var h Hint
	if err := o.Set([]byte("v"), weighted(math.MaxInt64-1, "set")); err != nil {
		t.Fatal(err)
	}
	if err := MergeWeight(o, []byte("m"), weighted(math.MaxInt64-5, "merged"), &h); err != nil {
		t.Fatal(err)
	}
	before := dump(t, o)
	for _, key := range []string{"v", "m"} {
		if err := MergeWeight(o, []byte(key), weighted(10, "over"), &h); !errors.Is(err, ErrWeightOverflow) {
			t.Fatalf("MergeWeight over %s: %v", key, err)
		}
	}
	if got := dump(t, o); got != before {
		t.Fatalf("after the refused merges the overlay holds\n%s\nwant\n%s", got, before)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(t, parent), fmt.Sprintf("m=%d:merged\nv=%d:set\n", int64(math.MaxInt64-2), int64(math.MaxInt64-1)); got != want {
		t.Fatalf("after the commit the parent holds\n%s\nwant\n%s", got, want)
	}
}

// TestMergeWeightRefusesNonPositive: an operand must be a positive weight.
func TestMergeWeightRefusesNonPositive(t *testing.T) {
	o := NewOverlay(NewMemory())
	for _, v := range [][]byte{weighted(0, "x"), weighted(-1, "x"), nil, {0x80}} {
		if err := MergeWeight(o, []byte("k"), v, &Hint{}); err == nil {
			t.Fatalf("MergeWeight(%q) accepted", v)
		}
	}
	if o.Len() != 0 {
		t.Fatal("a refused merge was written")
	}
}

func dump(t *testing.T, r Reader) string {
	t.Helper()
	var b strings.Builder
	if err := r.Scan(nil, nil, func(k, v []byte) bool {
		fmt.Fprintf(&b, "%s=%s\n", k, showWeighted(t, v))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
