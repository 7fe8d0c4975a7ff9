package types

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The oracle tests evaluate small expressions both here and in a real
// PostgreSQL 15 and demand the same text, result type, or error (SQLSTATE
// and message).

// ex is a test expression that renders as SQL and evaluates with this
// package.
type ex interface {
	sql() string
	eval(t *testing.T) (Value, Type, error)
}

// lit is a literal: 'text'::typ, or an untyped 'text' when typ is "", or
// NULL::typ when null is set.
type lit struct {
	typ, text string
	null      bool
}

func (l lit) sql() string {
	q := "'" + strings.ReplaceAll(l.text, "'", "''") + "'"
	if l.null {
		q = "NULL"
	}
	if l.typ == "" {
		return q
	}
	return q + "::" + l.typ
}

func (l lit) eval(t *testing.T) (Value, Type, error) {
	if l.typ == "" {
		if l.null {
			return Null, Of(Unknown), nil
		}
		return MakeText(l.text), Of(Unknown), nil
	}
	typ := mustType(t, l.typ)
	if l.null {
		return Null, typ, nil
	}
	// A literal cast is the input function followed by an explicit cast
	// to apply the type modifier. The input function sees an interval's
	// fields, which give a bare number its unit.
	v, err := Parse(Type{ID: typ.ID, Precision: -1, Scale: -1, Length: -1, Fields: typ.Fields}, l.text)
	if err != nil {
		return Null, typ, err
	}
	v, err = Cast(v, typ, true)
	return v, typ, err
}

// cast is CAST(e AS typ) (explicit) or, with assign set, the assignment
// of e to a column of type typ.
type cast struct {
	e      ex
	typ    string
	assign bool
}

func (c cast) sql() string { return "CAST((" + c.e.sql() + ") AS " + c.typ + ")" }

func (c cast) eval(t *testing.T) (Value, Type, error) {
	v, from, err := c.e.eval(t)
	if err != nil {
		return Null, Type{}, err
	}
	to := mustType(t, c.typ)
	kind := CastContext(from.ID, to.ID)
	if kind == NoCast || (!c.assign && kind < ExplicitCast) || (c.assign && kind < AssignmentCast) {
		return Null, to, errs.Newf(errs.CannotCoerce, "cannot cast type %s to %s", from.ID, to.ID)
	}
	if from.ID == Unknown {
		// An untyped literal is read by the target type's input function.
		if v.IsNull() {
			return Null, to, nil
		}
		v, err = Parse(Type{ID: to.ID, Precision: -1, Scale: -1, Length: -1}, v.Str())
		if err != nil {
			return Null, to, err
		}
	}
	v, err = Cast(v, to, !c.assign)
	return v, to, err
}

// bin is (l op r).
type bin struct {
	op   string
	l, r ex
}

func (b bin) sql() string { return "((" + b.l.sql() + ") " + b.op + " (" + b.r.sql() + "))" }

func (b bin) eval(t *testing.T) (Value, Type, error) {
	lv, lt, err := b.l.eval(t)
	if err != nil {
		return Null, Type{}, err
	}
	rv, rt, err := b.r.eval(t)
	if err != nil {
		return Null, Type{}, err
	}
	op, err := ResolveBinary(b.op, lt, rt)
	if err != nil {
		return Null, Type{}, err
	}
	if lv, err = implicitCast(lv, lt, op.Left); err != nil {
		return Null, op.Result, err
	}
	if rv, err = implicitCast(rv, rt, op.Right); err != nil {
		return Null, op.Result, err
	}
	if (lv.IsNull() || rv.IsNull()) && !op.NonStrict {
		return Null, op.Result, nil
	}
	v, err := op.Eval(lv, rv)
	return v, op.Result, err
}

// un is (op e) for a prefix operator.
type un struct {
	op string
	e  ex
}

func (u un) sql() string { return "(" + u.op + " (" + u.e.sql() + "))" }

func (u un) eval(t *testing.T) (Value, Type, error) {
	v, typ, err := u.e.eval(t)
	if err != nil {
		return Null, Type{}, err
	}
	op, err := ResolveUnary(u.op, typ)
	if err != nil {
		return Null, Type{}, err
	}
	if v, err = implicitCast(v, typ, op.Right); err != nil {
		return Null, op.Result, err
	}
	if v.IsNull() {
		return Null, op.Result, nil
	}
	r, err := op.Eval(v, Null)
	return r, op.Result, err
}

// implicitCast converts an operand to an operator's argument type, as the
// planner's implicit Cast nodes do.
func implicitCast(v Value, from, to Type) (Value, error) {
	if v.IsNull() || from == to {
		return v, nil
	}
	if from.ID == Unknown {
		return Parse(to, v.Str())
	}
	return Cast(v, to, false)
}

// mustType resolves a type as SQL writes it: "integer", "numeric(5,2)",
// "character varying(3)", "timestamp with time zone", "interval(2)".
func mustType(t *testing.T, s string) Type {
	t.Helper()
	typ, err := typeFromSQL(s)
	if err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
	return typ
}

func typeFromSQL(s string) (Type, error) {
	if s == `"char"` { // a quoted identifier: the parser strips the quotes
		s = "char"
	}
	if elem, ok := strings.CutSuffix(s, "[]"); ok {
		t, err := typeFromSQL(elem)
		return ArrayType(t), err
	}
	name, mods := s, []int32(nil)
	if i := strings.IndexByte(s, '('); i >= 0 {
		name = strings.TrimSpace(s[:i])
		rest := s[i+1:]
		j := strings.IndexByte(rest, ')')
		for _, m := range strings.Split(rest[:j], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(m))
			if err != nil {
				return Type{}, err
			}
			mods = append(mods, int32(n))
		}
		if suffix := strings.TrimSpace(rest[j+1:]); suffix != "" {
			name += " " + suffix
		}
	}
	if fields, ok := strings.CutPrefix(name, "interval "); ok {
		// "interval day to second(3)": pg_query's modifiers are the
		// fields' mask and the precision.
		for f, text := range intervalFieldNames {
			if text == fields {
				return TypeByName([]string{"interval"}, append([]int32{int32(f)}, mods...))
			}
		}
		return Type{}, fmt.Errorf("unknown interval fields %q", fields)
	}
	if name == "interval" && len(mods) == 1 {
		mods = []int32{0x7FFF, mods[0]}
	}
	return TypeByName([]string{name}, mods)
}

// pgResult is one evaluated expression: value text (or NULL), type name,
// or an error's SQLSTATE and message.
type pgResult struct {
	text     string
	null     bool
	typ      string
	sqlstate string
	msg      string
}

func (r pgResult) String() string {
	if r.sqlstate != "" {
		return fmt.Sprintf("ERROR %s: %s", r.sqlstate, r.msg)
	}
	if r.null {
		return "NULL :: " + r.typ
	}
	return fmt.Sprintf("%q :: %s", r.text, r.typ)
}

func ours(t *testing.T, e ex) pgResult {
	v, typ, err := e.eval(t)
	if err != nil {
		return pgResult{sqlstate: errs.SQLState(err), msg: err.Error()}
	}
	return pgResult{text: Format(v, typ), null: v.IsNull(), typ: typ.ID.baseName()}
}

type oracle struct {
	conn *pgconn.PgConn
}

func newOracle(t *testing.T) *oracle {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to PostgreSQL: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	o := &oracle{conn: conn}
	for _, set := range []string{"SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, MDY'",
		"SET IntervalStyle = 'postgres'", "SET extra_float_digits = 1", "SET client_min_messages = error"} {
		if _, err := o.exec(set); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
	}
	return o
}

