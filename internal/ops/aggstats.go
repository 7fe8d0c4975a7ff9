package ops

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The variance family (var_samp, var_pop, stddev_samp, stddev_pop, and
// variance and stddev, their sample versions) keeps algebraic state per
// group: the count of non-NULL inputs, their exact sum and their exact sum
// of squares, plus, for NUMERIC, the counts per display scale (the sum's
// scale decides the result's) and, for NUMERIC and floats, the counts of
// NaN and infinite inputs. Deletes subtract exactly, so the state never
// depends on the order rows arrived in.
//
// The result is PostgreSQL's:
//   - NULL without input, and for the sample versions with one input;
//   - NaN when any input is NaN or infinite;
//   - for integers and NUMERIC (numeric_stddev_internal): the numerator
//     N×Σx² − (Σx)² computed exactly at twice the inputs' scale, 0 when
//     not positive, else divided by N×(N−1) (or N²) at the division scale
//     PostgreSQL chooses, and for the standard deviations the square root
//     of that, rounded to the same scale;
//   - for floats: the exact variance rounded to the nearest double, and
//     its square root. PostgreSQL accumulates in floating point
//     (Youngs-Cramer), so its last digit can differ.

func (s *aggSpec) stats() bool {
	switch s.fn {
	case fnVarSamp, fnVarPop, fnStddevSamp, fnStddevPop:
		return true
	}
	return false
}

func (s *aggSpec) statsFields() int {
	switch s.acc {
	case accInt:
		return 4 // count, sum high word, sum low word, sum of squares
	case accNumeric:
		return 7 // count, sum, scales, sum of squares, +inf, -inf, NaN
	}
	return 6 // count, sum, sum of squares, +inf, -inf, NaN
}

// addStats folds w copies of the non-NULL value v into a.
func (s *aggSpec) addStats(a *accum, v types.Value, w int64) error {
	if err := addCount(&a.n, w); err != nil {
		return err
	}
	var x apd.Decimal
	switch s.acc {
	case accInt:
		sum, ok := a.i.add(mul128(v.Int(), w))
		if !ok {
			return errs.New(errs.NumericOutOfRange, "numeric value out of range")
		}
		a.i = sum
		x.SetInt64(v.Int())
	case accNumeric:
		d := v.Decimal()
		switch d.Form {
		case apd.Infinite:
			if d.Negative {
				return addCount(&a.ninf, w)
			}
			return addCount(&a.pinf, w)
		case apd.NaN, apd.NaNSignaling:
			return addCount(&a.nan, w)
		}
		var err error
		if a.scales, err = addScale(a.scales, scaleOf(d), w); err != nil {
			return err
		}
		if err := addScaled(&a.d, d, w); err != nil {
			return err
		}
		x.Set(d)
	default:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return addCount(&a.nan, w)
		case math.IsInf(f, 1):
			return addCount(&a.pinf, w)
		case math.IsInf(f, -1):
			return addCount(&a.ninf, w)
		}
		floatDecimal(&x, f)
		if err := addScaled(&a.d, &x, w); err != nil {
			return err
		}
	}
	var sq apd.Decimal
	if _, err := apd.BaseContext.Mul(&sq, &x, &x); err != nil {
		return errs.New(errs.NumericOutOfRange, "value overflows numeric format")
	}
	return addScaled(&a.sq, &sq, w)
}

