package ops

import (
	"math"
	"sort"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// RANGE frames with offsets: "RANGE BETWEEN 5 PRECEDING AND 2 FOLLOWING"
// reaches the rows whose ORDER BY value lies within that distance of the
// current row's, as PostgreSQL's in_range support functions decide. A row
// with a NULL value has only the NULL rows (its peers) in such a bound; the
// other rows never reach the NULLs through an offset bound.

// rangeKey is the ORDER BY key a RANGE offset measures, with the
// operators that move a value by the offset.
type rangeKey struct {
	key      plan.SortKey
	add, sub *types.Operator
	// asTimestamp converts dates to timestamps before they are compared
	// with a moved value, as PostgreSQL's in_range for dates does.
	asTimestamp bool
}

// hasRangeOffset reports whether a frame is RANGE with an offset bound.
func hasRangeOffset(fr *plan.Frame) bool {
	isOff := func(k plan.BoundKind) bool { return k == plan.OffsetPreceding || k == plan.OffsetFollowing }
	return fr.Mode == plan.FrameRange && (isOff(fr.Start.Kind) || isOff(fr.End.Kind))
}

func newRangeKey(key plan.SortKey, offset types.Type, zone types.Zone) (*rangeKey, error) {
	rk := &rangeKey{key: key}
	switch kt := key.Expr.Type(); kt.ID {
	case types.Date, types.Timestamp, types.TimestampTZ, types.Interval:
		var err error
		if rk.add, err = types.ResolveBinary("+", kt, offset); err != nil {
			return nil, err
		}
		if rk.sub, err = types.ResolveBinary("-", kt, offset); err != nil {
			return nil, err
		}
		rk.add, rk.sub = rk.add.InZone(zone), rk.sub.InZone(zone)
		rk.asTimestamp = kt.ID == types.Date
	case types.Int2, types.Int4, types.Int8, types.Numeric, types.Float4, types.Float8:
	default:
		return nil, errs.Newf(errs.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", kt)
	}
	return rk, nil
}

// inRange reports whether val <= base ± off (less) or val >= base ± off
// (not less), subtracting when sub, as PostgreSQL's in_range functions do
// for each type: without overflow (a sum beyond the type's range compares
// as beyond every value), with NaN greater than everything and the
// infinities at the ends.
func (rk *rangeKey) inRange(val, base, off types.Value, sub, less bool) (bool, error) {
	switch base.Kind() {
	case types.Int2, types.Int4, types.Int8:
		v, b, o := val.Int(), base.Int(), off.Int()
		var sum int64
		if sub {
			if b < math.MinInt64+o {
				return !less, nil // the sum is below every value
			}
			sum = b - o
		} else {
			if b > math.MaxInt64-o {
				return less, nil // the sum is above every value
			}
			sum = b + o
		}
		if less {
			return v <= sum, nil
		}
		return v >= sum, nil
	case types.Float4, types.Float8:
		return floatInRange(val.Float(), base.Float(), off.Float(), sub, less), nil
	case types.Numeric:
		return numericInRange(val.Decimal(), base.Decimal(), off.Decimal(), sub, less)
	}
	op := rk.add
	if sub {
		op = rk.sub
	}
	sum, err := op.Eval(base, off)
	if err != nil {
		return false, err
	}
	if rk.asTimestamp {
		if val, err = types.Cast(val, types.Of(types.Timestamp), false); err != nil {
			return false, err
		}
	}
	c := types.Compare(val, sum)
	if less {
		return c <= 0, nil
	}
	return c >= 0, nil
}

func floatInRange(val, base, off float64, sub, less bool) bool {
	switch {
	case math.IsNaN(val):
		return math.IsNaN(base) || !less
	case math.IsNaN(base):
		return less
	case math.IsInf(off, 0) && math.IsInf(base, 0) && (base > 0) == sub:
		return true // base ± off would be NaN
	}
	sum := base + off
	if sub {
		sum = base - off
	}
	if less {
		return val <= sum
	}
	return val >= sum
}

func numericInRange(val, base, off *apd.Decimal, sub, less bool) (bool, error) {
	isPInf := func(d *apd.Decimal) bool { return d.Form == apd.Infinite && !d.Negative }
	isNInf := func(d *apd.Decimal) bool { return d.Form == apd.Infinite && d.Negative }
	switch {
	case val.Form == apd.NaN:
		return base.Form == apd.NaN || !less, nil
	case base.Form == apd.NaN:
		return less, nil
	case off.Form == apd.Infinite:
		switch {
		case sub && isPInf(base), !sub && isNInf(base):
			return true, nil // base ± off would be NaN
		case sub:
			return !less || isNInf(val), nil
		default:
			return less || isPInf(val), nil
		}
	case val.Form == apd.Infinite:
		if isPInf(val) {
			return isPInf(base) || !less, nil
		}
		return isNInf(base) || less, nil
	case base.Form == apd.Infinite:
		if isNInf(base) {
			return !less, nil
		}
		return less, nil
	}
	var sum apd.Decimal
	ctx := apd.BaseContext.WithPrecision(0)
	var err error
	if sub {
		_, err = ctx.Sub(&sum, base, off)
	} else {
		_, err = ctx.Add(&sum, base, off)
	}
	if err != nil {
		return false, errs.Newf(errs.NumericOutOfRange, "numeric value out of range")
	}
	c := val.Cmp(&sum)
	if less {
		return c <= 0, nil
	}
	return c >= 0, nil
}

// rangeFrames computes, for a RANGE frame with offset bounds, each
// position's frame start and end into p.rangeS and p.rangeT, which frame
// then uses.
func (p *windowPartition) rangeFrames(fr *plan.Frame, rk *rangeKey) error {
	n := p.n
	keys := make([]types.Value, n)
	for i := range n {
		row, err := p.row(i)
		if err != nil {
			return err
		}
		v, err := rk.key.Expr.Eval(row)
		if err != nil {
			return err
		}
		keys[i] = v
	}
	// The non-NULL values are one run: NULLs sort first or last.
	lo, hi := 0, n
	if rk.key.NullsFirst {
		for lo < n && keys[lo].IsNull() {
			lo++
		}
	} else {
		for hi > 0 && keys[hi-1].IsNull() {
			hi--
		}
	}
	p.rangeS, p.rangeT = resize(p.rangeS, n), resize(p.rangeT, n)
	var firstErr error
	// search returns the first position of [lo, hi) where ok holds (ok
	// goes from false to true along the run), or hi.
	search := func(ok func(j int) bool) int {
		return lo + sort.Search(hi-lo, func(k int) bool { return ok(lo + k) })
	}
	check := func(b plan.FrameBound, start bool, i int) func(j int) bool {
		sub := b.Kind == plan.OffsetPreceding
		less := !start
		if rk.key.Desc {
			sub, less = !sub, !less
		}
		return func(j int) bool {
			in, err := rk.inRange(keys[j], keys[i], b.Value, sub, less)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if start {
				return in // the start is the first row in range
			}
			return !in // the end is the first row past the range
		}
	}
	for i := range n {
		s, t := p.frameBounds(fr, i)
		if keys[i].IsNull() {
			// NULL rows: an offset bound reaches exactly the NULL peers.
			g := p.group[i]
			if isOffset(fr.Start.Kind) {
				s = p.groupStart[g]
			}
			if isOffset(fr.End.Kind) {
				t = p.groupStart[g+1]
			}
		} else {
			if isOffset(fr.Start.Kind) {
				s = search(check(fr.Start, true, i))
			}
			if isOffset(fr.End.Kind) {
				t = search(check(fr.End, false, i))
			}
		}
		p.rangeS[i], p.rangeT[i] = s, t
	}
	return firstErr
}

func isOffset(k plan.BoundKind) bool { return k == plan.OffsetPreceding || k == plan.OffsetFollowing }