func (o *oracle) exec(sql string) ([]*pgconn.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return o.conn.Exec(ctx, sql).ReadAll()
}

// eval evaluates an expression in PostgreSQL.
func (o *oracle) eval(t *testing.T, exprSQL string) pgResult {
	t.Helper()
	res, err := o.exec("SELECT " + exprSQL + ", pg_typeof(" + exprSQL + ")::text")
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return pgResult{sqlstate: pe.Code, msg: pe.Message}
		}
		t.Fatalf("%s: %v", exprSQL, err)
	}
	row := res[0].Rows[0]
	return pgResult{text: string(row[0]), null: row[0] == nil, typ: string(row[1])}
}

// check compares one expression with PostgreSQL.
func (o *oracle) check(t *testing.T, e ex) {
	t.Helper()
	want := o.eval(t, e.sql())
	got := ours(t, e)
	if !sameResult(got, want) {
		t.Errorf("%s\n  got  %v\n  want %v", e.sql(), got, want)
	}
}

// sameResult compares results; for errors, the SQLSTATE and message.
func sameResult(got, want pgResult) bool {
	if want.sqlstate != "" || got.sqlstate != "" {
		return got.sqlstate == want.sqlstate && got.msg == want.msg
	}
	return got == want
}

// u is an untyped literal, l a typed one, n a typed NULL.
func u(text string) ex      { return lit{text: text} }
func l(typ, text string) ex { return lit{typ: typ, text: text} }
func n(typ string) ex       { return lit{typ: typ, null: true} }

func i4(v int64) ex   { return l("integer", strconv.FormatInt(v, 10)) }
func i2(v int64) ex   { return l("smallint", strconv.FormatInt(v, 10)) }
func i8(v int64) ex   { return l("bigint", strconv.FormatInt(v, 10)) }
func num(s string) ex { return l("numeric", s) }
func f8(s string) ex  { return l("double precision", s) }
func f4(s string) ex  { return l("real", s) }
func txt(s string) ex { return l("text", s) }
func dt(s string) ex  { return l("date", s) }
func ts(s string) ex  { return l("timestamp", s) }
func tz(s string) ex  { return l("timestamptz", s) }
func iv(s string) ex  { return l("interval", s) }

