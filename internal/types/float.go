package types

import (
	"math"
	"math/big"
	"strconv"

	"github.com/rockstream/rockstream/internal/errs"
)

// float8NaN is the NaN PostgreSQL's input functions and casts produce
// (get_float8_nan): quiet, positive, without payload; as a float4 it is
// get_float4_nan. Go's math.NaN has a payload bit set, which a binary
// client would see.
var float8NaN = math.Float64frombits(0x7ff8000000000000)

// AppendFloat appends PostgreSQL's text for a float (extra_float_digits =
// 1: the shortest text that reads back to the same value) to dst. bits is
// 64 for double precision and 32 for real. Like C's %g, the value prints in
// positional notation when its decimal exponent is in [-4, P) and in
// exponential notation otherwise, where P is 15 for double precision and 6
// for real.
func AppendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	var buf [32]byte
	e := shortestFloat(buf[:0], f, bits)
	// e is [-]d[.ddd]e±XX.
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	epos := 0
	for e[epos] != 'e' {
		epos++
	}
	exp := 0
	for _, c := range e[epos+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[epos+1] == '-' {
		exp = -exp
	}
	limit := 15
	if bits == 32 {
		limit = 6
	}
	if neg {
		dst = append(dst, '-')
	}
	if exp < -4 || exp >= limit {
		return append(dst, e...)
	}
	// Collect the significant digits without the point.
	var digs [24]byte
	nd := 0
	for _, c := range e[:epos] {
		if c != '.' {
			digs[nd] = c
			nd++
		}
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for i := -1; i > exp; i-- {
			dst = append(dst, '0')
		}
		return append(dst, digs[:nd]...)
	}
	if nd <= exp+1 {
		dst = append(dst, digs[:nd]...)
		for i := nd; i <= exp; i++ {
			dst = append(dst, '0')
		}
		return dst
	}
	dst = append(dst, digs[:exp+1]...)
	dst = append(dst, '.')
	return append(dst, digs[exp+1:nd]...)
}

// shortestFloat appends the shortest decimal, in %e form, that reads back
// as f and lies strictly between f's rounding boundaries. PostgreSQL's
// shortest output excludes a decimal exactly halfway to a neighbouring
// float, which a reader rounding halves to even would still map to f, so
// in those rare cases its text is one digit longer than strconv's.
func shortestFloat(dst []byte, f float64, bits int) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, bits)
	if !mayBeHalfway(dst[start:], f, bits) || !onHalfway(dst[start:], f, bits) {
		return dst
	}
	digits := 0
	for _, c := range dst[start:] {
		if c == 'e' {
			break
		}
		if isDigit(c) {
			digits++
		}
	}
	maxDigits := 17
	if bits == 32 {
		maxDigits = 9
	}
	for p := digits + 1; p <= maxDigits; p++ {
		dst = strconv.AppendFloat(dst[:start], f, 'e', p-1, bits)
		if parsed, err := strconv.ParseFloat(string(dst[start:]), bits); err == nil && parsed == f &&
			!onHalfway(dst[start:], f, bits) {
			break
		}
	}
	return dst
}

// mayBeHalfway is a quick test that rules out most decimals from lying
// exactly halfway between two floats: such a decimal is a dyadic rational,
// so either it has a fraction ending in 5, or it is an integer and f is
// so large that its neighbours are at least 2 apart.
func mayBeHalfway(e []byte, f float64, bits int) bool {
	epos := 0
	for e[epos] != 'e' {
		epos++
	}
	exp, _ := strconv.Atoi(string(e[epos+1:]))
	digits := 0
	for _, c := range e[:epos] {
		if isDigit(c) {
			digits++
		}
	}
	if digits-1 > exp { // has a fractional part
		return e[epos-1] == '5'
	}
	limit := float64(1 << 53)
	if bits == 32 {
		limit = 1 << 24
	}
	return math.Abs(f) >= limit
}

// onHalfway reports whether the decimal text e equals the exact midpoint
// between f and one of its neighbouring floats.
func onHalfway(e []byte, f float64, bits int) bool {
	d, ok := new(big.Rat).SetString(string(e))
	if !ok {
		return false
	}
	var lo, hi float64
	if bits == 32 {
		lo = float64(math.Nextafter32(float32(f), float32(math.Inf(-1))))
		hi = float64(math.Nextafter32(float32(f), float32(math.Inf(1))))
	} else {
		lo = math.Nextafter(f, math.Inf(-1))
		hi = math.Nextafter(f, math.Inf(1))
	}
	x := new(big.Rat).SetFloat64(f)
	for _, nb := range []float64{lo, hi} {
		if math.IsInf(nb, 0) {
			continue
		}
		mid := new(big.Rat).SetFloat64(nb)
		mid.Add(mid, x)
		mid.Quo(mid, big.NewRat(2, 1))
		if mid.Cmp(d) == 0 {
			return true
		}
	}
	return false
}

