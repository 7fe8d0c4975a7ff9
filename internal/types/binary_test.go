package types

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"pgregory.net/rapid"
)

// binType parses a type name as the tests write it ("numeric(5,2)",
// "varchar(3)", "timestamp(0)").
func binType(t testing.TB, name string) Type {
	t.Helper()
	base, mods, _ := strings.Cut(strings.TrimSuffix(name, ")"), "(")
	var typmods []int32
	if mods != "" {
		for _, m := range strings.Split(mods, ",") {
			n, err := ParseInt(m, Int4)
			if err != nil {
				t.Fatalf("type %s: %v", name, err)
			}
			typmods = append(typmods, int32(n))
		}
	}
	if base == "interval" && len(typmods) == 1 {
		typmods = []int32{0x7FFF, typmods[0]}
	}
	typ, err := TypeByName([]string{base}, typmods)
	if err != nil {
		t.Fatalf("type %s: %v", name, err)
	}
	return typ
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

// TestBinaryExamples pins the binary form of values whose bytes are worth
// reading: each row is the value's text, and the bytes PostgreSQL 15's send
// function produces for it (the oracle test checks many more against a
// running server).
func TestBinaryExamples(t *testing.T) {
	for _, c := range []struct{ typ, text, hex string }{
		{"bool", "t", "01"},
		{"bool", "f", "00"},
		{"int2", "-32768", "8000"},
		{"int4", "-2", "fffffffe"},
		{"int8", "9223372036854775807", "7fffffffffffffff"},
		{"float4", "NaN", "7fc00000"},
		{"float8", "NaN", "7ff8000000000000"},
		{"float8", "-NaN", "fff8000000000000"},
		{"float8", "-0", "8000000000000000"},
		{"float8", "-Infinity", "fff0000000000000"},
		{"numeric", "NaN", "0000 0000 c000 0000"},
		{"numeric", "Infinity", "0000 0000 d000 0020"},
		{"numeric", "-Infinity", "0000 0000 f000 0020"},
		{"numeric", "0.000", "0000 0000 0000 0003"},
		{"numeric", "-0.0", "0000 0000 0000 0001"},
		{"numeric", "1.5", "0002 0000 0000 0001 0001 1388"},
		{"numeric", "-12345.678", "0003 0001 4000 0003 0001 0929 1a7c"},
		{"numeric", "100000", "0001 0001 0000 0000 000a"},
		{"numeric", "0.0001", "0001 ffff 0000 0004 0001"},
		{"numeric", "1e-20", "0001 fffb 0000 0014 0001"},
		{"text", "", ""},
		{"text", "é€😀", "c3a9 e282ac f09f9880"},
		{"bytea", `\x00ff`, "00ff"},
		{"date", "2000-01-01", "00000000"},
		{"date", "1999-12-31", "ffffffff"},
		{"date", "infinity", "7fffffff"},
		{"date", "-infinity", "80000000"},
		{"timestamp", "2000-01-01 00:00:01", "00000000000f4240"},
		{"timestamptz", "1970-01-01 00:00:00+00", "fffca2fec4c82000"},
		{"timestamp", "infinity", "7fffffffffffffff"},
		{"interval", "1 mon -2 days 00:00:03", "00000000002dc6c0 fffffffe 00000001"},
	} {
		typ := binType(t, c.typ)
		v, err := Parse(typ, c.text)
		if err != nil {
			t.Fatalf("%s %q: %v", c.typ, c.text, err)
		}
		want := unhex(t, c.hex)
		got, err := AppendBinary(nil, v, typ)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendBinary(%s %q) = %x, %v; want %x", c.typ, c.text, got, err, want)
		}
		back, err := ParseBinary(want, typ)
		if err != nil || Format(back, typ) != Format(v, typ) {
			t.Errorf("ParseBinary(%s %x) = %q, %v; want %q", c.typ, want, Format(back, typ), err, Format(v, typ))
		}
	}
}