func TestOracleInput(t *testing.T) {
	o := newOracle(t)
	inputs := map[string][]string{
		"boolean": {"t", "true", "TRUE", " yes ", "y", "on", "1", "f", "false", "no", "n", "off", "of",
			"0", "o", "", "2", "tr", "ye", "nope", "truex"},
		"smallint": {"0", " 12 ", "-32768", "32767", "32768", "-32769", "+5", "-0", "1e3", "abc", "", " ",
			"12a", "1.5", "00012"},
		"integer": {"0", "  12  ", "-2147483648", "2147483647", "2147483648", "+", "-", "1_000", "0x10",
			"\t7\n", "99999999999999999999999"},
		"bigint": {"9223372036854775807", "-9223372036854775808", "9223372036854775808",
			"-9223372036854775809", "18446744073709551616", " -42 "},
		"numeric": {"0", "1.50", "-0", "-0.00", ".5", "5.", "+5", "1e3", "1.5e2", "1E-2", "  1.5e2  ",
			"1.5e", "NaN", " nan ", "Infinity", "-inf", "+Infinity", "- 5", "1_000", "abc", "",
			"123456789012345678901234567890.123456789", "0.000000000000000000001", "1e-20", "-1.5E+3",
			"00001.1000", "1e131072", "1e-16384"},
		"numeric(5,2)":  {"1.234", "1.235", "-1.235", "999.994", "999.995", "NaN", "Infinity", "0.001", "12"},
		"numeric(3,-1)": {"1.6", "15", "-15", "9949", "9950"},
		"numeric(3)":    {"1.5", "2.5", "-2.5", "999.4", "999.5"},
		"numeric(5,6)":  {"0.01", "0.1", "0.0999999", "0.09999995"},
		"double precision": {"0", "0.1", "1e20", "1e15", "1e16", "123456789012345", "1234567890123456",
			"1.5e-7", "1e-4", "1e-5", "0.00012345", "-0", "Infinity", "-Infinity", "inf", "NaN", " nan ",
			"1e308", "1e309", "1e-320", "1e-400", "1.7976931348623157e308", "2.2250738585072014e-308",
			"5e-324", "abc", "", "5e", "1.", ".5", "0x10", "0x1p3", "3.141592653589793", "1/3",
			"100", "12345.678", "-123.456e-10", "  1e400  ", "infinityx", "9007199254740993"},
		"real": {"0", "0.1", "1e6", "123456", "1234567", "1e-4", "1.5e-5", "3.4028235e38", "1e39",
			"1e-46", "1e-40", "NaN", "-Infinity", "16777217", "0.333333333", "abc", "  1e40  "},
		"text":                 {"", "abc", "héllo", " spaced "},
		"character varying(3)": {"abc", "ab", "abcd", "ab  ", "abc   ", "héll", "hé ", "abc d"},
		"bytea": {`\x`, `\x0102`, `\xDEADbeef`, `\x01 02`, `\x6`, `\x6g`, `abc`, `a\\b`, `a\001b`, `a\b`,
			`\x 01`, `\\`, `\400`, `\377`},
		"date": {"2026-01-02", "2026-1-2", "  2026-01-02  ", "20260102", "2026/01/02", "2026.01.02",
			"01/02/2026", "1/2/26", "1-2-2026", "Jan 2 2026", "January 2, 2026", "2 Jan 2026",
			"02-jan-2026", "2026-jan-02", "Fri Jan 2 2026", "jan-02-2026", "2026-01-02 10:00",
			"2026-01-02T10:00:00", "2026-02-29", "2024-02-29", "2026-02-30", "2026-13-01", "0000-01-01",
			"0001-01-01", "0001-01-01 BC", "4714-11-24 BC", "4714-11-23 BC", "5874897-12-31",
			"5874898-01-01", "10000-01-01", "infinity", "-infinity", "+infinity", "epoch",
			"abc", "", "26-01-02", "2026-01", "99-01-01", "1999-365", "2026-001", "2026-01-02 BC",
			"2026-01-02 AD", "-2026-01-02"},
		"timestamp without time zone": {"2026-01-02 03:04:05", "2026-01-02T03:04:05.5",
			"2026-01-02 03:04:05.123456", "2026-01-02 03:04:05.1234565", "2026-01-02 03:04:05.1234567",
			"2026-01-02", "2026-01-01 24:00:00", "2026-01-01 24:00:01", "2026-01-01 23:59:60",
			"2026-01-01 25:00", "2026-01-02 10:00 pm", "2026-01-02 12:00 am", "2026-01-02 13:00 pm",
			"2026-01-02 10:00+05", "2026-01-02 10:00:00 America/New_York", "2026-01-02 3:4",
			"2026-01-02 03:04:05 BC", "294247-01-10 04:00:54.775806", "4714-11-24 00:00:00 BC",
			"4714-11-23 23:59:59 BC", "infinity", "-infinity", "epoch", "2026-01-02 03:04:05.",
			"2026-01-02 10:00:00Z", "2026-01-02T10:00:00.000+00:00", "2026-01-02 allballs",
			"2026-01-02 10:61", "2026-01-02 10:00:61", "J2451545", "20260102 030405", "20260102T030405",
			"2026-01-02 03:04"},
		"timestamp with time zone": {"2026-01-02 03:04:05", "2026-01-02 10:00+05", "2026-01-02 10:00-05:30",
			"2026-01-02 10:00:00+0530", "2026-01-02 10:00:00 -08", "2026-01-02 10:00Z",
			"2026-01-02 10:00 UTC", "2026-01-02 10:00 EST", "2026-01-02 10:00 PDT",
			"2026-07-02 10:00 America/New_York", "2026-01-02 10:00 europe/paris", "2026-01-02 10:00 +16",
			"2026-01-02 10:00 Mars/Olympus", "0044-03-15 12:00 BC", "infinity", "2026-01-02T10:00:00.5+01:00",
			"2026-01-02 10:00:00+05:30:15", "2026-01-02 23:00-05"},
		"jsonb": {`{"b":1,"a":2,"aa":3,"a":4}`, ` [1, 2 ,"x",null,true,false] `, `1.50`, `1e2`, `-0`, `-0.0`, `1.5E-3`,
			`12345678901234567890.123456789e-5`, `"\u00e9\ud83d\ude00\n\t\"\\\/"`, `"\u0001\u001f\b\f\r"`, `{}`, `[]`,
			`null`, `true`, `{"x": {"y": [ {}, [] ]}}`, `{"a":}`, `[1,]`, `tru`, `01`, `1.`, `.5`, `-`, `1e`, `"\x"`,
			`{"a" 1}`, `"\ud800"`, `"\udc00"`, "", `[1] 2`, `"\u0000"`, `{"a":1,}`, `"abc`, "\"a\nb\"", `nul`, `[`,
			`{"":1,"\u0000a":2}`, `"\u12"`, `1e400`, `-1E-400`, `{"é":1,"z":2,"ab":3}`},
		"interval": {"1 year 2 months 3 days 4:05:06.7", "-1 year -2 months +3 days -04:05:06",
			"-1 day 02:00", "1 day -02:00", "0", "-1 sec", "1.5 years", "1.5 months", "1.5 weeks",
			"1.5", "5", "P1D", "P1Y2M3DT4H5M6.5S", "P0001-02-03T04:05:06", "1-2", "1 2:03:04",
			"@ 1 hour ago", "1 day ago", "100000 hours", "1 mon -1 day", "-1 mon 1 day", "1 year -1 mon",
			"2 hours 30 minutes", "90 min", "1:2", "1:2:3.5", "-1:2:3", "3 millennia 2 centuries 1 decade",
			"1 us", "1.2345678 sec", "PT1.5H", "P1.5Y", "P1W", "1 hour 1 hour", "abc", "", "1 day 1 day",
			"10 ms", "1.5 ms", "1 microseconds", "2 milliseconds", "1 week 2 days", "1 2 hours",
			"2147483647 days", "2147483648 days", "178956970 years", "178956971 years", "P-1D",
			"-1-2", "+1:00", "1 day +1:00", "1.5 days", "0.5 min", "1 h 30 m", "1y", "1mon", "5 d 4 h",
			"P1Y-2M", "PT36H", "P00010203T040506", "p1d", "1 day 25:00", "1:60", "1:59:60", "1:59:61",
			"12:34.5", "-0.5 sec", "1e3 sec", "1 fortnight", "1 qtr", "P", "PT", "2562047788:00:54.775807",
			"-2562047788:00:54.775808", "2562047789 hours"},
		"interval(2)": {"1.234 sec", "1.235 sec", "-1.235 sec", "1 day 00:00:00.999"},
		"timestamp(0) without time zone": {"2026-01-02 03:04:05.5", "2026-01-02 03:04:04.5",
			"2026-01-02 23:59:59.7"},
	}
	// More forms of dates, times and intervals.
	more := map[string][]string{
		"date": {"2026-1-2", "26-1-2", "1/2/26", "01-02-26", "1.2.2026", "2026 Jan 2", "Jan-2-2026", "January 2 2026 AD",
			"2026-01-02 Z", "2026-01-02 +05", "2026-01-02 10:00:00+05", "2026-01-02 America/New_York",
			"Jan 2", "2026", "2026-01-02 2026", "Friday, January 2, 2026", "jan 02 26", "02 jan 26", "26 jan 02",
			"2026-01-02t10:00", "060102", "20260102T", "J2451545", "j 2451545", "2026-01-02 allballs", "2026/1/2",
			"2026-01-02 10:00:00.123 bc", "2026-001", "2026.001", "  ", "2026-01-02 xyz", "2026-01-02 10:00 xyz",
			"1-1-1", "0099-01-01", "99-01-01", "100-01-01", "01/02/0026", "Feb 29 2024", "Feb 29 2023",
			"2026-01-32", "2026-00-10", "13/01/2026", "12/31/2026", "2026-12-31 24:00", "infinity ", " -INFINITY",
			"2026-01-02T10:00:00Z", "2026-01-02 10:00:00.5+05:30", "2026-06-15 12:00 europe/london", "2026-01-02 10:00 utc+3",
			"Sat Jan 3 2026 10:00", "2026-01-02 10.30", "10:00 2026-01-02", "2026-01-02 1000", "2026-01-02 100000",
			"20260102 10:00", "20260102100000", "2026-01-02-10:00"},
		"timestamp": {"2026-01-02 10", "2026-01-02 10:00:00.", "2026-01-02 10:00:00.0000005", "2026-01-02 10:00:00.9999995",
			"2026-01-02 10:00:59.9999999", "2026-01-02 23:59:59.9999999", "2026-01-02 12:30 AM", "2026-01-02 12:30 PM", "2026-01-02 0:30 am",
			"2026-01-02 24:00 pm", "2026-01-02 10:00 a.m.", "2026-01-02T10", "2026-01-02T1000", "2026-01-02T100000",
			"2026-01-02 T 10:00", "epoch 10:00", "2026-01-02 10:00:00 +0000", "2026-01-02 10:00:00 -00:30",
			"2026-01-02 1:", "2026-01-02 1:2:", "2026-01-02 1::5", "2026-01-02 1:.5", "2026-01-02 25:", "2026-01-02 24:",
			"2026-01-02 1:2:3:4", "2026-01-02T1:"},
		"timestamptz": {"2026-03-08 02:30 America/New_York", "2026-11-01 01:30 America/New_York", "2026-01-02 10:00 cet",
			"2026-01-02 10:00 +05:30:30", "2026-01-02 10:00 -1530", "2026-01-02 10:00 -16", "2026-01-02 10:00+5",
			"2026-01-02 10:00 GMT", "2026-01-02 10:00 z", "1900-01-01 00:00 Europe/Amsterdam", "2026-01-02 10:00 Asia/Kolkata"},
		"interval": {"1 day 2 hours 3 minutes 4 seconds", "1 d 2 h 3 m 4 s", "-1.5 hours", "+1.5 hours", "1.5 hours ago",
			"1 year 1.5 months", "0.1 sec", "0.0000001 sec", "0.0000005 sec", "0.0000015 sec", "1 day 1.5 hours",
			"1 mon 1.5 days", "1.123456789 days", "1 millennium", "2 centuries", "1.5 decades", "1.01 centuries",
			"10000 years", "178956970 years 7 months", "-178956970 years -8 months", "1 week ago", "@1 day",
			"1 day 2:03", "1 -2:03", "-1 -2:03:04", "1 day 2:03:04.5 ago", "P1Y2M", "PT1M", "PT1.5S", "P1DT", "P1DT1H",
			"P0.5D", "P0.5M", "P0.5W", "PT0.5M", "P1Y1Y", "P2026-01-02", "P20260102", "PT10:20:30", "PT102030",
			"P0001-00-00", "P1-2-3T4:5:6", "1 day 2 hour", "2 hours 1 day", "1:00:00 1 day", "1 day 1:00 1 sec", "90 ago", "1 ago",
			"1 hour 30", "30 1 hour", "5 minutes 30", "1.5e3 seconds", "-0", "+0", "1 years 1 years", "1 y 2 mon 3 w 4 d",
			"1 microsecond", "1 milliseconds", "2 mseconds", "3 usecs", "1 millenniums", "1 centuriesx", "1 min 1 mins",
			"123456789 seconds", "9223372036854775807 us", "9223372036854775808 us", "-9223372036854775808 us",
			"2147483647 months", "-2147483648 months", "1 mon 2147483647 days", "0.5 millisecond", "1.5 us",
			"2 weeks 1.5 days", "1-0", "0-11", "0-12", "-0-6", "1-2 3", "1-2 3 4:05:06", "1-2 3 4:05", "3 4:05:06",
			// A time's numbers are read as strtol reads them: an empty one is 0.
			"1 year 1 month 1 day 1:", "1:", "1:2", "1:2:", "1::", "1::2", "1:.5", "1:2:.5", "1:.", "-1:", "+1:",
			"-1:2:3.5", "1 day -1:00", "1 1:", "1 day 1:", "1:2:3:", "1:2::", ":1", "1:60", "1:2:61",
			"99999999999:", "9999999999:30.5", "75:30.5", "1:99999999999", "@ 1 hour ago", "-1:2:3.5 ago",
			"P1Y2M3DT4H5M6S", "P1W", "PT-1H", "P-1Y-2M", "P0001-02-03T04:05:06"},
		// Field restrictions give a bare number its unit and truncate.
		"interval day": {"90", "1 day 02:03:04", "-1 day -02:03", "1.5", "3 days 25:00", "1 year 2 months 3 days",
			"1 2:03", "90 ago", "P1DT2H"},
		"interval year":             {"1", "14 months", "-14 months", "1.5", "1-6", "-1-6"},
		"interval month":            {"3", "1.5", "1 year 2 months 3 days", "1-2"},
		"interval year to month":    {"1-2", "3", "1 year 5 days"},
		"interval minute":           {"90", "02:03:04.5", "-1:2:3", "1.5"},
		"interval second":           {"90", "1.25", "1:30"},
		"interval day to hour":      {"7", "1 2", "1 02:30", "-1 -2"},
		"interval day to minute":    {"1 2:03:04", "90", "1:30", "1 30"},
		"interval day to second":    {"1 2:03:04.5", "90", "1:30"},
		"interval hour to minute":   {"1:30", "1:30:45", "90", "-1:30:45"},
		"interval hour to second":   {"1:30:45.5", "90", "1:30"},
		"interval minute to second": {"1:30", "1:30.5", "90", "1:02:03", "-1:30", "1 1:30", "+1:30", "1:", "1:.5"},
		"interval hour":             {"7", "1 day 02:30:00", "-02:30", "1.5", "1 7", "1 day 1:"},
		"interval second(0)":        {"1.5", "2.5", "-1.5"},
		"interval day to second(2)": {"1 2:03:04.567", "1:30"},
		"date ":                     {"Sat 2026-01-03", "2026-01-03 Sat", "BC 2026-01-03", "epoch 2026-01-02", "10:00 2026-01-02"},
		"timestamptz ": {"2026-03-08 02:30 America/New_York", "2026-11-01 01:30 America/New_York",
			"2026-03-29 02:30 Europe/Paris", "2026-10-25 02:30 Europe/Paris", "2026-01-02 10:00 utc-3",
			"2026-01-02 10:00 abc+3", "2026-01-02 10:00 EST5EDT", "2026-01-02 allballs"},
		"timestamp ": {"allballs", "epoch 10:00"},
	}
	for typ, list := range more {
		inputs[strings.TrimSpace(typ)] = append(inputs[strings.TrimSpace(typ)], list...)
	}
	types := make([]string, 0, len(inputs))
	for typ := range inputs {
		types = append(types, typ)
	}
	for _, typ := range types {
		for _, s := range inputs[typ] {
			o.check(t, l(typ, s))
		}
	}
}

