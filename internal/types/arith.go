package types

import (
	"math"
	"math/bits"
)

// Checked 64-bit integer arithmetic.

func addInt64(a, b int64) (int64, bool) {
	r := a + b
	// Overflow iff a and b have the same sign and r's sign differs.
	return r, !((a >= 0) == (b >= 0) && (r >= 0) != (a >= 0))
}

func subInt64(a, b int64) (int64, bool) {
	r := a - b
	// Overflow iff a and b have different signs and r's sign differs from a's.
	return r, !((a >= 0) != (b >= 0) && (r >= 0) != (a >= 0))
}

func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(absU64(a), absU64(b))
	neg := (a < 0) != (b < 0)
	if hi != 0 {
		return 0, false
	}
	if neg {
		if lo > 1<<63 {
			return 0, false
		}
		return int64(-lo), true
	}
	if lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// addMulInt64 returns acc + a×b with overflow checking.
func addMulInt64(acc, a, b int64) (int64, bool) {
	p, ok := mulInt64(a, b)
	if !ok {
		return 0, false
	}
	return addInt64(acc, p)
}

func absU64(a int64) uint64 {
	if a < 0 {
		return uint64(-a) // MinInt64 wraps to 1<<63, its magnitude
	}
	return uint64(a)
}

// Integer operators. Operands have already been widened to the operator's
// argument types; k is the result kind, whose range is enforced.

func intAdd(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		r, ok := addInt64(a.n, b.n)
		if !ok || !intFits(r, k) {
			return Null, intRangeError(k)
		}
		return Value{kind: k, n: r}, nil
	}
}

func intSub(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		r, ok := subInt64(a.n, b.n)
		if !ok || !intFits(r, k) {
			return Null, intRangeError(k)
		}
		return Value{kind: k, n: r}, nil
	}
}

func intMul(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		r, ok := mulInt64(a.n, b.n)
		if !ok || !intFits(r, k) {
			return Null, intRangeError(k)
		}
		return Value{kind: k, n: r}, nil
	}
}

func intDiv(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		if b.n == 0 {
			return Null, errDivByZero
		}
		if b.n == -1 {
			r, ok := subInt64(0, a.n)
			if !ok || !intFits(r, k) {
				return Null, intRangeError(k)
			}
			return Value{kind: k, n: r}, nil
		}
		return Value{kind: k, n: a.n / b.n}, nil
	}
}

func intMod(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		if b.n == 0 {
			return Null, errDivByZero
		}
		if b.n == -1 {
			return Value{kind: k, n: 0}, nil
		}
		return Value{kind: k, n: a.n % b.n}, nil
	}
}

func intNeg(k TypeID) func(a, b Value) (Value, error) {
	return func(a, _ Value) (Value, error) {
		r, ok := subInt64(0, a.n)
		if !ok || !intFits(r, k) {
			return Null, intRangeError(k)
		}
		return Value{kind: k, n: r}, nil
	}
}

func identity(a, _ Value) (Value, error) { return a, nil }

// Float operators. Float4 operators compute in single precision; mixed
// float4/float8 operators widen to float8, as PostgreSQL's float48 and
// float84 operators do.

func makeFloat(k TypeID, f float64) Value {
	if k == Float4 {
		return MakeFloat4(float32(f))
	}
	return MakeFloat8(f)
}

func isInf(f float64) bool { return math.IsInf(f, 0) }

func floatAdd(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		x, y := a.Float(), b.Float()
		var r float64
		if k == Float4 {
			r = float64(float32(x) + float32(y))
		} else {
			r = x + y
		}
		if math.IsInf(r, 0) && !isInf(x) && !isInf(y) {
			return Null, errFloatOverflow
		}
		return makeFloat(k, r), nil
	}
}

func floatSub(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		x, y := a.Float(), b.Float()
		var r float64
		if k == Float4 {
			r = float64(float32(x) - float32(y))
		} else {
			r = x - y
		}
		if math.IsInf(r, 0) && !isInf(x) && !isInf(y) {
			return Null, errFloatOverflow
		}
		return makeFloat(k, r), nil
	}
}

