package types

import (
	"encoding/binary"
	"math/big"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
)

// NUMERIC's binary format is PostgreSQL's base-10000 representation: four
// 16-bit header fields, then the digits, all big-endian.
//
//	ndigits uint16  number of base-10000 digits that follow
//	weight  int16   power of 10000 of the first digit
//	sign    uint16  0x0000 positive, 0x4000 negative, 0xC000 NaN,
//	                0xD000 +Infinity, 0xF000 -Infinity
//	dscale  uint16  display scale: digits after the decimal point (<= 0x3FFF)
//	digits  ndigits × int16, each 0..9999
//
// The value is sign × Σ digit[i] × 10000^(weight-i). numeric_send strips
// leading and trailing zero digits, gives zero ndigits 0, weight 0 and a
// positive sign, and sends the special values with no digits and weight 0;
// their dscale is what PostgreSQL's storage header yields: 0 for NaN, 32
// for the infinities.

const (
	numericBinPos  = 0x0000
	numericBinNeg  = 0x4000
	numericBinNaN  = 0xC000
	numericBinPInf = 0xD000
	numericBinNInf = 0xF000

	numericBinDScaleMask = 0x3FFF
	numericBinBase       = 10000
)

var (
	errNumericBinSign  = errs.New(errs.InvalidBinaryRep, `invalid sign in external "numeric" value`)
	errNumericBinScale = errs.New(errs.InvalidBinaryRep, `invalid scale in external "numeric" value`)
	errNumericBinDigit = errs.New(errs.InvalidBinaryRep, `invalid digit in external "numeric" value`)
)

// appendNumericBinary appends numeric_send's output for d.
func appendNumericBinary(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return appendNumericBinHeader(dst, 0, 0, numericBinNaN, 0)
	case apd.Infinite:
		if d.Negative {
			return appendNumericBinHeader(dst, 0, 0, numericBinNInf, 32)
		}
		return appendNumericBinHeader(dst, 0, 0, numericBinPInf, 32)
	}
	d = canonical(d)
	scale := int(decScale(d))
	if d.Coeff.Sign() == 0 {
		return appendNumericBinHeader(dst, 0, 0, numericBinPos, uint16(scale))
	}
	var buf [40]byte
	var digits []byte // the coefficient's decimal digits, the first non-zero
	if d.Coeff.IsInt64() {
		digits = strconv.AppendUint(buf[:0], uint64(d.Coeff.Int64()), 10)
	} else {
		digits = d.Coeff.Append(buf[:0], 10)
	}
	// Decimal digit k of the coefficient (0 first) has exponent
	// len(digits)-1-scale-k and belongs to the base-10000 digit of weight
	// floor(exponent/4); the first one's is the value's weight.
	lead := len(digits) - 1 - scale
	weight := floorDiv(int64(lead), 4)
	sign := uint16(numericBinPos)
	if d.Negative {
		sign = numericBinNeg
	}
	start := len(dst)
	dst = appendNumericBinHeader(dst, 0, int16(weight), sign, uint16(scale))
	// Pad the digits with zeros on both sides to whole base-10000 digits.
	lpad := 3 - (lead - 4*int(weight))
	ndigits, lastNonZero := 0, 0
	var group, inGroup int
	emit := func() {
		dst = binary.BigEndian.AppendUint16(dst, uint16(group))
		ndigits++
		if group != 0 {
			lastNonZero = ndigits
		}
		group, inGroup = 0, 0
	}
	inGroup = lpad
	for _, c := range digits {
		group = group*10 + int(c-'0')
		if inGroup++; inGroup == 4 {
			emit()
		}
	}
	if inGroup > 0 {
		for ; inGroup < 4; inGroup++ {
			group *= 10
		}
		emit()
	}
	// Trailing zero digits are not sent.
	dst = dst[:start+8+2*lastNonZero]
	binary.BigEndian.PutUint16(dst[start:], uint16(lastNonZero))
	return dst
}

func appendNumericBinHeader(dst []byte, ndigits uint16, weight int16, sign, dscale uint16) []byte {
	dst = binary.BigEndian.AppendUint16(dst, ndigits)
	dst = binary.BigEndian.AppendUint16(dst, uint16(weight))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	return binary.BigEndian.AppendUint16(dst, dscale)
}

