package types

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
)

// to_char(number, template): PostgreSQL 15's numeric templates (9, 0, .,
// D, ',', G, FM, S, MI, PL, SG, PR, L, V, EEEE, RN, TH), applied as
// formatting.c's NUM_processor applies them, with the C locale's symbols
// (decimal point '.', group separator ',', currency symbol ' ').
//
// The output is built as PostgreSQL builds it, in a byte buffer that a
// NUL ends: a few corner cases (NaN in a template with a decimal point)
// write one, and the text stops there, as it does in PostgreSQL.

type numKey uint8

const (
	numComma numKey = iota + 1
	numDec
	num0
	num9
	numB
	numC
	numD
	numE
	numFM
	numG
	numL
	numMI
	numPL
	numPR
	numRN
	numrn
	numSG
	numSP
	numS
	numTH
	numth
	numV
)

var numKeywords = []struct {
	name string
	key  numKey
}{
	{",", numComma}, {".", numDec}, {"0", num0}, {"9", num9}, {"B", numB}, {"C", numC}, {"D", numD},
	{"EEEE", numE}, {"FM", numFM}, {"G", numG}, {"L", numL}, {"MI", numMI}, {"PL", numPL}, {"PR", numPR},
	{"RN", numRN}, {"SG", numSG}, {"SP", numSP}, {"S", numS}, {"TH", numTH}, {"V", numV},
	{"b", numB}, {"c", numC}, {"d", numD}, {"eeee", numE}, {"fm", numFM}, {"g", numG}, {"l", numL},
	{"mi", numMI}, {"pl", numPL}, {"pr", numPR}, {"rn", numrn}, {"sg", numSG}, {"sp", numSP}, {"s", numS},
	{"th", numth}, {"v", numV},
}

// numNode is one element of a parsed numeric template.
type numNode struct {
	key numKey // 0 for a literal
	ch  string
}

// Template flags (NUMDesc.flag).
const (
	nfDecimal = 1 << iota
	nfLDecimal
	nfZero
	nfBlank
	nfFillMode
	nfLSign
	nfBracket
	nfMinus
	nfPlus
	nfRoman
	nfMulti
	nfPlusPost
	nfMinusPost
	nfEEEE
)

const (
	lsignNone = iota
	lsignPre
	lsignPost
)

// numDesc summarizes a numeric template (NUMDesc).
type numDesc struct {
	pre, post, lsign, flag, preLsignNum, multi, zeroStart, zeroEnd int
}

func (d *numDesc) is(f int) bool { return d.flag&f != 0 }

func syntaxErr(msg string) error { return errs.New(errs.SyntaxError, msg) }

// parseNumTemplate parses a numeric template and prepares its summary.
func parseNumTemplate(f string) ([]numNode, numDesc, error) {
	var nodes []numNode
	var d numDesc
	for len(f) > 0 {
		var best numKey
		bestLen := 0
		for _, k := range numKeywords {
			if len(k.name) > bestLen && strings.HasPrefix(f, k.name) {
				best, bestLen = k.key, len(k.name)
			}
		}
		if best != 0 {
			if err := d.prepare(best); err != nil {
				return nil, d, err
			}
			nodes = append(nodes, numNode{key: best})
			f = f[bestLen:]
			continue
		}
		if f[0] == '"' {
			f = f[1:]
			for len(f) > 0 {
				if f[0] == '"' {
					f = f[1:]
					break
				}
				if f[0] == '\\' && len(f) > 1 {
					f = f[1:]
				}
				_, w := utf8.DecodeRuneInString(f)
				nodes = append(nodes, numNode{ch: f[:w]})
				f = f[w:]
			}
			continue
		}
		if f[0] == '\\' && len(f) > 1 && f[1] == '"' {
			f = f[1:]
		}
		_, w := utf8.DecodeRuneInString(f)
		nodes = append(nodes, numNode{ch: f[:w]})
		f = f[w:]
	}
	return nodes, d, nil
}

