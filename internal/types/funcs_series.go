package types

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/internal/errs"
)

// generate_series(start, stop [, step]) as PostgreSQL 15 has it, over
// integers, bigints and numerics (step 1 by default) and over timestamps
// and timestamptz with an interval step. The catalog holds it as the
// array of its rows, under SeriesRows; the binder unnests it. A series
// runs from start while it has not passed stop in the step's direction;
// a step of 0 (an interval that compares equal to 0) fails with 22023,
// as NaN and infinite numeric bounds and steps do. Integer series end
// where the next value would overflow; timestamp series add the step to
// each value, so an addition that leaves the range fails with 22008 as
// in PostgreSQL. A series longer than MaxSeriesLength fails with 54000:
// the rows are made as one array (PostgreSQL would make an infinite
// timestamp series forever).

// SeriesRows is the catalog name of the array of generate_series's rows.
const SeriesRows = "generate_series rows"

// MaxSeriesLength bounds a series.
const MaxSeriesLength = 1 << 20

func init() {
	for _, k := range []TypeID{Int4, Int8} {
		addFunc(SeriesRows, ArrayOf(k), intSeries(k), k, k)
		addFunc(SeriesRows, ArrayOf(k), intSeries(k), k, k, k)
	}
	addFunc(SeriesRows, ArrayOf(Numeric), numericSeries, Numeric, Numeric)
	addFunc(SeriesRows, ArrayOf(Numeric), numericSeries, Numeric, Numeric, Numeric)
	addFunc(SeriesRows, ArrayOf(Timestamp), timestampSeries(Timestamp), Timestamp, Timestamp, Interval)
	addFunc(SeriesRows, ArrayOf(TimestampTZ), timestampSeries(TimestampTZ), TimestampTZ, TimestampTZ, Interval).stable = true
}

func seriesTooLong() error {
	return errs.Newf(errs.ProgramLimitExceeded, "generate_series in FROM is limited to %d rows", MaxSeriesLength)
}

func stepZero() error { return errs.New(errs.InvalidParameterValue, "step size cannot equal zero") }

func intSeries(k TypeID) func([]Value) (Value, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if k == Int4 {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	return func(v []Value) (Value, error) {
		start, stop, step := v[0].Int(), v[1].Int(), int64(1)
		if len(v) == 3 {
			step = v[2].Int()
		}
		if step == 0 {
			return Null, stepZero()
		}
		var elems []Value
		for x := start; step > 0 && x <= stop || step < 0 && x >= stop; x += step {
			if len(elems) == MaxSeriesLength {
				return Null, seriesTooLong()
			}
			elems = append(elems, MakeInt(k, x))
			if step > 0 && x > hi-step || step < 0 && x < lo-step {
				break
			}
		}
		return MakeArray(k, elems), nil
	}
}

// numericBound refuses a NaN or infinite start or stop; what names it.
func numericBound(d *apd.Decimal, what string) error {
	switch {
	case isNaN(d):
		return errs.Newf(errs.InvalidParameterValue, "%s cannot be NaN", what)
	case d.Form == apd.Infinite:
		return errs.Newf(errs.InvalidParameterValue, "%s cannot be infinity", what)
	}
	return nil
}

func numericSeries(v []Value) (Value, error) {
	start, stop := v[0].dec(), v[1].dec()
	if err := numericBound(start, "start value"); err != nil {
		return Null, err
	}
	if err := numericBound(stop, "stop value"); err != nil {
		return Null, err
	}
	step := apd.New(1, 0)
	if len(v) == 3 {
		step = v[2].dec()
		if err := numericBound(step, "step size"); err != nil {
			return Null, err
		}
		if step.IsZero() {
			return Null, stepZero()
		}
	}
	up := !step.Negative
	var elems []Value
	cur := start
	for {
		c := cur.Cmp(stop)
		if up && c > 0 || !up && c < 0 {
			break
		}
		if len(elems) == MaxSeriesLength {
			return Null, seriesTooLong()
		}
		elems = append(elems, MakeNumeric(cur))
		next, err := NumericAdd(cur, step)
		if err != nil {
			return Null, err
		}
		cur = next
	}
	return MakeArray(Numeric, elems), nil
}

func timestampSeries(k TypeID) func([]Value) (Value, error) { return seriesWith(k, tsAddInterval(k)) }

// seriesWith is generate_series over timestamps of kind k, stepping with
// add.
func seriesWith(k TypeID, add func(a, b Value) (Value, error)) func([]Value) (Value, error) {
	return func(v []Value) (Value, error) {
		start, stop, step := v[0], v[1], v[2]
		sign := Compare(step, MakeInterval(IntervalValue{}))
		if sign == 0 {
			return Null, stepZero()
		}
		var elems []Value
		cur := start
		for {
			c := Compare(cur, stop)
			if sign > 0 && c > 0 || sign < 0 && c < 0 {
				break
			}
			if len(elems) == MaxSeriesLength {
				return Null, seriesTooLong()
			}
			elems = append(elems, cur)
			next, err := add(cur, step)
			if err != nil {
				return Null, err
			}
			cur = next
		}
		return MakeArray(k, elems), nil
	}
}
