package ops

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strconv"
	"sync"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Exact arithmetic for aggregate state. Sums are kept exactly so that they
// do not depend on the order in which rows arrive and leave: an
// incrementally maintained sum equals the batch sum bit for bit.

// int128 is a signed 128-bit integer: the exact sum of int64 products.
type int128 struct {
	hi int64
	lo uint64
}

func int128Of(x int64) int128 { return int128{hi: x >> 63, lo: uint64(x)} }

func (a int128) neg() int128 {
	lo, c := bits.Add64(^a.lo, 1, 0)
	return int128{hi: ^a.hi + int64(c), lo: lo}
}

// add returns a+b, or false on overflow.
func (a int128) add(b int128) (int128, bool) {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi := a.hi + b.hi + int64(c)
	if (a.hi >= 0) == (b.hi >= 0) && (hi >= 0) != (a.hi >= 0) {
		return int128{}, false
	}
	return int128{hi: hi, lo: lo}, true
}

// mul128 returns the exact product x*w.
func mul128(x, w int64) int128 {
	neg := (x < 0) != (w < 0)
	ux, uw := uint64(x), uint64(w)
	if x < 0 {
		ux = -ux
	}
	if w < 0 {
		uw = -uw
	}
	hi, lo := bits.Mul64(ux, uw)
	r := int128{hi: int64(hi), lo: lo}
	if neg {
		r = r.neg()
	}
	return r
}

// int64 returns a as an int64 when it fits.
func (a int128) int64() (int64, bool) {
	return int64(a.lo), a.hi == int64(a.lo)>>63
}

// decimal returns a as an exact decimal.
func (a int128) decimal() *apd.Decimal {
	if v, ok := a.int64(); ok {
		return apd.New(v, 0)
	}
	neg := a.hi < 0
	if neg {
		a = a.neg()
	}
	b := new(big.Int).SetUint64(uint64(a.hi))
	b.Lsh(b, 64)
	b.Or(b, new(big.Int).SetUint64(a.lo))
	d := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(b), 0)
	d.Negative = neg
	return d
}

var (
	pow5Once  sync.Once
	pow5Table []apd.BigInt // 5^k for every binary exponent of a float64
)

func pow5(k int) *apd.BigInt {
	pow5Once.Do(func() {
		pow5Table = make([]apd.BigInt, 1076)
		pow5Table[0].SetInt64(1)
		five := apd.NewBigInt(5)
		for i := 1; i < len(pow5Table); i++ {
			pow5Table[i].Mul(&pow5Table[i-1], five)
		}
	})
	return &pow5Table[k]
}

// floatDecimal sets d to the exact value of the finite float f (every
// binary fraction has a finite decimal expansion).
func floatDecimal(d *apd.Decimal, f float64) {
	b := math.Float64bits(f)
	neg := b>>63 != 0
	exp := int((b >> 52) & 0x7ff)
	mant := b & (1<<52 - 1)
	if exp == 0 {
		exp = 1
	} else {
		mant |= 1 << 52
	}
	exp -= 1075 // |f| = mant · 2^exp
	d.Form = apd.Finite
	if mant == 0 {
		d.SetInt64(0)
		return
	}
	tz := bits.TrailingZeros64(mant)
	mant >>= uint(tz)
	exp += tz
	d.Coeff.SetUint64(mant)
	if exp >= 0 {
		d.Coeff.Lsh(&d.Coeff, uint(exp))
		d.Exponent = 0
	} else {
		// mant · 2^exp = mant · 5^-exp · 10^exp
		d.Coeff.Mul(&d.Coeff, pow5(-exp))
		d.Exponent = int32(exp)
	}
	d.Negative = neg
}

// decimalFloat rounds the exact value d to the nearest float of the given
// bit size (32 or 64), failing as PostgreSQL's float addition does when
// the result overflows.
func decimalFloat(d *apd.Decimal, bitSize int) (float64, error) {
	f, err := strconv.ParseFloat(d.Text('e'), bitSize)
	if err != nil && (math.IsInf(f, 0) || f == 0 && !d.IsZero()) {
		if math.IsInf(f, 0) {
			return 0, errs.New(errs.NumericOutOfRange, "value out of range: overflow")
		}
		return 0, errs.New(errs.NumericOutOfRange, "value out of range: underflow")
	}
	return f, nil
}