func floatMul(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		x, y := a.Float(), b.Float()
		var r float64
		if k == Float4 {
			r = float64(float32(x) * float32(y))
		} else {
			r = x * y
		}
		if math.IsInf(r, 0) && !isInf(x) && !isInf(y) {
			return Null, errFloatOverflow
		}
		if r == 0 && x != 0 && y != 0 {
			return Null, errFloatUnderflow
		}
		return makeFloat(k, r), nil
	}
}

func floatDiv(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		x, y := a.Float(), b.Float()
		if y == 0 && !math.IsNaN(x) {
			return Null, errDivByZero
		}
		var r float64
		if k == Float4 {
			r = float64(float32(x) / float32(y))
		} else {
			r = x / y
		}
		if math.IsInf(r, 0) && !isInf(x) {
			return Null, errFloatOverflow
		}
		if r == 0 && x != 0 && !math.IsInf(y, 0) {
			return Null, errFloatUnderflow
		}
		return makeFloat(k, r), nil
	}
}

func floatNeg(k TypeID) func(a, b Value) (Value, error) {
	return func(a, _ Value) (Value, error) { return makeFloat(k, -a.Float()), nil }
}

// Numeric operators.

func numAdd(a, b Value) (Value, error) {
	d, err := NumericAdd(a.dec(), b.dec())
	if err != nil {
		return Null, err
	}
	return MakeNumeric(d), nil
}

func numSub(a, b Value) (Value, error) {
	d, err := NumericSub(a.dec(), b.dec())
	if err != nil {
		return Null, err
	}
	return MakeNumeric(d), nil
}

func numMul(a, b Value) (Value, error) {
	d, err := NumericMul(a.dec(), b.dec())
	if err != nil {
		return Null, err
	}
	return MakeNumeric(d), nil
}

func numDiv(a, b Value) (Value, error) {
	d, err := NumericDiv(a.dec(), b.dec())
	if err != nil {
		return Null, err
	}
	return MakeNumeric(d), nil
}

func numMod(a, b Value) (Value, error) {
	d, err := NumericMod(a.dec(), b.dec())
	if err != nil {
		return Null, err
	}
	return MakeNumeric(d), nil
}

func numNeg(a, _ Value) (Value, error) { return MakeNumeric(NumericNeg(a.dec())), nil }

// Date and time operators.

func dateAddInt(a, b Value) (Value, error) { return dateAddDays(a.Days(), b.n) }
func intAddDate(a, b Value) (Value, error) { return dateAddDays(b.Days(), a.n) }
func dateSubInt(a, b Value) (Value, error) { return dateAddDays(a.Days(), -b.n) }

func dateAddDays(d int32, n int64) (Value, error) {
	if !isFiniteDate(d) {
		return MakeDate(d), nil
	}
	r := int64(d) + n
	if !validDate(r) {
		return Null, errDateRange
	}
	return MakeDate(int32(r)), nil
}

func dateSubDate(a, b Value) (Value, error) {
	if !isFiniteDate(a.Days()) || !isFiniteDate(b.Days()) {
		return Null, errInfiniteDates
	}
	return MakeInt(Int4, int64(a.Days())-int64(b.Days())), nil
}

// timestampAddInterval adds an interval to a timestamp as PostgreSQL does:
// months first (clamping the day to the end of the month), then days, then
// microseconds.
func timestampAddInterval(ts int64, iv IntervalValue) (int64, error) {
	if !isFiniteTimestamp(ts) {
		return ts, nil
	}
	if iv.Months != 0 {
		days, tod := splitTimestamp(ts)
		y, m, d := civilFromDays(days)
		mi := y*12 + (m - 1) + int64(iv.Months)
		y = floorDiv(mi, 12)
		m = mi - y*12 + 1
		if dim := daysInMonth(y, m); d > dim {
			d = dim
		}
		days = daysFromCivil(y, m, d)
		if !validDate(days) || days > endTimestamp/microsPerDay {
			return 0, errTimestampRange
		}
		ts = days*microsPerDay + tod
		if !validTimestamp(ts) {
			return 0, errTimestampRange
		}
	}
	if iv.Days != 0 {
		days, tod := splitTimestamp(ts)
		days += int64(iv.Days)
		if !validDate(days) || days > endTimestamp/microsPerDay {
			return 0, errTimestampRange
		}
		ts = days*microsPerDay + tod
	}
	r, ok := addInt64(ts, iv.Micros)
	if !ok || !validTimestamp(r) {
		return 0, errTimestampRange
	}
	return r, nil
}

