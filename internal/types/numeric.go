package types

import (
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
)

// NUMERIC values are apd decimals kept in a canonical form, so that a
// value's text is determined by the decimal alone:
//
//   - a finite value has Exponent <= 0, and -Exponent is its display scale
//     (PostgreSQL's dscale): 1.50 is Coeff 150, Exponent -2;
//   - zero is never negative;
//   - NaN is Form NaN, and ±Infinity is Form Infinite with Negative set for
//     -Infinity (PostgreSQL 14 and later have numeric infinities).
//
// Every function here returns a fresh decimal and never modifies its inputs.

// PostgreSQL's limits on numeric values and on computed scales.
const (
	numericMaxIntDigits   = 131072 // digits before the decimal point
	numericMaxDScale      = 16383  // digits after the decimal point
	numericMinSigDigits   = 16     // NUMERIC_MIN_SIG_DIGITS
	numericMaxDisplayScal = 1000   // NUMERIC_MAX_DISPLAY_SCALE
)

var (
	decNaN    = &apd.Decimal{Form: apd.NaN}
	decPosInf = &apd.Decimal{Form: apd.Infinite}
	decNegInf = &apd.Decimal{Form: apd.Infinite, Negative: true}
)

// pow10Table holds 10^0 .. 10^(len-1). Its entries are only ever read.
var pow10Table = func() (t [80]apd.BigInt) {
	t[0].SetInt64(1)
	ten := apd.NewBigInt(10)
	for i := 1; i < len(t); i++ {
		t[i].Mul(&t[i-1], ten)
	}
	return t
}()

// pow10 returns 10^n. The result must not be modified.
func pow10(n int64) *apd.BigInt {
	if n < int64(len(pow10Table)) {
		return &pow10Table[n]
	}
	return new(apd.BigInt).Exp(apd.NewBigInt(10), apd.NewBigInt(n), nil)
}

// decScale returns the display scale of a finite canonical decimal.
func decScale(d *apd.Decimal) int32 { return -d.Exponent }

// newDec returns the canonical decimal sign × coeff × 10^-scale for scale
// >= 0, taking ownership of coeff (whose sign must be non-negative).
func newDec(neg bool, coeff *apd.BigInt, scale int32) *apd.Decimal {
	d := &apd.Decimal{Exponent: -scale}
	d.Coeff.Set(coeff)
	d.Negative = neg && d.Coeff.Sign() != 0
	return d
}

// canonical returns d in canonical form (exponent <= 0, no negative zero).
// d itself is returned when it already is.
func canonical(d *apd.Decimal) *apd.Decimal {
	if d == nil {
		return nil
	}
	if d.Form != apd.Finite {
		if isNaN(d) {
			return decNaN
		}
		if d.Negative {
			return decNegInf
		}
		return decPosInf
	}
	if d.Exponent <= 0 && !(d.Negative && d.Coeff.Sign() == 0) {
		return d
	}
	r := &apd.Decimal{}
	r.Set(d)
	if r.Exponent > 0 {
		r.Coeff.Mul(&r.Coeff, pow10(int64(r.Exponent)))
		r.Exponent = 0
	}
	if r.Coeff.Sign() == 0 {
		r.Negative = false
	}
	return r
}

// checkDecLimits fails with "value overflows numeric format" when d has
// more integer digits or a larger scale than PostgreSQL can store.
func checkDecLimits(d *apd.Decimal) error {
	if d.Form != apd.Finite {
		return nil
	}
	if -d.Exponent > numericMaxDScale {
		return errNumericOverflow
	}
	if d.Coeff.Sign() != 0 && apd.NumDigits(&d.Coeff)+int64(d.Exponent) > numericMaxIntDigits {
		return errNumericOverflow
	}
	return nil
}

// NumericFromInt returns n as a NUMERIC value of scale 0.
func NumericFromInt(n int64) *apd.Decimal {
	d := &apd.Decimal{}
	d.SetInt64(n)
	return d
}

