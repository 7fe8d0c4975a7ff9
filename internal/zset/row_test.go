package zset

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/types"
	"pgregory.net/rapid"
)

func TestRowRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kinds := rapid.SliceOfN(genKind(), 1, 6).Draw(t, "kinds")
		r := genRow(kinds).Draw(t, "row")
		r = r[:rapid.IntRange(0, len(r)).Draw(t, "length")]
		enc := EncodeRow([]byte("prefix"), r)[len("prefix"):]
		got, err := DecodeRow(enc)
		if err != nil {
			t.Fatalf("DecodeRow(%x): %v", enc, err)
		}
		if len(got) != len(r) {
			t.Fatalf("decoded %d values, want %d", len(got), len(r))
		}
		for i := range r {
			if !identical(r[i], got[i]) {
				t.Fatalf("value %d decoded as %s, want exactly %s", i, describe(got[i]), describe(r[i]))
			}
		}
		// Decoding into a reused row appends.
		reused, err := DecodeRowAppend(Row{types.MakeBool(true)}, enc)
		if err != nil || len(reused) != len(r)+1 {
			t.Fatalf("DecodeRowAppend: %v, %d values", err, len(reused))
		}
	})
}

func TestRowExactRepresentations(t *testing.T) {
	negZero := new(apd.Decimal)
	negZero.Negative = true
	negZero.Exponent = -3
	big, _, _ := apd.NewFromString("-123456789012345678901234567890.123456789000")
	r := Row{
		types.MakeFloat8(math.Copysign(0, -1)),
		types.MakeFloat4(float32(math.Copysign(0, -1))),
		types.MakeFloat8(math.Float64frombits(0xfff8000000000123)), // NaN with payload
		types.MakeNumeric(apd.New(100, -2)),                        // 1.00
		types.MakeNumeric(negZero),                                 // -0.000
		types.MakeNumeric(big),
		types.MakeNumeric(&apd.Decimal{Form: apd.NaNSignaling, Negative: true}),
		types.MakeInterval(types.IntervalValue{Months: 1, Days: -30, Micros: 5}),
		types.MakeText(""),
		types.MakeBytea(nil),
		types.Null,
	}
	got, err := DecodeRow(EncodeRow(nil, r))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r {
		if !identical(r[i], got[i]) {
			t.Errorf("value %d decoded as %s, want exactly %s", i, describe(got[i]), describe(r[i]))
		}
	}
}

func TestDecodeRowCorrupt(t *testing.T) {
	enc := EncodeRow(nil, Row{types.MakeText("hello"), types.MakeNumeric(apd.New(-12345, -2)),
		types.MakeFloat8(1), types.MakeInterval(types.IntervalValue{Months: 1, Days: 2, Micros: 3})})
	for i := range len(enc) {
		if _, err := DecodeRow(enc[:i]); err == nil {
			t.Errorf("DecodeRow of a %d-byte prefix succeeded", i)
		}
	}
	if _, err := DecodeRow(append(enc, 0)); err == nil {
		t.Errorf("DecodeRow with a trailing byte succeeded")
	}
	for _, bad := range [][]byte{
		{1, 0xee},                         // unknown tag
		{1, rowTagInt2, 0xfe, 0xff, 0x0f}, // beyond int16
		{0xff, 0xff, 0xff, 0xff, 0x0f},    // count beyond length
		{1, rowTagNumeric, 0x10, 0, 0},    // unknown numeric header bit
	} {
		if _, err := DecodeRow(bad); err == nil {
			t.Errorf("DecodeRow(%x) succeeded", bad)
		}
	}
}