func TestOracleFormatFloat(t *testing.T) {
	o := newOracle(t)
	// Arithmetic results exercise the shortest round-trip output.
	for _, e := range []ex{
		bin{"/", f8("1"), f8("3")}, bin{"/", f8("2"), f8("3")}, bin{"*", f8("0.1"), f8("3")},
		bin{"+", f8("0.1"), f8("0.2")}, bin{"/", f4("1"), f4("3")}, bin{"*", f4("0.1"), f4("3")},
		bin{"/", f8("10"), f8("3e20")}, bin{"*", f8("1e300"), f8("1e10")}, bin{"/", f8("1e-300"), f8("1e10")},
		bin{"*", f8("-0"), f8("1")}, bin{"*", f8("1e308"), f8("10")}, bin{"*", f8("1e-308"), f8("1e-308")},
		bin{"/", f8("1"), f8("0")}, bin{"/", f8("NaN"), f8("0")}, bin{"/", f8("0"), f8("0")},
		bin{"+", f8("Infinity"), f8("-Infinity")}, bin{"*", f8("Infinity"), f8("0")},
		bin{"/", f8("1"), f8("Infinity")}, bin{"*", f4("1e38"), f4("10")}, bin{"*", f4("1e-38"), f4("1e-10")},
		bin{"+", f4("1"), f8("0.1")}, bin{"*", f8("1.1"), f4("1.1")}, bin{"/", f4("1"), i4(3)},
		bin{"/", i4(1), f4("3")}, bin{"+", i8(1), f4("0.5")}, bin{"-", num("1.5"), f8("0.25")},
		bin{"*", num("1.1"), f4("2")}, un{"-", f8("0")}, un{"-", f4("1.5")}, un{"+", f8("2.5")},
		bin{"/", f8("1"), f8("7")}, bin{"*", f8("123456789"), f8("1000000")},
		bin{"*", f8("123456789"), f8("10000000")}, bin{"/", f8("1"), f8("10000")},
		bin{"/", f8("1"), f8("100000")}, bin{"*", f4("123456"), f4("10")}, bin{"/", f4("1"), f4("10000")},
		bin{"/", f4("1"), f4("100000")}, bin{"%", f8("5"), f8("2")},
	} {
		o.check(t, e)
	}
}

