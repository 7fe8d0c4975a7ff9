package types

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
)

// Mathematical functions on integers, NUMERIC and DOUBLE PRECISION, with
// PostgreSQL's overloads, result types, scales and errors. NUMERIC
// results of sqrt, exp, ln, log and power have the scale PostgreSQL's
// numeric.c chooses (at least 16 significant digits, and no less than the
// inputs' scales) and are rounded half away from zero.

var (
	errSqrtNegative = errs.New(errs.InvalidArgumentForPow, "cannot take square root of a negative number")
	errLogZero      = errs.New(errs.InvalidArgumentForLog, "cannot take logarithm of zero")
	errLogNegative  = errs.New(errs.InvalidArgumentForLog, "cannot take logarithm of a negative number")
	errZeroNegPower = errs.New(errs.InvalidArgumentForPow, "zero raised to a negative power is undefined")
	errComplexPower = errs.New(errs.InvalidArgumentForPow, "a negative number raised to a non-integer power yields a complex result")
)

// numericMaxResultScale is NUMERIC_MAX_RESULT_SCALE, the bound on scales
// that round() and trunc() accept.
const numericMaxResultScale = 2000

func init() {
	for _, k := range []TypeID{Int2, Int4, Int8} {
		addFunc("abs", k, intAbs(k), k)
		addFunc("mod", k, binaryFn(intMod(k)), k, k)
	}
	addFunc("abs", Float4, floatAbs(Float4), Float4)
	addFunc("abs", Float8, floatAbs(Float8), Float8)
	addFunc("abs", Numeric, numericAbs, Numeric)
	addFunc("mod", Numeric, binaryFn(numMod), Numeric, Numeric)
	addFunc("div", Numeric, numericDivTrunc, Numeric, Numeric)

	addFunc("round", Float8, float8Fn(math.RoundToEven), Float8)
	addFunc("round", Numeric, numericRound(false), Numeric)
	addFunc("round", Numeric, numericRound(false), Numeric, Int4)
	addFunc("trunc", Float8, float8Fn(math.Trunc), Float8)
	addFunc("trunc", Numeric, numericRound(true), Numeric)
	addFunc("trunc", Numeric, numericRound(true), Numeric, Int4)
	addPhantom("trunc", []TypeID{phantomUser}, []TypeID{phantomUser})
	for _, name := range []string{"ceil", "ceiling"} {
		addFunc(name, Float8, float8Fn(math.Ceil), Float8)
		addFunc(name, Numeric, numericCeilFloor(true), Numeric)
	}
	addFunc("floor", Float8, float8Fn(math.Floor), Float8)
	addFunc("floor", Numeric, numericCeilFloor(false), Numeric)
	addFunc("sign", Float8, float8Sign, Float8)
	addFunc("sign", Numeric, numericSign, Numeric)

	addFunc("sqrt", Float8, float8Sqrt, Float8)
	addFunc("sqrt", Numeric, numericSqrt, Numeric)
	addFunc("cbrt", Float8, float8Cbrt, Float8)
	addFunc("exp", Float8, float8Exp, Float8)
	addFunc("exp", Numeric, numericExp, Numeric)
	addFunc("ln", Float8, float8Log(libmLog), Float8)
	addFunc("ln", Numeric, numericLn, Numeric)
	for _, name := range []string{"log", "log10"} {
		addFunc(name, Float8, float8Log(libmLog10), Float8)
		addFunc(name, Numeric, numericLog10, Numeric)
	}
	addFunc("log", Numeric, numericLog, Numeric, Numeric)
	for _, name := range []string{"power", "pow"} {
		addFunc(name, Float8, float8Pow, Float8, Float8)
		addFunc(name, Numeric, numericPower, Numeric, Numeric)
	}
	addFunc("pi", Float8, func([]Value) (Value, error) { return MakeFloat8(math.Pi), nil })
	addFunc("degrees", Float8, float8Degrees, Float8)
	addFunc("radians", Float8, float8Radians, Float8)

	addFunc("scale", Int4, numericScale, Numeric)
	addFunc("min_scale", Int4, numericMinScale, Numeric)
	addFunc("trim_scale", Numeric, numericTrimScale, Numeric)
}

// binaryFn adapts an operator's evaluator to a function's.
func binaryFn(f func(a, b Value) (Value, error)) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) { return f(a[0], a[1]) }
}

