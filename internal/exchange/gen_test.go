package exchange

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
	"pgregory.net/rapid"
)

// This file draws batches of rows over every value kind, leaning on the
// values an exact transport could lose: float -0 and NaN payloads,
// numeric scales and specials, intervals that are equal but split
// differently, 24:00:00, infinite dates and timestamps, bytes that are not
// UTF-8, arrays of other shapes.

// scalarKinds are the kinds of non-array values.
var scalarKinds = []types.Kind{
	types.Bool, types.Int2, types.Int4, types.Int8, types.Numeric, types.Float4, types.Float8,
	types.Text, types.Bytea, types.Date, types.Timestamp, types.TimestampTZ, types.Interval,
	types.Jsonb, types.Time, types.TimeTZ, types.Oid, types.RegClass, types.RegType,
}

// everyKind is scalarKinds and an array over each.
var everyKind = func() []types.Kind {
	ks := append([]types.Kind(nil), scalarKinds...)
	for _, k := range scalarKinds {
		ks = append(ks, types.ArrayOf(k))
	}
	return ks
}()

// pick draws one of vs a third of the time, else from g.
func pick[V any](t *rapid.T, name string, g *rapid.Generator[V], vs ...V) V {
	if rapid.IntRange(0, 2).Draw(t, name+" pick") == 0 {
		return vs[rapid.IntRange(0, len(vs)-1).Draw(t, name+" edge")]
	}
	return g.Draw(t, name)
}

// drawString draws a valid UTF-8 string or arbitrary bytes.
func drawString(t *rapid.T, name string) string {
	if rapid.Bool().Draw(t, name+" utf8") {
		return rapid.String().Draw(t, name)
	}
	return string(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, name+" bytes"))
}

// drawDecimal draws a numeric of any scale and sign, or a special.
func drawDecimal(t *rapid.T) *apd.Decimal {
	d := new(apd.Decimal)
	if rapid.IntRange(0, 5).Draw(t, "numeric special") == 0 {
		d.Form = rapid.SampledFrom([]apd.Form{apd.NaN, apd.Infinite}).Draw(t, "form")
		d.Negative = d.Form == apd.Infinite && rapid.Bool().Draw(t, "-inf")
		return d
	}
	d.Coeff.SetString(rapid.StringMatching(`0|[1-9][0-9]{0,40}`).Draw(t, "coefficient"), 10)
	d.Exponent = -int32(rapid.IntRange(0, 30).Draw(t, "scale"))
	d.Negative = rapid.Bool().Draw(t, "negative")
	return d
}

// jsonTexts are jsonb documents with numbers at several scales, nesting
// and strings with escapes.
var jsonTexts = []string{
	`null`, `true`, `1.50`, `-0.0`, `"a\tb\u00e9"`, `[]`, `{}`, `[1, 2.0, "x", null]`,
	`{"a": {"b": [1e-7, 12345678901234567890]}, "aa": false}`, `"\ud83d\ude00"`,
}