func TestOracleCasts(t *testing.T) {
	o := newOracle(t)
	var cases []ex
	add := func(e ex, typs ...string) {
		for _, typ := range typs {
			cases = append(cases, cast{e: e, typ: typ})
		}
	}
	numeric := []string{"smallint", "integer", "bigint", "numeric", "numeric(5,2)", "numeric(3,-1)",
		"real", "double precision", "text", "character varying(3)", "boolean"}
	for _, e := range []ex{i2(12), i4(-32769), i4(40000), i4(0), i4(1), i8(9223372036854775807),
		i8(-3000000000), num("2.5"), num("-2.5"), num("3.5"), num("0.5"), num("1234.5678"), num("NaN"),
		num("Infinity"), num("-Infinity"), num("32767.5"), num("-32768.5"), num("1e20"), num("1e400"),
		num("1e-400"), num("0.1"), num("123456789.123456789"), f8("2.5"), f8("3.5"), f8("-0.5"), f8("-1.5"),
		f8("1e10"), f8("NaN"), f8("Infinity"), f8("0.1"), f8("1e20"), f8("1.5e-7"), f8("2147483647.5"),
		f8("-2147483648.5"), f8("9.2233720368547758e18"), f8("1e300"), f8("1e-300"), f8("32767.4"),
		f8("1234.5678"), f8("0.3333333333333333"), f4("0.1"), f4("2.5"), f4("1e10"), f4("123456.7"),
		f4("NaN"), f4("3.4e38"), l("boolean", "t"), l("boolean", "f")} {
		add(e, numeric...)
	}
	for _, e := range []ex{txt("12"), txt(" 12 "), txt("abc"), txt("1.5"), txt("t"), txt("2026-01-02"),
		txt("1 day"), txt(`\x0102`), txt("NaN"), txt("abcd"), txt("ab  ")} {
		add(e, "integer", "numeric", "double precision", "boolean", "date", "timestamp", "interval",
			"bytea", "character varying(3)", "text")
	}
	for _, e := range []ex{dt("2026-01-02"), dt("infinity"), dt("-infinity"), dt("4714-11-24 BC"),
		dt("5874897-12-31"), dt("294247-01-10"),
		ts("2026-01-02 03:04:05.678"), ts("-infinity"), ts("1969-12-31 23:59:59.5"), ts("0001-01-01 00:00:00 BC"),
		tz("2026-01-02 03:04:05+02"), iv("1 day 02:03:04.56789"), l("bytea", `\x01ff`)} {
		add(e, "date", "timestamp", "timestamptz", "text", "character varying(5)", "timestamp(0)",
			"timestamp(2)", "timestamptz(1)", "interval", "interval(1)", "bytea", "integer")
	}
	for _, e := range []ex{iv("1 year 2 months 3 days 04:05:06.789"), iv("-1 year -2 months -3 days -04:05:06.789"),
		iv("14 months 40 days 25:59:59")} {
		add(e, "interval year", "interval month", "interval year to month", "interval day", "interval hour",
			"interval minute", "interval second", "interval day to hour", "interval day to minute",
			"interval day to second(1)", "interval hour to minute", "interval hour to second",
			"interval minute to second(0)")
	}
	for _, e := range cases {
		o.check(t, e)
	}
	// Assignment: varchar rejects what an explicit cast truncates.
	for _, e := range []ex{txt("abcd"), txt("abc  "), txt("ab"), i4(12345), num("1.5"), l("boolean", "t"),
		dt("2026-01-02")} {
		o.checkAssign(t, e, "character varying(3)")
	}
	for _, e := range []ex{num("1.239"), num("1234.5"), i4(5), f8("1.005"), f8("NaN")} {
		o.checkAssign(t, e, "numeric(5,2)")
	}
	for _, e := range []ex{i8(70000), num("7.5"), f8("6.5"), i2(3)} {
		o.checkAssign(t, e, "smallint")
	}
	for _, e := range []ex{ts("2026-01-02 03:04:05"), tz("2026-01-02 03:04:05")} {
		o.checkAssign(t, e, "date")
	}
}

// checkAssign stores e into a temporary column of type typ, as INSERT does,
// and compares with assignment casting here.
func (o *oracle) checkAssign(t *testing.T, e ex, typ string) {
	t.Helper()
	if _, err := o.exec("DROP TABLE IF EXISTS assign_t; CREATE TEMP TABLE assign_t (c " + typ + ")"); err != nil {
		t.Fatal(err)
	}
	var want pgResult
	if _, err := o.exec("INSERT INTO assign_t VALUES (" + e.sql() + ")"); err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatal(err)
		}
		want = pgResult{sqlstate: pe.Code, msg: pe.Message}
		if pe.Code == "42804" {
			// No assignment cast: PostgreSQL's message names the column.
			want.msg = "cannot cast"
		}
	} else {
		want = o.eval(t, "(SELECT c FROM assign_t)")
		want.typ = mustType(t, typ).ID.baseName()
	}
	got := ours(t, cast{e: e, typ: typ, assign: true})
	if want.msg == "cannot cast" && got.sqlstate == "42846" {
		return
	}
	if !sameResult(got, want) {
		t.Errorf("INSERT %s INTO %s\n  got  %v\n  want %v", e.sql(), typ, got, want)
	}
}

