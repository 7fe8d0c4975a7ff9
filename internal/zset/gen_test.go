package zset

import (
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/types"
	"pgregory.net/rapid"
)

// This file holds rapid generators of values of every kind, biased towards
// edge values and towards values that are equal under types.Compare but
// differ in representation.

// allKinds lists every value kind a key or row can hold.
var allKinds = []types.Kind{
	types.Bool, types.Int2, types.Int4, types.Int8, types.Numeric,
	types.Float4, types.Float8, types.Text, types.Bytea, types.Date,
	types.Timestamp, types.TimestampTZ, types.Interval,
	types.ArrayOf(types.Int4), types.ArrayOf(types.Text), types.ArrayOf(types.Numeric),
	types.ArrayOf(types.Float8), types.ArrayOf(types.Interval), types.ArrayOf(types.Bool),
	types.Jsonb, types.ArrayOf(types.Jsonb), types.Time, types.ArrayOf(types.Time),
	types.TimeTZ, types.ArrayOf(types.TimeTZ),
}

// genKind draws one of allKinds.
func genKind() *rapid.Generator[types.Kind] { return rapid.SampledFrom(allKinds) }

// genValue draws a value of kind k, or NULL about one time in eight.
func genValue(k types.Kind) *rapid.Generator[types.Value] {
	return rapid.Custom(func(t *rapid.T) types.Value {
		if rapid.IntRange(0, 7).Draw(t, "null") == 0 {
			return types.Null
		}
		return genNonNull(k).Draw(t, "value")
	})
}

// genNonNull draws a non-NULL value of kind k.
func genNonNull(k types.Kind) *rapid.Generator[types.Value] {
	if k.IsArray() {
		// Short arrays, so that equal prefixes, NULL elements and arrays
		// that extend others are common.
		// Some of them have lower bounds other than 1 or more than one
		// dimension, with the same elements as plain arrays.
		return rapid.Custom(func(t *rapid.T) types.Value {
			elems := rapid.SliceOfN(genValue(k.Elem()), 0, 4).Draw(t, "elems")
			n := len(elems)
			lb := func(name string) int {
				return rapid.SampledFrom([]int{1, 1, 0, -1, 2, math.MinInt32, math.MaxInt32 - n}).Draw(t, name)
			}
			var dims, lbs []int
			switch rapid.IntRange(0, 3).Draw(t, "shape") {
			case 0:
				return types.MakeArray(k.Elem(), elems)
			case 1:
				dims, lbs = []int{n}, []int{lb("lb")}
			case 2:
				dims, lbs = []int{1, n}, []int{lb("lb1"), lb("lb2")}
				if rapid.Bool().Draw(t, "transpose") {
					dims = []int{n, 1}
				}
			case 3:
				dims, lbs = []int{1, 1, n}, []int{1, lb("lb2"), 1}
			}
			return types.MakeArrayShape(k.Elem(), elems, dims, lbs)
		})
	}
	switch k {
	case types.Bool:
		return rapid.Map(rapid.Bool(), types.MakeBool)
	case types.Int2:
		return rapid.Map(edgy(rapid.Int16(), math.MinInt16, -1, 0, 1, math.MaxInt16),
			func(n int16) types.Value { return types.MakeInt(types.Int2, int64(n)) })
	case types.Int4:
		return rapid.Map(edgy(rapid.Int32(), math.MinInt32, -1, 0, 1, math.MaxInt32),
			func(n int32) types.Value { return types.MakeInt(types.Int4, int64(n)) })
	case types.Int8:
		return rapid.Map(edgy(rapid.Int64(), math.MinInt64, -1, 0, 1, math.MaxInt64),
			func(n int64) types.Value { return types.MakeInt(types.Int8, n) })
	case types.Float4:
		return rapid.Map(edgy(rapid.Float32(), float32(math.Copysign(0, -1)), 0,
			float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
			math.Float32frombits(0xffc00001), // a negative NaN with a payload
			math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
			math.MaxFloat32, -math.MaxFloat32, 1, -1),
			types.MakeFloat4)
	case types.Float8:
		return rapid.Map(edgy(rapid.Float64(), math.Copysign(0, -1), 0,
			math.Inf(1), math.Inf(-1), math.NaN(),
			math.Float64frombits(0xfff8000000000001),
			math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
			math.MaxFloat64, -math.MaxFloat64, 1, -1),
			types.MakeFloat8)
	case types.Numeric:
		return rapid.Map(genDecimal(), types.MakeNumeric)
	case types.Text:
		return rapid.Map(genBytes(), func(s string) types.Value { return types.MakeText(s) })
	case types.Bytea:
		return rapid.Map(genBytes(), func(s string) types.Value { return types.MakeBytea([]byte(s)) })
	case types.Date:
		return rapid.Map(edgy(rapid.Int32(), math.MinInt32, math.MaxInt32, -1, 0, 1, -719528),
			types.MakeDate)
	case types.Timestamp, types.TimestampTZ:
		make := types.MakeTimestamp
		if k == types.TimestampTZ {
			make = types.MakeTimestampTZ
		}
		return rapid.Map(edgy(rapid.Int64(), math.MinInt64, math.MaxInt64, -1, 0, 1, -86_400_000_000),
			make)
	case types.Time:
		return rapid.Map(edgy(rapid.Int64Range(0, 86_400_000_000), 0, 86_400_000_000, 1, 43_200_000_000), types.MakeTime)
	case types.TimeTZ:
		return rapid.Custom(func(t *rapid.T) types.Value {
			micros := edgy(rapid.Int64Range(0, 86_400_000_000), 0, 86_400_000_000, 1).Draw(t, "micros")
			zone := edgy(rapid.Int32Range(-57_599, 57_599), -57_599, 57_599, 0, -3600, 3600).Draw(t, "zone")
			return types.MakeTimeTZ(micros, zone)
		})
	case types.Interval:
		return rapid.Map(genInterval(), types.MakeInterval)
	case types.Jsonb:
		return rapid.Map(genJSON(3), types.MakeJSONB)
	}
	panic("no generator for kind")
}

