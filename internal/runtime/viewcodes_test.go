package runtime

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestEncodedDeltaMatchesRowEncodings checks that a delta's encodings
// (encodeDelta) are byte for byte what the view's writes compute from each
// row: the stored key (keyOf), the inserted value and log entry
// (encodeStored) and the bucket (viewRowBucket), for views routed by the
// whole row and by a prefix of their columns, over rows with NULLs, equal
// numbers written differently and long texts; and that a view keyed by a
// primary key gets none.
func TestEncodedDeltaMatchesRowEncodings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	value := func(col int) types.Value {
		if rng.IntN(6) == 0 {
			return types.Null
		}
		switch col {
		case 0:
			return types.MakeInt(types.Int8, rng.Int64N(100)-50)
		case 1:
			return types.MakeText(strings.Repeat("é", rng.IntN(40)))
		default:
			d, _, err := apd.NewFromString([]string{"1", "1.0", "1.00", "-2.5", "1e3"}[rng.IntN(5)])
			if err != nil {
				t.Fatal(err)
			}
			return types.MakeNumeric(d)
		}
	}
	delta := make(zset.Batch, 500)
	for i := range delta {
		w := int64(1 + rng.IntN(3))
		if rng.IntN(3) == 0 {
			w = -w
		}
		delta[i] = zset.Entry{Weight: w, Row: zset.Row{value(0), value(1), value(2)}}
	}
	prefix := []byte{7, 1, 2}
	for _, route := range []int{0, 1, 2, 3} {
		v := &object{id: 4, cols: make([]plan.Column, 3), route: route}
		enc := encodeDelta(v, delta)
		keyOf := v.keyOf()
		var want, got []byte
		for i, e := range delta {
			want = keyOf(want, prefix, e.Row)
			got = enc.storedKey(got, prefix, i)
			if !bytes.Equal(got, want) {
				t.Fatalf("route %d, row %d: key %x, want %x", route, i, got, want)
			}
			if wantValue := encodeStored(nil, e.Weight, e.Row); !bytes.Equal(enc.storedValue(i), wantValue) {
				t.Fatalf("route %d, row %d: value %x, want %x", route, i, enc.storedValue(i), wantValue)
			}
			if b, _ := v.viewRowBucket(e.Row, nil); int(enc.buckets[i]) != b || got[len(prefix)] != byte(b) {
				t.Fatalf("route %d, row %d: bucket %d (key's %d), want %d", route, i, enc.buckets[i], got[len(prefix)], b)
			}
		}
		enc.release()
	}
	// A consolidated delta in enc.order is in the order of its stored
	// keys, and first says where each bucket begins in it.
	sorted, err := zset.Consolidate(slices.Clone(delta))
	if err != nil {
		t.Fatal(err)
	}
	for _, route := range []int{0, 2} {
		v := &object{id: 4, cols: make([]plan.Column, 3), route: route}
		enc := encodeDelta(v, sorted)
		if len(enc.order) != len(sorted) || int(enc.first[zset.Buckets]) != len(sorted) {
			t.Fatalf("route %d: order of %d entries, first[end] %d, want %d", route, len(enc.order), enc.first[zset.Buckets], len(sorted))
		}
		var prev, key []byte
		for at, i := range enc.order {
			if b := enc.buckets[i]; at < int(enc.first[b]) || at >= int(enc.first[int(b)+1]) {
				t.Fatalf("route %d: entry %d of bucket %d at %d, outside [%d, %d)", route, i, b, at, enc.first[b], enc.first[int(b)+1])
			}
			key = enc.storedKey(key, prefix, int(i))
			if at > 0 && bytes.Compare(prev, key) >= 0 {
				t.Fatalf("route %d: stored key %x at %d after %x", route, key, at, prev)
			}
			prev = append(prev[:0], key...)
		}
		enc.release()
	}
	if enc := encodeDelta(&object{cols: make([]plan.Column, 3), pk: []int{0}}, delta); enc != nil {
		t.Fatal("a view keyed by a primary key got row encodings")
	}
}