func TestOracleOperators(t *testing.T) {
	o := newOracle(t)
	var cases []ex
	ops := []string{"+", "-", "*", "/", "%", "=", "<>", "<", "<=", ">", ">=", "||"}
	// Every operator over pairs of values of the numeric types, mixed.
	nums := []ex{i2(7), i4(-3), i8(10), num("2.50"), f4("1.5"), f8("0.1"), u("4"), n("integer")}
	for _, a := range nums {
		for _, b := range nums {
			for _, op := range ops {
				cases = append(cases, bin{op, a, b})
			}
		}
	}
	for _, e := range []ex{
		// Overflow, division by zero, truncation and remainders.
		bin{"+", i4(2147483647), i4(1)}, bin{"-", i4(-2147483648), i4(1)}, bin{"*", i4(65536), i4(65536)},
		bin{"+", i2(32767), i2(1)}, bin{"*", i2(200), i2(200)}, bin{"+", i8(9223372036854775807), i8(1)},
		bin{"*", i8(4611686018427387904), i8(2)}, bin{"*", i8(-4611686018427387904), i8(2)},
		bin{"/", i4(-2147483648), i4(-1)}, bin{"%", i4(-2147483648), i4(-1)}, bin{"/", i8(-9223372036854775807), i8(-1)},
		bin{"/", i4(7), i4(2)}, bin{"/", i4(-7), i4(2)}, bin{"%", i4(-7), i4(2)}, bin{"%", i4(7), i4(-2)},
		bin{"/", i4(1), i4(0)}, bin{"%", i4(1), i4(0)}, bin{"/", i2(1), i2(0)}, bin{"/", i8(1), i8(0)},
		bin{"+", i2(32767), i4(1)}, bin{"*", i2(-32768), i8(-1)}, un{"-", i4(-2147483648)}, un{"-", i2(-32768)},
		un{"-", i8(-9223372036854775807)}, un{"+", i4(5)}, un{"-", u("5")}, un{"+", u("5")},
		un{"-", num("0.00")}, un{"-", num("-1.5")}, un{"-", num("NaN")}, un{"-", num("Infinity")},
		un{"-", l("boolean", "t")}, un{"-", txt("1")}, un{"+", iv("1 day")}, un{"-", iv("1 day -02:00")},
		un{"-", iv("-178956970 years -8 months")},
		// Numeric scales.
		bin{"/", num("1"), num("3")}, bin{"/", num("5"), num("2")}, bin{"/", num("10"), num("4")},
		bin{"/", num("1"), num("7000")}, bin{"/", num("123456789"), num("0.001")}, bin{"/", num("0"), num("5")},
		bin{"/", num("1.00"), num("3")}, bin{"/", num("2"), num("3")}, bin{"/", num("-2"), num("3")},
		bin{"/", num("99999"), num("0.00007")}, bin{"/", num("1"), num("99999999")},
		bin{"/", num("12345678901234567890"), num("3")}, bin{"/", num("0.000001"), num("7")},
		bin{"/", num("1.234567890123456789012"), num("1.1")}, bin{"/", num("5"), num("0")},
		bin{"/", num("1e-10"), num("3e10")}, bin{"/", num("9999"), num("10000")}, bin{"/", num("10000"), num("9999")},
		bin{"*", num("1e-10000"), num("1e-10000")}, bin{"*", num("1e-16383"), num("0.5")},
		bin{"*", num("1e131071"), num("10")}, bin{"/", num("1e-16383"), num("3")},
		bin{"*", num("0.1"), num("0.20")}, bin{"*", num("-1.5"), num("0")}, bin{"+", num("1.5"), num("-1.50")},
		bin{"-", num("1.005"), num("0.005")}, bin{"%", num("-7.5"), num("2")}, bin{"%", num("7.5"), num("-2")},
		bin{"%", num("7"), num("0")}, bin{"%", num("10"), num("0.3")},
		bin{"/", num("Infinity"), num("0")}, bin{"/", num("Infinity"), num("2")}, bin{"/", num("2"), num("Infinity")},
		bin{"%", num("Infinity"), num("2")}, bin{"%", num("2"), num("Infinity")}, bin{"/", num("NaN"), num("0")},
		bin{"+", num("Infinity"), num("-Infinity")}, bin{"*", num("Infinity"), num("0")},
		bin{"*", num("-Infinity"), num("-2")}, bin{"-", num("Infinity"), num("Infinity")},
		bin{"=", num("NaN"), num("NaN")}, bin{">", num("NaN"), num("Infinity")}, bin{"<", num("-Infinity"), num("-1e100")},
		bin{"=", num("1.0"), num("1.00")}, bin{"=", f8("NaN"), f8("NaN")}, bin{">", f8("NaN"), f8("Infinity")},
		bin{"=", f8("-0"), f8("0")}, bin{"=", f4("0.1"), f8("0.1")}, bin{"=", num("0.1"), f8("0.1")},
		bin{"=", i4(1), num("1.0")}, bin{"<", i8(9223372036854775807), f4("9.223372e18")},
		// Text and bytea.
		bin{"||", txt("a"), txt("b")}, bin{"||", u("a"), u("b")}, bin{"||", i4(1), u("x")},
		bin{"||", u("x"), i4(1)}, bin{"||", i4(1), i4(2)}, bin{"||", l("boolean", "t"), u("x")},
		bin{"||", u("x"), dt("2026-01-02")}, bin{"||", num("1.50"), txt("x")}, bin{"||", txt("x"), n("integer")},
		bin{"||", l("character varying(3)", "ab"), l("character varying(3)", "cd")}, bin{"||", n("text"), txt("x")},
		bin{"||", l("bytea", `\x01`), l("bytea", `\x02`)}, bin{"||", l("bytea", `\x01`), u(`\x02`)},
		bin{"||", iv("1 day"), txt("!")}, bin{"||", f8("0.1"), txt("")},
		bin{"<", txt("B"), txt("a")}, bin{"<", txt("a"), txt("ab")}, bin{"=", u("abc"), u("abc")},
		bin{"<", u("abc"), u("abd")}, bin{"=", txt("a"), l("character varying(3)", "a")},
		bin{"<", l("bytea", `\x01`), l("bytea", `\x0100`)}, bin{">", txt("é"), txt("z")},
		bin{"+", u("1"), u("2")}, bin{"+", txt("1"), i4(1)}, bin{"=", txt("1"), i4(1)},
		bin{"+", l("boolean", "t"), i4(1)}, bin{"=", l("boolean", "t"), u("t")}, bin{"<", l("boolean", "f"), l("boolean", "t")},
		// Dates, timestamps and intervals.
		bin{"+", dt("2026-01-31"), i4(1)}, bin{"+", i4(1), dt("2026-01-31")}, bin{"-", dt("2026-03-01"), i4(1)},
		bin{"+", dt("2026-01-31"), i2(1)}, bin{"+", dt("2026-01-31"), i8(1)}, bin{"-", dt("2026-03-01"), dt("2026-01-01")},
		bin{"-", dt("infinity"), dt("2026-01-01")}, bin{"+", dt("infinity"), i4(1)},
		bin{"+", dt("5874897-12-31"), i4(1)}, bin{"+", dt("2026-01-31"), iv("1 month")},
		bin{"+", iv("1 hour"), dt("2026-01-31")}, bin{"-", dt("2026-03-31"), iv("1 month")},
		bin{"+", dt("2026-01-02"), u("1")}, bin{"-", dt("2026-01-02"), u("2026-01-01")},
		bin{"+", dt("2026-01-02"), u("1 day")}, bin{"-", dt("2026-01-02"), u("1 day")},
		bin{"+", ts("2024-02-29 12:00"), iv("1 year")}, bin{"+", ts("2026-01-31 10:00"), iv("1 mon 1 day 01:00")},
		bin{"-", ts("2026-03-31 10:00"), iv("1 mon")}, bin{"+", ts("2026-01-01"), iv("-1 mon -1 day -00:00:01")},
		bin{"+", iv("1 day"), ts("2026-01-01")}, bin{"-", ts("2026-01-02 03:00"), ts("2026-01-01 04:30")},
		bin{"-", ts("2026-01-01"), ts("2026-01-02 03:00")}, bin{"-", ts("2026-01-01"), ts("2025-01-01")},
		bin{"-", ts("infinity"), ts("2026-01-01")}, bin{"+", ts("infinity"), iv("1 day")},
		bin{"+", ts("294247-01-01"), iv("9 days")}, bin{"-", ts("4714-11-25 BC"), iv("2 days")},
		bin{"+", tz("2026-01-31 10:00+00"), iv("1 mon")}, bin{"-", tz("2026-01-02"), tz("2026-01-01 12:00+05")},
		bin{"-", tz("2026-01-02"), ts("2026-01-01")}, bin{"-", ts("2026-01-02"), u("1 day")},
		bin{"+", ts("2026-01-02"), u("1 day")}, bin{"-", dt("2026-01-02"), ts("2026-01-01")},
		bin{"=", dt("2026-01-02"), ts("2026-01-02 00:00")}, bin{"<", dt("2026-01-02"), ts("2026-01-02 00:00:01")},
		bin{">", dt("infinity"), ts("294247-01-01")}, bin{"<", dt("5874897-01-01"), ts("infinity")},
		bin{">", dt("5874897-01-01"), ts("294247-01-01")}, bin{"=", dt("2026-01-02"), tz("2026-01-02 00:00+00")},
		bin{"=", ts("2026-01-02 05:00"), tz("2026-01-02 10:00+05")}, bin{"<", tz("2026-01-02"), dt("2026-01-03")},
		bin{"=", dt("2026-01-02"), u("2026-01-02")}, bin{"<", ts("2026-01-02"), u("2026-01-03")},
		bin{"+", iv("1 day"), iv("-2 hours")}, bin{"-", iv("1 mon"), iv("1 day")},
		bin{"+", iv("2147483647 days"), iv("1 day")}, bin{"*", iv("1 day"), f8("1.5")},
		bin{"*", iv("1 mon"), f8("0.5")}, bin{"*", iv("1 mon"), f8("1.5")}, bin{"/", iv("1 mon"), f8("7")},
		bin{"/", iv("1 day"), f8("3")}, bin{"/", iv("1 year 1 day"), i4(7)}, bin{"*", i4(3), iv("1 hour")},
		bin{"*", num("1.5"), iv("1 mon 1 day")}, bin{"*", iv("1 mon"), u("2")}, bin{"/", iv("1 day"), f8("0")},
		bin{"*", iv("1 day"), f8("NaN")}, bin{"*", iv("1 year"), f8("1e10")}, bin{"*", iv("-1 mon 3 days 04:00"), f8("-0.3")},
		bin{"/", iv("1 mon 1 day 1 sec"), f8("3.3")}, bin{"*", iv("1 day 00:00:00.000001"), f8("0.5")},
		bin{"=", iv("1 mon"), iv("30 days")}, bin{"=", iv("1 day"), iv("24 hours")}, bin{">", iv("1 mon 1 sec"), iv("30 days")},
		bin{"<", iv("-1 day"), iv("-23 hours")}, bin{"=", iv("1 year"), iv("360 days")},
		bin{"+", iv("1 day"), u("1 hour")}, bin{"+", dt("2026-01-02"), dt("2026-01-02")},
		bin{"*", dt("2026-01-02"), i4(2)}, bin{"+", ts("2026-01-02"), ts("2026-01-02")},
		bin{"-", iv("1 day"), ts("2026-01-02")},
	} {
		cases = append(cases, e)
	}
	for _, e := range cases {
		o.check(t, e)
	}
}

