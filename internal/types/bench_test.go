package types

import (
	"testing"
)

func mustOp(b testing.TB, op string, l, r Type) *Operator {
	o, err := ResolveBinary(op, l, r)
	if err != nil {
		b.Fatal(err)
	}
	return o
}

func BenchmarkIntAdd(b *testing.B) {
	op := mustOp(b, "+", Of(Int4), Of(Int4))
	x, y := MakeInt(Int4, 12345), MakeInt(Int4, 678)
	b.ReportAllocs()
	for b.Loop() {
		v, err := op.Eval(x, y)
		if err != nil || v.Int() != 13023 {
			b.Fatal(v, err)
		}
	}
}

func BenchmarkInt8Compare(b *testing.B) {
	op := mustOp(b, "<", Of(Int8), Of(Int8))
	x, y := MakeInt(Int8, 12345), MakeInt(Int8, 678)
	b.ReportAllocs()
	for b.Loop() {
		v, _ := op.Eval(x, y)
		if v.Bool() {
			b.Fatal("12345 < 678")
		}
	}
}

func BenchmarkNumericAdd(b *testing.B) {
	op := mustOp(b, "+", Of(Numeric), Of(Numeric))
	x, _ := Parse(Of(Numeric), "12345.678")
	y, _ := Parse(Of(Numeric), "0.0042")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := op.Eval(x, y); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNumericDiv(b *testing.B) {
	op := mustOp(b, "/", Of(Numeric), Of(Numeric))
	x, _ := Parse(Of(Numeric), "12345.678")
	y, _ := Parse(Of(Numeric), "7")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := op.Eval(x, y); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendFormatInt(b *testing.B) {
	v := MakeInt(Int8, -1234567890123)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFormat(buf[:0], v, Of(Int8))
	}
}

func BenchmarkAppendFormatFloat8(b *testing.B) {
	v := MakeFloat8(0.1 + 0.2)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFormat(buf[:0], v, Of(Float8))
	}
}

func BenchmarkAppendFormatTimestamp(b *testing.B) {
	v := MakeTimestamp(1_795_000_000_123_456)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFormat(buf[:0], v, Of(Timestamp))
	}
}

func BenchmarkParseTimestamp(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseTimestamp("2026-11-30 01:02:03.5"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIntPathsDoNotAllocate pins the promise that integer arithmetic,
// comparison and formatting into a buffer allocate nothing.
func TestIntPathsDoNotAllocate(t *testing.T) {
	add := mustOp(t, "+", Of(Int4), Of(Int8))
	lt := mustOp(t, "<", Of(Int2), Of(Int4))
	div := mustOp(t, "/", Of(Int8), Of(Int8))
	x, y := MakeInt(Int4, 41), MakeInt(Int8, 1)
	buf := make([]byte, 0, 32)
	allocs := testing.AllocsPerRun(1000, func() {
		v, _ := add.Eval(x, y)
		_, _ = lt.Eval(MakeInt(Int2, 1), x)
		_, _ = div.Eval(y, v)
		_ = Compare(x, MakeInt(Int4, 7))
		buf = AppendFormat(buf[:0], v, Of(Int8))
		_, _ = Cast(v, Of(Int4), false)
	})
	if allocs != 0 {
		t.Fatalf("integer paths allocate %v times per run", allocs)
	}
	// Overflow errors are preallocated too.
	ovf := mustOp(t, "+", Of(Int4), Of(Int4))
	big := MakeInt(Int4, 2147483647)
	allocs = testing.AllocsPerRun(1000, func() { _, _ = ovf.Eval(big, big) })
	if allocs != 0 {
		t.Fatalf("integer overflow allocates %v times per run", allocs)
	}
}
