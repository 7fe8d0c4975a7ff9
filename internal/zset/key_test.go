package zset

import (
	"bytes"
	"encoding/hex"
	"math"
	"slices"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/types"
	"pgregory.net/rapid"
)

// compareRows is the reference order of keys: lexicographic types.Compare.
func compareRows(a, b Row) int {
	for i := range min(len(a), len(b)) {
		if c := types.Compare(a[i], b[i]); c != 0 {
			return sign(c)
		}
	}
	return sign(len(a) - len(b))
}

// genRowPair draws two rows of the same kinds; the second often shares
// columns with the first, so equal and nearly equal rows are common.
func genRowPair(t *rapid.T) (Row, Row) {
	kinds := rapid.SliceOfN(genKind(), 1, 4).Draw(t, "kinds")
	a := genRow(kinds).Draw(t, "a")
	b := slices.Clone(a)
	for i, k := range kinds {
		if rapid.IntRange(0, 2).Draw(t, "replace") > 0 {
			b[i] = genValue(k).Draw(t, "b column")
		}
	}
	return a, b
}

func TestKeyOrderMatchesCompare(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genRowPair(t)
		want := compareRows(a, b)
		ka, kb := EncodeKey(nil, a...), EncodeKey(nil, b...)
		if got := bytes.Compare(ka, kb); got != want {
			t.Fatalf("ascending: bytes.Compare = %d, Compare = %d\na = %s -> %x\nb = %s -> %x",
				got, want, describeRow(a), ka, describeRow(b), kb)
		}
		da, db := EncodeKeyDesc(nil, a...), EncodeKeyDesc(nil, b...)
		if got := bytes.Compare(da, db); got != -want {
			t.Fatalf("descending: bytes.Compare = %d, want %d\na = %s -> %x\nb = %s -> %x",
				got, -want, describeRow(a), da, describeRow(b), db)
		}
	})
}

// TestKeyMixedDirections checks keys whose columns mix ascending and
// descending order, as ORDER BY a, b DESC needs.
func TestKeyMixedDirections(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genRowPair(t)
		desc := rapid.SliceOfN(rapid.Bool(), len(a), len(a)).Draw(t, "desc")
		want := 0
		for i := range a {
			if c := types.Compare(a[i], b[i]); c != 0 {
				want = sign(c)
				if desc[i] {
					want = -want
				}
				break
			}
		}
		ka, kb := encodeMixed(a, desc), encodeMixed(b, desc)
		if got := bytes.Compare(ka, kb); got != want {
			t.Fatalf("bytes.Compare = %d, want %d\na = %s\nb = %s", got, want, describeRow(a), describeRow(b))
		}
		got, rest, err := DecodeKey(ka, len(a))
		if err != nil || len(rest) != 0 {
			t.Fatalf("DecodeKey: %v, %d bytes left", err, len(rest))
		}
		checkDecoded(t, a, got)
	})
}

func encodeMixed(r Row, desc []bool) []byte {
	var k []byte
	for i, v := range r {
		if desc[i] {
			k = EncodeKeyDesc(k, v)
		} else {
			k = EncodeKey(k, v)
		}
	}
	return k
}

func TestKeyPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kinds := rapid.SliceOfN(genKind(), 1, 5).Draw(t, "kinds")
		r := genRow(kinds).Draw(t, "row")
		n := rapid.IntRange(0, len(r)).Draw(t, "prefix length")
		for _, enc := range []func([]byte, ...types.Value) []byte{EncodeKey, EncodeKeyDesc} {
			full, prefix := enc(nil, r...), enc(nil, r[:n]...)
			if !bytes.HasPrefix(full, prefix) {
				t.Fatalf("encoding of %s is not a prefix of that of %s", describeRow(r[:n]), describeRow(r))
			}
			// Appending to a non-empty buffer encodes the same bytes.
			if got := enc([]byte("xyz"), r...); !bytes.Equal(got[3:], full) {
				t.Fatalf("append changed the encoding")
			}
			// The prefix's range bound contains the full key, and so
			// does the prefix itself.
			end := KeyPrefixEnd(nil, prefix)
			if bytes.Compare(prefix, full) > 0 || bytes.Compare(full, end) >= 0 {
				t.Fatalf("full key outside [prefix, KeyPrefixEnd(prefix))")
			}
			// Decoding value by value finds the prefix's boundary.
			_, rest, err := DecodeKey(full, n)
			if err != nil || !bytes.Equal(full[:len(full)-len(rest)], prefix) {
				t.Fatalf("DecodeKey of %d values consumed the wrong bytes (err %v)", n, err)
			}
		}
	})
}