func intAbs(k TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		n := a[0].n
		if n < 0 {
			n = -n
			if n < 0 || !intFits(n, k) {
				return Null, intRangeError(k)
			}
		}
		return Value{kind: k, n: n}, nil
	}
}

func floatAbs(k TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) { return makeFloat(k, math.Abs(a[0].Float())), nil }
}

func numericAbs(a []Value) (Value, error) {
	d := a[0].dec()
	if !d.Negative {
		return a[0], nil
	}
	return MakeNumeric(new(apd.Decimal).Abs(d)), nil
}

func float8Fn(f func(float64) float64) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) { return MakeFloat8(f(a[0].Float())), nil }
}

// checkFloatResult fails with PostgreSQL's overflow or underflow error
// when a finite input gave an infinite result, or a result of zero that
// the inputs do not explain.
func checkFloatResult(r float64, infOK, zeroOK bool) (Value, error) {
	if math.IsInf(r, 0) && !infOK {
		return Null, errFloatOverflow
	}
	if r == 0 && !zeroOK {
		return Null, errFloatUnderflow
	}
	return MakeFloat8(r), nil
}

func float8Sign(a []Value) (Value, error) {
	f := a[0].Float()
	switch {
	case f > 0:
		return MakeFloat8(1), nil
	case f < 0:
		return MakeFloat8(-1), nil
	}
	return MakeFloat8(0), nil
}

func float8Sqrt(a []Value) (Value, error) {
	x := a[0].Float()
	if x < 0 {
		return Null, errSqrtNegative
	}
	return checkFloatResult(math.Sqrt(x), math.IsInf(x, 0), x == 0)
}

func float8Cbrt(a []Value) (Value, error) {
	x := a[0].Float()
	return checkFloatResult(libmCbrt(x), math.IsInf(x, 0), x == 0)
}

func float8Exp(a []Value) (Value, error) {
	x := a[0].Float()
	switch {
	case math.IsNaN(x):
		return a[0], nil
	case math.IsInf(x, 1):
		return a[0], nil
	case math.IsInf(x, -1):
		return MakeFloat8(0), nil
	}
	return checkFloatResult(libmExp(x), false, false)
}

func float8Log(f func(float64) float64) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		x := a[0].Float()
		switch {
		case x == 0:
			return Null, errLogZero
		case x < 0:
			return Null, errLogNegative
		}
		return checkFloatResult(f(x), math.IsInf(x, 0), x == 1)
	}
}

func float8Pow(a []Value) (Value, error) {
	x, y := a[0].Float(), a[1].Float()
	if math.IsNaN(x) {
		if math.IsNaN(y) || y != 0 {
			return MakeFloat8(float8NaN), nil
		}
		return MakeFloat8(1), nil
	}
	if math.IsNaN(y) {
		if x != 1 {
			return MakeFloat8(float8NaN), nil
		}
		return MakeFloat8(1), nil
	}
	if x == 0 && y < 0 {
		return Null, errZeroNegPower
	}
	if x < 0 && math.Floor(y) != y {
		return Null, errComplexPower
	}
	if math.IsInf(y, 0) {
		ax := math.Abs(x)
		switch {
		case ax == 1:
			return MakeFloat8(1), nil
		case (y > 0) == (ax > 1):
			return MakeFloat8(math.Inf(1)), nil
		}
		return MakeFloat8(0), nil
	}
	if math.IsInf(x, 0) {
		switch {
		case y == 0:
			return MakeFloat8(1), nil
		case x > 0 && y > 0:
			return a[0], nil
		case x > 0:
			return MakeFloat8(0), nil
		}
		odd := math.Floor(y/2) != y/2
		switch {
		case y > 0 && odd:
			return a[0], nil
		case y > 0:
			return MakeFloat8(math.Inf(1)), nil
		case odd:
			return MakeFloat8(math.Copysign(0, -1)), nil
		}
		return MakeFloat8(0), nil
	}
	return checkFloatResult(libmPow(x, y), false, x == 0)
}

// radiansPerDegree is PostgreSQL's RADIANS_PER_DEGREE.
const radiansPerDegree = 0.0174532925199432957692

func float8Degrees(a []Value) (Value, error) {
	x := a[0].Float()
	return checkFloatResult(x/radiansPerDegree, math.IsInf(x, 0), x == 0)
}

