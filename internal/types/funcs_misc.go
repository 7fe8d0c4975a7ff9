package types

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
)

// gcd, lcm, width_bucket and date(timestamp), with PostgreSQL 15's
// results and errors.

func init() {
	addFunc("gcd", Int4, intGCD(Int4), Int4, Int4)
	addFunc("gcd", Int8, intGCD(Int8), Int8, Int8)
	addFunc("gcd", Numeric, numericGCD, Numeric, Numeric)
	addFunc("lcm", Int4, intLCM(Int4), Int4, Int4)
	addFunc("lcm", Int8, intLCM(Int8), Int8, Int8)
	addFunc("lcm", Numeric, numericLCM, Numeric, Numeric)
	addFunc("width_bucket", Int4, floatWidthBucket, Float8, Float8, Float8, Int4)
	addFunc("width_bucket", Int4, numericWidthBucket, Numeric, Numeric, Numeric, Int4)
	addPhantom("width_bucket", []TypeID{phantomAny, phantomArray})
	addFunc("date", Date, timestampDate, Timestamp)
	addFunc("date", Date, timestampDate, TimestampTZ)
}

func timestampDate(a []Value) (Value, error) {
	d, err := timestampToDate(a[0].n)
	if err != nil {
		return Null, err
	}
	return MakeDate(d), nil
}

// gcd64 is Euclid's algorithm on magnitudes.
func gcd64(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func intGCD(k TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		g := gcd64(absU64(a[0].n), absU64(a[1].n))
		if g > uint64(math.MaxInt64) || !intFits(int64(g), k) {
			return Null, intRangeError(k)
		}
		return MakeInt(k, int64(g)), nil
	}
}

func intLCM(k TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		x, y := a[0].n, a[1].n
		if x == 0 || y == 0 {
			return MakeInt(k, 0), nil
		}
		g := gcd64(absU64(x), absU64(y))
		if g > uint64(math.MaxInt64) || !intFits(int64(g), k) {
			return Null, intRangeError(k)
		}
		l, ok := mulInt64(x/int64(g), y)
		if !ok || !intFits(l, k) || (l == math.MinInt64) || (k == Int4 && l == math.MinInt32) {
			return Null, intRangeError(k)
		}
		if l < 0 {
			l = -l
		}
		return MakeInt(k, l), nil
	}
}

// decGCD returns the greatest common divisor of two finite decimals at the
// larger of their scales.
func decGCD(x, y *apd.Decimal) *apd.Decimal {
	var cx, cy apd.BigInt
	scale := alignCoeffs(x, y, &cx, &cy)
	cx.Abs(&cx)
	cy.Abs(&cy)
	g := new(apd.BigInt).GCD(nil, nil, &cx, &cy)
	return newDec(false, g, scale)
}

func numericGCD(a []Value) (Value, error) {
	x, y := a[0].dec(), a[1].dec()
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return MakeNumeric(decNaN), nil
	}
	return MakeNumeric(decGCD(x, y)), nil
}

func numericLCM(a []Value) (Value, error) {
	x, y := a[0].dec(), a[1].dec()
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return MakeNumeric(decNaN), nil
	}
	scale := max(decScale(x), decScale(y))
	if x.Coeff.Sign() == 0 || y.Coeff.Sign() == 0 {
		return MakeNumeric(newDec(false, new(apd.BigInt), scale)), nil
	}
	g := decGCD(x, y)
	// |x / gcd × y|, exact: x / gcd is an integer.
	var cx, cg apd.BigInt
	alignCoeffs(x, g, &cx, &cg)
	q := new(apd.BigInt).Quo(&cx, &cg)
	q.Abs(q)
	r := newDec(false, q, 0)
	l, err := NumericMul(r, new(apd.Decimal).Abs(y))
	if err != nil {
		return Null, err
	}
	l = roundDec(canonical(l), scale)
	if err := checkDecLimits(l); err != nil {
		return Null, err
	}
	return MakeNumeric(l), nil
}

var (
	errBucketCount  = errs.New(errs.InvalidWidthBucket, "count must be greater than zero")
	errBucketNaN    = errs.New(errs.InvalidWidthBucket, "operand, lower bound, and upper bound cannot be NaN")
	errBucketInf    = errs.New(errs.InvalidWidthBucket, "lower and upper bounds must be finite")
	errBucketEquals = errs.New(errs.InvalidWidthBucket, "lower bound cannot equal upper bound")
)

func floatWidthBucket(a []Value) (Value, error) {
	x, b1, b2, count := a[0].Float(), a[1].Float(), a[2].Float(), a[3].n
	if count <= 0 {
		return Null, errBucketCount
	}
	if math.IsNaN(x) || math.IsNaN(b1) || math.IsNaN(b2) {
		return Null, errBucketNaN
	}
	if math.IsInf(b1, 0) || math.IsInf(b2, 0) {
		return Null, errBucketInf
	}
	var r int64
	// PostgreSQL 15 computes count × (x − b1) / (b2 − b1) + 1 in double
	// precision and converts it to int4 as C does on x86-64: a value out of
	// range (or NaN, when the bounds' difference overflows) becomes
	// INT_MIN.
	bucket := func(num, den float64) int64 {
		q := float64(count)*num/den + 1
		if math.IsNaN(q) || q >= 2147483648 || q <= -2147483649 {
			return math.MinInt32
		}
		return int64(q)
	}
	switch {
	case b1 < b2:
		switch {
		case x < b1:
			r = 0
		case x >= b2:
			r = count + 1
		default:
			r = bucket(x-b1, b2-b1)
		}
	case b1 > b2:
		switch {
		case x > b1:
			r = 0
		case x <= b2:
			r = count + 1
		default:
			r = bucket(b1-x, b1-b2)
		}
	default:
		return Null, errBucketEquals
	}
	if r > math.MaxInt32 {
		return Null, errInt4Range
	}
	return MakeInt(Int4, r), nil
}

func numericWidthBucket(a []Value) (Value, error) {
	x, b1, b2, count := a[0].dec(), a[1].dec(), a[2].dec(), a[3].n
	if count <= 0 {
		return Null, errBucketCount
	}
	if isNaN(x) || isNaN(b1) || isNaN(b2) {
		return Null, errBucketNaN
	}
	if b1.Form != apd.Finite || b2.Form != apd.Finite {
		return Null, errBucketInf
	}
	var r int64
	switch compareDecimal(b1, b2) {
	case 0:
		return Null, errBucketEquals
	case -1:
		switch {
		case compareDecimal(x, b1) < 0:
			r = 0
		case compareDecimal(x, b2) >= 0:
			r = count + 1
		default:
			r = decBucket(x, b1, b2, count)
		}
	default:
		switch {
		case compareDecimal(x, b1) > 0:
			r = 0
		case compareDecimal(x, b2) <= 0:
			r = count + 1
		default:
			r = decBucket(x, b1, b2, count)
		}
	}
	if r > math.MaxInt32 {
		return Null, errInt4Range
	}
	return MakeInt(Int4, r), nil
}

// decBucket is (x - b1) × count / (b2 - b1), truncated, plus one.
func decBucket(x, b1, b2 *apd.Decimal, count int64) int64 {
	num, _ := NumericSub(x, b1)
	den, _ := NumericSub(b2, b1)
	num, _ = NumericMul(num, apd.New(count, 0))
	var cn, cd apd.BigInt
	alignCoeffs(num, den, &cn, &cd)
	q := new(apd.BigInt).Quo(&cn, &cd)
	return q.Int64() + 1
}