// addScaled sets d to d + x·w exactly.
func addScaled(d, x *apd.Decimal, w int64) error {
	var err error
	switch w {
	case 1:
		_, err = apd.BaseContext.Add(d, d, x)
	case -1:
		_, err = apd.BaseContext.Sub(d, d, x)
	default:
		var p apd.Decimal
		if _, err = apd.BaseContext.Mul(&p, x, apd.New(w, 0)); err == nil {
			_, err = apd.BaseContext.Add(d, d, &p)
		}
	}
	if err != nil {
		return errs.Newf(errs.NumericOutOfRange, "value overflows numeric format: %v", err)
	}
	if d.Coeff.Sign() == 0 {
		d.Negative = false
	}
	return nil
}

// scaleOf is the display scale of a finite NUMERIC value.
func scaleOf(d *apd.Decimal) int32 {
	if d.Exponent >= 0 {
		return 0
	}
	return -d.Exponent
}

// rescale sets d's exponent to -s without changing its value. d must be a
// multiple of 10^-s, which holds for a sum of values of scale at most s.
func rescale(d *apd.Decimal, s int32) {
	if d.Form != apd.Finite || d.Exponent == -s {
		return
	}
	ten := apd.NewBigInt(10)
	if d.Exponent > -s {
		var p apd.BigInt
		p.Exp(ten, apd.NewBigInt(int64(d.Exponent+s)), nil)
		d.Coeff.Mul(&d.Coeff, &p)
	} else {
		var p, r apd.BigInt
		p.Exp(ten, apd.NewBigInt(int64(-s-d.Exponent)), nil)
		d.Coeff.QuoRem(&d.Coeff, &p, &r)
	}
	d.Exponent = -s
	if d.Coeff.Sign() == 0 {
		d.Negative = false
	}
}

// scaleCount counts the values of one display scale in a NUMERIC sum; the
// sum's scale is the largest scale with a positive count, as PostgreSQL's
// (whose result scale is the maximum of its inputs').
type scaleCount struct {
	scale int32
	n     int64
}

func addScale(sc []scaleCount, s int32, w int64) ([]scaleCount, error) {
	i := sort.Search(len(sc), func(i int) bool { return sc[i].scale >= s })
	if i < len(sc) && sc[i].scale == s {
		n, ok := int128Of(sc[i].n).add(int128Of(w))
		v, fits := n.int64()
		if !ok || !fits {
			return nil, errs.New(errs.NumericOutOfRange, "row count out of range")
		}
		if v == 0 {
			return append(sc[:i], sc[i+1:]...), nil
		}
		sc[i].n = v
		return sc, nil
	}
	sc = append(sc, scaleCount{})
	copy(sc[i+1:], sc[i:])
	sc[i] = scaleCount{s, w}
	return sc, nil
}

func maxScale(sc []scaleCount) int32 {
	for i := len(sc) - 1; i >= 0; i-- {
		if sc[i].n > 0 {
			return sc[i].scale
		}
	}
	return 0
}

func encodeScales(sc []scaleCount) types.Value {
	var b []byte
	for _, s := range sc {
		b = binary.AppendUvarint(b, uint64(s.scale))
		b = binary.AppendVarint(b, s.n)
	}
	return types.MakeBytea(b)
}

func decodeScales(dst []scaleCount, v types.Value) ([]scaleCount, error) {
	b := []byte(v.Str())
	for len(b) > 0 {
		s, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, corrupt("numeric scales")
		}
		b = b[n:]
		c, m := binary.Varint(b)
		if m <= 0 {
			return nil, corrupt("numeric scales")
		}
		b = b[m:]
		dst = append(dst, scaleCount{int32(s), c})
	}
	return dst, nil
}

// identical reports whether a and b are the same value in the same
// representation: equal NUMERICs with different scales, or 0 and -0, are
// not identical, because they print differently.
func identical(a, b types.Value) bool { return zset.IdenticalValues(a, b) }