func TestOracleCommonType(t *testing.T) {
	o := newOracle(t)
	sets := [][]ex{
		{i4(1), i8(2)}, {i2(1), i4(2)}, {i4(1), num("2.5")}, {num("1"), f4("1")}, {f4("1"), f8("2")},
		{i4(1), f4("2")}, {i8(1), f4("2")}, {i4(1), u("2")}, {u("a"), u("b")}, {u("a"), txt("b")},
		{l("character varying(3)", "a"), txt("b")}, {l("character varying(3)", "a"), l("character varying(3)", "b")},
		{l("character varying(3)", "a"), l("character varying(5)", "b")}, {i4(1), txt("a")},
		{dt("2026-01-01"), ts("2026-01-01")}, {ts("2026-01-01"), tz("2026-01-01")}, {dt("2026-01-01"), tz("2026-01-01")},
		{iv("1 day"), u("2 days")}, {l("boolean", "t"), i4(1)}, {dt("2026-01-01"), iv("1 day")},
		{l("bytea", `\x01`), txt("a")}, {n("integer"), u("7")}, {u("1"), i4(1), num("2")},
		{num("1.5"), f8("1"), i4(1)}, {l("numeric(5,2)", "1"), l("numeric(5,2)", "2")},
		{l("numeric(5,2)", "1"), l("numeric(6,2)", "2")}, {f8("1"), num("1")}, {i4(1), i4(2), txt("x")},
		{u("8"), i4(1)}, {u("2026-01-01"), dt("2026-01-01")},
	}
	for _, set := range sets {
		var sqls []string
		var typs []Type
		for _, e := range set {
			sqls = append(sqls, e.sql())
			_, typ, err := e.eval(t)
			if err != nil {
				t.Fatal(err)
			}
			typs = append(typs, typ)
		}
		query := "COALESCE(" + strings.Join(sqls, ", ") + ")"
		want := o.eval(t, query)
		typ, err := CommonType("COALESCE", typs)
		var got pgResult
		if err != nil {
			got = pgResult{sqlstate: errs.SQLState(err), msg: err.Error()}
		} else {
			got = pgResult{typ: typ.ID.baseName()}
		}
		if want.sqlstate == "" {
			want = pgResult{typ: want.typ}
		}
		if !sameResult(got, want) {
			t.Errorf("%s\n  got  %v\n  want %v", query, got, want)
		}
		// And in UNION, which PostgreSQL types column by column.
		union := "(SELECT " + strings.Join(sqls, " UNION SELECT ") + ")"
		want = o.evalType(t, union)
		typ, err = CommonType("UNION", typs)
		if err != nil {
			got = pgResult{sqlstate: errs.SQLState(err), msg: err.Error()}
		} else {
			got = pgResult{typ: typ.String()}
		}
		if !sameResult(got, want) {
			t.Errorf("%s\n  got  %v\n  want %v", union, got, want)
		}
	}
}

// evalType returns the column type (format_type, with modifiers) of a
// subquery, as a view over it would show it.
func (o *oracle) evalType(t *testing.T, subquery string) pgResult {
	t.Helper()
	_, err := o.exec("DROP VIEW IF EXISTS type_v; CREATE TEMP VIEW type_v AS SELECT * FROM " + subquery + " s(c)")
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return pgResult{sqlstate: pe.Code, msg: pe.Message}
		}
		t.Fatal(err)
	}
	res, err := o.exec("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'type_v'::regclass AND attnum = 1")
	if err != nil {
		t.Fatal(err)
	}
	return pgResult{typ: string(res[0].Rows[0][0])}
}

func TestOracleAggregates(t *testing.T) {
	o := newOracle(t)
	typs := []string{"smallint", "integer", "bigint", "numeric", "real", "double precision", "text",
		"character varying(3)", "boolean", "bytea", "date", "timestamp", "timestamptz", "interval", ""}
	for _, name := range []string{"count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every"} {
		for _, typ := range typs {
			arg := "NULL::" + typ
			argType := Of(Unknown)
			if typ == "" {
				arg = "'1'"
			} else {
				argType = mustType(t, typ)
			}
			want := o.eval(t, name+"("+arg+")")
			if want.sqlstate == "" {
				want = pgResult{typ: want.typ}
			}
			var got pgResult
			rt, err := AggregateType(name, argType)
			if err != nil {
				got = pgResult{sqlstate: errs.SQLState(err), msg: err.Error()}
			} else {
				got = pgResult{typ: rt.ID.baseName()}
			}
			if !sameResult(got, want) {
				t.Errorf("%s(%s)\n  got  %v\n  want %v", name, arg, got, want)
			}
		}
	}
}

func TestOracleTypeNames(t *testing.T) {
	o := newOracle(t)
	for _, c := range []struct {
		sql     string
		names   []string
		typmods []int32
	}{
		{"int", []string{"pg_catalog", "int4"}, nil},
		{"smallint", []string{"pg_catalog", "int2"}, nil},
		{"bigint", []string{"pg_catalog", "int8"}, nil},
		{"numeric(10,2)", []string{"pg_catalog", "numeric"}, []int32{10, 2}},
		{"numeric(10)", []string{"pg_catalog", "numeric"}, []int32{10}},
		{"numeric(3,-1)", []string{"pg_catalog", "numeric"}, []int32{3, -1}},
		{"decimal", []string{"pg_catalog", "numeric"}, nil},
		{"real", []string{"pg_catalog", "float4"}, nil},
		{"double precision", []string{"pg_catalog", "float8"}, nil},
		{"float", []string{"pg_catalog", "float8"}, nil},
		{"text", []string{"text"}, nil},
		{"varchar(5)", []string{"pg_catalog", "varchar"}, []int32{5}},
		{"character varying", []string{"pg_catalog", "varchar"}, nil},
		{"bytea", []string{"bytea"}, nil},
		{"date", []string{"date"}, nil},
		{"timestamp", []string{"pg_catalog", "timestamp"}, nil},
		{"timestamp(3)", []string{"pg_catalog", "timestamp"}, []int32{3}},
		{"timestamptz", []string{"timestamptz"}, nil},
		{"timestamp(2) with time zone", []string{"pg_catalog", "timestamptz"}, []int32{2}},
		{"interval", []string{"pg_catalog", "interval"}, nil},
		{"interval(4)", []string{"pg_catalog", "interval"}, []int32{0x7FFF, 4}},
		{"interval day", []string{"pg_catalog", "interval"}, []int32{int32(IntervalDay)}},
		{"interval year to month", []string{"pg_catalog", "interval"}, []int32{int32(IntervalYear | IntervalMonth)}},
		{"interval day to second(3)", []string{"pg_catalog", "interval"},
			[]int32{int32(IntervalDay | IntervalHour | IntervalMinute | IntervalSecond), 3}},
		{"interval minute to second", []string{"pg_catalog", "interval"}, []int32{int32(IntervalMinute | IntervalSecond)}},
		{"boolean", []string{"pg_catalog", "bool"}, nil},
	} {
		if _, err := o.exec("DROP TABLE IF EXISTS tn; CREATE TEMP TABLE tn (c " + c.sql + ")"); err != nil {
			t.Fatal(err)
		}
		res, err := o.exec("SELECT format_type(atttypid, atttypmod), atttypid FROM pg_attribute WHERE attrelid = 'tn'::regclass AND attnum = 1")
		if err != nil {
			t.Fatal(err)
		}
		wantName, wantOID := string(res[0].Rows[0][0]), string(res[0].Rows[0][1])
		typ, err := TypeByName(c.names, c.typmods)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if typ.String() != wantName || strconv.Itoa(int(typ.OID())) != wantOID {
			t.Errorf("%s: got %s (oid %d), want %s (oid %s)", c.sql, typ, typ.OID(), wantName, wantOID)
		}
	}
}