// TestParseBinaryErrors pins receive-function failures, with PostgreSQL's
// SQLSTATEs and messages, and values that a typmod or range changes.
func TestParseBinaryErrors(t *testing.T) {
	for _, c := range []struct{ typ, hex, want string }{
		{"bool", "", "08P01 no data left in message"},
		{"bool", "0200", "22P03 incorrect binary data format"},
		{"bool", "02", "t"},
		{"int4", "000001", "08P01 insufficient data left in message"},
		{"int4", "0000000100", "22P03 incorrect binary data format"},
		{"int2", "ffff", "-1"},
		{"numeric", "0001 0000 0000", "08P01 insufficient data left in message"},
		{"numeric", "0001 0000 1234", "22P03 invalid sign in external \"numeric\" value"},
		{"numeric", "0001 0000 0000 4000", "22P03 invalid scale in external \"numeric\" value"},
		{"numeric", "0002 0000 0000 0000 2710", "22P03 invalid digit in external \"numeric\" value"},
		{"numeric", "0002 0000 0000 0000 0001", "08P01 insufficient data left in message"},
		{"numeric", "0001 0000 0000 0000 0001 00", "22P03 incorrect binary data format"},
		// Digits dscale hides are truncated, leading and trailing zero
		// digits are accepted, and a negative zero is zero.
		{"numeric", "0002 0000 0000 0000 0001 1388", "1"},
		{"numeric", "0003 0001 4000 0001 0000 0001 0000", "-1.0"},
		{"numeric", "0001 0000 4000 0002 0000", "0.00"},
		{"numeric", "0001 8000 0000 3fff 0001", "0." + strings.Repeat("0", 16383)},
		{"numeric", "0001 0000 c000 0000 0001", "NaN"},
		{"numeric", "0001 0000 c000 0000 ffff", "22P03 invalid digit in external \"numeric\" value"},
		{"numeric(5,2)", "0002 0000 0000 0004 0001 1392", "1.50"},
		{"numeric(5,2)", "0001 0001 0000 0000 0001", "22003 numeric field overflow"},
		{"numeric(5,2)", "0000 0000 d000 0020", "22003 numeric field overflow"},
		{"numeric(5,2)", "0000 0000 c000 0000", "NaN"},
		{"text", "61 00 62", "22021 invalid byte sequence for encoding \"UTF8\": 0x00"},
		{"text", "61 c3 28", "22021 invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"},
		{"text", "e2 82", "22021 invalid byte sequence for encoding \"UTF8\": 0xe2 0x82"},
		{"text", "ed a0 80", "22021 invalid byte sequence for encoding \"UTF8\": 0xed 0xa0 0x80"},
		{"varchar(2)", "61 62 63", "22001 value too long for type character varying(2)"},
		{"varchar(2)", "61 62 20 20", "ab"},
		{"date", "7ffffffe", "22008 date out of range"},
		{"date", "ffda 97a7", "4714-11-24 BC"},
		{"date", "ffda 97a6", "22008 date out of range"},
		{"timestamp", "7ffffffffffffffe", "22008 timestamp out of range"},
		{"timestamp(0)", "fffee106 4b922120", "1990-01-01 00:00:00"},
		{"timestamptz", "0000000000000000 00", "22P03 incorrect binary data format"},
		{"interval", "00000000002dc6c0 fffffffe", "08P01 insufficient data left in message"},
		{"interval(0)", "00000000002dc6c0 fffffffe 00000001", "1 mon -2 days +00:00:03"},
		{"interval(0)", "000000000007a120 00000000 00000000", "00:00:01"},
	} {
		typ := binType(t, c.typ)
		v, err := ParseBinary(unhex(t, c.hex), typ)
		got := Format(v, typ)
		if err != nil {
			got = errs.SQLState(err) + " " + err.Error()
		}
		if got != c.want {
			t.Errorf("ParseBinary(%s %s) = %q, want %q", c.typ, c.hex, got, c.want)
		}
	}
}

// TestBinaryRoundTrip checks, for random values of every type, that
// ParseBinary reads back exactly the value AppendBinary wrote, and that
// AppendBinary appends to what dst already holds.
func TestBinaryRoundTrip(t *testing.T) {
	for _, name := range append(binaryTestTypes, "unknown") {
		typ := binType(t, name)
		gen := binaryValueGen(typ)
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				v := gen.Draw(rt, "v")
				prefix := []byte{0xAA}
				b, err := AppendBinary(prefix, v, typ)
				if err != nil {
					rt.Fatalf("AppendBinary(%s): %v", Format(v, typ), err)
				}
				if b[0] != 0xAA {
					rt.Fatalf("AppendBinary overwrote dst")
				}
				b = b[1:]
				back, err := ParseBinary(b, typ)
				if err != nil {
					rt.Fatalf("ParseBinary(%x) of %s: %v", b, Format(v, typ), err)
				}
				if !identical(back, v) {
					rt.Fatalf("%s encodes as %x, which reads back as %s", Format(v, typ), b, Format(back, typ))
				}
			})
		})
	}
}

