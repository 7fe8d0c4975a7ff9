package types

import (
	"math"
	"sync"

	"github.com/rockstream/rockstream/internal/errs"
)

// Trigonometric and hyperbolic functions on DOUBLE PRECISION, with
// PostgreSQL 15's checks and results (float.c): sin, cos, tan, cot, asin,
// acos, atan, atan2 call the C library (funcs_libm_cgo.go); the degree
// variants (sind, cosd, ...) reduce the argument to the first quadrant and
// scale by constants computed the same way PostgreSQL computes them, so
// that they are exact at the special angles: sind(30) is 0.5, cosd(60) is
// 0.5, tand(45) is 1, asind(0.5) is 30, atan2d(1, 1) is 45.
//
// Errors: an infinite argument of sin, cos, tan, cot and their degree
// variants, an argument of asin, acos, asind, acosd or atanh outside
// [-1, 1] and one of acosh below 1 fail with 22003 "input is out of range".
// NaN gives NaN everywhere.

var errTrigRange = errs.New(errs.NumericOutOfRange, "input is out of range")

func init() {
	unary := map[string]func(float64) (float64, error){
		"sin": float8Sin, "cos": float8Cos, "tan": float8Tan, "cot": float8Cot,
		"asin": float8Asin, "acos": float8Acos, "atan": float8Atan,
		"sind": float8Sind, "cosd": float8Cosd, "tand": float8Tand, "cotd": float8Cotd,
		"asind": float8Asind, "acosd": float8Acosd, "atand": float8Atand,
		"sinh": float8Sinh, "cosh": float8Cosh, "tanh": float8Tanh,
		"asinh": float8Asinh, "acosh": float8Acosh, "atanh": float8Atanh,
	}
	for name, f := range unary {
		addFunc(name, Float8, func(a []Value) (Value, error) {
			r, err := f(a[0].Float())
			if err != nil {
				return Null, err
			}
			return MakeFloat8(r), nil
		}, Float8)
	}
	for name, f := range map[string]func(y, x float64) (float64, error){"atan2": float8Atan2, "atan2d": float8Atan2d} {
		addFunc(name, Float8, func(a []Value) (Value, error) {
			r, err := f(a[0].Float(), a[1].Float())
			if err != nil {
				return Null, err
			}
			return MakeFloat8(r), nil
		}, Float8, Float8)
	}
}

// periodic applies a periodic function to a finite argument.
func periodic(x float64, f func(float64) float64) (float64, error) {
	if math.IsNaN(x) {
		return x, nil
	}
	if math.IsInf(x, 0) {
		return 0, errTrigRange
	}
	return f(x), nil
}

func float8Sin(x float64) (float64, error) { return periodic(x, libmSin) }
func float8Cos(x float64) (float64, error) { return periodic(x, libmCos) }
func float8Tan(x float64) (float64, error) { return periodic(x, libmTan) }

func float8Cot(x float64) (float64, error) {
	// cot(0) is Infinity, not an overflow.
	return periodic(x, func(x float64) float64 { return 1.0 / libmTan(x) })
}

// unitDomain applies an inverse function defined on [-1, 1].
func unitDomain(x float64, f func(float64) float64) (float64, error) {
	if math.IsNaN(x) {
		return x, nil
	}
	if x < -1 || x > 1 {
		return 0, errTrigRange
	}
	return finite(f(x))
}

func finite(r float64) (float64, error) {
	if math.IsInf(r, 0) {
		return 0, errFloatOverflow
	}
	return r, nil
}

func float8Asin(x float64) (float64, error) { return unitDomain(x, libmAsin) }
func float8Acos(x float64) (float64, error) { return unitDomain(x, libmAcos) }

func float8Atan(x float64) (float64, error) {
	if math.IsNaN(x) {
		return x, nil
	}
	return finite(libmAtan(x))
}

func float8Atan2(y, x float64) (float64, error) {
	if math.IsNaN(y) || math.IsNaN(x) {
		return math.NaN(), nil
	}
	return finite(libmAtan2(y, x))
}

// degreeScale holds float.c's scaling constants, computed at run time
// from the C library's functions as PostgreSQL computes them
// (init_degree_constants); degreeConstants sets them once.
var degreeScale struct {
	sin30, oneMinusCos60, asin05, acos05, atan1, tan45, cot45 float64
}

var degreeConstants = sync.OnceFunc(func() {
	c := &degreeScale
	c.sin30 = libmSin(radiansPerDegreeVar * thirty)
	c.oneMinusCos60 = 1.0 - libmCos(radiansPerDegreeVar*sixty)
	c.asin05 = libmAsin(oneHalf)
	c.acos05 = libmAcos(oneHalf)
	c.atan1 = libmAtan(one)
	c.tan45 = sindQ1(fortyFive) / cosdQ1(fortyFive)
	c.cot45 = cosdQ1(fortyFive) / sindQ1(fortyFive)
})

// Variables, not constants, so that the products above are rounded
// float64 multiplications as in C, not exact constant arithmetic.
var (
	radiansPerDegreeVar                    = radiansPerDegree
	oneHalf, one, thirty, fortyFive, sixty = 0.5, 1.0, 30.0, 45.0, 60.0
)