// TestKeyPrefixEndExcludesOthers checks that keys not extending a prefix
// fall outside its range.
func TestKeyPrefixEndExcludesOthers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genRowPair(t)
		n := rapid.IntRange(1, len(a)).Draw(t, "prefix length")
		if compareRows(a[:n], b[:n]) == 0 {
			return
		}
		prefix := EncodeKey(nil, a[:n]...)
		other := EncodeKey(nil, b...)
		end := KeyPrefixEnd(nil, prefix)
		if bytes.Compare(other, prefix) >= 0 && bytes.Compare(other, end) < 0 {
			t.Fatalf("%s is inside the range of prefix %s", describeRow(b), describeRow(a[:n]))
		}
	})
}

func TestKeyDecodeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kinds := rapid.SliceOfN(genKind(), 1, 5).Draw(t, "kinds")
		r := genRow(kinds).Draw(t, "row")
		r = r[:rapid.IntRange(0, len(r)).Draw(t, "length")]
		for _, enc := range []func([]byte, ...types.Value) []byte{EncodeKey, EncodeKeyDesc} {
			key := append(enc(nil, r...), "tail"...)
			got, rest, err := DecodeKey(key, len(r))
			if err != nil {
				t.Fatalf("DecodeKey(%x): %v", key, err)
			}
			if string(rest) != "tail" {
				t.Fatalf("DecodeKey left %q, want \"tail\"", rest)
			}
			checkDecoded(t, r, got)
			// Decoded values re-encode to the same key.
			if again := append(enc(nil, got...), "tail"...); !bytes.Equal(again, key) {
				t.Fatalf("re-encoding %s gave %x, want %x", describeRow(got), again, key)
			}
		}
	})
}

// checkDecoded checks that decoded values have the original kinds and
// compare equal to the originals, and that only numeric scale, float -0
// and NaN payloads, and interval field split may differ.
func checkDecoded(t *rapid.T, want, got Row) {
	if len(got) != len(want) {
		t.Fatalf("decoded %d values, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Kind() != g.Kind() || types.Compare(w, g) != 0 {
			t.Fatalf("value %d decoded as %s, want %s", i, describe(g), describe(w))
		}
		if !hasKeyLossyValue(Row{w}) && !identical(w, g) {
			t.Fatalf("value %d decoded as %s, want exactly %s", i, describe(g), describe(w))
		}
	}
}