// prepare folds one keyword into the template summary (NUMDesc_prepare).
func (d *numDesc) prepare(k numKey) error {
	if d.is(nfEEEE) && k != numE {
		return syntaxErr(`"EEEE" must be the last pattern used`)
	}
	switch k {
	case num9:
		if d.is(nfBracket) {
			return syntaxErr(`"9" must be ahead of "PR"`)
		}
		switch {
		case d.is(nfMulti):
			d.multi++
		case d.is(nfDecimal):
			d.post++
		default:
			d.pre++
		}
	case num0:
		if d.is(nfBracket) {
			return syntaxErr(`"0" must be ahead of "PR"`)
		}
		if !d.is(nfZero) && !d.is(nfDecimal) {
			d.flag |= nfZero
			d.zeroStart = d.pre + 1
		}
		if !d.is(nfDecimal) {
			d.pre++
		} else {
			d.post++
		}
		d.zeroEnd = d.pre + d.post
	case numB:
		if d.pre == 0 && d.post == 0 && !d.is(nfZero) {
			d.flag |= nfBlank
		}
	case numD, numDec:
		if k == numD {
			d.flag |= nfLDecimal
		}
		if d.is(nfDecimal) {
			return syntaxErr("multiple decimal points")
		}
		if d.is(nfMulti) {
			return syntaxErr(`cannot use "V" and decimal point together`)
		}
		d.flag |= nfDecimal
	case numFM:
		d.flag |= nfFillMode
	case numS:
		if d.is(nfLSign) {
			return syntaxErr(`cannot use "S" twice`)
		}
		if d.is(nfPlus) || d.is(nfMinus) || d.is(nfBracket) {
			return syntaxErr(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		}
		if !d.is(nfDecimal) {
			d.lsign = lsignPre
			d.preLsignNum = d.pre
			d.flag |= nfLSign
		} else if d.lsign == lsignNone {
			d.lsign = lsignPost
			d.flag |= nfLSign
		}
	case numMI:
		if d.is(nfLSign) {
			return syntaxErr(`cannot use "S" and "MI" together`)
		}
		d.flag |= nfMinus
		if d.is(nfDecimal) {
			d.flag |= nfMinusPost
		}
	case numPL:
		if d.is(nfLSign) {
			return syntaxErr(`cannot use "S" and "PL" together`)
		}
		d.flag |= nfPlus
		if d.is(nfDecimal) {
			d.flag |= nfPlusPost
		}
	case numSG:
		if d.is(nfLSign) {
			return syntaxErr(`cannot use "S" and "SG" together`)
		}
		d.flag |= nfMinus | nfPlus
	case numPR:
		if d.is(nfLSign) || d.is(nfPlus) || d.is(nfMinus) {
			return syntaxErr(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		d.flag |= nfBracket
	case numRN, numrn:
		d.flag |= nfRoman
	case numV:
		if d.is(nfDecimal) {
			return syntaxErr(`cannot use "V" and decimal point together`)
		}
		d.flag |= nfMulti
	case numE:
		if d.is(nfEEEE) {
			return syntaxErr(`cannot use "EEEE" twice`)
		}
		if d.is(nfBlank) || d.is(nfFillMode) || d.is(nfLSign) || d.is(nfBracket) || d.is(nfMinus) ||
			d.is(nfPlus) || d.is(nfRoman) || d.is(nfMulti) {
			return syntaxErr(`"EEEE" is incompatible with other formats`)
		}
		d.flag |= nfEEEE
	}
	return nil
}

func init() {
	addFunc("to_char", Text, numToChar(Numeric), Numeric, Text)
	addFunc("to_char", Text, numToChar(Float8), Float8, Text)
	addFunc("to_char", Text, numToChar(Float4), Float4, Text)
	addFunc("to_char", Text, numToChar(Int4), Int4, Text)
	addFunc("to_char", Text, numToChar(Int8), Int8, Text)
}

// romanNumeral writes n in Roman numerals, or 15 '#' when n is outside
// 1..3999.
func romanNumeral(n int64) string {
	if n < 1 || n > 3999 {
		return strings.Repeat("#", 15)
	}
	digits := []struct {
		v int64
		s string
	}{{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"},
		{10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}}
	var b strings.Builder
	for _, d := range digits {
		for n >= d.v {
			b.WriteString(d.s)
			n -= d.v
		}
	}
	return b.String()
}

// overflowFill is the text of a number that does not fit the template:
// '#' for every digit position, with the decimal point.
func overflowFill(d *numDesc) string {
	b := []byte(strings.Repeat("#", d.pre+d.post+1))
	b[d.pre] = '.'
	return string(b)
}

// cExpFormat formats f as C's printf("%+.*e", prec, f) does.
func cExpFormat(f float64, prec int) string {
	s := strconv.FormatFloat(f, 'e', prec, 64)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// numericSci formats a finite decimal as numeric_out_sci does: one digit
// before the point, scale digits after it, and a signed exponent of at
// least two digits.
func numericSci(d *apd.Decimal, scale int) string {
	exp := int64(0)
	if d.Coeff.Sign() != 0 {
		exp = decDigitsBefore(d) - 1
	}
	p := new(apd.Decimal)
	p.Coeff.Set(&d.Coeff)
	p.Exponent = d.Exponent - int32(exp)
	p.Negative = d.Negative
	r := roundDec(canonical(p), int32(scale))
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	e := strconv.FormatInt(exp, 10)
	if len(e) < 2 {
		e = "0" + e
	}
	return FormatNumeric(r) + "e" + sign + e
}

func numToChar(t TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		v, f := a[0], a[1].s
		if f == "" {
			return MakeText(""), nil
		}
		nodes, d, err := parseNumTemplate(f)
		if err != nil {
			return Null, err
		}
		numstr, sign, preSpaces, err := numberText(v, t, &d)
		if err != nil {
			return Null, err
		}
		s, err := numProcess(nodes, &d, numstr, sign, preSpaces)
		if err != nil {
			return Null, err
		}
		return MakeText(s), nil
	}
}

// numberText is the first half of PostgreSQL's *_to_char: the number's
// digits rounded to the template, its sign, and the spaces to pad it
// with.
func numberText(v Value, t TypeID, d *numDesc) (numstr string, sign byte, preSpaces int, err error) {
	sign = '+'
	switch {
	case d.is(nfRoman):
		var n int64
		switch t {
		case Numeric:
			x := v.dec()
			if x.Form != apd.Finite {
				return "", 0, 0, errs.Newf(errs.FeatureNotSupported, "cannot convert %s to integer", map[bool]string{true: "NaN", false: "infinity"}[isNaN(x)])
			}
			if n, err = numericToInt(x, Int4); err != nil {
				return "", 0, 0, err
			}
		case Float4, Float8:
			r := math.RoundToEven(v.Float())
			if r >= -2147483648 && r <= 2147483647 {
				n = int64(r)
			} else {
				n = math.MinInt32
			}
		default:
			n = v.n
			if !intFits(n, Int4) {
				return "", 0, 0, errInt4Range
			}
		}
		return romanNumeral(n), sign, 0, nil
	case d.is(nfEEEE):
		var s string
		switch t {
		case Numeric:
			x := v.dec()
			if x.Form != apd.Finite {
				b := []byte(strings.Repeat("#", d.pre+d.post+6))
				b[0] = ' '
				b[d.pre+1] = '.'
				return string(b), sign, 0, nil
			}
			s = numericSci(x, d.post)
			if s[0] != '-' {
				s = " " + s
			}
		default:
			f := float64(v.n)
			if t == Float4 || t == Float8 {
				f = v.Float()
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				b := []byte(strings.Repeat("#", d.pre+d.post+6))
				b[0] = ' '
				b[d.pre+1] = '.'
				return string(b), sign, 0, nil
			}
			s = cExpFormat(f, d.post)
			if s[0] == '+' {
				s = " " + s[1:]
			}
		}
		return s, sign, 0, nil
	}
	var org string
	switch t {
	case Numeric:
		x := v.dec()
		if d.is(nfMulti) {
			x, _ = NumericMul(x, roundDec(apd.New(1, int32(d.multi)), 0))
			d.pre += d.multi
		}
		if x.Form == apd.Finite {
			org = FormatNumeric(roundDec(canonical(x), int32(d.post)))
		} else {
			org = FormatNumeric(x) // NaN and the infinities are written as words
		}
	case Float4, Float8:
		f := v.Float()
		digits := 15
		if t == Float4 {
			digits = 6
		}
		if d.is(nfMulti) {
			f *= math.Pow(10, float64(d.multi))
			d.pre += d.multi
		}
		// PostgreSQL's printf writes NaN and the infinities as words.
		if math.IsNaN(f) {
			org = "NaN"
			break
		}
		if math.IsInf(f, 0) {
			org = map[bool]string{true: "-Infinity", false: "Infinity"}[f < 0]
			break
		}
		pre := len(strconv.FormatFloat(math.Abs(f), 'f', 0, 64))
		switch {
		case pre >= digits:
			d.post = 0
		case pre+d.post > digits:
			d.post = digits - pre
		}
		org = strconv.FormatFloat(f, 'f', d.post, 64)
	default:
		n := v.n
		if d.is(nfMulti) {
			m := int64(math.Pow(10, float64(d.multi)))
			if t == Int4 {
				// PostgreSQL multiplies with int4mul, which checks the
				// range.
				p, ok := mulInt64(n, m)
				if !ok || p != int64(int32(p)) {
					return "", 0, 0, errInt4Range
				}
				n = p
			} else {
				var ok bool
				if n, ok = mulInt64(n, m); !ok {
					return "", 0, 0, errInt8Range
				}
			}
			d.pre += d.multi
		}
		org = strconv.FormatInt(n, 10)
		if org[0] == '-' {
			sign = '-'
			org = org[1:]
		}
		preLen := len(org)
		if d.post > 0 {
			org += "." + strings.Repeat("0", d.post)
		}
		if preLen < d.pre {
			preSpaces = d.pre - preLen
		} else if preLen > d.pre {
			org = overflowFill(d)
		}
		return org, sign, preSpaces, nil
	}
	if org[0] == '-' {
		sign = '-'
		org = org[1:]
	}
	preLen := len(org)
	if i := strings.IndexByte(org, '.'); i >= 0 {
		preLen = i
	}
	if preLen < d.pre {
		preSpaces = d.pre - preLen
	} else if preLen > d.pre {
		org = overflowFill(d)
	}
	return org, sign, preSpaces, nil
}

// numProc is the state of NUM_processor while it writes.
type numProc struct {
	d            *numDesc
	out          []byte
	number       string
	p            int // position in number
	sign         byte
	signWrote    bool
	preSpaces    int
	numCount     int
	numCurr      int
	numIn        bool
	lastRelevant int // index into number, or -1
}

func (np *numProc) cur() byte {
	if np.p < len(np.number) {
		return np.number[np.p]
	}
	return 0
}

// predecSpace is IS_PREDEC_SPACE: a leading "0" before the point of a
// template without 0s.
func (np *numProc) predecSpace() bool {
	return !np.d.is(nfZero) && np.p == 0 && len(np.number) > 0 && np.number[0] == '0' && np.d.post != 0
}

// lastRelevantDec returns the index of the last non-zero digit after the
// decimal point (or of the point itself), -1 without a point.
func lastRelevantDec(num string) int {
	i := strings.IndexByte(num, '.')
	if i < 0 {
		return -1
	}
	r := i
	for k := i + 1; k < len(num); k++ {
		if num[k] != '0' {
			r = k
		}
	}
	return r
}

func (np *numProc) lastIsDot() bool {
	return np.lastRelevant >= 0 && np.lastRelevant < len(np.number) && np.number[np.lastRelevant] == '.'
}

// numProcess writes the number by the template (NUM_processor, to_char
// direction).
func numProcess(nodes []numNode, d *numDesc, number string, sign byte, preSpaces int) (string, error) {
	np := &numProc{d: d, number: number, lastRelevant: -1}
	if d.zeroStart > 0 {
		d.zeroStart--
	}
	if d.is(nfEEEE) {
		return number, nil
	}
	if d.is(nfRoman) {
		fm := d.is(nfFillMode)
		d.lsign, d.preLsignNum, d.post, d.pre = 0, 0, 0, 0
		preSpaces = 0
		d.flag = nfRoman
		if fm {
			d.flag |= nfFillMode
		}
	}
	np.sign = sign
	if d.is(nfPlus) || d.is(nfMinus) {
		np.signWrote = !(d.is(nfPlus) && !d.is(nfMinus))
	} else {
		if np.sign != '-' && d.is(nfFillMode) {
			d.flag &^= nfBracket
		}
		np.signWrote = np.sign == '+' && d.is(nfFillMode) && !d.is(nfLSign)
		if d.lsign == lsignPre && d.pre == d.preLsignNum {
			d.lsign = lsignPost
		}
	}
	np.numCount = d.post + d.pre - 1
	np.preSpaces = preSpaces
	if d.is(nfFillMode) && d.is(nfDecimal) {
		np.lastRelevant = lastRelevantDec(number)
		if np.lastRelevant >= 0 && d.zeroEnd > np.preSpaces {
			lastZero := min(len(number)-1, d.zeroEnd-np.preSpaces)
			if np.lastRelevant < lastZero {
				np.lastRelevant = lastZero
			}
		}
	}
	if !np.signWrote && np.preSpaces == 0 {
		np.numCount++
	}
	for _, n := range nodes {
		if n.key == 0 {
			np.out = append(np.out, n.ch...)
			continue
		}
		switch n.key {
		case num9, num0, numDec, numD:
			np.numPart(n.key)
		case numComma, numG:
			if !np.numIn {
				if !d.is(nfFillMode) {
					np.out = append(np.out, ' ')
				}
			} else {
				np.out = append(np.out, ',')
			}
		case numL:
			np.out = append(np.out, ' ')
		case numRN, numrn:
			s := np.number[np.p:]
			if n.key == numrn {
				s = strings.ToLower(s)
			}
			if !d.is(nfFillMode) && len(s) < 15 {
				s = strings.Repeat(" ", 15-len(s)) + s
			}
			np.out = append(np.out, s...)
		case numTH, numth:
			if d.is(nfRoman) || strings.HasPrefix(np.number, "#") || np.sign == '-' || d.is(nfDecimal) {
				continue
			}
			if np.number == "" || !isDigit(np.number[len(np.number)-1]) {
				return "", errs.Newf(errs.InvalidTextRep, "%q is not a number", np.number)
			}
			th := ordinal(np.number, n.key == numTH)
			np.out = append(np.out, th[len(np.number):]...)
		case numMI:
			switch {
			case np.sign == '-':
				np.out = append(np.out, '-')
			case !d.is(nfFillMode):
				np.out = append(np.out, ' ')
			}
		case numPL:
			switch {
			case np.sign == '+':
				np.out = append(np.out, '+')
			case !d.is(nfFillMode):
				np.out = append(np.out, ' ')
			}
		case numSG:
			np.out = append(np.out, np.sign)
		}
	}
	out := np.out
	if i := strings.IndexByte(string(out), 0); i >= 0 {
		out = out[:i]
	}
	return string(out), nil
}

// numPart writes one digit position, or the decimal point, with the sign
// and brackets around the digits (NUM_numpart_to_char).
func (np *numProc) numPart(k numKey) {
	d := np.d
	if d.is(nfRoman) {
		return
	}
	np.numIn = false
	if !np.signWrote &&
		(np.numCurr >= np.preSpaces || (d.is(nfZero) && d.zeroStart == np.numCurr)) &&
		(!np.predecSpace() || np.lastIsDot()) {
		switch {
		case d.is(nfLSign):
			if d.lsign == lsignPre {
				np.out = append(np.out, map[bool]byte{true: '-', false: '+'}[np.sign == '-'])
				np.signWrote = true
			}
		case d.is(nfBracket):
			np.out = append(np.out, map[bool]byte{true: ' ', false: '<'}[np.sign == '+'])
			np.signWrote = true
		case np.sign == '+':
			if !d.is(nfFillMode) {
				np.out = append(np.out, ' ')
			}
			np.signWrote = true
		case np.sign == '-':
			np.out = append(np.out, '-')
			np.signWrote = true
		}
	}
	switch {
	case np.numCurr < np.preSpaces && (d.zeroStart > np.numCurr || !d.is(nfZero)):
		if !d.is(nfFillMode) {
			np.out = append(np.out, ' ')
		}
	case d.is(nfZero) && np.numCurr < np.preSpaces && d.zeroStart <= np.numCurr:
		np.out = append(np.out, '0')
		np.numIn = true
	default:
		if np.cur() == '.' {
			if !np.lastIsDot() || d.is(nfFillMode) {
				np.out = append(np.out, '.')
			}
		} else {
			switch {
			case np.lastRelevant >= 0 && np.p > np.lastRelevant && k != num0:
			case np.predecSpace():
				if !d.is(nfFillMode) {
					np.out = append(np.out, ' ')
				} else if np.lastIsDot() {
					np.out = append(np.out, '0')
				}
			default:
				np.out = append(np.out, np.cur())
				np.numIn = true
			}
		}
		if np.p < len(np.number) {
			np.p++
		}
	}
	end := np.numCount
	if np.preSpaces > 0 {
		end++
	}
	if d.is(nfDecimal) {
		end++
	}
	if np.lastRelevant >= 0 && np.lastRelevant == np.p {
		end = np.numCurr
	}
	if np.numCurr+1 == end {
		switch {
		case np.signWrote && d.is(nfBracket):
			np.out = append(np.out, map[bool]byte{true: ' ', false: '>'}[np.sign == '+'])
		case d.is(nfLSign) && d.lsign == lsignPost:
			np.out = append(np.out, map[bool]byte{true: '-', false: '+'}[np.sign == '-'])
		}
	}
	np.numCurr++
}
