package types

import (
	"math"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// The expectations in this file were taken from PostgreSQL 15 (TimeZone
// UTC, DateStyle ISO, IntervalStyle postgres, extra_float_digits 1); the
// oracle tests recheck them against a live server when one is installed.

// parseFormat is input then output, or the error's SQLSTATE and message.
func parseFormat(t *testing.T, typ Type, in string) string {
	t.Helper()
	v, err := Parse(typ, in)
	if err != nil {
		return "ERROR " + errs.SQLState(err) + ": " + err.Error()
	}
	return Format(v, typ)
}

func TestParseFormat(t *testing.T) {
	for _, c := range []struct {
		typ      Type
		in, want string
	}{
		{Of(Bool), " t ", "t"},
		{Of(Bool), "TR", "t"},
		{Of(Bool), "of", "f"},
		{Of(Bool), "o", `ERROR 22P02: invalid input syntax for type boolean: "o"`},
		{Of(Int2), " +12 ", "12"},
		{Of(Int2), "99999", `ERROR 22003: value "99999" is out of range for type smallint`},
		{Of(Int4), "  12 ", "12"},
		{Of(Int4), "1e3", `ERROR 22P02: invalid input syntax for type integer: "1e3"`},
		{Of(Int4), "abc", `ERROR 22P02: invalid input syntax for type integer: "abc"`},
		{Of(Int8), "-9223372036854775808", "-9223372036854775808"},
		{Of(Int8), "9223372036854775808", `ERROR 22003: value "9223372036854775808" is out of range for type bigint`},
		{Of(Numeric), "1.50", "1.50"},
		{Of(Numeric), "-0.00", "0.00"},
		{Of(Numeric), "1.5e2", "150"},
		{Of(Numeric), "1e-3", "0.001"},
		{Of(Numeric), " nan ", "NaN"},
		{Of(Numeric), "-inf", "-Infinity"},
		{Of(Numeric), "1.5e", `ERROR 22P02: invalid input syntax for type numeric: "1.5e"`},
		{Of(Numeric), "1e131072", "ERROR 22003: value overflows numeric format"},
		{Of(Numeric), "0e999999999", "0"},
		{Of(Numeric), "0.00e-5", "0.0000000"},
		{Of(Numeric), "0e-999999999", "ERROR 22003: value overflows numeric format"},
		{NumericType(5, 2), "1.235", "1.24"},
		{NumericType(5, 2), "-1.235", "-1.24"},
		{NumericType(5, 2), "999.995", "ERROR 22003: numeric field overflow"},
		{NumericType(5, 2), "Infinity", "ERROR 22003: numeric field overflow"},
		{NumericType(3, -1), "15", "20"},
		{NumericType(3, -1), "1.6", "0"},
		{Of(Float8), "0.1", "0.1"},
		{Of(Float8), "1e20", "1e+20"},
		{Of(Float8), "1e15", "1e+15"},
		{Of(Float8), "123456789012345", "123456789012345"},
		{Of(Float8), "1.5e-7", "1.5e-07"},
		{Of(Float8), "1e-4", "0.0001"},
		{Of(Float8), "-0", "-0"},
		{Of(Float8), "inf", "Infinity"},
		{Of(Float8), "  -INFINITY ", "-Infinity"},
		{Of(Float8), "0x10", "16"},
		{Of(Float8), "4e-320", "4e-320"},
		{Of(Float8), "1e-400", `ERROR 22003: "1e-400" is out of range for type double precision`},
		{Of(Float8), "  1e400  ", `ERROR 22003: "1e400" is out of range for type double precision`},
		{Of(Float8), "5e", `ERROR 22P02: invalid input syntax for type double precision: "5e"`},
		{Of(Float4), "1e6", "1e+06"},
		{Of(Float4), "123456", "123456"},
		{Of(Float4), "1234567", "1.234567e+06"},
		{Of(Float4), "  1e40  ", `ERROR 22003: "  1e40  " is out of range for type real`},
		{Of(Float4), "85947376", "8.5947376e+07"}, // not the halfway 8.594738e+07
		{Of(Text), " x ", " x "},
		{VarcharType(3), "abcd", "ERROR 22001: value too long for type character varying(3)"},
		{VarcharType(3), "abc  ", "abc"},
		{VarcharType(3), "hé ", "hé "},
		{Of(Bytea), `\x0102`, `\x0102`},
		{Of(Bytea), `\x61 62`, `\x6162`},
		{Of(Bytea), `\x6`, "ERROR 22023: invalid hexadecimal data: odd number of digits"},
		{Of(Bytea), `\x6g`, `ERROR 22023: invalid hexadecimal digit: "g"`},
		{Of(Bytea), `a\\b\001`, `\x615c6201`},
		{Of(Bytea), `a\b`, "ERROR 22P02: invalid input syntax for type bytea"},
		{Of(Date), "2026-01-02", "2026-01-02"},
		{Of(Date), "20260102", "2026-01-02"},
		{Of(Date), "01/02/2026", "2026-01-02"},
		{Of(Date), "Jan 2 2026", "2026-01-02"},
		{Of(Date), "2 Jan 2026", "2026-01-02"},
		{Of(Date), "2026-01-02 10:00", "2026-01-02"},
		{Of(Date), "4714-11-24 BC", "4714-11-24 BC"},
		{Of(Date), "4714-11-23 BC", `ERROR 22008: date out of range: "4714-11-23 BC"`},
		{Of(Date), "5874897-12-31", "5874897-12-31"},
		{Of(Date), "5874898-01-01", `ERROR 22008: date out of range: "5874898-01-01"`},
		{Of(Date), "2026-02-30", `ERROR 22008: date/time field value out of range: "2026-02-30"`},
		{Of(Date), "0000-01-01", `ERROR 22008: date/time field value out of range: "0000-01-01"`},
		{Of(Date), "infinity", "infinity"},
		{Of(Date), "epoch", "1970-01-01"},
		{Of(Date), "abc", `ERROR 22007: invalid input syntax for type date: "abc"`},
		{Of(Timestamp), "2026-01-02T03:04:05.1234567", "2026-01-02 03:04:05.123457"},
		{Of(Timestamp), "2026-01-01 24:00:00", "2026-01-02 00:00:00"},
		{Of(Timestamp), "2026-01-01 23:59:60", "2026-01-02 00:00:00"},
		{Of(Timestamp), "2026-01-02 10:00+05", "2026-01-02 10:00:00"},
		{Of(Timestamp), "2026-01-02 10:00 pm", "2026-01-02 22:00:00"},
		{Of(Timestamp), "0044-03-15 12:00 BC", "0044-03-15 12:00:00 BC"},
		{Of(Timestamp), "x", `ERROR 22007: invalid input syntax for type timestamp: "x"`},
		{Of(TimestampTZ), "2026-01-02 10:00+05", "2026-01-02 05:00:00+00"},
		{Of(TimestampTZ), "2026-01-02 10:00:00 America/New_York", "2026-01-02 15:00:00+00"},
		{Of(TimestampTZ), "2026-01-02 10:00 EST", "2026-01-02 15:00:00+00"},
		{Of(TimestampTZ), "0044-03-15 12:00 BC", "0044-03-15 12:00:00+00 BC"},
		{Of(TimestampTZ), "2026-01-02 10:00 Mars/Olympus", `ERROR 22023: time zone "mars/olympus" not recognized`},
		{Of(Interval), "1 year 2 months 3 days 4:05:06.7", "1 year 2 mons 3 days 04:05:06.7"},
		{Of(Interval), "-1 year -2 months +3 days -04:05:06", "-1 years -2 mons +3 days -04:05:06"},
		{Of(Interval), "-1 day 02:00", "-1 days +02:00:00"},
		{Of(Interval), "0", "00:00:00"},
		{Of(Interval), "-1 sec", "-00:00:01"},
		{Of(Interval), "1.5 years", "1 year 6 mons"},
		{Of(Interval), "1.5 months", "1 mon 15 days"},
		{Of(Interval), "1.5 weeks", "10 days 12:00:00"},
		{Of(Interval), "3 hours", "03:00:00"},
		{Of(Interval), "P1D", "1 day"},
		{Of(Interval), "P1Y2M3DT4H5M6.5S", "1 year 2 mons 3 days 04:05:06.5"},
		{Of(Interval), "P0001-02-03T04:05:06", "1 year 2 mons 3 days 04:05:06"},
		{Of(Interval), "1-2", "1 year 2 mons"},
		{Of(Interval), "@ 1 hour ago", "-01:00:00"},
		{Of(Interval), "100000 hours", "100000:00:00"},
		{Of(Interval), "1 hour 1 hour", `ERROR 22007: invalid input syntax for type interval: "1 hour 1 hour"`},
		{Type{ID: Interval, Precision: 2, Scale: -1, Length: -1}, "1.235 sec", "00:00:01.24"},
		{Type{ID: Timestamp, Precision: 2, Scale: -1, Length: -1}, "2026-01-02 03:04:05.125", "2026-01-02 03:04:05.13"},
	} {
		if got := parseFormat(t, c.typ, c.in); got != c.want {
			t.Errorf("Parse(%s, %q) = %s, want %s", c.typ, c.in, got, c.want)
		}
	}
}

func TestFormatSpecialValues(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want string
	}{
		{Null, ""},
		{MakeBool(true), "t"},
		{MakeFloat8(math.NaN()), "NaN"},
		{MakeFloat8(math.Inf(-1)), "-Infinity"},
		{MakeFloat8(math.Copysign(0, -1)), "-0"},
		{MakeFloat4(float32(math.Inf(1))), "Infinity"},
		{MakeFloat8(1e20), "1e+20"},
		{MakeFloat8(1.5e-7), "1.5e-07"},
		{MakeDate(DatePosInfinity), "infinity"},
		{MakeDate(-719528), "0001-01-01 BC"},
		{MakeTimestamp(TimestampNegInfinity), "-infinity"},
		{MakeTimestampTZ(1_795_000_000_500_000), "2026-11-18 11:06:40.5+00"},
		{MakeInterval(IntervalValue{}), "00:00:00"},
		{MakeInterval(IntervalValue{Months: -14, Days: 3, Micros: -1}), "-1 years -2 mons +3 days -00:00:00.000001"},
		{MakeInterval(IntervalValue{Micros: math.MinInt64}), "-2562047788:00:54.775808"},
		{MakeBytea([]byte{0xde, 0xad}), `\xdead`},
		{MakeBytea(nil), `\x`},
	} {
		if got := Format(c.v, Of(c.v.Kind())); got != c.want {
			t.Errorf("Format(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestCast(t *testing.T) {
	p := func(typ Type, s string) Value {
		v, err := Parse(typ, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		v        Value
		to       Type
		explicit bool
		want     string
	}{
		{MakeInt(Int4, 40000), Of(Int2), true, "ERROR 22003: smallint out of range"},
		{MakeInt(Int8, -5), Of(Int2), false, "-5"},
		{p(Of(Numeric), "2.5"), Of(Int4), true, "3"},
		{p(Of(Numeric), "-2.5"), Of(Int4), true, "-3"},
		{p(Of(Numeric), "NaN"), Of(Int4), true, "ERROR 0A000: cannot convert NaN to integer"},
		{p(Of(Numeric), "Infinity"), Of(Int8), true, "ERROR 0A000: cannot convert infinity to bigint"},
		{MakeFloat8(2.5), Of(Int4), true, "2"},
		{MakeFloat8(3.5), Of(Int4), true, "4"},
		{MakeFloat8(-0.5), Of(Int4), true, "0"},
		{MakeFloat8(math.NaN()), Of(Int4), true, "ERROR 22003: integer out of range"},
		{MakeFloat8(0.1), Of(Numeric), true, "0.1"},
		{MakeFloat8(1.0 / 3), Of(Numeric), true, "0.333333333333333"},
		{MakeFloat8(1e20), Of(Numeric), true, "100000000000000000000"},
		{MakeFloat4(0.1), Of(Numeric), true, "0.1"},
		{MakeFloat8(1e300), Of(Float4), true, "ERROR 22003: value out of range: overflow"},
		{MakeFloat8(1e-300), Of(Float4), true, "ERROR 22003: value out of range: underflow"},
		{p(Of(Numeric), "1e400"), Of(Float8), true, `ERROR 22003: "1` + zeros(400) + `" is out of range for type double precision`},
		{p(Of(Numeric), "1234.5678"), NumericType(5, 2), true, "ERROR 22003: numeric field overflow"},
		{p(Of(Numeric), "123.455"), NumericType(5, 2), false, "123.46"},
		{MakeInt(Int4, 1), NumericType(5, 6), true, "ERROR 22003: numeric field overflow"},
		{MakeText("abcd"), VarcharType(3), true, "abc"},
		{MakeText("abcd"), VarcharType(3), false, "ERROR 22001: value too long for type character varying(3)"},
		{MakeText("ab  "), VarcharType(3), false, "ab "},
		{MakeInt(Int4, 12345), VarcharType(3), true, "123"},
		{MakeBool(true), Of(Text), true, "true"},
		{MakeBool(false), VarcharType(5), false, "false"},
		{MakeInt(Int4, 0), Of(Bool), true, "f"},
		{MakeBool(true), Of(Int4), true, "1"},
		{MakeText(" 12 "), Of(Int4), true, "12"},
		{MakeText("1 day"), Of(Interval), true, "1 day"},
		{MakeBytea([]byte("ab")), Of(Text), false, `\x6162`},
		{MakeDate(0), Of(Timestamp), false, "1970-01-01 00:00:00"},
		{MakeDate(0), Of(TimestampTZ), false, "1970-01-01 00:00:00+00"},
		{MakeDate(DateNegInfinity), Of(Timestamp), false, "-infinity"},
		{MakeTimestamp(-1), Of(Date), false, "1969-12-31"},
		{MakeTimestampTZ(5), Of(Timestamp), false, "1970-01-01 00:00:00.000005"},
		// Halves round away from PostgreSQL's epoch, 2000-01-01.
		{MakeTimestamp(1_500_000), Type{ID: Timestamp, Precision: 0, Scale: -1, Length: -1}, true, "1970-01-01 00:00:01"},
		{MakeTimestamp(946_684_801_500_000), Type{ID: Timestamp, Precision: 0, Scale: -1, Length: -1}, true, "2000-01-01 00:00:02"},
		{MakeInterval(IntervalValue{Micros: 1_234_567}), Type{ID: Interval, Precision: 1, Scale: -1, Length: -1}, true, "00:00:01.2"},
		{MakeDate(0), Of(Int4), true, "ERROR 42846: cannot cast type date to integer"},
	} {
		got := ""
		v, err := Cast(c.v, c.to, c.explicit)
		if err != nil {
			got = "ERROR " + errs.SQLState(err) + ": " + err.Error()
		} else {
			got = Format(v, c.to)
		}
		if got != c.want {
			t.Errorf("Cast(%s, %s, %v) = %s, want %s", Format(c.v, Of(c.v.Kind())), c.to, c.explicit, got, c.want)
		}
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

func TestCastContext(t *testing.T) {
	for _, c := range []struct {
		from, to TypeID
		want     CastKind
	}{
		{Int2, Int4, ImplicitCast}, {Int4, Int8, ImplicitCast}, {Int8, Int4, AssignmentCast},
		{Int4, Numeric, ImplicitCast}, {Numeric, Int4, AssignmentCast}, {Int8, Float4, ImplicitCast},
		{Numeric, Float8, ImplicitCast}, {Float8, Numeric, AssignmentCast}, {Float8, Float4, AssignmentCast},
		{Float4, Int2, AssignmentCast}, {Int4, Bool, ExplicitCast}, {Bool, Int4, ExplicitCast},
		{Bool, Int8, NoCast}, {Int4, Text, AssignmentCast}, {Text, Int4, ExplicitCast},
		{Text, Varchar, ImplicitCast}, {Varchar, Text, ImplicitCast}, {Bytea, Text, AssignmentCast},
		{Date, Timestamp, ImplicitCast}, {Timestamp, TimestampTZ, ImplicitCast}, {TimestampTZ, Date, AssignmentCast},
		{Timestamp, Date, AssignmentCast}, {Date, Int4, NoCast}, {Interval, Float8, NoCast},
		{Unknown, Date, ImplicitCast}, {Interval, Interval, ImplicitCast}, {Date, Unknown, NoCast},
	} {
		if got := CastContext(c.from, c.to); got != c.want {
			t.Errorf("CastContext(%s, %s) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
}

func TestTypeByName(t *testing.T) {
	for _, c := range []struct {
		names   []string
		typmods []int32
		want    string // String(), or the error
		oid     uint32
	}{
		{[]string{"pg_catalog", "int4"}, nil, "integer", 23},
		{[]string{"int"}, nil, "integer", 23},
		{[]string{"INTEGER"}, nil, "integer", 23},
		{[]string{"int2"}, nil, "smallint", 21},
		{[]string{"bigint"}, nil, "bigint", 20},
		{[]string{"decimal"}, []int32{10, 2}, "numeric(10,2)", 1700},
		{[]string{"numeric"}, []int32{10}, "numeric(10,0)", 1700},
		{[]string{"numeric"}, nil, "numeric", 1700},
		{[]string{"float4"}, nil, "real", 700},
		{[]string{"pg_catalog", "float8"}, nil, "double precision", 701},
		{[]string{"double precision"}, nil, "double precision", 701},
		{[]string{"float"}, []int32{24}, "real", 700},
		{[]string{"float"}, []int32{25}, "double precision", 701},
		{[]string{"text"}, nil, "text", 25},
		{[]string{"varchar"}, []int32{5}, "character varying(5)", 1043},
		{[]string{"character varying"}, nil, "character varying", 1043},
		{[]string{"bytea"}, nil, "bytea", 17},
		{[]string{"date"}, nil, "date", 1082},
		{[]string{"timestamp without time zone"}, nil, "timestamp without time zone", 1114},
		{[]string{"timestamp"}, []int32{3}, "timestamp(3) without time zone", 1114},
		{[]string{"timestamptz"}, nil, "timestamp with time zone", 1184},
		{[]string{"timestamp with time zone"}, nil, "timestamp with time zone", 1184},
		{[]string{"interval"}, nil, "interval", 1186},
		{[]string{"bool"}, nil, "boolean", 16},
		{[]string{"boolean"}, nil, "boolean", 16},
		{[]string{"unknown"}, nil, "unknown", 705},
		{[]string{"pg_catalog", "bpchar"}, []int32{3}, "ERROR 0A000: type bpchar is not supported", 0},
		{[]string{"char"}, nil, `"char"`, 18}, // the parser turns CHAR into bpchar; "char" arrives quoted
		{[]string{"pg_catalog", "bpchar"}, nil, "ERROR 0A000: type bpchar is not supported", 0},
		{[]string{"regclass"}, nil, "regclass", 2205},
		{[]string{"jsonb"}, nil, "jsonb", 3802},
		{[]string{"json"}, nil, "json", 114},
		{[]string{"uuid"}, nil, "ERROR 0A000: type uuid is not supported", 0},
		{[]string{"foo"}, nil, `ERROR 42704: type "foo" does not exist`, 0},
		{[]string{"public", "int4"}, nil, `ERROR 42704: type "public.int4" does not exist`, 0},
		{[]string{"int4"}, []int32{3}, `ERROR 42601: type modifier is not allowed for type "int4"`, 0},
		{[]string{"varchar"}, []int32{0}, "ERROR 22023: length for type varchar must be at least 1", 0},
		{[]string{"numeric"}, []int32{1001}, "ERROR 22023: NUMERIC precision 1001 must be between 1 and 1000", 0},
		{[]string{"float"}, []int32{54}, "ERROR 22023: precision for type float must be less than 54 bits", 0},
	} {
		typ, err := TypeByName(c.names, c.typmods)
		got := ""
		if err != nil {
			got = "ERROR " + errs.SQLState(err) + ": " + err.Error()
		} else {
			got = typ.String()
			if typ.OID() != c.oid {
				t.Errorf("TypeByName(%v).OID() = %d, want %d", c.names, typ.OID(), c.oid)
			}
		}
		if got != c.want {
			t.Errorf("TypeByName(%v, %v) = %s, want %s", c.names, c.typmods, got, c.want)
		}
	}
}

func TestResolveBinary(t *testing.T) {
	u := Of(Unknown)
	for _, c := range []struct {
		op          string
		l, r        Type
		left, right string // argument types
		result      string // or the error
	}{
		{"+", Of(Int2), Of(Int2), "smallint", "smallint", "smallint"},
		{"+", Of(Int2), Of(Int4), "smallint", "integer", "integer"},
		{"%", Of(Int2), Of(Int4), "integer", "integer", "integer"},
		{"+", Of(Int4), Of(Numeric), "numeric", "numeric", "numeric"},
		{"+", Of(Int4), Of(Float8), "double precision", "double precision", "double precision"},
		{"+", Of(Numeric), Of(Float4), "double precision", "real", "double precision"},
		{"/", Of(Int4), Of(Float4), "double precision", "real", "double precision"},
		{"=", Of(Int8), Of(Float4), "double precision", "real", "boolean"},
		{"+", u, Of(Int4), "integer", "integer", "integer"},
		{"+", u, u, "", "", "ERROR 42725: operator is not unique: unknown + unknown"},
		{"||", u, u, "text", "text", "text"},
		{"||", Of(Int4), u, "integer", "text", "text"},
		{"||", Of(Int4), Of(Int4), "", "", "ERROR 42883: operator does not exist: integer || integer"},
		{"||", VarcharType(3), VarcharType(3), "text", "text", "text"},
		{"+", Of(Int4), Of(Bool), "", "", "ERROR 42883: operator does not exist: integer + boolean"},
		{"+", Of(Date), Of(Int2), "date", "integer", "date"},
		{"+", Of(Date), Of(Int8), "", "", "ERROR 42883: operator does not exist: date + bigint"},
		{"-", Of(Date), Of(Date), "date", "date", "integer"},
		{"-", Of(Date), u, "date", "date", "integer"},
		{"+", Of(Date), u, "", "", "ERROR 42725: operator is not unique: date + unknown"},
		{"+", Of(Date), Of(Interval), "date", "interval", "timestamp without time zone"},
		{"-", Of(Timestamp), Of(Date), "timestamp without time zone", "timestamp without time zone", "interval"},
		{"-", Of(TimestampTZ), Of(Timestamp), "timestamp with time zone", "timestamp with time zone", "interval"},
		{"*", Of(Interval), Of(Numeric), "interval", "double precision", "interval"},
		{"*", Of(Int4), Of(Interval), "double precision", "interval", "interval"},
		{"=", Of(Date), Of(TimestampTZ), "date", "timestamp with time zone", "boolean"},
		{"=", Of(Int4), Of(Numeric), "numeric", "numeric", "boolean"},
		{"<>", VarcharType(3), Of(Text), "text", "text", "boolean"},
		{"!=", Of(Int4), Of(Int8), "integer", "bigint", "boolean"},
		{"%", Of(Numeric), Of(Float8), "", "", "ERROR 42883: operator does not exist: numeric % double precision"},
		{"+", NumericType(5, 2), NumericType(5, 2), "numeric(5,2)", "numeric(5,2)", "numeric"},
	} {
		op, err := ResolveBinary(c.op, c.l, c.r)
		if err != nil {
			got := "ERROR " + errs.SQLState(err) + ": " + err.Error()
			if got != c.result {
				t.Errorf("%s %s %s: %s, want %s", c.l, c.op, c.r, got, c.result)
			}
			continue
		}
		if op.Left.String() != c.left || op.Right.String() != c.right || op.Result.String() != c.result {
			t.Errorf("%s %s %s: (%s, %s) -> %s, want (%s, %s) -> %s", c.l, c.op, c.r,
				op.Left, op.Right, op.Result, c.left, c.right, c.result)
		}
	}
}

func TestResolveUnary(t *testing.T) {
	for _, c := range []struct {
		op   string
		typ  Type
		want string
	}{
		{"-", Of(Int4), "integer"},
		{"-", Of(Interval), "interval"},
		{"+", Of(Unknown), "double precision"},
		{"-", Of(Unknown), "ERROR 42725: operator is not unique: - unknown"},
		{"+", Of(Interval), "ERROR 42883: operator does not exist: + interval"},
		{"-", VarcharType(3), "ERROR 42883: operator does not exist: - character varying"},
	} {
		op, err := ResolveUnary(c.op, c.typ)
		got := ""
		if err != nil {
			got = "ERROR " + errs.SQLState(err) + ": " + err.Error()
		} else {
			got = op.Result.String()
		}
		if got != c.want {
			t.Errorf("%s %s = %s, want %s", c.op, c.typ, got, c.want)
		}
	}
	neg, _ := ResolveUnary("-", Of(Int4))
	if _, err := neg.Eval(MakeInt(Int4, math.MinInt32), Null); errs.SQLState(err) != "22003" {
		t.Errorf("-(-2147483648): %v", err)
	}
}

func TestOperatorEval(t *testing.T) {
	eval := func(op string, a, b Value) string {
		o, err := ResolveBinary(op, Of(a.Kind()), Of(b.Kind()))
		if err != nil {
			t.Fatal(err)
		}
		a, _ = Cast(a, o.Left, false)
		b, _ = Cast(b, o.Right, false)
		v, err := o.Eval(a, b)
		if err != nil {
			return "ERROR " + errs.SQLState(err) + ": " + err.Error()
		}
		return Format(v, o.Result)
	}
	num := func(s string) Value { v, _ := Parse(Of(Numeric), s); return v }
	i4 := func(n int64) Value { return MakeInt(Int4, n) }
	for _, c := range []struct {
		op   string
		a, b Value
		want string
	}{
		{"+", i4(math.MaxInt32), i4(1), "ERROR 22003: integer out of range"},
		{"+", MakeInt(Int2, 32767), MakeInt(Int2, 1), "ERROR 22003: smallint out of range"},
		{"*", MakeInt(Int8, math.MaxInt64), MakeInt(Int8, 2), "ERROR 22003: bigint out of range"},
		{"/", i4(-7), i4(2), "-3"},
		{"%", i4(-7), i4(2), "-1"},
		{"/", i4(1), i4(0), "ERROR 22012: division by zero"},
		{"/", i4(math.MinInt32), i4(-1), "ERROR 22003: integer out of range"},
		{"%", i4(math.MinInt32), i4(-1), "0"},
		{"/", num("1"), num("3"), "0.33333333333333333333"},
		{"/", num("5"), num("2"), "2.5000000000000000"},
		{"/", num("123456789"), num("0.001"), "123456789000.00000000"},
		{"/", num("1"), num("0"), "ERROR 22012: division by zero"},
		{"%", num("-7.5"), num("2"), "-1.5"},
		{"*", num("0.1"), num("0.20"), "0.020"},
		{"+", num("1.5"), num("-1.50"), "0.00"},
		{"/", num("Infinity"), num("2"), "Infinity"},
		{"/", MakeFloat8(1), MakeFloat8(0), "ERROR 22012: division by zero"},
		{"*", MakeFloat8(1e300), MakeFloat8(1e300), "ERROR 22003: value out of range: overflow"},
		{"+", MakeFloat8(math.Inf(1)), MakeFloat8(math.Inf(-1)), "NaN"},
		{"=", num("1.0"), num("1.00"), "t"},
		{"=", MakeFloat8(math.NaN()), MakeFloat8(math.NaN()), "t"},
		{"<", MakeText("B"), MakeText("a"), "t"},
		{"||", MakeText("a"), MakeText("b"), "ab"},
		{"-", MakeDate(10), MakeDate(3), "7"},
		{"=", MakeInterval(IntervalValue{Months: 1}), MakeInterval(IntervalValue{Days: 30}), "t"},
	} {
		if got := eval(c.op, c.a, c.b); got != c.want {
			t.Errorf("%s %s %s = %s, want %s", Format(c.a, Type{}), c.op, Format(c.b, Type{}), got, c.want)
		}
	}
}

func TestCommonType(t *testing.T) {
	u := Of(Unknown)
	for _, c := range []struct {
		ts   []Type
		want string
	}{
		{[]Type{u, u}, "text"},
		{[]Type{Of(Int4), Of(Int8)}, "bigint"},
		{[]Type{Of(Int4), u}, "integer"},
		{[]Type{Of(Int2), Of(Numeric), Of(Float4)}, "real"},
		{[]Type{Of(Float8), Of(Numeric)}, "double precision"},
		{[]Type{Of(Date), Of(Timestamp)}, "timestamp without time zone"},
		{[]Type{Of(Timestamp), Of(TimestampTZ)}, "timestamp with time zone"},
		{[]Type{VarcharType(3), VarcharType(3)}, "character varying(3)"},
		{[]Type{VarcharType(3), VarcharType(5)}, "character varying"},
		{[]Type{VarcharType(3), Of(Text)}, "character varying"}, // text casts to varchar implicitly
		{[]Type{Of(Text), VarcharType(3)}, "text"},
		{[]Type{Of(Int4), Of(Text)}, "ERROR 42804: UNION types integer and text cannot be matched"},
		{[]Type{Of(Bool), Of(Int4)}, "ERROR 42804: UNION types boolean and integer cannot be matched"},
	} {
		typ, err := CommonType("UNION", c.ts)
		got := ""
		if err != nil {
			got = "ERROR " + errs.SQLState(err) + ": " + err.Error()
		} else {
			got = typ.String()
		}
		if got != c.want {
			t.Errorf("CommonType(%v) = %s, want %s", c.ts, got, c.want)
		}
	}
}

func TestAggregateType(t *testing.T) {
	for _, c := range []struct {
		name string
		arg  Type
		want string
	}{
		{"count", Of(Text), "bigint"},
		{"sum", Of(Int2), "bigint"},
		{"sum", Of(Int4), "bigint"},
		{"sum", Of(Int8), "numeric"},
		{"sum", NumericType(5, 2), "numeric"},
		{"sum", Of(Float4), "real"},
		{"sum", Of(Float8), "double precision"},
		{"sum", Of(Interval), "interval"},
		{"avg", Of(Int4), "numeric"},
		{"avg", Of(Float4), "double precision"},
		{"avg", Of(Interval), "interval"},
		{"min", Of(Date), "date"},
		{"max", VarcharType(3), "text"},
		{"max", Of(Unknown), "text"},
		{"bool_and", Of(Bool), "boolean"},
		{"sum", Of(Text), "ERROR 42883: function sum(text) does not exist"},
		{"sum", Of(Unknown), "ERROR 42725: function sum(unknown) is not unique"},
		{"max", Of(Bool), "ERROR 42883: function max(boolean) does not exist"},
		{"bool_or", Of(Int4), "ERROR 42883: function bool_or(integer) does not exist"},
	} {
		typ, err := AggregateType(c.name, c.arg)
		got := ""
		if err != nil {
			got = "ERROR " + errs.SQLState(err) + ": " + err.Error()
		} else {
			got = typ.String()
		}
		if got != c.want {
			t.Errorf("%s(%s) = %s, want %s", c.name, c.arg, got, c.want)
		}
	}
}

// TestDeviations pins where RockStream knowingly differs from PostgreSQL.
func TestDeviations(t *testing.T) {
	// Microseconds since 1970 in an int64 end in 294247 AD, short of
	// PostgreSQL's 294276 AD.
	if got := parseFormat(t, Of(Timestamp), "294247-01-10 04:00:54.775806"); got != "294247-01-10 04:00:54.775806" {
		t.Errorf("last timestamp: %s", got)
	}
	if got := parseFormat(t, Of(Timestamp), "294247-01-10 04:00:54.775807"); got[:5] != "ERROR" {
		t.Errorf("timestamp past the int64 range: %s", got)
	}
	if _, err := Cast(MakeDate(106751992), Of(Timestamp), false); errs.SQLState(err) != "22008" {
		t.Errorf("date past the timestamp range: %v", err)
	}
	// Values that depend on the clock are refused.
	for _, s := range []string{"now", "today", "tomorrow", "yesterday"} {
		if _, err := Parse(Of(TimestampTZ), s); errs.SQLState(err) != "0A000" {
			t.Errorf("%q: %v", s, err)
		}
	}
}