// orderedGroups lists, per kind, groups of values in increasing order; the
// values within a group are equal. It pins PostgreSQL's semantics down
// independently of the generators.
func orderedGroups() map[string][][]types.Value {
	i2 := func(n int64) types.Value { return types.MakeInt(types.Int2, n) }
	i8 := func(n int64) types.Value { return types.MakeInt(types.Int8, n) }
	f4 := types.MakeFloat4
	f8 := types.MakeFloat8
	num := func(s string) types.Value {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			panic(err)
		}
		return types.MakeNumeric(d)
	}
	negZero := func() types.Value {
		d := apd.New(0, -2)
		d.Negative = true
		return types.MakeNumeric(d)
	}
	txt := types.MakeText
	iv := func(m, d int32, us int64) types.Value {
		return types.MakeInterval(types.IntervalValue{Months: m, Days: d, Micros: us})
	}
	const day = 86_400_000_000
	ts := types.MakeTimestamp
	g := func(vs ...types.Value) []types.Value { return vs }
	return map[string][][]types.Value{
		"bool": {g(types.MakeBool(false)), g(types.MakeBool(true)), g(types.Null)},
		"int": {
			g(i8(math.MinInt64)), g(i2(math.MinInt16), i8(math.MinInt16)), g(i2(-1), i8(-1)),
			g(i2(0), types.MakeInt(types.Int4, 0), i8(0)), g(i2(1)), g(i2(math.MaxInt16)),
			g(i8(math.MaxInt64)), g(types.Null),
		},
		"float4": {
			g(f4(float32(math.Inf(-1)))), g(f4(-math.MaxFloat32)), g(f4(-1)),
			g(f4(-math.SmallestNonzeroFloat32)), g(f4(0), f4(float32(math.Copysign(0, -1)))),
			g(f4(math.SmallestNonzeroFloat32)), g(f4(1)), g(f4(math.MaxFloat32)),
			g(f4(float32(math.Inf(1)))), g(f4(float32(math.NaN())), f4(math.Float32frombits(0xffc00001))),
			g(types.Null),
		},
		"float8": {
			g(f8(math.Inf(-1))), g(f8(-math.MaxFloat64)), g(f8(-1.5)), g(f8(-1)),
			g(f8(-math.SmallestNonzeroFloat64)), g(f8(0), f8(math.Copysign(0, -1))),
			g(f8(math.SmallestNonzeroFloat64)), g(f8(0.1)), g(f8(1)), g(f8(math.MaxFloat64)),
			g(f8(math.Inf(1))), g(f8(math.NaN()), f8(math.Float64frombits(0xfff8000000000001))),
			g(types.Null),
		},
		"numeric": {
			g(num("-Infinity")), g(num("-1e100")), g(num("-123456789012345678901234567890.5")),
			g(num("-100"), num("-100.00"), num("-1E+2")), g(num("-10")), g(num("-1.51")),
			g(num("-1.5"), num("-1.50")), g(num("-1")), g(num("-0.001")),
			g(num("0"), num("0.00"), negZero()), g(num("0.0001")), g(num("0.001"), num("0.0010")),
			g(num("0.5")), g(num("0.99999999999999999999999")), g(num("1"), num("1.0"), num("1.00")),
			g(num("1.01")), g(num("1.1")), g(num("1.5"), num("1.50")), g(num("9.99")),
			g(num("10"), num("10.0")), g(num("100"), num("1E+2")), g(num("101")),
			g(num("123456789012345678901234567890")), g(num("1e100")), g(num("Infinity")),
			g(num("NaN"), num("-NaN"), num("sNaN")), g(types.Null),
		},
		"text": {
			g(txt("")), g(txt("\x00")), g(txt("\x00\x00")), g(txt("\x00\x01")), g(txt("\x00\xff")),
			g(txt("\x01")), g(txt("A")), g(txt("B")), g(txt("a")), g(txt("a\x00")), g(txt("a\x00b")),
			g(txt("a\x01")), g(txt("ab")), g(txt("b")), g(txt("é")), g(txt("\xff")),
			g(txt("\xff\x00")), g(txt("\xff\xff")), g(types.Null),
		},
		"bytea": {
			g(types.MakeBytea(nil), types.MakeBytea([]byte{})), g(types.MakeBytea([]byte{0})),
			g(types.MakeBytea([]byte{0, 0})), g(types.MakeBytea([]byte{1})),
			g(types.MakeBytea([]byte{0xff})), g(types.Null),
		},
		"date": {
			g(types.MakeDate(math.MinInt32)), g(types.MakeDate(-719528)), g(types.MakeDate(-1)),
			g(types.MakeDate(0)), g(types.MakeDate(1)), g(types.MakeDate(math.MaxInt32)), g(types.Null),
		},
		"timestamp": {
			g(ts(math.MinInt64)), g(ts(-day)), g(ts(-1)), g(ts(0)), g(ts(1)), g(ts(math.MaxInt64)),
			g(types.Null),
		},
		"interval": {
			g(iv(math.MinInt32, math.MinInt32, math.MinInt64)),
			g(iv(-1, 0, 0), iv(0, -30, 0), iv(0, 0, -30*day), iv(-2, 30, 0)),
			g(iv(0, -1, 0), iv(0, 0, -day), iv(1, -31, 0)),
			g(iv(0, 0, -1), iv(0, -1, day-1)),
			g(iv(0, 0, 0), iv(1, -30, 0), iv(0, 1, -day)),
			g(iv(0, 0, 1)),
			g(iv(0, 0, day-1)),
			g(iv(0, 1, 0), iv(0, 0, day)),
			g(iv(1, 0, 0), iv(0, 30, 0), iv(0, 29, day), iv(0, 0, 30*day)),
			g(iv(1, 0, 1)),
			g(iv(1, 1, 0), iv(0, 31, 0)),
			g(iv(12, 0, 0), iv(0, 360, 0)),
			g(iv(math.MaxInt32, 0, 0)),
			g(iv(math.MaxInt32, math.MaxInt32, math.MaxInt64)),
			g(types.Null),
		},
	}
}