// ParseNumeric parses s with numeric_in's rules: surrounding whitespace,
// an optional sign, digits with an optional point, an optional exponent, or
// NaN / [+-]Infinity / [+-]inf (case-insensitive).
func ParseNumeric(s string) (*apd.Decimal, error) {
	i, j := trimSpaceBounds(s)
	body := s[i:j]
	switch {
	case equalFoldASCII(body, "nan"):
		return decNaN, nil
	case equalFoldASCII(body, "infinity"), equalFoldASCII(body, "+infinity"),
		equalFoldASCII(body, "inf"), equalFoldASCII(body, "+inf"):
		return decPosInf, nil
	case equalFoldASCII(body, "-infinity"), equalFoldASCII(body, "-inf"):
		return decNegInf, nil
	}
	p := 0
	neg := false
	if p < len(body) && (body[p] == '+' || body[p] == '-') {
		neg = body[p] == '-'
		p++
	}
	start := p
	var coeffDigits []byte
	var buf [40]byte
	coeffDigits = buf[:0]
	sawPoint, nDigits, frac := false, 0, 0
	for ; p < len(body); p++ {
		c := body[p]
		if c >= '0' && c <= '9' {
			coeffDigits = append(coeffDigits, c)
			nDigits++
			if sawPoint {
				frac++
			}
			continue
		}
		if c == '.' && !sawPoint {
			sawPoint = true
			continue
		}
		break
	}
	if nDigits == 0 || p == start {
		return nil, invalidSyntax(Numeric, s)
	}
	var exp int64
	if p < len(body) && (body[p] == 'e' || body[p] == 'E') {
		p++
		eneg := false
		if p < len(body) && (body[p] == '+' || body[p] == '-') {
			eneg = body[p] == '-'
			p++
		}
		es := p
		for p < len(body) && body[p] >= '0' && body[p] <= '9' {
			if exp < math.MaxInt32 {
				exp = exp*10 + int64(body[p]-'0')
			}
			p++
		}
		if p == es {
			return nil, invalidSyntax(Numeric, s)
		}
		if exp >= math.MaxInt32/2 {
			return nil, errNumericOverflow
		}
		if eneg {
			exp = -exp
		}
	}
	if p != len(body) {
		return nil, invalidSyntax(Numeric, s)
	}
	scale := int64(frac) - exp
	coeff := new(apd.BigInt)
	if _, ok := coeff.SetString(string(coeffDigits), 10); !ok {
		return nil, invalidSyntax(Numeric, s)
	}
	// Integer digits: quick reject of absurd magnitudes before scaling up.
	if coeff.Sign() != 0 && int64(nDigits)-scale > numericMaxIntDigits+1 {
		return nil, errNumericOverflow
	}
	if scale < 0 {
		// Zero stays zero however large its exponent ('0e999999999' is
		// 0, as in PostgreSQL): only a nonzero coefficient is scaled up.
		if coeff.Sign() != 0 {
			coeff.Mul(coeff, pow10(-scale))
		}
		scale = 0
	}
	if scale > numericMaxDScale {
		return nil, errNumericOverflow
	}
	d := newDec(neg, coeff, int32(scale))
	if err := checkDecLimits(d); err != nil {
		return nil, err
	}
	return d, nil
}

// AppendNumeric appends numeric_out's text for d to dst.
func AppendNumeric(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, "NaN"...)
	case apd.Infinite:
		if d.Negative {
			return append(dst, "-Infinity"...)
		}
		return append(dst, "Infinity"...)
	}
	d = canonical(d)
	if d.Negative {
		dst = append(dst, '-')
	}
	scale := int(decScale(d))
	start := len(dst)
	if d.Coeff.IsInt64() {
		dst = strconv.AppendInt(dst, d.Coeff.Int64(), 10)
	} else {
		dst = d.Coeff.Append(dst, 10)
	}
	if scale == 0 {
		return dst
	}
	n := len(dst) - start
	if n <= scale {
		// Pad with leading zeros so there is one integer digit.
		pad := scale - n + 1
		for range pad {
			dst = append(dst, 0)
		}
		copy(dst[start+pad:], dst[start:start+n])
		for k := range pad {
			dst[start+k] = '0'
		}
		n += pad
	}
	dst = append(dst, 0)
	pos := start + n - scale
	copy(dst[pos+1:], dst[pos:start+n])
	dst[pos] = '.'
	return dst
}

// FormatNumeric returns numeric_out's text for d.
func FormatNumeric(d *apd.Decimal) string { return string(AppendNumeric(nil, d)) }

// alignCoeffs sets ca and cb to the signed coefficients of two finite
// decimals scaled to a common scale, and returns that scale.
func alignCoeffs(a, b *apd.Decimal, ca, cb *apd.BigInt) (scale int32) {
	sa, sb := decScale(a), decScale(b)
	scale = max(sa, sb)
	if sa < scale {
		ca.Mul(&a.Coeff, pow10(int64(scale-sa)))
	} else {
		ca.Set(&a.Coeff)
	}
	if sb < scale {
		cb.Mul(&b.Coeff, pow10(int64(scale-sb)))
	} else {
		cb.Set(&b.Coeff)
	}
	if a.Negative {
		ca.Neg(ca)
	}
	if b.Negative {
		cb.Neg(cb)
	}
	return scale
}