func negateForSub(iv IntervalValue) IntervalValue {
	return IntervalValue{Months: -iv.Months, Days: -iv.Days, Micros: -iv.Micros}
}

func tsAddInterval(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		r, err := timestampAddInterval(a.n, b.Interval())
		if err != nil {
			return Null, err
		}
		return Value{kind: k, n: r}, nil
	}
}

func intervalAddTs(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		r, err := timestampAddInterval(b.n, a.Interval())
		if err != nil {
			return Null, err
		}
		return Value{kind: k, n: r}, nil
	}
}

func tsSubInterval(k TypeID) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		r, err := timestampAddInterval(a.n, negateForSub(b.Interval()))
		if err != nil {
			return Null, err
		}
		return Value{kind: k, n: r}, nil
	}
}

func dateAddInterval(a, b Value) (Value, error) {
	ts, err := dateToTimestamp(a.Days())
	if err != nil {
		return Null, err
	}
	r, err := timestampAddInterval(ts, b.Interval())
	if err != nil {
		return Null, err
	}
	return MakeTimestamp(r), nil
}

func intervalAddDate(a, b Value) (Value, error) { return dateAddInterval(b, a) }

func dateSubInterval(a, b Value) (Value, error) {
	ts, err := dateToTimestamp(a.Days())
	if err != nil {
		return Null, err
	}
	r, err := timestampAddInterval(ts, negateForSub(b.Interval()))
	if err != nil {
		return Null, err
	}
	return MakeTimestamp(r), nil
}

// tsSubTs returns the interval between two timestamps as days and
// microseconds (whole 24-hour periods become days).
func tsSubTs(a, b Value) (Value, error) {
	if !isFiniteTimestamp(a.n) || !isFiniteTimestamp(b.n) {
		return Null, errInfiniteTimestamps
	}
	d, ok := subInt64(a.n, b.n)
	if !ok {
		return Null, errIntervalRange
	}
	days := d / microsPerDay
	return MakeInterval(IntervalValue{Days: int32(days), Micros: d - days*microsPerDay}), nil
}

func ivAdd(a, b Value) (Value, error) {
	r, err := intervalAdd(a.Interval(), b.Interval())
	if err != nil {
		return Null, err
	}
	return MakeInterval(r), nil
}

func ivSub(a, b Value) (Value, error) {
	n, err := intervalNeg(b.Interval())
	if err != nil {
		return Null, err
	}
	r, err := intervalAdd(a.Interval(), n)
	if err != nil {
		return Null, err
	}
	return MakeInterval(r), nil
}

func ivNeg(a, _ Value) (Value, error) {
	r, err := intervalNeg(a.Interval())
	if err != nil {
		return Null, err
	}
	return MakeInterval(r), nil
}

func ivMulFloat(a, b Value) (Value, error) {
	r, err := intervalScale(a.Interval(), b.Float(), false)
	if err != nil {
		return Null, err
	}
	return MakeInterval(r), nil
}

func floatMulIv(a, b Value) (Value, error) { return ivMulFloat(b, a) }

func ivDivFloat(a, b Value) (Value, error) {
	r, err := intervalScale(a.Interval(), b.Float(), true)
	if err != nil {
		return Null, err
	}
	return MakeInterval(r), nil
}

// String and bytea concatenation.

func textCat(a, b Value) (Value, error) { return MakeText(a.s + b.s), nil }

func byteaCat(a, b Value) (Value, error) { return Value{kind: Bytea, s: a.s + b.s}, nil }

// anyTextCat and textAnyCat concatenate a value of any type, cast to
// text, with text (a boolean reads "true", as booleans cast to text do).
func anyTextCat(a, b Value) (Value, error) { return MakeText(castText(a, Type{}) + b.s), nil }

func textAnyCat(a, b Value) (Value, error) { return MakeText(a.s + castText(b, Type{})), nil }