// TestKeyOrderedGroups checks Compare and both key encodings against the
// hand-written orders of orderedGroups.
func TestKeyOrderedGroups(t *testing.T) {
	for name, groups := range orderedGroups() {
		t.Run(name, func(t *testing.T) {
			type item struct {
				group int
				v     types.Value
			}
			var items []item
			for gi, g := range groups {
				for _, v := range g {
					items = append(items, item{gi, v})
				}
			}
			for _, x := range items {
				for _, y := range items {
					want := sign(x.group - y.group)
					if got := types.Compare(x.v, y.v); got != want {
						t.Errorf("Compare(%s, %s) = %d, want %d", describe(x.v), describe(y.v), got, want)
					}
					if x.v.Kind() != y.v.Kind() && !x.v.IsNull() && !y.v.IsNull() {
						continue // keys order values of one kind only
					}
					kx, ky := EncodeKey(nil, x.v), EncodeKey(nil, y.v)
					if got := bytes.Compare(kx, ky); got != want {
						t.Errorf("key order of %s (%x) and %s (%x) = %d, want %d",
							describe(x.v), kx, describe(y.v), ky, got, want)
					}
					dx, dy := EncodeKeyDesc(nil, x.v), EncodeKeyDesc(nil, y.v)
					if got := bytes.Compare(dx, dy); got != -want {
						t.Errorf("descending key order of %s and %s = %d, want %d",
							describe(x.v), describe(y.v), got, -want)
					}
				}
			}
		})
	}
}

func TestCompareMismatchedKindsPanics(t *testing.T) {
	pairs := [][2]types.Value{
		{types.MakeInt(types.Int4, 1), types.MakeText("1")},
		{types.MakeInt(types.Int8, 1), types.MakeFloat8(1)},
		{types.MakeTimestamp(0), types.MakeTimestampTZ(0)},
		{types.MakeText("a"), types.MakeBytea([]byte("a"))},
	}
	for _, p := range pairs {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Compare(%s, %s) did not panic", describe(p[0]), describe(p[1]))
				}
			}()
			types.Compare(p[0], p[1])
		}()
	}
	// REAL and DOUBLE PRECISION compare by value, as PostgreSQL's
	// float48 operators do.
	if c := types.Compare(types.MakeFloat4(0.5), types.MakeFloat8(0.5)); c != 0 {
		t.Errorf("Compare(real 0.5, double 0.5) = %d", c)
	}
	if c := types.Compare(types.MakeFloat4(float32(math.NaN())), types.MakeFloat8(math.Inf(1))); c != 1 {
		t.Errorf("Compare(real NaN, double Infinity) = %d", c)
	}
}

