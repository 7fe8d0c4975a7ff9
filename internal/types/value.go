package types

import (
	"unsafe"

	"github.com/cockroachdb/apd/v3"
)

// Value is one SQL value. Scalars (booleans, integers, floats, dates,
// timestamps) live in a word with no boxing; text, bytea, numeric, jsonb
// and arrays are held by reference; an interval uses two words. The zero
// Value is NULL.
//
// A non-NULL Value's kind is the TypeID of its representation: VARCHAR values
// have kind Text (the length limit is a property of the column's Type, not of
// the value) and TIMESTAMPTZ values have kind TimestampTZ.
type Value struct {
	kind Kind
	n    int64  // bool (0/1), integers, float bits, date days, timestamp micros, interval micros
	aux  int64  // interval: months<<32 | uint32(days)
	s    string // text, bytea
	// ref is what a NUMERIC, JSONB or array value refers to: an
	// *apd.Decimal, a *JSON or an *arrayData (the kind says which), never
	// mutated once in a Value; nil for other kinds. One field serves both so that a Value
	// stays six words; dec and arrayBody convert it back to the pointer
	// type it was made from.
	ref unsafe.Pointer
}

// dec returns a NUMERIC value's decimal (nil for other kinds, so that an
// array's body is never read as a decimal).
func (v Value) dec() *apd.Decimal {
	if v.kind != Numeric {
		return nil
	}
	return (*apd.Decimal)(v.ref)
}

// arrayBody returns an array value's body (nil for other kinds).
func (v Value) arrayBody() *arrayData {
	if !v.kind.IsArray() {
		return nil
	}
	return (*arrayData)(v.ref)
}

// Kind is the representation tag of a Value. KindNull is the zero value.
type Kind = TypeID

// KindNull is the kind of the NULL value.
const KindNull = Unknown

// Null is the NULL value.
var Null = Value{}

// IsNull reports whether v is NULL.
func (v Value) IsNull() bool { return v.kind == KindNull }

// Kind returns v's representation tag (KindNull for NULL).
func (v Value) Kind() Kind { return v.kind }

// MakeBool returns a BOOLEAN value.
func MakeBool(b bool) Value {
	if b {
		return Value{kind: Bool, n: 1}
	}
	return Value{kind: Bool}
}

// MakeInt returns an integer value of the given kind (Int2, Int4 or Int8).
// The caller guarantees n fits in the kind.
func MakeInt(k Kind, n int64) Value { return Value{kind: k, n: n} }

// MakeFloat4 returns a REAL value.
func MakeFloat4(f float32) Value { return Value{kind: Float4, n: int64(math32bits(f))} }

// MakeFloat8 returns a DOUBLE PRECISION value.
func MakeFloat8(f float64) Value { return Value{kind: Float8, n: int64(math64bits(f))} }

// MakeNumeric returns a NUMERIC value. d must not be modified afterwards.
// A decimal with a positive exponent or a negative zero is replaced by its
// canonical form (see doc.go), so d's display scale is what Format prints.
func MakeNumeric(d *apd.Decimal) Value {
	return Value{kind: Numeric, ref: unsafe.Pointer(canonical(d))}
}

// MakeText returns a TEXT (or VARCHAR) value.
func MakeText(s string) Value { return Value{kind: Text, s: s} }

// MakeBytea returns a BYTEA value.
func MakeBytea(b []byte) Value { return Value{kind: Bytea, s: string(b)} }

// MakeDate returns a DATE value from days since 1970-01-01. Infinity is
// math.MinInt32/math.MaxInt32 days.
func MakeDate(days int32) Value { return Value{kind: Date, n: int64(days)} }

// MakeTimestamp returns a TIMESTAMP value from microseconds since
// 1970-01-01 00:00:00.
func MakeTimestamp(micros int64) Value { return Value{kind: Timestamp, n: micros} }

// MakeTimestampTZ returns a TIMESTAMPTZ value from microseconds since
// 1970-01-01 00:00:00 UTC.
func MakeTimestampTZ(micros int64) Value { return Value{kind: TimestampTZ, n: micros} }

// IntervalValue is PostgreSQL's interval: months, days and microseconds
// kept apart, as PostgreSQL keeps them.
type IntervalValue struct {
	Months int32
	Days   int32
	Micros int64
}

// MakeInterval returns an INTERVAL value.
func MakeInterval(iv IntervalValue) Value {
	return Value{kind: Interval, n: iv.Micros, aux: int64(iv.Months)<<32 | int64(uint32(iv.Days))}
}

// Bool returns a BOOLEAN value's truth.
func (v Value) Bool() bool { return v.n != 0 }

// Int returns an integer value (Int2, Int4, Int8).
func (v Value) Int() int64 { return v.n }

// Float returns a REAL or DOUBLE PRECISION value as float64.
func (v Value) Float() float64 {
	if v.kind == Float4 {
		return float64(math32frombits(uint32(v.n)))
	}
	return math64frombits(uint64(v.n))
}

// Decimal returns a NUMERIC value. The result must not be modified.
func (v Value) Decimal() *apd.Decimal { return v.dec() }

// Str returns a TEXT value's string, or a BYTEA value's bytes as a string.
func (v Value) Str() string { return v.s }

// Days returns a DATE value's days since 1970-01-01.
func (v Value) Days() int32 { return int32(v.n) }

// Micros returns a TIMESTAMP or TIMESTAMPTZ value's microseconds since the
// Unix epoch.
func (v Value) Micros() int64 { return v.n }

// TimeTZ returns a TIMETZ value's time of day (microseconds since
// midnight) and zone (seconds west of UTC, as PostgreSQL keeps it).
func (v Value) TimeTZ() (micros int64, zoneWest int32) { return v.n, int32(v.aux) }

// Interval returns an INTERVAL value.
func (v Value) Interval() IntervalValue {
	return IntervalValue{Months: int32(v.aux >> 32), Days: int32(uint32(v.aux)), Micros: v.n}
}