func FuzzDecodeRow(f *testing.F) {
	f.Add(EncodeRow(nil, Row{types.MakeText("a"), types.MakeInt(types.Int4, 3), types.Null}))
	f.Add(EncodeRow(nil, Row{types.MakeNumeric(apd.New(-5, -1)), types.MakeFloat4(2)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRow(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to a row that decodes identically.
		again, err := DecodeRow(EncodeRow(nil, r))
		if err != nil || len(again) != len(r) {
			t.Fatalf("re-encoded row does not decode: %v", err)
		}
		for i := range r {
			if !identical(r[i], again[i]) {
				t.Fatalf("value %d changed: %s vs %s", i, describe(r[i]), describe(again[i]))
			}
		}
	})
}

// TestRowArrayShapes pins the row bytes of arrays: a plain array keeps the
// encoding rows had before arrays had shapes (tag 15), so stored rows
// decode unchanged; other shapes use tag 20; malformed shapes are refused.
func TestRowArrayShapes(t *testing.T) {
	one, two := types.MakeInt(types.Int4, 1), types.MakeInt(types.Int4, 2)
	for _, c := range []struct {
		v    types.Value
		want string
	}{
		{types.MakeArray(types.Int4, []types.Value{one, types.Null}), "010f03020402" + "00"},
		{types.MakeArray(types.Int4, nil), "010f0300"},
		{types.MakeArrayShape(types.Int4, []types.Value{one, two}, []int{2}, []int{0}), "011403" + "01" + "0200" + "04020404"},
		{types.MakeArrayShape(types.Int4, []types.Value{one, two}, []int{1, 2}, []int{1, -1}), "011403" + "02" + "0102" + "0201" + "04020404"},
	} {
		got := hex.EncodeToString(EncodeRow(nil, Row{c.v}))
		if got != c.want {
			t.Errorf("row of %s = %s, want %s", describe(c.v), got, c.want)
		}
		back, err := DecodeRow(EncodeRow(nil, Row{c.v}))
		if err != nil || !identical(back[0], c.v) {
			t.Errorf("row of %s decodes as %v, %v", describe(c.v), back, err)
		}
	}
	for _, bad := range []string{
		"011403" + "01" + "0202" + "04020404",            // one dimension with lower bound 1
		"011403" + "07" + "0202" + "04020404",            // seven dimensions
		"011403" + "02" + "0002" + "0202" + "0402",       // a zero length
		"011403" + "01" + "02feffffff0f" + "040204",      // lower bound + length past 2^31-1
		"011403" + "02" + "0102" + "0202" + "0402",       // fewer elements than the shape
		"011403" + "02" + "0102" + "0201" + "0f03000404", // an array element
	} {
		b, _ := hex.DecodeString(bad)
		if r, err := DecodeRow(b); err == nil {
			t.Errorf("DecodeRow(%s) = %v, want an error", bad, r)
		}
	}
}

// TestIdenticalOIDValues: OID and OID alias values are identical to
// themselves and to their decoded copies, and differ by identifier or by
// the name they print as.
func TestIdenticalOIDValues(t *testing.T) {
	vals := []types.Value{
		types.MakeOID(16384),
		types.MakeReg(types.RegClass, 16384, "public.t"),
		types.MakeReg(types.RegType, 23, "integer"),
		types.MakeReg(types.RegRole, 10, ""),
	}
	for _, v := range vals {
		if !IdenticalValues(v, v) {
			t.Errorf("%s is not identical to itself", describe(v))
		}
		back, err := DecodeRow(EncodeRow(nil, Row{v}))
		if err != nil || !IdenticalValues(back[0], v) {
			t.Errorf("%s decodes as %v, %v", describe(v), back, err)
		}
	}
	for _, pair := range [][2]types.Value{
		{types.MakeOID(1), types.MakeOID(2)},
		{types.MakeReg(types.RegClass, 16384, "public.t"), types.MakeReg(types.RegClass, 16384, "public.u")},
		{types.MakeReg(types.RegClass, 16384, "t"), types.MakeOID(16384)},
	} {
		if IdenticalValues(pair[0], pair[1]) {
			t.Errorf("%s and %s are identical", describe(pair[0]), describe(pair[1]))
		}
	}
}
