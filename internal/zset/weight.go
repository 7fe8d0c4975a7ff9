package zset

import (
	"math"
	"math/bits"

	"github.com/rockstream/rockstream/internal/errs"
)

// errWeightOutOfRange is returned when weight arithmetic leaves int64.
var errWeightOutOfRange = errs.New(errs.NumericOutOfRange,
	"row multiplicity out of range: a row's accumulated count does not fit in a 64-bit integer")

// AddWeight returns a+b, or an error (22003) on int64 overflow.
func AddWeight(a, b int64) (int64, error) {
	c := a + b
	// Overflow happened iff a and b have the same sign and c's differs.
	if (a^c)&(b^c) < 0 {
		return 0, errWeightOutOfRange
	}
	return c, nil
}

// MulWeight returns a*b, or an error (22003) on int64 overflow.
func MulWeight(a, b int64) (int64, error) {
	if a == 0 || b == 0 {
		return 0, nil
	}
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(absWeight(a), absWeight(b))
	if hi != 0 {
		return 0, errWeightOutOfRange
	}
	if neg {
		if lo > 1<<63 {
			return 0, errWeightOutOfRange
		}
		return int64(-lo), nil
	}
	if lo > math.MaxInt64 {
		return 0, errWeightOutOfRange
	}
	return int64(lo), nil
}

// NegWeight returns -a, or an error (22003) when a is math.MinInt64.
func NegWeight(a int64) (int64, error) {
	if a == math.MinInt64 {
		return 0, errWeightOutOfRange
	}
	return -a, nil
}

// absWeight returns |a| as a uint64 (exact for math.MinInt64 too).
func absWeight(a int64) uint64 {
	if a < 0 {
		return uint64(-a)
	}
	return uint64(a)
}

// weightSum accumulates int64 weights exactly in 128 bits, so that the sum
// of a run of weights does not depend on the order they are added in: only
// the final total has to fit in int64.
type weightSum struct {
	hi int64
	lo uint64
}

func (s *weightSum) add(w int64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(w), 0)
	// Sign-extend w into the high word.
	s.hi += int64(carry) + (w >> 63)
}

// result returns the total, or false if it does not fit in int64.
func (s weightSum) result() (int64, bool) {
	v := int64(s.lo)
	return v, s.hi == v>>63
}