func float8Radians(a []Value) (Value, error) {
	x := a[0].Float()
	return checkFloatResult(x*radiansPerDegree, math.IsInf(x, 0), x == 0)
}

// numericRound rounds (or truncates) to the given scale, 0 by default.
// A negative scale rounds to tens, hundreds...; the result's scale is
// never negative.
func numericRound(trunc bool) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		d := a[0].dec()
		if d.Form != apd.Finite {
			return a[0], nil
		}
		scale := int64(0)
		if len(a) > 1 {
			// PostgreSQL 15 caps the scale at the largest display scale.
			scale = min(max(a[1].n, -numericMaxIntDigits-numericMaxDScale), numericMaxDScale)
		}
		var r *apd.Decimal
		if trunc {
			r = truncDec(d, int32(scale))
		} else {
			r = roundDec(d, int32(scale))
		}
		if err := checkDecLimits(r); err != nil {
			return Null, err
		}
		return MakeNumeric(r), nil
	}
}

// truncDec truncates a finite canonical decimal toward zero to scale
// (which may be negative). The result's scale is max(scale, 0).
func truncDec(d *apd.Decimal, scale int32) *apd.Decimal {
	cur := decScale(d)
	if scale >= cur {
		return roundDec(d, scale) // only adds zeros
	}
	drop := int64(cur - scale)
	if drop > apd.NumDigits(&d.Coeff) {
		return newDec(false, new(apd.BigInt), max(scale, 0))
	}
	q := new(apd.BigInt).Quo(&d.Coeff, pow10(drop))
	if scale < 0 {
		q.Mul(q, pow10(int64(-scale)))
		scale = 0
	}
	return newDec(d.Negative, q, scale)
}

// numericCeilFloor returns the smallest integer >= x (ceil) or the largest
// <= x (floor), with scale 0.
func numericCeilFloor(ceil bool) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		d := a[0].dec()
		if d.Form != apd.Finite {
			return a[0], nil
		}
		r := truncDec(d, 0)
		frac := new(apd.BigInt).Rem(&d.Coeff, pow10(int64(decScale(d))))
		if frac.Sign() != 0 && d.Negative != ceil {
			one := apd.New(1, 0)
			if !ceil {
				one.Negative = true
			}
			var err error
			if r, err = NumericAdd(r, one); err != nil {
				return Null, err
			}
		}
		return MakeNumeric(r), nil
	}
}

func numericSign(a []Value) (Value, error) {
	d := a[0].dec()
	if isNaN(d) {
		return a[0], nil
	}
	return MakeNumeric(apd.New(int64(decSign(d)), 0)), nil
}

// numericDivTrunc is div(a, b): the quotient truncated to an integer.
func numericDivTrunc(a []Value) (Value, error) {
	x, y := a[0].dec(), a[1].dec()
	if x.Form != apd.Finite || y.Form != apd.Finite {
		if isNaN(x) || isNaN(y) {
			return MakeNumeric(decNaN), nil
		}
		if sx := infSign(x); sx != 0 {
			if y.Form != apd.Finite {
				return MakeNumeric(decNaN), nil
			}
			sy := decSign(y)
			if sy == 0 {
				return Null, errDivByZero
			}
			return MakeNumeric(infOf(sx * sy)), nil
		}
		return MakeNumeric(new(apd.Decimal)), nil
	}
	if y.Coeff.Sign() == 0 {
		return Null, errDivByZero
	}
	var ca, cb apd.BigInt
	alignCoeffs(x, y, &ca, &cb)
	ca.Quo(&ca, &cb)
	return MakeNumeric(fromSigned(&ca, 0)), nil
}

func numericScale(a []Value) (Value, error) {
	d := a[0].dec()
	if d.Form != apd.Finite {
		return Null, nil
	}
	return MakeInt(Int4, int64(decScale(d))), nil
}

func numericMinScale(a []Value) (Value, error) {
	d := a[0].dec()
	if d.Form != apd.Finite {
		return Null, nil
	}
	return MakeInt(Int4, int64(decScale(reduceScale(d)))), nil
}

func numericTrimScale(a []Value) (Value, error) {
	d := a[0].dec()
	if d.Form != apd.Finite {
		return a[0], nil
	}
	return MakeNumeric(reduceScale(d)), nil
}

// clampScale bounds a computed result scale as numeric.c does.
func clampScale(rscale int64) int32 {
	return int32(min(max(rscale, 0), numericMaxDisplayScal))
}