// TestOracleRandom compares randomly generated values and expressions
// with PostgreSQL; the seed is fixed so that failures reproduce.
func TestOracleRandom(t *testing.T) {
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(randomSeed, 1))
	randDigits := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	randNumeric := func() string {
		s := randDigits(1 + rng.IntN(12))
		if rng.IntN(2) == 0 {
			s += "." + randDigits(rng.IntN(10))
		}
		if rng.IntN(3) == 0 {
			s = "-" + s
		}
		switch rng.IntN(10) {
		case 0:
			s = "0.000" + randDigits(1+rng.IntN(6))
		case 1:
			s = randDigits(1+rng.IntN(40)) + "." + randDigits(rng.IntN(30))
		case 2:
			s = "0." + strings.Repeat("0", rng.IntN(30)) + randDigits(1+rng.IntN(20))
		}
		return s
	}
	randFloat := func() string {
		switch rng.IntN(4) {
		case 0:
			return strconv.FormatFloat(math.Float64frombits(rng.Uint64()), 'g', -1, 64)
		case 1:
			return strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)), 'g', -1, 64)
		case 2:
			return strconv.FormatFloat(float64(rng.IntN(2000000)-1000000)/float64(1+rng.IntN(1000)), 'g', -1, 64)
		}
		return randNumeric()
	}
	randFloat4 := func() string {
		f := float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
		if rng.IntN(3) == 0 {
			f = math.Float32frombits(rng.Uint32())
		}
		return strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	randInt := func(bits int) int64 {
		switch rng.IntN(3) {
		case 0:
			return int64(rng.IntN(200) - 100)
		case 1:
			if bits == 64 {
				return int64(rng.Uint64())
			}
			return rng.Int64N(1<<(bits-1)) - rng.Int64N(1<<(bits-1))
		}
		return int64(rng.IntN(1<<16) - 1<<15)
	}
	randTimestamp := func() string {
		var micros int64
		switch rng.IntN(3) {
		case 0:
			micros = rng.Int64N(4_000_000_000_000_000) - 2_000_000_000_000_000
		case 1:
			micros = rng.Int64N(200*365*microsPerDay) - 100*365*microsPerDay
		default:
			micros = rng.Int64N(60*365*microsPerDay) + 10*365*microsPerDay
			micros -= micros % microsPerSecond * int64(rng.IntN(2))
		}
		return string(AppendTimestamp(nil, micros, false))
	}
	randInterval := func() string {
		parts := []string{}
		if rng.IntN(2) == 0 {
			parts = append(parts, strconv.Itoa(rng.IntN(400)-200)+" mons")
		}
		if rng.IntN(2) == 0 {
			parts = append(parts, strconv.Itoa(rng.IntN(800)-400)+" days")
		}
		if rng.IntN(2) == 0 || len(parts) == 0 {
			parts = append(parts, strconv.FormatInt(rng.Int64N(400*microsPerDay)-200*microsPerDay, 10)+" us")
		}
		return strings.Join(parts, " ")
	}
	var cases []ex
	arith := []string{"+", "-", "*", "/", "%", "<", "="}
	for i := 0; i < randomRounds; i++ {
		cases = append(cases, bin{arith[rng.IntN(len(arith))], num(randNumeric()), num(randNumeric())})
		cases = append(cases, cast{e: num(randNumeric()), typ: []string{"numeric(6,2)", "numeric(10,4)",
			"numeric(4,-2)", "integer", "bigint", "smallint", "double precision", "real"}[rng.IntN(8)]})
		cases = append(cases, l("double precision", randFloat()), l("real", randFloat4()))
		cases = append(cases, bin{arith[rng.IntN(4)], f8(randFloat()), f8(randFloat())})
		cases = append(cases, bin{arith[rng.IntN(4)], f4(randFloat4()), f4(randFloat4())})
		cases = append(cases, cast{e: f8(randFloat()), typ: []string{"numeric", "integer", "bigint", "real"}[rng.IntN(4)]})
		cases = append(cases, cast{e: f4(randFloat4()), typ: []string{"numeric", "integer", "double precision"}[rng.IntN(3)]})
		cases = append(cases, bin{arith[rng.IntN(len(arith))], i4(randInt(32)), i4(randInt(32))})
		cases = append(cases, bin{arith[rng.IntN(len(arith))], i8(randInt(64)), i2(randInt(16))})
		cases = append(cases, ts(randTimestamp()), iv(randInterval()))
		cases = append(cases, bin{"+", ts(randTimestamp()), iv(randInterval())})
		cases = append(cases, bin{"-", ts(randTimestamp()), ts(randTimestamp())})
		cases = append(cases, bin{"-", dt(randTimestamp()[:10]), i4(int64(rng.IntN(100000) - 50000))})
		cases = append(cases, bin{"-", dt(randTimestamp()[:10]), dt(randTimestamp()[:10])})
		cases = append(cases, bin{[]string{"*", "/"}[rng.IntN(2)], iv(randInterval()), f8(randFloat())})
		cases = append(cases, bin{[]string{"*", "/"}[rng.IntN(2)], iv(randInterval()),
			f8(strconv.FormatFloat(rng.Float64()*10-5, 'f', rng.IntN(4), 64))})
		cases = append(cases, bin{"<", iv(randInterval()), iv(randInterval())})
		cases = append(cases, cast{e: tz(randTimestamp() + "+03"), typ: "date"})
	}
	for _, e := range cases {
		o.check(t, e)
	}
}

// The random oracle test's size and seed; raise them locally to search
// harder (ROCKSTREAM_TYPES_ROUNDS, ROCKSTREAM_TYPES_SEED).
var randomRounds, randomSeed = func() (int, uint64) {
	rounds, seed := 400, uint64(20261130)
	if v, err := strconv.Atoi(os.Getenv("ROCKSTREAM_TYPES_ROUNDS")); err == nil {
		rounds = v
	}
	if v, err := strconv.ParseUint(os.Getenv("ROCKSTREAM_TYPES_SEED"), 10, 64); err == nil {
		seed = v
	}
	return rounds, seed
}()