func cosd0To60(x float64) float64 {
	oneMinusCos := 1.0 - libmCos(x*radiansPerDegreeVar)
	return 1.0 - (oneMinusCos/degreeScale.oneMinusCos60)/2.0
}

func sind0To30(x float64) float64 {
	s := libmSin(x * radiansPerDegreeVar)
	return (s / degreeScale.sin30) / 2.0
}

func cosdQ1(x float64) float64 {
	if x <= 60 {
		return cosd0To60(x)
	}
	return sind0To30(90.0 - x)
}

func sindQ1(x float64) float64 {
	if x <= 30 {
		return sind0To30(x)
	}
	return cosd0To60(90.0 - x)
}

// degreeArg checks a degree variant's argument and reduces it modulo 360.
func degreeArg(x float64) (float64, bool, error) {
	if math.IsNaN(x) {
		return x, true, nil
	}
	if math.IsInf(x, 0) {
		return 0, true, errTrigRange
	}
	degreeConstants()
	return math.Mod(x, 360.0), false, nil
}

func float8Sind(x float64) (float64, error) {
	x, done, err := degreeArg(x)
	if done {
		return x, err
	}
	sign := 1.0
	if x < 0 {
		x, sign = -x, -sign
	}
	if x > 180 {
		x, sign = 360.0-x, -sign
	}
	if x > 90 {
		x = 180.0 - x
	}
	return finite(sign * sindQ1(x))
}

func float8Cosd(x float64) (float64, error) {
	x, done, err := degreeArg(x)
	if done {
		return x, err
	}
	sign := 1.0
	if x < 0 {
		x = -x
	}
	if x > 180 {
		x = 360.0 - x
	}
	if x > 90 {
		x, sign = 180.0-x, -sign
	}
	return finite(sign * cosdQ1(x))
}

// quadrantTan reduces x for tand and cotd (both odd with period 180).
func quadrantTan(x float64) (float64, float64) {
	sign := 1.0
	if x < 0 {
		x, sign = -x, -sign
	}
	if x > 180 {
		x, sign = 360.0-x, -sign
	}
	if x > 90 {
		x, sign = 180.0-x, -sign
	}
	return x, sign
}

func float8Tand(x float64) (float64, error) {
	x, done, err := degreeArg(x)
	if done {
		return x, err
	}
	x, sign := quadrantTan(x)
	r := sign * ((sindQ1(x) / cosdQ1(x)) / degreeScale.tan45)
	if r == 0 {
		r = 0 // no minus zero, as PostgreSQL
	}
	return r, nil // tand(90) is Infinity, not an overflow
}

func float8Cotd(x float64) (float64, error) {
	x, done, err := degreeArg(x)
	if done {
		return x, err
	}
	x, sign := quadrantTan(x)
	r := sign * ((cosdQ1(x) / sindQ1(x)) / degreeScale.cot45)
	if r == 0 {
		r = 0
	}
	return r, nil
}

func asindQ1(x float64) float64 {
	if x <= 0.5 {
		return (libmAsin(x) / degreeScale.asin05) * 30.0
	}
	return 90.0 - (libmAcos(x)/degreeScale.acos05)*60.0
}

func acosdQ1(x float64) float64 {
	if x <= 0.5 {
		return 90.0 - (libmAsin(x)/degreeScale.asin05)*30.0
	}
	return (libmAcos(x) / degreeScale.acos05) * 60.0
}

func float8Asind(x float64) (float64, error) {
	degreeConstants()
	return unitDomain(x, func(x float64) float64 {
		if x >= 0 {
			return asindQ1(x)
		}
		return -asindQ1(-x)
	})
}

func float8Acosd(x float64) (float64, error) {
	degreeConstants()
	return unitDomain(x, func(x float64) float64 {
		if x >= 0 {
			return acosdQ1(x)
		}
		return 90.0 + asindQ1(-x)
	})
}

func float8Atand(x float64) (float64, error) {
	if math.IsNaN(x) {
		return x, nil
	}
	degreeConstants()
	return finite((libmAtan(x) / degreeScale.atan1) * 45.0)
}

func float8Atan2d(y, x float64) (float64, error) {
	if math.IsNaN(y) || math.IsNaN(x) {
		return math.NaN(), nil
	}
	degreeConstants()
	return finite((libmAtan2(y, x) / degreeScale.atan1) * 45.0)
}

func float8Sinh(x float64) (float64, error) {
	// An overflow is ±Infinity, not an error.
	return libmSinh(x), nil
}

func float8Cosh(x float64) (float64, error) {
	r := libmCosh(x)
	if r == 0 {
		return 0, errFloatUnderflow
	}
	return r, nil
}

func float8Tanh(x float64) (float64, error) { return finite(libmTanh(x)) }

func float8Asinh(x float64) (float64, error) { return libmAsinh(x), nil }

func float8Acosh(x float64) (float64, error) {
	if x < 1 {
		return 0, errTrigRange
	}
	return libmAcosh(x), nil
}

func float8Atanh(x float64) (float64, error) {
	switch {
	case x < -1 || x > 1:
		return 0, errTrigRange
	case x == -1:
		return math.Inf(-1), nil
	case x == 1:
		return math.Inf(1), nil
	}
	return libmAtanh(x), nil
}
