package runtime

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestSplitWritesStayInOwnBuckets checks that a table write split
// between n workers has each worker write only keys of the buckets it
// owns, a contiguous range of the table's keys, and that the writes of
// all of them are those of one worker: for a table with a primary key,
// one without, and an append-only one.
func TestSplitWritesStayInOwnBuckets(t *testing.T) {
	cols := []plan.Column{{Name: "id", Type: types.Of(types.Int8)}, {Name: "s", Type: types.Of(types.Text)}}
	tables := map[string]*object{
		"keyed":    {id: 7, name: "keyed", kind: sql.Table, cols: cols, pk: []int{0}},
		"rows":     {id: 8, name: "rows", kind: sql.Table, cols: cols},
		"appended": {id: 9, name: "appended", kind: sql.Table, cols: cols, appendOnly: true},
	}
	var delta zset.Batch
	for i := range 3000 {
		delta = append(delta, zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, int64(i)), types.MakeText(fmt.Sprint("r", i%17))}, Weight: 1})
	}
	delta, err := zset.Consolidate(delta)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range tables {
		write := func(st state.Store, par diff.Parallelism) ([]zset.Batch, error) {
			if o.storesInArrivalOrder() {
				return appendRowsOn(st, o, delta, par)
			}
			return applyDeltaOn(st, o, delta, par)
		}
		serial := state.NewOverlay(state.NewMemory())
		if _, err := write(serial, diff.Parallelism{Workers: 1}); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{2, 3, 8} {
			split := state.NewOverlay(state.NewMemory())
			parts, err := write(split, diff.Parallelism{Workers: n, MinRows: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(parts) != n {
				t.Fatalf("%s, %d workers: the write was not split", name, n)
			}
			prefix := o.rowsPrefix()
			rows := 0
			for w, part := range parts {
				rows += len(part)
				lo, hi := ownedBuckets(w, n)
				// Worker w's rows, written alone, lie in its buckets.
				ov := state.NewOverlay(state.NewMemory())
				if o.storesInArrivalOrder() {
					err = appendRows(ov, o, part)
				} else {
					err = applyDelta(ov, prefix, part, o.keyOf())
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := ov.Scan(prefix, state.PrefixEnd(prefix), func(k, _ []byte) bool {
					if b := int(k[len(prefix)]); b < lo || b >= hi {
						t.Errorf("%s, %d workers: worker %d writes key %x of bucket %d, outside its buckets [%d, %d)", name, n, w, k, b, lo, hi)
						return false
					}
					return true
				}); err != nil {
					t.Fatal(err)
				}
			}
			if rows != len(delta) {
				t.Errorf("%s, %d workers: the parts hold %d rows of %d", name, n, rows, len(delta))
			}
			if a, b := dumpOverlay(t, serial), dumpOverlay(t, split); !bytes.Equal(a, b) {
				t.Errorf("%s, %d workers: the split write differs from the serial one", name, n)
			}
		}
	}
}

func dumpOverlay(t *testing.T, ov *state.Overlay) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := ov.Scan(nil, nil, func(k, v []byte) bool {
		fmt.Fprintf(&buf, "%x=%x\n", k, v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
