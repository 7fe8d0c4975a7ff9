package diff

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// workersOf draws how many workers a property test's steps run on.
func workersOf(t *rapid.T) Parallelism {
	return Parallelism{Workers: rapid.SampledFrom([]int{1, 2, 3, maxTestWorkers}).Draw(t, "workers")}
}

// maxTestWorkers is the most workers a test runs a step on.
const maxTestWorkers = 8

// sameOnWorkers checks that the step Step just ran serially (its output
// out or error err, its writes in serial) runs the same on 2, 3 and 8
// workers: the same output, the same error code and the same state
// writes, byte for byte.
func sameOnWorkers(t testHelper, pos string, c *Circuit, st state.Store, deltas map[string]zset.Batch, serial *state.Overlay, out zset.Batch, err error) {
	t.Helper()
	for _, n := range []int{2, 3, 8} {
		ov := state.NewOverlay(st)
		pout, perr := c.StepParallel(context.Background(), ov, deltas, Parallelism{Workers: n})
		if (err == nil) != (perr == nil) || errs.SQLState(err) != errs.SQLState(perr) {
			t.Fatalf("%s: with %d workers the step fails with %v, on one worker with %v", pos, n, perr, err)
		}
		if err == nil {
			if a, b := batchText(out), batchText(pout); a != b {
				t.Fatalf("%s: with %d workers the output is\n%s\non one worker\n%s", pos, n, b, a)
			}
			if a, b := writesText(t, serial), writesText(t, ov); a != b {
				t.Fatalf("%s: with %d workers the state writes are\n%s\non one worker\n%s", pos, n, b, a)
			}
		}
		ov.Discard()
		for _, key := range [][]int{nil, {0}} {
			ov := state.NewOverlay(st)
			pout, perr := c.StepRouted(context.Background(), ov, deltas, routeAll(deltas, key, n), Parallelism{Workers: n})
			what := fmt.Sprintf("with %d workers and the input routed by %v", n, key)
			if (err == nil) != (perr == nil) || errs.SQLState(err) != errs.SQLState(perr) {
				t.Fatalf("%s: %s the step fails with %v, on one worker with %v", pos, what, perr, err)
			}
			if err == nil {
				if a, b := batchText(out), batchText(pout); a != b {
					t.Fatalf("%s: %s the output is\n%s\non one worker\n%s", pos, what, b, a)
				}
				if a, b := writesText(t, serial), writesText(t, ov); a != b {
					t.Fatalf("%s: %s the state writes are\n%s\non one worker\n%s", pos, what, b, a)
				}
			}
			ov.Discard()
		}
	}
}

// routeAll splits every delta between n workers by the bucket of each
// row's columns key (nil: the whole row), as a caller of StepRouted
// does; a relation with a row narrower than the key goes by whole rows.
func routeAll(deltas map[string]zset.Batch, key []int, n int) map[string]Routed {
	routed := make(map[string]Routed, len(deltas))
	for rel, d := range deltas {
		k := key
		for _, e := range d {
			for _, c := range k {
				if c >= len(e.Row) {
					k = nil
				}
			}
		}
		routed[rel] = Routed{Key: k, Parts: splitByKey(d, k, n)}
	}
	return routed
}

// splitByKey splits d between n workers by the bucket of each row's
// columns key (nil: the whole row).
func splitByKey(d zset.Batch, key []int, n int) []zset.Batch {
	parts := make([]zset.Batch, n)
	var buf []byte
	for _, e := range d {
		buf = buf[:0]
		if key == nil {
			buf = zset.EncodeKey(buf, e.Row...)
		}
		for _, c := range key {
			buf = zset.EncodeKey(buf, e.Row[c])
		}
		w := zset.BucketOwner(zset.Bucket(buf), n)
		parts[w] = append(parts[w], e)
	}
	return parts
}

// testHelper is what sameOnWorkers needs of a *testing.T or a *rapid.T.
type testHelper interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func batchText(b zset.Batch) string {
	var sb strings.Builder
	for _, e := range b {
		fmt.Fprintf(&sb, "%+d %x\n", e.Weight, zset.EncodeRow(nil, e.Row))
	}
	return sb.String()
}

// writesText lists what a read of ov shows, which differs from its
// parent's contents exactly where ov wrote.
func writesText(t testHelper, ov *state.Overlay) string {
	t.Helper()
	var sb strings.Builder
	if err := ov.Scan(nil, nil, func(k, v []byte) bool {
		fmt.Fprintf(&sb, "%x=%x\n", k, v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// TestMergeWhileCommitting sums large worker outputs (rows repeated
// across the parts, some cancelling) beside the commits of the workers'
// overlays, and checks both against the serial way: the outputs summed
// after the overlays are committed one after another.
func TestMergeWhileCommitting(t *testing.T) {
	const rows = 3 * mergeBesideMinRows
	for _, n := range []int{2, 3, 8} {
		build := func() (*state.Overlay, []*state.Overlay, []zset.Batch) {
			st := state.NewOverlay(state.NewMemory())
			ovs := make([]*state.Overlay, n)
			outs := make([]zset.Batch, n)
			for w := range n {
				ovs[w] = state.NewOverlay(st)
				for i := range rows / n {
					k := fmt.Appendf(nil, "k%06d", i*n+w)
					if err := ovs[w].Set(k, []byte{byte(w)}); err != nil {
						t.Fatal(err)
					}
				}
				var out zset.Batch
				for i := range rows / n {
					weight := int64(1)
					if i%5 == 0 && w%2 == 1 {
						weight = -1 // cancels worker w-1's row
					}
					out = append(out, zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, int64(i*(w/2*2+1)))}, Weight: weight})
				}
				var err error
				if outs[w], err = zset.Consolidate(out); err != nil {
					t.Fatal(err)
				}
			}
			return st, ovs, outs
		}
		wantSt, ovs, outs := build()
		for _, ov := range ovs {
			if err := ov.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		want, err := mergeParts(outs)
		if err != nil {
			t.Fatal(err)
		}
		gotSt, ovs, outs := build()
		got, err := mergeWhileCommitting(outs, ovs)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := batchText(got), batchText(want); a != b {
			t.Fatalf("%d workers: merged beside the commits\n%s\nwant\n%s", n, a, b)
		}
		if a, b := writesText(t, gotSt), writesText(t, wantSt); a != b {
			t.Fatalf("%d workers: the store after the commits differs", n)
		}
		for _, ov := range ovs {
			if ov.Len() != 0 {
				t.Fatalf("%d workers: an overlay holds %d writes after its commit", n, ov.Len())
			}
		}
	}
}
