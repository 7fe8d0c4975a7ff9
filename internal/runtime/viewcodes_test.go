package runtime

import (
	"bytes"
	"math/rand/v2"
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
// primary key gets none; and that keyOrder lists every entry once, in
// the byte order of the stored keys.
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
		order := enc.keyOrder()
		seen := make([]bool, len(delta))
		var prev []byte
		for k, i := range order {
			if seen[i] {
				t.Fatalf("route %d: key order visits row %d twice", route, i)
			}
			seen[i] = true
			got = enc.storedKey(got, prefix, int(i))
			if k > 0 && bytes.Compare(prev, got) > 0 {
				t.Fatalf("route %d: key order puts %x before %x", route, prev, got)
			}
			prev = append(prev[:0], got...)
		}
		if len(order) != len(delta) {
			t.Fatalf("route %d: key order has %d rows, want %d", route, len(order), len(delta))
		}
		enc.release()
	}
	if enc := encodeDelta(&object{cols: make([]plan.Column, 3), pk: []int{0}}, delta); enc != nil {
		t.Fatal("a view keyed by a primary key got row encodings")
	}
}
