package types

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"
)

// binaryTestTypes are the types the binary format tests cover: every
// TypeID, and the typmods a receive function applies.
var binaryTestTypes = []string{
	"bool", "int2", "int4", "int8", "float4", "float8",
	"numeric", "numeric(5,2)", "numeric(3,-1)", "numeric(20,20)",
	"text", "varchar", "varchar(3)", "bytea",
	"date", "timestamp", "timestamp(0)", "timestamptz", "timestamptz(3)",
	"interval", "interval(2)", "jsonb", "timetz", "timetz(2)",
}

// binaryValueGen generates the values of typ: every value of the type
// PostgreSQL can hold, with its typmod applied, biased towards edges.
func binaryValueGen(typ Type) *rapid.Generator[Value] {
	switch typ.ID {
	case Bool:
		return rapid.Map(rapid.Bool(), MakeBool)
	case Int2:
		return rapid.Map(rapid.Int16(), func(n int16) Value { return MakeInt(Int2, int64(n)) })
	case Int4:
		return rapid.Map(rapid.Int32(), func(n int32) Value { return MakeInt(Int4, int64(n)) })
	case Int8:
		return rapid.Map(rapid.Int64(), func(n int64) Value { return MakeInt(Int8, n) })
	case Float4:
		return rapid.OneOf(
			rapid.Map(rapid.Float32(), MakeFloat4),
			rapid.Map(rapid.Uint32(), func(b uint32) Value { return MakeFloat4(math.Float32frombits(b)) }),
			rapid.SampledFrom([]Value{MakeFloat4(float32(math.Copysign(0, -1))), MakeFloat4(float32(float8NaN)),
				MakeFloat4(float32(math.Inf(1))), MakeFloat4(float32(math.Inf(-1)))}))
	case Float8:
		return rapid.OneOf(
			rapid.Map(rapid.Float64(), MakeFloat8),
			rapid.Map(rapid.Uint64(), func(b uint64) Value { return MakeFloat8(math.Float64frombits(b)) }),
			rapid.SampledFrom([]Value{MakeFloat8(math.Copysign(0, -1)), MakeFloat8(float8NaN),
				MakeFloat8(math.Inf(1)), MakeFloat8(math.Inf(-1))}))
	case Numeric:
		return numericValueGen(typ)
	case Jsonb:
		return rapid.Map(rapid.SampledFrom(jsonbOracleValues), func(s string) Value {
			j, err := ParseJSONB(s)
			if err != nil {
				panic(err)
			}
			return MakeJSONB(j)
		})
	case Unknown, Text, Varchar:
		runes := rapid.OneOf(rapid.RuneFrom([]rune("a é€😀 '\\\"\t\n")), rapid.Rune()).Filter(func(r rune) bool { return r != 0 })
		maxRunes := -1
		if typ.ID == Varchar && typ.Length >= 0 {
			maxRunes = int(typ.Length)
		}
		return rapid.Map(rapid.StringOfN(runes, 0, maxRunes, -1), MakeText)
	case Bytea:
		return rapid.Map(rapid.SliceOf(rapid.Byte()), MakeBytea)
	case Date:
		return rapid.OneOf(
			rapid.Map(rapid.Int32Range(minDateDays, endDateDays-1), MakeDate),
			rapid.Map(rapid.Int32Range(-200_000, 200_000), MakeDate),
			rapid.SampledFrom([]Value{MakeDate(DateNegInfinity), MakeDate(DatePosInfinity),
				MakeDate(minDateDays), MakeDate(endDateDays - 1), MakeDate(-pgEpochDays), MakeDate(-pgEpochDays - 1)}))
	case Timestamp, TimestampTZ:
		id := typ.ID
		finite := rapid.OneOf(
			rapid.Int64Range(minTimestamp, endTimestamp-1),
			rapid.Int64Range(-5e15, 5e15),
			rapid.Map(rapid.Int64Range(-5e9, 5e9), func(s int64) int64 { return s * microsPerSecond }),
			rapid.SampledFrom([]int64{minTimestamp, endTimestamp - 1, pgEpochMicros, pgEpochMicros - 1, 0, -1}))
		return rapid.OneOf(
			rapid.Map(finite, func(us int64) Value {
				us, err := roundTimestampPrecision(us, typ.Precision)
				if err != nil {
					return Value{kind: id, n: TimestampPosInfinity}
				}
				return Value{kind: id, n: us}
			}),
			rapid.SampledFrom([]Value{{kind: id, n: TimestampNegInfinity}, {kind: id, n: TimestampPosInfinity}}))
	case TimeTZ:
		return rapid.Custom(func(t *rapid.T) Value {
			micros := rapid.OneOf(rapid.Int64Range(0, microsPerDay), rapid.SampledFrom([]int64{0, microsPerDay, microsPerDay - 1})).Draw(t, "micros")
			zone := rapid.OneOf(rapid.Int32Range(-tzDispLimit+1, tzDispLimit-1),
				rapid.Map(rapid.Int32Range(-15*4, 15*4), func(q int32) int32 { return q * 900 }),
				rapid.SampledFrom([]int32{0, -tzDispLimit + 1, tzDispLimit - 1})).Draw(t, "zone")
			return MakeTimeTZ(roundTimePrecision(micros, typ.Precision), zone)
		})
	case Interval:
		return rapid.Custom(func(t *rapid.T) Value {
			iv := IntervalValue{
				Months: rapid.Int32().Draw(t, "months"),
				Days:   rapid.Int32().Draw(t, "days"),
				Micros: rapid.Int64().Draw(t, "micros"),
			}
			return MakeInterval(roundIntervalPrecision(iv, typ.Precision))
		})
	}
	panic("no generator for " + typ.String())
}