// parseNumericBinary is numeric_recv: it reads and checks the header
// fields and digits in PostgreSQL's order, truncates digits that dscale
// hides (as numeric_recv does rather than fail), and applies t's typmod.
func parseNumericBinary(src []byte, t Type) (Value, error) {
	if len(src) < 6 {
		return Null, errInsufficientData
	}
	ndigits := int(binary.BigEndian.Uint16(src))
	weight := int(int16(binary.BigEndian.Uint16(src[2:])))
	sign := binary.BigEndian.Uint16(src[4:])
	switch sign {
	case numericBinPos, numericBinNeg, numericBinNaN, numericBinPInf, numericBinNInf:
	default:
		return Null, errNumericBinSign
	}
	if len(src) < 8 {
		return Null, errInsufficientData
	}
	dscale := int(binary.BigEndian.Uint16(src[6:]))
	if dscale&numericBinDScaleMask != dscale {
		return Null, errNumericBinScale
	}
	body := src[8:]
	for i := range ndigits {
		if len(body) < 2*i+2 {
			return Null, errInsufficientData
		}
		if binary.BigEndian.Uint16(body[2*i:]) >= numericBinBase {
			return Null, errNumericBinDigit
		}
	}
	var d *apd.Decimal
	switch sign {
	case numericBinNaN:
		d = decNaN
	case numericBinPInf:
		d = decPosInf
	case numericBinNInf:
		d = decNegInf
	default:
		d = numericFromBase10000(body[:2*ndigits], weight, dscale, sign == numericBinNeg)
	}
	d, err := applyNumericTypmod(d, t)
	if err != nil {
		return Null, err
	}
	return MakeNumeric(d), trailing(src, 8+2*ndigits)
}

// numericFromBase10000 returns the canonical decimal of the base-10000
// digits (big-endian int16s, each valid) with the given weight, truncated
// toward zero to dscale decimal places.
func numericFromBase10000(digits []byte, weight, dscale int, neg bool) *apd.Decimal {
	n := len(digits) / 2
	digit := func(i int) uint64 { return uint64(binary.BigEndian.Uint16(digits[2*i:])) }
	// Base-10000 digit i stands for 10000^(weight-i). The one holding the
	// last decimal place dscale keeps is last; leading and trailing zero
	// digits carry nothing.
	last := min(n-1, weight-floorDivInt(-dscale, 4))
	first := 0
	for first <= last && digit(first) == 0 {
		first++
	}
	for last >= first && digit(last) == 0 {
		last--
	}
	if first > last {
		return newDec(false, new(apd.BigInt), int32(dscale))
	}
	// coeff = x × 10^shift in units of 10^-dscale, where x is the digits
	// first..last read as one base-10000 integer.
	shift := 4*(weight-last) + dscale
	coeff := new(apd.BigInt)
	if last-first < 4 {
		var x uint64
		for i := first; i <= last; i++ {
			x = x*numericBinBase + digit(i)
		}
		if shift < 0 {
			// The last digit straddles the last kept place: truncate.
			x /= uint64(pow10Table[-shift].Int64())
			shift = 0
		}
		coeff.SetUint64(x)
	} else {
		x := bigFromBase10000(digits[2*first : 2*last+2])
		if shift < 0 {
			x.Quo(x, pow10Table[-shift].MathBigInt())
			shift = 0
		}
		coeff.SetMathBigInt(x)
	}
	if shift > 0 {
		coeff.Mul(coeff, pow10(int64(shift)))
	}
	return newDec(neg, coeff, int32(dscale))
}

// bigFromBase10000 returns the integer whose base-10000 digits (big-endian
// int16s) are b. It splits the digits in halves, so that long inputs cost
// multiplications of balanced sizes rather than a digit-by-digit loop
// whose cost grows with the square of the length.
func bigFromBase10000(b []byte) *big.Int {
	n := len(b) / 2
	if n <= 16 {
		x, word := new(big.Int), new(big.Int)
		var acc uint64
		for i := range n {
			acc = acc*numericBinBase + uint64(binary.BigEndian.Uint16(b[2*i:]))
			if i%4 == 3 || i == n-1 {
				k := i%4 + 1 // digits in acc
				x.Mul(x, big.NewInt(int64(pow10Table[4*k].Int64())))
				x.Add(x, word.SetUint64(acc))
				acc = 0
			}
		}
		return x
	}
	h := n / 2
	hi, lo := bigFromBase10000(b[:2*h]), bigFromBase10000(b[2*h:])
	scale := new(big.Int).Exp(big.NewInt(numericBinBase), big.NewInt(int64(n-h)), nil)
	return hi.Mul(hi, scale).Add(hi, lo)
}

func floorDivInt(a, b int) int { return int(floorDiv(int64(a), int64(b))) }