// TestAppendBinaryKinds checks which value kinds AppendBinary accepts for
// a type: the type's own, integers that fit, and either timestamp kind.
func TestAppendBinaryKinds(t *testing.T) {
	for _, c := range []struct {
		v    Value
		typ  string
		want string // hex, or the error's SQLSTATE and message
	}{
		{MakeInt(Int4, 7), "int8", "0000000000000007"},
		{MakeInt(Int8, -1), "int2", "ffff"},
		{MakeInt(Int8, 40000), "int2", "22003 smallint out of range"},
		{MakeInt(Int8, 1<<40), "int4", "22003 integer out of range"},
		{MakeText("ab"), "varchar(1)", "6162"},
		{MakeTimestamp(0), "timestamptz", "fffca2fec4c82000"},
		{MakeTimestampTZ(0), "timestamp", "fffca2fec4c82000"},
		{Null, "int4", "XX000 a NULL integer has no binary representation"},
		{MakeText("1"), "int4", "XX000 a text value cannot be sent as integer"},
		{MakeFloat4(1), "float8", "XX000 a real value cannot be sent as double precision"},
		{MakeDate(0), "timestamp", "XX000 a date value cannot be sent as timestamp without time zone"},
	} {
		typ := binType(t, c.typ)
		b, err := AppendBinary(nil, c.v, typ)
		got := hex.EncodeToString(b)
		if err != nil {
			got = errs.SQLState(err) + " " + err.Error()
		}
		if got != c.want {
			t.Errorf("AppendBinary(%s, %s) = %s, want %s", Format(c.v, typ), c.typ, got, c.want)
		}
	}
}

// FuzzParseBinary feeds arbitrary bytes to every type's receive function:
// it must never panic, must fail only with the errors PostgreSQL's receive
// functions raise, and every value it accepts must encode to bytes that
// read back as the same value.
func FuzzParseBinary(f *testing.F) {
	types := make([]Type, len(binaryTestTypes))
	for i, name := range binaryTestTypes {
		types[i] = binType(f, name)
	}
	for i, typ := range types {
		gen := binaryValueGen(typ)
		for seed := range 4 {
			b, err := AppendBinary(nil, gen.Example(seed), typ)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), b)
			if len(b) > 0 {
				f.Add(uint8(i), b[:len(b)-1])
			}
		}
	}
	f.Add(uint8(6), unhex(f, "0003 8000 4000 3fff 0000 270f 0001"))
	f.Add(uint8(6), unhex(f, "0001 7fff 0000 0000 0001"))
	f.Fuzz(func(t *testing.T, which uint8, src []byte) {
		typ := types[int(which)%len(types)]
		v, err := ParseBinary(src, typ)
		if err != nil {
			switch state := errs.SQLState(err); {
			case state == "08P01", state == "22P03", state == "22021", state == "22001", state == "22003", state == "22008":
			case typ.ID == Jsonb && (state == "22P02" || state == "22P05" || state == "XX000" || state == "54001"):
				// jsonb_recv parses the text as jsonb_in does and checks the
				// version byte with elog.
			default:
				t.Fatalf("ParseBinary(%s, %x): unexpected error %v", typ, src, err)
			}
			return
		}
		b, err := AppendBinary(nil, v, typ)
		if err != nil {
			t.Fatalf("ParseBinary(%s, %x) = %s, which AppendBinary rejects: %v", typ, src, Format(v, typ), err)
		}
		back, err := ParseBinary(b, typ)
		if err != nil || !identical(back, v) {
			t.Fatalf("ParseBinary(%s, %x) = %s, which encodes as %x and reads back as %s, %v",
				typ, src, Format(v, typ), b, Format(back, typ), err)
		}
	})
}

func BenchmarkAppendBinary(b *testing.B) {
	for _, c := range binaryBenchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = AppendBinary(buf[:0], c.v, c.typ); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseBinary(b *testing.B) {
	for _, c := range binaryBenchCases(b) {
		src, err := AppendBinary(nil, c.v, c.typ)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseBinary(src, c.typ); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type binaryBenchCase struct {
	name string
	typ  Type
	v    Value
}

func binaryBenchCases(b *testing.B) []binaryBenchCase {
	parse := func(typ, text string) Value {
		v, err := Parse(binType(b, typ), text)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	return []binaryBenchCase{
		{"int8", Of(Int8), MakeInt(Int8, -1234567890123)},
		{"numeric", Of(Numeric), parse("numeric", "-12345.6789")},
		{"numeric_40_digits", Of(Numeric), parse("numeric", "1234567890123456789012345.678901234567890")},
		{"text", Of(Text), MakeText("the quick brown fox jumps over the lazy dog")},
		{"timestamptz", Of(TimestampTZ), parse("timestamptz", "2026-11-30 01:02:03.456789+00")},
	}
}