// edgy draws from g, or one of the edge values a third of the time.
func edgy[V any](g *rapid.Generator[V], edges ...V) *rapid.Generator[V] {
	return rapid.Custom(func(t *rapid.T) V {
		if rapid.IntRange(0, 2).Draw(t, "edge") == 0 {
			return rapid.SampledFrom(edges).Draw(t, "edge value")
		}
		return g.Draw(t, "any")
	})
}

// genBytes draws short strings over an alphabet rich in 0x00 and 0xff, or
// arbitrary strings.
func genBytes() *rapid.Generator[string] {
	small := rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}), 0, 6),
		func(b []byte) string { return string(b) })
	return rapid.OneOf(small, small, rapid.String())
}

// genDecimal draws numerics: specials, zeros of every scale and sign, small
// values at several scales (so equal values with different scales are
// common) and long coefficients at extreme exponents.
func genDecimal() *rapid.Generator[*apd.Decimal] {
	return rapid.Custom(func(t *rapid.T) *apd.Decimal {
		d := new(apd.Decimal)
		switch rapid.IntRange(0, 9).Draw(t, "numeric shape") {
		case 0:
			d.Form = rapid.SampledFrom([]apd.Form{apd.NaN, apd.NaNSignaling, apd.Infinite}).Draw(t, "form")
			d.Negative = rapid.Bool().Draw(t, "negative")
			return d
		case 1, 2, 3, 4, 5:
			coeff := rapid.Uint64Range(0, 1200).Draw(t, "small coefficient")
			scale := rapid.IntRange(0, 3).Draw(t, "scale")
			for range rapid.IntRange(0, 3).Draw(t, "extra zeros") {
				coeff *= 10
				scale++
			}
			d.Coeff.SetUint64(coeff)
			d.Exponent = int32(-scale)
		default:
			digits := rapid.StringMatching(`[1-9][0-9]{0,45}`).Draw(t, "digits")
			d.Coeff.SetString(digits, 10)
			d.Exponent = int32(rapid.IntRange(-60, 60).Draw(t, "exponent"))
		}
		d.Negative = rapid.Bool().Draw(t, "negative")
		return d
	})
}

// genJSON draws jsonb trees of at most depth levels: scalars of every
// kind (numbers equal at different scales, strings sharing prefixes),
// arrays and objects of a few members (so counts often tie and the
// top-level raw scalar rule matters).
func genJSON(depth int) *rapid.Generator[*types.JSON] {
	return rapid.Custom(func(t *rapid.T) *types.JSON {
		shape := rapid.IntRange(0, 6).Draw(t, "json shape")
		if depth == 0 && shape >= 5 {
			shape = rapid.IntRange(0, 4).Draw(t, "json leaf")
		}
		switch shape {
		case 0:
			return types.JSONNullNode()
		case 1:
			return types.JSONBoolNode(rapid.Bool().Draw(t, "json bool"))
		case 2:
			d := genDecimal().Filter(func(d *apd.Decimal) bool { return d.Form == apd.Finite }).Draw(t, "json number")
			return types.JSONNumberNode(d)
		case 3, 4:
			return types.JSONStringNode(genJSONText().Draw(t, "json string"))
		case 5:
			return types.JSONArrayNode(rapid.SliceOfN(genJSON(depth-1), 0, 3).Draw(t, "json elems"))
		}
		keys := rapid.SliceOfN(genJSONText(), 0, 3).Draw(t, "json keys")
		vals := make([]*types.JSON, len(keys))
		for i := range vals {
			vals[i] = genJSON(depth-1).Draw(t, "json value")
		}
		return types.NewJSONObject(keys, vals)
	})
}