// fromSigned returns the canonical decimal c × 10^-scale for a signed c.
func fromSigned(c *apd.BigInt, scale int32) *apd.Decimal {
	neg := c.Sign() < 0
	if neg {
		c.Neg(c)
	}
	return newDec(neg, c, scale)
}

// isNaN reports whether d is NaN.
func isNaN(d *apd.Decimal) bool { return d.Form == apd.NaN || d.Form == apd.NaNSignaling }

// infSign returns +1 or -1 for an infinite d and 0 otherwise.
func infSign(d *apd.Decimal) int {
	if d.Form != apd.Infinite {
		return 0
	}
	if d.Negative {
		return -1
	}
	return 1
}

// decSign returns the sign of a finite or infinite d.
func decSign(d *apd.Decimal) int {
	if s := infSign(d); s != 0 {
		return s
	}
	if d.Coeff.Sign() == 0 {
		return 0
	}
	if d.Negative {
		return -1
	}
	return 1
}

func infOf(sign int) *apd.Decimal {
	if sign < 0 {
		return decNegInf
	}
	return decPosInf
}

// NumericAdd returns a+b with the larger of the two scales.
func NumericAdd(a, b *apd.Decimal) (*apd.Decimal, error) {
	if a.Form != apd.Finite || b.Form != apd.Finite {
		if isNaN(a) || isNaN(b) {
			return decNaN, nil
		}
		ia, ib := infSign(a), infSign(b)
		switch {
		case ia != 0 && ib != 0:
			if ia != ib {
				return decNaN, nil
			}
			return a, nil
		case ia != 0:
			return a, nil
		default:
			return b, nil
		}
	}
	var ca, cb apd.BigInt
	scale := alignCoeffs(a, b, &ca, &cb)
	ca.Add(&ca, &cb)
	d := fromSigned(&ca, scale)
	return d, checkDecLimits(d)
}

// NumericNeg returns -a.
func NumericNeg(a *apd.Decimal) *apd.Decimal {
	switch {
	case isNaN(a):
		return a
	case a.Form == apd.Infinite:
		return infOf(-infSign(a))
	case a.Coeff.Sign() == 0:
		return a
	}
	d := &apd.Decimal{}
	d.Set(a)
	d.Negative = !a.Negative
	return d
}

// NumericSub returns a-b with the larger of the two scales.
func NumericSub(a, b *apd.Decimal) (*apd.Decimal, error) {
	if a.Form != apd.Finite || b.Form != apd.Finite {
		return NumericAdd(a, NumericNeg(b))
	}
	var ca, cb apd.BigInt
	scale := alignCoeffs(a, b, &ca, &cb)
	ca.Sub(&ca, &cb)
	d := fromSigned(&ca, scale)
	return d, checkDecLimits(d)
}

// NumericMul returns the exact product a×b, whose scale is the sum of the
// operands' scales (rounded to PostgreSQL's largest scale, 16383, beyond
// that).
func NumericMul(a, b *apd.Decimal) (*apd.Decimal, error) {
	if a.Form != apd.Finite || b.Form != apd.Finite {
		if isNaN(a) || isNaN(b) {
			return decNaN, nil
		}
		sa, sb := decSign(a), decSign(b)
		if sa == 0 || sb == 0 {
			return decNaN, nil // infinity times zero
		}
		return infOf(sa * sb), nil
	}
	c := new(apd.BigInt).Mul(&a.Coeff, &b.Coeff)
	d := newDec(a.Negative != b.Negative, c, decScale(a)+decScale(b))
	if decScale(d) > numericMaxDScale {
		// The exact product's scale does not fit; PostgreSQL rounds it.
		d = roundDec(d, numericMaxDScale)
	}
	return d, checkDecLimits(d)
}

