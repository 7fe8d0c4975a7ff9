package types

import (
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// Correctly rounded transcendental functions on DOUBLE PRECISION, for
// builds without cgo (which otherwise call the C library, as PostgreSQL
// does: funcs_libm_cgo.go). They compute in 40-digit decimal arithmetic
// from the exact binary value of the argument and round the result to the
// nearest float64. glibc's exp, log and pow agree with them almost always
// (they differ in the last bit for about one argument in a thousand);
// glibc's log10 and cbrt are less accurate and differ more often.

// floatExactDecimal returns the exact decimal value of a finite float.
func floatExactDecimal(f float64) *apd.Decimal {
	b := math.Float64bits(f)
	neg := b>>63 != 0
	e := int64(b>>52) & 0x7ff
	m := b & (1<<52 - 1)
	if e == 0 {
		e = 1
	} else {
		m |= 1 << 52
	}
	e -= 1075 // value = m × 2^e
	d := new(apd.Decimal)
	d.Coeff.SetUint64(m)
	if e >= 0 {
		d.Coeff.Lsh(&d.Coeff, uint(e))
	} else {
		// m × 2^e = m × 5^-e × 10^e.
		five := new(apd.BigInt).Exp(apd.NewBigInt(5), apd.NewBigInt(-e), nil)
		d.Coeff.Mul(&d.Coeff, five)
		d.Exponent = int32(e)
	}
	d.Negative = neg
	return d
}

// decimalFloat64 rounds a decimal to the nearest float64 (±Inf beyond the
// range, zero or a subnormal below it).
func decimalFloat64(d *apd.Decimal) float64 {
	f, _ := strconv.ParseFloat(d.Text('e'), 64)
	return f
}

var floatCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(40)
	c.MaxExponent = apd.MaxExponent
	c.MinExponent = apd.MinExponent
	return c
}()

// crApply computes f in decimal arithmetic over exact arguments and rounds
// the result to float64.
func crApply(f func(c *apd.Context, d *apd.Decimal, args ...*apd.Decimal) error, xs ...float64) float64 {
	args := make([]*apd.Decimal, len(xs))
	for i, x := range xs {
		args[i] = floatExactDecimal(x)
	}
	d := new(apd.Decimal)
	if err := f(floatCtx, d, args...); err != nil {
		return math.NaN()
	}
	return decimalFloat64(d)
}

// crLog is the correctly rounded natural logarithm of a positive finite x.
func crLog(x float64) float64 {
	if x == 1 {
		return 0
	}
	return crApply(func(c *apd.Context, d *apd.Decimal, a ...*apd.Decimal) error {
		_, err := c.Ln(d, a[0])
		return err
	}, x)
}

// crLog10 is the correctly rounded base-10 logarithm of a positive finite
// x.
func crLog10(x float64) float64 {
	if x == 1 {
		return 0
	}
	return crApply(func(c *apd.Context, d *apd.Decimal, a ...*apd.Decimal) error {
		_, err := c.Log10(d, a[0])
		return err
	}, x)
}

// crExp is the correctly rounded e^x of a finite x.
func crExp(x float64) float64 {
	if x == 0 {
		return 1
	}
	if x > 710 {
		return math.Inf(1)
	}
	if x < -746 {
		return 0
	}
	return crApply(func(c *apd.Context, d *apd.Decimal, a ...*apd.Decimal) error {
		_, err := c.Exp(d, a[0])
		return err
	}, x)
}

// crCbrt is the correctly rounded cube root of a finite x.
func crCbrt(x float64) float64 {
	if x == 0 {
		return x
	}
	return crApply(func(c *apd.Context, d *apd.Decimal, a ...*apd.Decimal) error {
		_, err := c.Cbrt(d, a[0])
		return err
	}, x)
}

// crPow is the correctly rounded x^y for finite x and y, x nonzero, and y
// an integer when x is negative.
func crPow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case y == 1:
		return x
	}
	neg := x < 0 && math.Mod(y, 2) != 0
	ax := math.Abs(x)
	// Decide overflow and underflow from an estimate first: the decimal
	// result could have an exponent beyond any range.
	est := y * math.Log10(ax)
	if est > 400 {
		return math.Copysign(math.Inf(1), sign(neg))
	}
	if est < -400 {
		return math.Copysign(0, sign(neg))
	}
	r := crApply(func(c *apd.Context, d *apd.Decimal, a ...*apd.Decimal) error {
		_, err := c.Pow(d, a[0], a[1])
		return err
	}, ax, y)
	if neg {
		r = -r
	}
	return r
}

func sign(neg bool) float64 {
	if neg {
		return -1
	}
	return 1
}