// numericSqrt returns the square root, correctly rounded to PostgreSQL's
// scale: at least 16 significant digits and no less than the input's.
func numericSqrt(a []Value) (Value, error) {
	d := a[0].dec()
	if d.Form != apd.Finite {
		if isNaN(d) || !d.Negative {
			return a[0], nil
		}
		return Null, errSqrtNegative
	}
	if d.Negative {
		return Null, errSqrtNegative
	}
	w, _ := nbaseLead(d)
	sweight := 2*w + 1
	rscale := clampScale(max(numericMinSigDigits-sweight, int64(decScale(d))))
	return MakeNumeric(NumericSqrt(d, rscale)), nil
}

// NumericSqrt returns the square root of a finite non-negative decimal,
// correctly rounded (half away from zero) to rscale digits after the
// point.
func NumericSqrt(d *apd.Decimal, rscale int32) *apd.Decimal {
	d = canonical(d)
	// sqrt(C×10^-s)×10^r = sqrt(C×10^(2r-s)) = sqrt(n / den).
	n, den := new(apd.BigInt).Set(&d.Coeff), apd.NewBigInt(1)
	if k := int64(2*rscale - decScale(d)); k >= 0 {
		n.Mul(n, pow10(k))
	} else {
		den = pow10(-k)
	}
	// floor(sqrt(n/den)) = floor(sqrt(floor(n/den))).
	q := new(apd.BigInt).Sqrt(new(apd.BigInt).Quo(n, den))
	// Round half up: q+1 when (q+1/2)² <= n/den, i.e. (2q+1)²×den <= 4n.
	t := new(apd.BigInt).Lsh(q, 1)
	t.Add(t, apd.NewBigInt(1))
	t.Mul(t, t)
	t.Mul(t, den)
	n4 := new(apd.BigInt).Lsh(n, 2)
	if t.Cmp(n4) <= 0 {
		q.Add(q, apd.NewBigInt(1))
	}
	return newDec(false, q, rscale)
}

// decContext returns an apd context computing with p significant digits
// and the widest exponent range.
func decContext(p int64) *apd.Context {
	c := apd.BaseContext.WithPrecision(uint32(max(p, 16)))
	c.MaxExponent = apd.MaxExponent
	c.MinExponent = apd.MinExponent
	c.Rounding = apd.RoundHalfUp
	return c
}

// decDigitsBefore returns the number of digits of |d| before the decimal
// point (its decimal exponent plus one; <= 0 for values below 0.1).
func decDigitsBefore(d *apd.Decimal) int64 {
	if d.Coeff.Sign() == 0 {
		return 1
	}
	return apd.NumDigits(&d.Coeff) + int64(d.Exponent)
}

// finishDec rounds an approximation to rscale digits after the point.
func finishDec(x *apd.Decimal, rscale int32) (Value, error) {
	r := roundDec(canonical(x), rscale)
	if err := checkDecLimits(r); err != nil {
		return Null, err
	}
	return MakeNumeric(r), nil
}