// statsValue computes the aggregate's result from its state.
func (s *aggSpec) statsValue(a *accum) (types.Value, error) {
	sample := s.fn == fnVarSamp || s.fn == fnStddevSamp
	stddev := s.fn == fnStddevSamp || s.fn == fnStddevPop
	n := a.n
	if n == 0 || (sample && n <= 1) {
		return types.Null, nil
	}
	float := s.result.ID == types.Float8
	if a.nan > 0 || a.pinf > 0 || a.ninf > 0 {
		if float {
			return types.MakeFloat8(math.NaN()), nil
		}
		return types.MakeNumeric(&apd.Decimal{Form: apd.NaN}), nil
	}
	// The sum at its display scale, and N×Σx² − (Σx)² at twice that.
	sum := new(apd.Decimal)
	scale := int32(0)
	switch s.acc {
	case accInt:
		sum = a.i.decimal()
	case accNumeric:
		sum.Set(&a.d)
		scale = maxScale(a.scales)
		rescale(sum, scale)
	default:
		sum.Set(&a.d)
	}
	var num, sq2 apd.Decimal
	ctx := apd.BaseContext
	if _, err := ctx.Mul(&num, apd.New(n, 0), &a.sq); err != nil {
		return types.Null, errs.New(errs.NumericOutOfRange, "value overflows numeric format")
	}
	if _, err := ctx.Mul(&sq2, sum, sum); err != nil {
		return types.Null, errs.New(errs.NumericOutOfRange, "value overflows numeric format")
	}
	if _, err := ctx.Sub(&num, &num, &sq2); err != nil {
		return types.Null, errs.New(errs.NumericOutOfRange, "value overflows numeric format")
	}
	m := n
	if sample {
		m = n - 1
	}
	den := new(apd.Decimal)
	if _, err := ctx.Mul(den, apd.New(n, 0), apd.New(m, 0)); err != nil {
		return types.Null, errs.New(errs.NumericOutOfRange, "value overflows numeric format")
	}
	if float {
		if num.Sign() <= 0 {
			return types.MakeFloat8(0), nil
		}
		var q apd.Decimal
		if _, err := apd.BaseContext.WithPrecision(40).Quo(&q, &num, den); err != nil {
			return types.Null, errs.New(errs.NumericOutOfRange, "value out of range: overflow")
		}
		v, err := decimalFloat(&q, 64)
		if err != nil {
			return types.Null, err
		}
		if stddev {
			v = math.Sqrt(v)
		}
		return types.MakeFloat8(v), nil
	}
	if num.Sign() <= 0 {
		return types.MakeNumeric(new(apd.Decimal)), nil
	}
	rescale(&num, 2*scale)
	variance, err := types.NumericDiv(&num, den)
	if err != nil {
		return types.Null, err
	}
	if stddev {
		return types.MakeNumeric(types.NumericSqrt(variance, -variance.Exponent)), nil
	}
	return types.MakeNumeric(variance), nil
}

// loadStats decodes the aggregate's fields of a state row into a.
func (s *aggSpec) loadStats(a *accum, f zset.Row) error {
	a.n = f[0].Int()
	switch s.acc {
	case accInt:
		a.i = int128{hi: f[1].Int(), lo: uint64(f[2].Int())}
		a.sq.Set(f[3].Decimal())
	case accNumeric:
		a.d.Set(f[1].Decimal())
		var err error
		if a.scales, err = decodeScales(a.scales, f[2]); err != nil {
			return err
		}
		a.sq.Set(f[3].Decimal())
		a.pinf, a.ninf, a.nan = f[4].Int(), f[5].Int(), f[6].Int()
	default:
		a.d.Set(f[1].Decimal())
		a.sq.Set(f[2].Decimal())
		a.pinf, a.ninf, a.nan = f[3].Int(), f[4].Int(), f[5].Int()
	}
	return nil
}

// storeStats appends the aggregate's fields to a state row.
func (s *aggSpec) storeStats(row zset.Row, a *accum) zset.Row {
	dec := func(d *apd.Decimal) types.Value { return types.MakeNumeric(new(apd.Decimal).Set(d)) }
	row = append(row, i8(a.n))
	switch s.acc {
	case accInt:
		return append(row, i8(a.i.hi), i8(int64(a.i.lo)), dec(&a.sq))
	case accNumeric:
		return append(row, dec(&a.d), encodeScales(a.scales), dec(&a.sq), i8(a.pinf), i8(a.ninf), i8(a.nan))
	}
	return append(row, dec(&a.d), dec(&a.sq), i8(a.pinf), i8(a.ninf), i8(a.nan))
}