// scanFloat recognizes the longest prefix of s that C's strtod accepts
// (after PostgreSQL has skipped leading whitespace) and returns its length
// and a form of it that strconv.ParseFloat accepts. special reports
// Infinity and NaN spellings, with their value in val.
func scanFloat(s string) (n int, goSyntax string, special bool, val float64, nonzero bool) {
	p := 0
	neg := false
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		neg = s[p] == '-'
		p++
	}
	rest := s[p:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return p + 8, "", true, math.Inf(signOf(neg)), true
	case hasPrefixFold(rest, "inf"):
		return p + 3, "", true, math.Inf(signOf(neg)), true
	case hasPrefixFold(rest, "nan"):
		q := p + 3
		// glibc also accepts nan(chars).
		if q < len(s) && s[q] == '(' {
			r := q + 1
			for r < len(s) && (isAlnum(s[r]) || s[r] == '_') {
				r++
			}
			if r < len(s) && s[r] == ')' {
				q = r + 1
			}
		}
		return q, "", true, math.Copysign(float8NaN, float64(signOf(neg))), true
	}
	if len(rest) > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		q := p + 2
		digits := 0
		for q < len(s) && isHexDigit(s[q]) {
			nonzero = nonzero || s[q] != '0'
			q++
			digits++
		}
		if q < len(s) && s[q] == '.' {
			save := q
			q++
			for q < len(s) && isHexDigit(s[q]) {
				nonzero = nonzero || s[q] != '0'
				q++
				digits++
			}
			if digits == 0 {
				q = save
			}
		}
		if digits > 0 {
			mant := s[:q]
			exp := "p0"
			if q < len(s) && (s[q] == 'p' || s[q] == 'P') {
				r := q + 1
				if r < len(s) && (s[r] == '+' || s[r] == '-') {
					r++
				}
				es := r
				for r < len(s) && isDigit(s[r]) {
					r++
				}
				if r > es {
					exp = s[q:r]
					q = r
				}
			}
			return q, mant + exp, false, 0, nonzero
		}
		// "0x" without hex digits: strtod reads just the "0".
		return p + 1, s[:p+1], false, 0, false
	}
	q := p
	digits := 0
	for q < len(s) && isDigit(s[q]) {
		nonzero = nonzero || s[q] != '0'
		q++
		digits++
	}
	if q < len(s) && s[q] == '.' {
		q++
		for q < len(s) && isDigit(s[q]) {
			nonzero = nonzero || s[q] != '0'
			q++
			digits++
		}
	}
	if digits == 0 {
		return 0, "", false, 0, false
	}
	if q < len(s) && (s[q] == 'e' || s[q] == 'E') {
		r := q + 1
		if r < len(s) && (s[r] == '+' || s[r] == '-') {
			r++
		}
		es := r
		for r < len(s) && isDigit(s[r]) {
			r++
		}
		if r > es {
			q = r
		}
	}
	return q, s[:q], false, 0, nonzero
}

func signOf(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

// ParseFloat8 parses s as float8in does.
func ParseFloat8(s string) (float64, error) { return parseFloat(s, 64) }

// ParseFloat4 parses s as float4in does.
func ParseFloat4(s string) (float32, error) {
	f, err := parseFloat(s, 32)
	return float32(f), err
}

func parseFloat(s string, bits int) (float64, error) {
	id := Float8
	if bits == 32 {
		id = Float4
	}
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	body := s[i:]
	n, syn, special, val, nonzero := scanFloat(body)
	if n == 0 {
		return 0, invalidSyntax(id, s)
	}
	rest := body[n:]
	for j := 0; j < len(rest); j++ {
		if !isSpace(rest[j]) {
			return 0, invalidSyntax(id, s)
		}
	}
	if special {
		return val, nil
	}
	f, err := strconv.ParseFloat(syn, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, invalidSyntax(id, s)
		}
	}
	if math.IsInf(f, 0) || (f == 0 && nonzero) {
		quoted := body[:n]
		if bits == 32 {
			quoted = s
		}
		return 0, errs.Newf(errs.NumericOutOfRange, "%s is out of range for type %s", quoteInput(quoted), id.baseName())
	}
	return f, nil
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool    { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool    { return isDigit(c) || isAlpha(c) }
func isHexDigit(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// isSpace matches C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// trimSpaceBounds returns the bounds of s without leading and trailing
// isspace characters.
func trimSpaceBounds(s string) (int, int) {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return i, j
}

// equalFoldASCII reports whether s equals the lower-case ASCII word w,
// ignoring ASCII case.
func equalFoldASCII(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// hasPrefixFold reports whether s begins with the lower-case ASCII word w,
// ignoring ASCII case.
func hasPrefixFold(s, w string) bool { return len(s) >= len(w) && equalFoldASCII(s[:len(w)], w) }
