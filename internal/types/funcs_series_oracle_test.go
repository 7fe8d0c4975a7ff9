package types

import "testing"

// series is generate_series(args...) collected into an array, in
// PostgreSQL by ARRAY(SELECT ...); no rows (a NULL argument, an empty
// series) is the empty array there.
type series struct{ c call }

func (s series) sql() string {
	return "ARRAY(SELECT " + s.c.sql() + ")"
}

func (s series) eval(t *testing.T) (Value, Type, error) {
	v, typ, err := s.c.eval(t)
	if err == nil && v.IsNull() {
		v = MakeArray(typ.Elem().ID, nil)
	}
	return v, typ, err
}

func gs(args ...ex) ex { return series{call{name: SeriesRows, sqlName: "generate_series", args: args}} }

func TestOracleGenerateSeries(t *testing.T) {
	cases := []ex{
		gs(i4(1), i4(5)), gs(i4(5), i4(1)), gs(i4(1), i4(10), i4(3)), gs(i4(10), i4(1), i4(-4)), gs(i4(1), i4(2), i4(0)),
		gs(i4(2147483640), i4(2147483647), i4(5)), gs(i8(9223372036854775800), i8(9223372036854775807), i8(4)),
		gs(u("1"), u("3")), gs(i2(1), i4(3)), gs(i4(1), i8(3)), gs(n("integer"), i4(3)), gs(i4(1), i4(3), n("integer")),
		gs(num("1"), num("3")), gs(num("1"), num("2"), num("0.5")), gs(num("0.1"), num("1"), num("0.3")),
		gs(num("1.00"), num("2")), gs(num("3"), num("1"), num("-0.75")), gs(num("1"), num("3"), num("0")),
		gs(num("NaN"), num("3")), gs(num("1"), num("NaN")), gs(num("1"), num("3"), num("NaN")),
		gs(num("Infinity"), num("3")), gs(num("1"), num("-Infinity")), gs(num("1"), num("3"), num("Infinity")),
		gs(num("1"), i4(3)), gs(i4(1), num("2.5")), gs(num("1"), u("2"), u("0.5")), gs(n("numeric"), num("1")),
		gs(num("-1.5"), num("1.5")), gs(num("1e-3"), num("3e-3"), num("1e-3")), gs(u("1.5"), u("3")),
		gs(ts("2020-01-01"), ts("2020-01-03"), iv("1 day")), gs(ts("2020-01-31"), ts("2020-06-01"), iv("1 month")),
		gs(ts("2020-01-03"), ts("2020-01-01"), iv("-12 hours")), gs(ts("2020-01-01"), ts("2020-01-03"), iv("-1 day")),
		gs(ts("2020-01-01"), ts("2020-01-03"), iv("0")), gs(ts("2020-01-01"), ts("2020-01-03"), iv("1 month -30 days")),
		gs(ts("2020-01-01"), ts("2020-01-02"), iv("1 month -31 days")), gs(ts("2020-01-01 00:00"), ts("2020-01-01 01:00"), iv("17 minutes")),
		gs(tz("2020-01-01 00:00+00"), tz("2020-01-01 03:00+00"), iv("1 hour")), gs(tz("2020-03-01+00"), tz("2020-01-01+00"), iv("-1 month")),
		gs(tz("2020-01-01+00"), tz("2020-01-02+00"), iv("0")), gs(u("2020-01-01"), u("2020-01-02"), iv("6 hours")),
		gs(dt("2020-01-01"), dt("2020-01-03"), iv("1 day")), gs(ts("2020-01-01"), dt("2020-01-03"), iv("1 day")),
		gs(ts("2020-01-01"), tz("2020-01-02+00"), iv("12 hours")), gs(ts("2020-01-01"), u("2020-01-02"), iv("12 hours")),
		gs(n("timestamp"), ts("2020-01-01"), iv("1 day")), gs(ts("2020-01-01"), ts("2020-01-02"), n("interval")),
		gs(ts("2020-01-01"), ts("-infinity"), iv("1 day")), gs(ts("infinity"), ts("2020-01-01"), iv("1 day")),
		gs(txt("a"), txt("b")), gs(f8("1"), f8("2")),
		gs(ts("2020-01-01"), ts("2020-01-02")), gs(i4(1), i4(2), iv("1 day")),
	}
	checkAll(t, cases)
}