// TestKeyFormatExamples pins the byte layout to the examples in
// docs/format/keys.md.
func TestKeyFormatExamples(t *testing.T) {
	num := func(s string) types.Value {
		d, _, _ := apd.NewFromString(s)
		return types.MakeNumeric(d)
	}
	iv := func(m, d int32, us int64) types.Value {
		return types.MakeInterval(types.IntervalValue{Months: m, Days: d, Micros: us})
	}
	jsonb := func(s string) types.Value {
		v, err := types.Parse(types.Of(types.Jsonb), s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		v    types.Value
		desc bool
		hex  string
	}{
		{jsonb(`{"a": 1}`), false, "3a02" + "00000001" + "610001" + "03" + "0481010b00"},
		{jsonb(`"x"`), false, "3a01" + "00000001" + "00" + "02" + "780001"},
		{jsonb(`[true, null]`), false, "3a01" + "00000002" + "01" + "0401" + "01"},
		{jsonb(`[]`), false, "3a01" + "00000000" + "01"},
		{types.Null, false, "7f"},
		{types.Null, true, "80"},
		{types.MakeBool(true), false, "1001"},
		{types.MakeInt(types.Int2, -2), false, "147ffe"},
		{types.MakeInt(types.Int4, 1), false, "1580000001"},
		{types.MakeInt(types.Int4, 1), true, "ea7ffffffe"},
		{types.MakeInt(types.Int8, -1), false, "167fffffffffffffff"},
		{types.MakeFloat8(1), false, "1dbff0000000000000"},
		{types.MakeFloat8(-1), false, "1d400fffffffffffff"},
		{types.MakeFloat8(math.Copysign(0, -1)), false, "1d8000000000000000"},
		{types.MakeFloat8(math.NaN()), false, "1dfff8000000000000"},
		{types.MakeFloat4(1), false, "1cbf800000"},
		{num("0"), false, "1803"},
		{num("1.50"), false, "1804810110" + "00"},
		{num("-1.5"), false, "18027efeefff"},
		{num("1234.5"), false, "18048104" + "0d2333" + "00"},
		{num("0.001"), false, "18047ffe" + "0b" + "00"},
		{num("Infinity"), false, "1805"},
		{num("NaN"), false, "1806"},
		{types.MakeText("a"), false, "20610001"},
		{types.MakeText("a\x00b"), false, "206100ff620001"},
		{types.MakeText(""), true, "dffffe"},
		{types.MakeBytea([]byte{0xff}), false, "22ff0001"},
		{types.MakeDate(-1), false, "287fffffff"},
		{types.MakeTimestamp(0), false, "2a8000000000000000"},
		{iv(1, 0, 0), false, "2c800000001e0000000000"},
		{iv(0, 0, -1), false, "2c7fffffffff141dd75fff"},
		{types.MakeArray(types.Int4, []types.Value{types.MakeInt(types.Int4, 1), types.Null}), false, "3003" + "1580000001" + "7f" + "01"},
		{types.MakeArray(types.Int4, nil), true, "cffcfe"},
		{types.MakeArray(types.Text, []types.Value{types.MakeText("a")}), false, "3008" + "20610001" + "01"},
		{types.MakeArrayShape(types.Int4, []types.Value{types.MakeInt(types.Int4, 1)}, []int{1}, []int{0}), false,
			"3003" + "1580000001" + "00" + "80000000"},
		{types.MakeArrayShape(types.Int4, []types.Value{types.MakeInt(types.Int4, 1)}, []int{1}, []int{5}), false,
			"3003" + "1580000001" + "02" + "80000005"},
		{types.MakeArrayShape(types.Int4, []types.Value{types.MakeInt(types.Int4, 1), types.Null}, []int{2, 1}, []int{1, -1}), false,
			"3003" + "1580000001" + "7f" + "03" + "02" + "00000002" + "00000001" + "80000001" + "7fffffff"},
	}
	for _, c := range cases {
		var got []byte
		if c.desc {
			got = EncodeKeyDesc(nil, c.v)
		} else {
			got = EncodeKey(nil, c.v)
		}
		if hex.EncodeToString(got) != c.hex {
			t.Errorf("key of %s (desc %v) = %x, want %s", describe(c.v), c.desc, got, c.hex)
		}
	}
}

func TestDecodeKeyCorrupt(t *testing.T) {
	// Every proper prefix of a valid key with string and numeric values
	// fails to decode rather than panicking or succeeding.
	key := EncodeKey(nil, types.MakeText("a\x00b"), types.MakeNumeric(apd.New(-12345, -2)),
		types.MakeInterval(types.IntervalValue{Months: 1}), types.MakeInt(types.Int8, 7))
	key = EncodeKeyDesc(key, types.MakeText("x\x00"), types.MakeNumeric(apd.New(77, 3)))
	for i := range len(key) {
		if _, _, err := DecodeKey(key[:i], 6); err == nil {
			t.Errorf("DecodeKey of a %d-byte prefix succeeded", i)
		}
	}
	for _, bad := range []string{"", "00", "ff", "1002", "2061", "206100", "206100ee", "1807", "1804810165", "1804ff"} {
		b, _ := hex.DecodeString(bad)
		if _, _, err := DecodeKey(b, 1); err == nil {
			t.Errorf("DecodeKey(%s) succeeded", bad)
		}
	}
}

func FuzzDecodeKey(f *testing.F) {
	f.Add(EncodeKey(nil, types.MakeText("a"), types.MakeInt(types.Int4, 3)))
	f.Add(EncodeKeyDesc(nil, types.MakeNumeric(apd.New(-5, -1)), types.Null))
	f.Add(EncodeKey(nil, types.MakeInterval(types.IntervalValue{Months: -3, Micros: 5})))
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, _, err := DecodeKey(b, 3)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to a key that decodes to equal
		// values.
		again, rest, err := DecodeKey(EncodeKey(nil, vals...), 3)
		if err != nil || len(rest) != 0 {
			t.Fatalf("re-encoded key does not decode: %v", err)
		}
		for i := range vals {
			if types.Compare(vals[i], again[i]) != 0 {
				t.Fatalf("value %d changed: %s vs %s", i, describe(vals[i]), describe(again[i]))
			}
		}
	})
}