// nbaseLead returns the weight (in base-10000 digits) and the value of the
// leading base-10000 digit of a finite decimal, as PostgreSQL's numeric
// stores it; zero has weight 0 and leading digit 0.
func nbaseLead(d *apd.Decimal) (weight int64, first int64) {
	if d.Coeff.Sign() == 0 {
		return 0, 0
	}
	nd := apd.NumDigits(&d.Coeff)
	k := nd - 1 + int64(d.Exponent) // decimal exponent of the leading digit
	weight = floorDiv(k, 4)
	g := k - 4*weight + 1 // digits in the leading base-10000 group (1..4)
	if nd <= g {
		first = d.Coeff.Int64()
		for range g - nd {
			first *= 10
		}
		return weight, first
	}
	q := new(apd.BigInt).Quo(&d.Coeff, pow10(nd-g))
	return weight, q.Int64()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// divScale returns the scale PostgreSQL gives a/b (select_div_scale): at
// least 16 significant digits, and no less than either operand's scale.
func divScale(a, b *apd.Decimal) int32 {
	w1, f1 := nbaseLead(a)
	w2, f2 := nbaseLead(b)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := numericMinSigDigits - qweight*4
	rscale = max(rscale, int64(decScale(a)), int64(decScale(b)), 0)
	rscale = min(rscale, numericMaxDisplayScal)
	return int32(rscale)
}

// NumericDiv returns a/b rounded (half away from zero) to PostgreSQL's
// division scale. b = 0 fails with 22012.
func NumericDiv(a, b *apd.Decimal) (*apd.Decimal, error) {
	if a.Form != apd.Finite || b.Form != apd.Finite {
		if isNaN(a) || isNaN(b) {
			return decNaN, nil
		}
		if ia := infSign(a); ia != 0 {
			if b.Form == apd.Infinite {
				return decNaN, nil
			}
			sb := decSign(b)
			if sb == 0 {
				return nil, errDivByZero
			}
			return infOf(ia * sb), nil
		}
		return &apd.Decimal{}, nil // finite / infinity
	}
	if b.Coeff.Sign() == 0 {
		return nil, errDivByZero
	}
	return divRound(a, b, divScale(a, b))
}

// divRound returns a/b rounded half away from zero to scale, for finite a
// and nonzero finite b.
func divRound(a, b *apd.Decimal, scale int32) (*apd.Decimal, error) {
	// a/b × 10^scale = A×10^-sa / (B×10^-sb) × 10^scale = A×10^(sb-sa+scale) / B.
	k := int64(decScale(b)) - int64(decScale(a)) + int64(scale)
	num, den := new(apd.BigInt), new(apd.BigInt)
	if k >= 0 {
		num.Mul(&a.Coeff, pow10(k))
		den.Set(&b.Coeff)
	} else {
		num.Set(&a.Coeff)
		den.Mul(&b.Coeff, pow10(-k))
	}
	q, r := new(apd.BigInt), new(apd.BigInt)
	q.QuoRem(num, den, r)
	r.Add(r, r)
	if r.Cmp(den) >= 0 {
		q.Add(q, apd.NewBigInt(1))
	}
	d := newDec(a.Negative != b.Negative, q, scale)
	return d, checkDecLimits(d)
}

// NumericMod returns a % b: the remainder of truncating division, with the
// sign of a and the larger of the two scales.
func NumericMod(a, b *apd.Decimal) (*apd.Decimal, error) {
	if a.Form != apd.Finite || b.Form != apd.Finite {
		if isNaN(a) || isNaN(b) {
			return decNaN, nil
		}
		if a.Form == apd.Infinite {
			if b.Form == apd.Finite && b.Coeff.Sign() == 0 {
				return nil, errDivByZero
			}
			return decNaN, nil
		}
		return a, nil // finite % infinity
	}
	if b.Coeff.Sign() == 0 {
		return nil, errDivByZero
	}
	var ca, cb apd.BigInt
	scale := alignCoeffs(a, b, &ca, &cb)
	ca.Rem(&ca, &cb)
	return fromSigned(&ca, scale), nil
}

// roundDec rounds a finite canonical decimal half away from zero to scale
// (which may be negative: -1 rounds to tens). The result's display scale is
// max(scale, 0).
func roundDec(d *apd.Decimal, scale int32) *apd.Decimal {
	cur := decScale(d)
	if scale >= cur {
		if scale == cur {
			return d
		}
		c := new(apd.BigInt).Mul(&d.Coeff, pow10(int64(scale-cur)))
		return newDec(d.Negative, c, scale)
	}
	drop := int64(cur - scale)
	if drop > apd.NumDigits(&d.Coeff) {
		return newDec(false, new(apd.BigInt), max(scale, 0))
	}
	div := pow10(drop)
	q, r := new(apd.BigInt), new(apd.BigInt)
	q.QuoRem(&d.Coeff, div, r)
	r.Add(r, r)
	if r.Cmp(div) >= 0 {
		q.Add(q, apd.NewBigInt(1))
	}
	if scale < 0 {
		q.Mul(q, pow10(int64(-scale)))
		scale = 0
	}
	return newDec(d.Negative, q, scale)
}

// NumericRound rounds d half away from zero to scale digits after the
// point (negative scales round to tens, hundreds...).
func NumericRound(d *apd.Decimal, scale int32) *apd.Decimal {
	if d.Form != apd.Finite {
		return d
	}
	return roundDec(canonical(d), scale)
}

// applyNumericTypmod rounds d to NUMERIC(precision, scale) and fails with
// 22003 "numeric field overflow" when it does not fit.
func applyNumericTypmod(d *apd.Decimal, t Type) (*apd.Decimal, error) {
	if t.Precision < 0 || isNaN(d) {
		return d, nil
	}
	if d.Form == apd.Infinite {
		return nil, errNumericFieldOvfl
	}
	r := roundDec(d, t.Scale)
	if r.Coeff.Sign() == 0 {
		return r, nil
	}
	intDigits := apd.NumDigits(&r.Coeff) + int64(r.Exponent)
	if intDigits > int64(t.Precision)-int64(t.Scale) {
		return nil, errNumericFieldOvfl
	}
	return r, nil
}

// minInt64Magnitude is -math.MinInt64, one more than math.MaxInt64.
var minInt64Magnitude = new(apd.BigInt).Add(apd.NewBigInt(math.MaxInt64), apd.NewBigInt(1))

// numericToInt rounds d half away from zero to an integer of kind k, then
// checks k's range, as PostgreSQL's numeric_int8 and numeric_int4 do: the
// range is asymmetric, so -9223372036854775808.4 is -9223372036854775808.
func numericToInt(d *apd.Decimal, k TypeID) (int64, error) {
	if isNaN(d) {
		return 0, errs.Newf(errs.FeatureNotSupported, "cannot convert NaN to %s", k.baseName())
	}
	if d.Form == apd.Infinite {
		return 0, errs.Newf(errs.FeatureNotSupported, "cannot convert infinity to %s", k.baseName())
	}
	r := roundDec(d, 0)
	if !r.Coeff.IsInt64() {
		// The one magnitude past MaxInt64 that fits is MinInt64's.
		if r.Negative && r.Coeff.Cmp(minInt64Magnitude) == 0 && k == Int8 {
			return math.MinInt64, nil
		}
		return 0, intRangeError(k)
	}
	n := r.Coeff.Int64()
	if r.Negative {
		n = -n
	}
	if !intFits(n, k) {
		return 0, intRangeError(k)
	}
	return n, nil
}

// intFits reports whether n is in the range of integer kind k.
func intFits(n int64, k TypeID) bool {
	switch k {
	case Int2:
		return n >= math.MinInt16 && n <= math.MaxInt16
	case Int4:
		return n >= math.MinInt32 && n <= math.MaxInt32
	}
	return true
}

// numericToFloat converts d to float8 (or float4 when bits is 32) as
// PostgreSQL does: through its text, failing when the value is outside the
// float type's range.
func numericToFloat(d *apd.Decimal, bits int) (float64, error) {
	switch {
	case isNaN(d):
		return float8NaN, nil
	case d.Form == apd.Infinite:
		return math.Inf(infSign(d)), nil
	}
	s := FormatNumeric(d)
	f, err := strconv.ParseFloat(s, bits)
	tname := Float8
	if bits == 32 {
		tname = Float4
	}
	if err != nil || math.IsInf(f, 0) || (f == 0 && d.Coeff.Sign() != 0) {
		return 0, errs.Newf(errs.NumericOutOfRange, "%s is out of range for type %s", quoteInput(s), tname.baseName())
	}
	return f, nil
}

// floatToNumeric converts a float to NUMERIC as PostgreSQL does: through
// its text with 15 (float8) or 6 (float4) significant digits.
func floatToNumeric(f float64, bits int) *apd.Decimal {
	switch {
	case math.IsNaN(f):
		return decNaN
	case math.IsInf(f, 1):
		return decPosInf
	case math.IsInf(f, -1):
		return decNegInf
	}
	digits := 15
	if bits == 32 {
		digits = 6
	}
	var buf [40]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', digits-1, bits)
	d, err := ParseNumeric(string(s))
	if err != nil {
		return decNaN // unreachable: finite floats always format as numbers
	}
	// %g drops trailing zeros; so does re-parsing a reduced mantissa.
	return reduceScale(d)
}

// reduceScale removes trailing fractional zeros from a finite d.
func reduceScale(d *apd.Decimal) *apd.Decimal {
	if d.Form != apd.Finite || d.Exponent == 0 {
		return d
	}
	c := new(apd.BigInt).Set(&d.Coeff)
	scale := decScale(d)
	ten := apd.NewBigInt(10)
	q, r := new(apd.BigInt), new(apd.BigInt)
	for scale > 0 && c.Sign() != 0 {
		q.QuoRem(c, ten, r)
		if r.Sign() != 0 {
			break
		}
		c.Set(q)
		scale--
	}
	if c.Sign() == 0 {
		scale = 0
	}
	return newDec(d.Negative, c, scale)
}