// genJSONText draws the text of a JSON string: no NUL, which jsonb cannot
// hold.
func genJSONText() *rapid.Generator[string] {
	small := rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte{0x01, 'a', 'b', '"', 0xc3, 0xa9}), 0, 4),
		func(b []byte) string { return string(b) })
	return rapid.OneOf(small, small, rapid.StringMatching(`[^\x00]{0,8}`))
}

// genInterval draws intervals: small ones around the month/day/microsecond
// boundaries (so '1 mon' vs '30 days' collisions are common) and extremes.
func genInterval() *rapid.Generator[types.IntervalValue] {
	const day = 86_400_000_000
	return rapid.Custom(func(t *rapid.T) types.IntervalValue {
		if rapid.Bool().Draw(t, "small interval") {
			return types.IntervalValue{
				Months: int32(rapid.IntRange(-2, 2).Draw(t, "months")),
				Days:   int32(rapid.IntRange(-61, 61).Draw(t, "days")),
				Micros: int64(rapid.IntRange(-2, 2).Draw(t, "day multiple"))*day +
					int64(rapid.IntRange(-1, 1).Draw(t, "micros")),
			}
		}
		return types.IntervalValue{
			Months: edgy(rapid.Int32(), math.MinInt32, math.MaxInt32, 0).Draw(t, "months"),
			Days:   edgy(rapid.Int32(), math.MinInt32, math.MaxInt32, 0).Draw(t, "days"),
			Micros: edgy(rapid.Int64(), math.MinInt64, math.MaxInt64, 0, day, -day).Draw(t, "micros"),
		}
	})
}

// genRow draws a row whose values have the given kinds.
func genRow(kinds []types.Kind) *rapid.Generator[Row] {
	return rapid.Custom(func(t *rapid.T) Row {
		row := make(Row, len(kinds))
		for i, k := range kinds {
			row[i] = genValue(k).Draw(t, "column")
		}
		return row
	})
}

// identical reports whether a and b have the same kind and the same exact
// representation (float bits, numeric scale and sign, interval fields).
func identical(a, b types.Value) bool { return identicalValues(a, b) }

// describe formats a value for failure messages without types.Format.
func describe(v types.Value) string {
	var b strings.Builder
	b.WriteString(kindLabel(v.Kind()))
	b.WriteByte('(')
	switch v.Kind() {
	case types.KindNull:
	case types.Bool:
		b.WriteString(map[bool]string{true: "true", false: "false"}[v.Bool()])
	case types.Int2, types.Int4, types.Int8, types.Date, types.Timestamp, types.TimestampTZ:
		b.WriteString(itoa(v.Int()))
	case types.Float4, types.Float8:
		b.WriteString(ftoa(v.Float()))
	case types.Numeric:
		b.WriteString(v.Decimal().String())
	case types.Text, types.Bytea:
		b.WriteString(quote(v.Str()))
	case types.TimeTZ:
		micros, zone := v.TimeTZ()
		b.WriteString(itoa(micros) + "us " + itoa(int64(zone)) + "s")
	case types.Interval:
		iv := v.Interval()
		b.WriteString(itoa(int64(iv.Months)) + "m " + itoa(int64(iv.Days)) + "d " + itoa(iv.Micros) + "us")
	case types.Jsonb:
		b.WriteString(types.FormatJSONB(v.JSONB()))
	}
	if v.Kind().IsArray() {
		b.WriteString(describeRow(v.Elems()))
	}
	b.WriteByte(')')
	return b.String()
}

func describeRow(r Row) string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = describe(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func kindLabel(k types.Kind) string {
	if k.IsArray() {
		return kindLabel(k.Elem()) + "[]"
	}
	return [...]string{"null", "bool", "int2", "int4", "int8", "numeric", "float4", "float8",
		"text", "varchar", "bytea", "date", "timestamp", "timestamptz", "interval", "jsonb"}[k]
}