func TestKeyNumericExtremeExponents(t *testing.T) {
	vals := []types.Value{
		types.MakeNumeric(apd.New(-5, 200_000)),
		types.MakeNumeric(apd.New(-123, 1000)),
		types.MakeNumeric(apd.New(7, -200_000)),
		types.MakeNumeric(apd.New(7, -199_999)),
		types.MakeNumeric(apd.New(123, 1000)),
		types.MakeNumeric(apd.New(5, 200_000)),
	}
	for i, v := range vals {
		key := EncodeKey(nil, v)
		got, rest, err := DecodeKey(key, 1)
		if err != nil || len(rest) != 0 || types.Compare(got[0], v) != 0 {
			t.Errorf("%s: decoded %v, err %v", describe(v), got, err)
		}
		if i > 0 && bytes.Compare(EncodeKey(nil, vals[i-1]), key) >= 0 {
			t.Errorf("%s does not sort after %s", describe(v), describe(vals[i-1]))
		}
	}
}

// TestBucketStable pins the bucket function: it is part of the storage
// and exchange format, so a change must fail here.
func TestBucketStable(t *testing.T) {
	for _, c := range []struct {
		key  []byte
		want int
	}{
		{nil, 153}, // XXH64 of no bytes is 0xef46db3751d8e999
		{EncodeKey(nil, types.MakeInt(types.Int4, 1)), 39},
		{EncodeKey(nil, types.MakeInt(types.Int8, 1)), 49},
		{EncodeKey(nil, types.MakeText("a")), 254},
		{EncodeKey(nil, types.MakeText("a"), types.Value{}), 44},
	} {
		if got := Bucket(c.key); got != c.want {
			t.Errorf("Bucket(% x) = %d, want %d", c.key, got, c.want)
		}
	}
	for n := 1; n <= 8; n++ {
		counts := make([]int, n)
		for b := 0; b < Buckets; b++ {
			counts[BucketOwner(b, n)]++
		}
		for i, c := range counts {
			if c < Buckets/n || c > Buckets/n+1 {
				t.Errorf("with %d workers, worker %d owns %d buckets", n, i, c)
			}
		}
	}
}