// drawScalar draws a non-NULL value of scalar kind k.
func drawScalar(t *rapid.T, k types.Kind) types.Value {
	switch k {
	case types.Bool:
		return types.MakeBool(rapid.Bool().Draw(t, "bool"))
	case types.Int2:
		return types.MakeInt(k, int64(pick(t, "int2", rapid.Int16(), math.MinInt16, math.MaxInt16)))
	case types.Int4:
		return types.MakeInt(k, int64(pick(t, "int4", rapid.Int32(), math.MinInt32, math.MaxInt32)))
	case types.Int8:
		return types.MakeInt(k, pick(t, "int8", rapid.Int64(), math.MinInt64, math.MaxInt64))
	case types.Float4:
		return types.MakeFloat4(pick(t, "float4", rapid.Float32(), float32(math.Copysign(0, -1)),
			float32(math.NaN()), math.Float32frombits(0xffc00123), float32(math.Inf(-1)), math.SmallestNonzeroFloat32))
	case types.Float8:
		return types.MakeFloat8(pick(t, "float8", rapid.Float64(), math.Copysign(0, -1),
			math.NaN(), math.Float64frombits(0x7ff8000000000abc), math.Inf(1), -math.MaxFloat64))
	case types.Numeric:
		return types.MakeNumeric(drawDecimal(t))
	case types.Text:
		return types.MakeText(drawString(t, "text"))
	case types.Bytea:
		return types.MakeBytea([]byte(drawString(t, "bytea")))
	case types.Date:
		return types.MakeDate(pick(t, "date", rapid.Int32Range(-2_451_545, 2_900_000), math.MinInt32, math.MaxInt32))
	case types.Timestamp:
		return types.MakeTimestamp(pick(t, "ts", rapid.Int64(), math.MinInt64, math.MaxInt64, 0))
	case types.TimestampTZ:
		return types.MakeTimestampTZ(pick(t, "tstz", rapid.Int64(), math.MinInt64, math.MaxInt64, -1))
	case types.Interval:
		return types.MakeInterval(types.IntervalValue{
			Months: pick(t, "months", rapid.Int32(), 1, 0),
			Days:   pick(t, "days", rapid.Int32(), 30, 0),
			Micros: pick(t, "micros", rapid.Int64(), 0, 86_400_000_000),
		})
	case types.Jsonb:
		j, err := types.ParseJSONB(rapid.SampledFrom(jsonTexts).Draw(t, "json"))
		if err != nil {
			panic(err)
		}
		return types.MakeJSONB(j)
	case types.Time:
		return types.MakeTime(pick(t, "time", rapid.Int64Range(0, maxTimeMicros), 0, maxTimeMicros))
	case types.TimeTZ:
		return types.MakeTimeTZ(pick(t, "timetz", rapid.Int64Range(0, maxTimeMicros), maxTimeMicros),
			rapid.Int32Range(-57_599, 57_599).Draw(t, "zone"))
	case types.Oid:
		return types.MakeOID(rapid.Uint32().Draw(t, "oid"))
	case types.RegClass, types.RegType:
		return types.MakeReg(k, rapid.Uint32().Draw(t, "oid"), rapid.SampledFrom([]string{"", "t", "pg_class"}).Draw(t, "name"))
	}
	panic("no generator for kind")
}

// drawValue draws a value of kind k, NULL one time in six.
func drawValue(t *rapid.T, k types.Kind) types.Value {
	if rapid.IntRange(0, 5).Draw(t, "null") == 0 {
		return types.Null
	}
	if !k.IsArray() {
		return drawScalar(t, k)
	}
	elems := make([]types.Value, rapid.IntRange(0, 3).Draw(t, "elems"))
	for i := range elems {
		elems[i] = drawValue(t, k.Elem())
	}
	if len(elems) > 0 && rapid.Bool().Draw(t, "shaped") {
		return types.MakeArrayShape(k.Elem(), elems, []int{1, len(elems)}, []int{rapid.IntRange(-3, 3).Draw(t, "lb"), 1})
	}
	return types.MakeArray(k.Elem(), elems)
}

// drawBatch draws a batch of up to maxRows rows over random columns; now
// and then a column mixes kinds or is all NULL.
func drawBatch(t *rapid.T, maxRows int) zset.Batch {
	kinds := rapid.SliceOfN(rapid.SampledFrom(everyKind), 0, 6).Draw(t, "kinds")
	mixed := rapid.IntRange(-1, len(kinds)-1).Draw(t, "mixed column")
	b := make(zset.Batch, rapid.IntRange(0, maxRows).Draw(t, "rows"))
	for i := range b {
		row := make(zset.Row, len(kinds))
		for j, k := range kinds {
			if j == mixed {
				k = rapid.SampledFrom(everyKind).Draw(t, "mixed kind")
			}
			row[j] = drawValue(t, k)
		}
		b[i] = zset.Entry{Row: row, Weight: pick(t, "weight", rapid.Int64Range(-3, 3), math.MinInt64, math.MaxInt64, 0)}
	}
	return b
}