// decToFloat converts a finite decimal to float64, saturating at ±Inf
// (numericvar_to_double_no_overflow).
func decToFloat(d *apd.Decimal) float64 {
	f, err := d.Float64()
	if err != nil {
		if d.Negative {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	return f
}

func numericExp(a []Value) (Value, error) {
	d := a[0].dec()
	if d.Form != apd.Finite {
		if d.Form == apd.Infinite && d.Negative {
			return MakeNumeric(new(apd.Decimal)), nil
		}
		return a[0], nil
	}
	val := decToFloat(d) * 0.434294481903252
	val = min(max(val, -numericMaxResultScale), numericMaxResultScale)
	rscale := clampScale(max(numericMinSigDigits-int64(val), int64(decScale(d))))
	return expDec(d, rscale)
}

// expDec returns e^x rounded to rscale, failing when it overflows and
// returning zero when it underflows, as exp_var does.
func expDec(x *apd.Decimal, rscale int32) (Value, error) {
	val := decToFloat(x)
	if math.Abs(val) >= numericMaxResultScale*3 {
		if val > 0 {
			return Null, errNumericOverflow
		}
		return MakeNumeric(newDec(false, new(apd.BigInt), rscale)), nil
	}
	// e^x has about x×log10(e) digits before the point.
	before := int64(math.Ceil(val*0.434294481903252)) + 1
	c := decContext(max(before, 0) + int64(rscale) + 10)
	r := new(apd.Decimal)
	if _, err := c.Exp(r, x); err != nil {
		return Null, errNumericOverflow
	}
	return finishDec(r, rscale)
}

// estimateLnDweight estimates the decimal weight of ln(x) for x > 0, as
// numeric.c's estimate_ln_dweight does (it decides the result's scale).
func estimateLnDweight(x *apd.Decimal) int64 {
	if x.Negative || x.Coeff.Sign() == 0 {
		return 0
	}
	lo, hi := apd.New(9, -1), apd.New(11, -1)
	if x.Cmp(lo) >= 0 && x.Cmp(hi) <= 0 {
		// ln(1+y) ~= y: the weight of the first significant digit of x-1.
		y, _ := NumericSub(x, apd.New(1, 0))
		if y.Coeff.Sign() == 0 {
			return 0
		}
		return decDigitsBefore(y) - 1
	}
	// ln(x) ~= ln(digits) + dweight×ln(10), from the first two base-10000
	// digits of x.
	w, first := nbaseLead(x)
	digits := float64(first)
	dweight := w * 4
	if second, ok := nbaseSecond(x); ok {
		digits = digits*10000 + float64(second)
		dweight -= 4
	}
	lnx := math.Log(digits) + float64(dweight)*2.302585092994046
	return int64(math.Log10(math.Abs(lnx)))
}

// nbaseSecond returns the second base-10000 digit of a finite nonzero
// decimal as PostgreSQL stores it, and whether it has one (trailing zero
// digits are not stored).
func nbaseSecond(d *apd.Decimal) (int64, bool) {
	w, _ := nbaseLead(d)
	// The value × 10^-(4(w-1)) has the first two base-10000 digits in its
	// integer part.
	shift := int64(d.Exponent) - 4*(w-1)
	c := new(apd.BigInt).Set(&d.Coeff)
	var frac bool
	if shift >= 0 {
		c.Mul(c, pow10(shift))
	} else {
		r := new(apd.BigInt)
		c.QuoRem(c, pow10(-shift), r)
		frac = r.Sign() != 0
	}
	second := new(apd.BigInt).Rem(c, apd.NewBigInt(10000)).Int64()
	if second == 0 && !frac {
		return 0, false
	}
	return second, true
}

func checkLogArg(d *apd.Decimal) error {
	switch decSign(d) {
	case 0:
		return errLogZero
	case -1:
		return errLogNegative
	}
	return nil
}

func numericLn(a []Value) (Value, error) {
	d := a[0].dec()
	if d.Form != apd.Finite {
		if d.Form == apd.Infinite && d.Negative {
			return Null, errLogNegative
		}
		return a[0], nil
	}
	if err := checkLogArg(d); err != nil {
		return Null, err
	}
	rscale := clampScale(max(numericMinSigDigits-estimateLnDweight(d), int64(decScale(d))))
	return lnDec(d, rscale)
}

// lnDec returns ln(x) rounded to rscale.
func lnDec(x *apd.Decimal, rscale int32) (Value, error) {
	r, err := lnApprox(x, int64(rscale)+10)
	if err != nil {
		return Null, err
	}
	return finishDec(r, rscale)
}

// lnApprox returns ln(x) with at least scale correct digits after the
// point.
func lnApprox(x *apd.Decimal, scale int64) (*apd.Decimal, error) {
	// |ln x| < 10^(digits) where digits is about log10(|dweight|×2.3)+1.
	before := int64(math.Log10(math.Abs(float64(decDigitsBefore(x)))*2.31+3)) + 1
	c := decContext(before + scale + 5)
	r := new(apd.Decimal)
	if _, err := c.Ln(r, x); err != nil {
		return nil, errNumericOverflow
	}
	return r, nil
}

func numericLog10(a []Value) (Value, error) {
	return numericLog([]Value{MakeNumeric(apd.New(10, 0)), a[0]})
}

// numericLog is log(base, x): ln(x)/ln(base) with log_var's scale.
func numericLog(a []Value) (Value, error) {
	b, x := a[0].dec(), a[1].dec()
	if b.Form != apd.Finite || x.Form != apd.Finite {
		if isNaN(b) || isNaN(x) {
			return MakeNumeric(decNaN), nil
		}
		sb, sx := decSign(b), decSign(x)
		if sb < 0 || sx < 0 {
			return Null, errLogNegative
		}
		if sb == 0 || sx == 0 {
			return Null, errLogZero
		}
		if b.Form == apd.Infinite {
			if x.Form == apd.Infinite {
				return MakeNumeric(decNaN), nil
			}
			return MakeNumeric(new(apd.Decimal)), nil
		}
		return MakeNumeric(decPosInf), nil
	}
	if err := checkLogArg(b); err != nil {
		return Null, err
	}
	if err := checkLogArg(x); err != nil {
		return Null, err
	}
	wb, wx := estimateLnDweight(b), estimateLnDweight(x)
	rw := wx - wb
	rscale := clampScale(max(numericMinSigDigits-rw, int64(decScale(b)), int64(decScale(x))))
	lb, err := lnApprox(b, int64(rscale)+rw-wb+8+10)
	if err != nil {
		return Null, err
	}
	lx, err := lnApprox(x, int64(rscale)+rw-wx+8+10)
	if err != nil {
		return Null, err
	}
	if lb.IsZero() {
		return Null, errDivByZero
	}
	c := decContext(max(decDigitsBefore(lx)-decDigitsBefore(lb), 0) + int64(rscale) + 20)
	q := new(apd.Decimal)
	if _, err := c.Quo(q, lx, lb); err != nil {
		return Null, errNumericOverflow
	}
	return finishDec(q, rscale)
}

// numericPower is power(x, y) with power_var's scale rules.
func numericPower(a []Value) (Value, error) {
	x, y := a[0].dec(), a[1].dec()
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return numericPowerSpecial(a[0], a[1])
	}
	if x.Coeff.Sign() == 0 && y.Negative && y.Coeff.Sign() != 0 {
		return Null, errZeroNegPower
	}
	if n, ok := decInt32(y); ok {
		rscale := clampScale(max(numericMinSigDigits, int64(decScale(x))))
		return powerInt(x, n, rscale)
	}
	if x.Coeff.Sign() == 0 {
		return MakeNumeric(newDec(false, new(apd.BigInt), numericMinSigDigits)), nil
	}
	neg := false
	base := x
	if x.Negative {
		if !decIsInteger(y) {
			return Null, errComplexPower
		}
		neg = decIsOdd(y)
		base = new(apd.Decimal).Abs(x)
	}
	lnDweight := estimateLnDweight(base)
	lb, err := lnApprox(base, max(8-lnDweight, 0))
	if err != nil {
		return Null, err
	}
	prod := new(apd.Decimal)
	if _, err := decContext(40).Mul(prod, lb, y); err != nil {
		return Null, errNumericOverflow
	}
	val := decToFloat(prod)
	if math.Abs(val) > numericMaxResultScale*3.01 {
		if val > 0 {
			return Null, errNumericOverflow
		}
		return MakeNumeric(newDec(false, new(apd.BigInt), numericMaxDisplayScal)), nil
	}
	val *= 0.434294481903252
	rscale := clampScale(max(numericMinSigDigits-int64(val), int64(decScale(base)), int64(decScale(y))))
	sig := max(int64(rscale)+int64(val), 0)
	lb, err = lnApprox(base, sig-lnDweight+8+10)
	if err != nil {
		return Null, err
	}
	c := decContext(decDigitsBefore(lb) + decDigitsBefore(y) + sig - lnDweight + 20)
	if _, err := c.Mul(prod, lb, y); err != nil {
		return Null, errNumericOverflow
	}
	v, err := expDec(prod, rscale)
	if err != nil || !neg {
		return v, err
	}
	return MakeNumeric(NumericNeg(v.dec())), nil
}

// powerInt is x^n for an integer n (power_var_int): exact, then rounded to
// rscale.
func powerInt(x *apd.Decimal, n int64, rscale int32) (Value, error) {
	switch {
	case n == 0:
		return MakeNumeric(roundDec(apd.New(1, 0), rscale)), nil
	case x.Coeff.Sign() == 0:
		if n < 0 {
			return Null, errDivByZero
		}
		return MakeNumeric(newDec(false, new(apd.BigInt), rscale)), nil
	}
	// Estimate log10 of the result to fail early on overflow and to return
	// zero on underflow, as power_var_int does.
	f := float64(n) * (math.Log10(math.Abs(decToFloat(mantissa(x)))) + float64(x.Exponent) + float64(apd.NumDigits(&x.Coeff)-1))
	if f > 3*math.MaxInt16*4 {
		return Null, errNumericOverflow
	}
	if f+1 < -float64(rscale) || f+1 < -numericMaxDisplayScal {
		return MakeNumeric(newDec(false, new(apd.BigInt), rscale)), nil
	}
	an := n
	if an < 0 {
		an = -an
	}
	// x^|n| exactly: coefficient^|n| × 10^(exponent×|n|).
	c := new(apd.BigInt).Exp(&x.Coeff, apd.NewBigInt(an), nil)
	p := &apd.Decimal{Exponent: int32(int64(x.Exponent) * an)}
	if int64(p.Exponent) != int64(x.Exponent)*an {
		return Null, errNumericOverflow
	}
	p.Coeff.Set(c)
	p.Negative = x.Negative && an%2 == 1
	if n > 0 {
		return finishDec(p, rscale)
	}
	q, err := divRound(apd.New(1, 0), canonical(p), rscale)
	if err != nil {
		return Null, err
	}
	return MakeNumeric(q), nil
}

// mantissa returns |x| scaled to [1, 10).
func mantissa(x *apd.Decimal) *apd.Decimal {
	m := new(apd.Decimal).Set(x)
	m.Negative = false
	m.Exponent = -int32(apd.NumDigits(&m.Coeff) - 1)
	return m
}

// decInt32 returns a finite decimal's value when it is an integer that
// fits in int32.
func decInt32(d *apd.Decimal) (int64, bool) {
	if !decIsInteger(d) {
		return 0, false
	}
	r := truncDec(canonical(d), 0)
	if !r.Coeff.IsInt64() {
		return 0, false
	}
	n := r.Coeff.Int64()
	if r.Negative {
		n = -n
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return n, true
}

// decIsInteger reports whether a finite decimal has no fractional part.
func decIsInteger(d *apd.Decimal) bool {
	if d.Exponent >= 0 || d.Coeff.Sign() == 0 {
		return true
	}
	r := new(apd.BigInt).Rem(&d.Coeff, pow10(int64(-d.Exponent)))
	return r.Sign() == 0
}

// decIsOdd reports whether an integral decimal is odd.
func decIsOdd(d *apd.Decimal) bool {
	r := truncDec(canonical(d), 0)
	return r.Coeff.Bit(0) == 1
}

// numericPowerSpecial is power() when an argument is NaN or infinite,
// following POSIX pow() as numeric_power does.
func numericPowerSpecial(xv, yv Value) (Value, error) {
	x, y := xv.dec(), yv.dec()
	one := apd.New(1, 0)
	zero := new(apd.Decimal)
	if isNaN(x) {
		if isNaN(y) || decSign(y) != 0 {
			return MakeNumeric(decNaN), nil
		}
		return MakeNumeric(one), nil
	}
	if isNaN(y) {
		if x.Form == apd.Finite && x.Cmp(one) == 0 {
			return MakeNumeric(one), nil
		}
		return MakeNumeric(decNaN), nil
	}
	sx, sy := decSign(x), decSign(y)
	if sx == 0 && sy < 0 {
		return Null, errZeroNegPower
	}
	if sx < 0 && y.Form == apd.Finite && !decIsInteger(y) {
		return Null, errComplexPower
	}
	if x.Form == apd.Finite && new(apd.Decimal).Abs(x).Cmp(one) == 0 && (y.Form != apd.Finite || !x.Negative) {
		return MakeNumeric(one), nil
	}
	if sy == 0 {
		return MakeNumeric(one), nil
	}
	if sx == 0 && sy > 0 {
		return MakeNumeric(zero), nil
	}
	if y.Form == apd.Infinite {
		gtOne := x.Form == apd.Infinite || new(apd.Decimal).Abs(x).Cmp(one) > 0
		if gtOne == (sy > 0) {
			return MakeNumeric(decPosInf), nil
		}
		return MakeNumeric(zero), nil
	}
	if sx > 0 {
		// x is +Inf.
		if sy > 0 {
			return MakeNumeric(decPosInf), nil
		}
		return MakeNumeric(zero), nil
	}
	// x is -Inf, y a finite integer.
	if sy < 0 {
		return MakeNumeric(zero), nil
	}
	if decIsOdd(y) {
		return MakeNumeric(decNegInf), nil
	}
	return MakeNumeric(decPosInf), nil
}