// numericValueGen generates NUMERIC values of typ: NaN, the infinities
// (unconstrained only), and finite values from a few digits to hundreds,
// with scales from negative (large integers) to hundreds of places.
func numericValueGen(typ Type) *rapid.Generator[Value] {
	maxDigits, minScale, maxScale := 40, -30, 40
	if typ.Precision >= 0 {
		maxDigits = int(typ.Precision) + 2
		minScale, maxScale = int(typ.Scale)-2, int(typ.Scale)+2
	}
	finite := rapid.Custom(func(t *rapid.T) Value {
		n := rapid.OneOf(rapid.IntRange(1, maxDigits), rapid.IntRange(1, maxDigits*8)).Draw(t, "ndigits")
		digits := rapid.StringOfN(rapid.RuneFrom([]rune("0123456789")), n, n, -1).Draw(t, "digits")
		scale := rapid.OneOf(rapid.IntRange(minScale, maxScale), rapid.IntRange(minScale*10, maxScale*10)).Draw(t, "scale")
		neg := rapid.Bool().Draw(t, "neg")
		coeff, _ := new(apd.BigInt).SetString(digits, 10)
		if scale < 0 {
			coeff.Mul(coeff, pow10(int64(-scale)))
			scale = 0
		}
		d, err := applyNumericTypmod(newDec(neg, coeff, int32(scale)), typ)
		if err != nil {
			return Null
		}
		return MakeNumeric(d)
	}).Filter(func(v Value) bool { return !v.IsNull() })
	specials := []Value{MakeNumeric(decNaN)}
	if typ.Precision < 0 {
		specials = append(specials, MakeNumeric(decPosInf), MakeNumeric(decNegInf))
	}
	return rapid.OneOf(finite, finite, finite, rapid.SampledFrom(specials))
}

// identical reports whether a and b are the same value, down to what a
// client could tell apart: a numeric's display scale, a float's bits.
func identical(a, b Value) bool {
	if a.kind != b.kind {
		return false
	}
	if a.kind == Numeric {
		return FormatNumeric(a.dec()) == FormatNumeric(b.dec())
	}
	return a.n == b.n && a.aux == b.aux && a.s == b.s
}
