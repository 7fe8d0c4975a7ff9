package types

import (
	"math"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// Parse converts text to a value of type t, as PostgreSQL's input function
// for t does ('12' to int4, '2026-01-02' to date, 't' to bool, ...), with
// PostgreSQL's errors (22P02, 22003, 22007, 22008).
//
// Type modifiers apply as the input function applies them: NUMERIC(p,s)
// rounds (or fails with 22003), TIMESTAMP(p) and INTERVAL(p) round, and
// VARCHAR(n) rejects text longer than n characters unless the excess is
// spaces (22001), as INSERT of a literal does. An explicit cast of a
// literal ('abcd'::varchar(3)) truncates instead: parse it as Of(Varchar)
// and Cast the result explicitly. Unknown and Text give the text itself.
func Parse(t Type, s string) (Value, error) { return ParseZone(t, s, UTCZone) }

// ParseZone is Parse with timestamptz text that has no offset read as a
// wall-clock time of the session time zone z.
func ParseZone(t Type, s string, z Zone) (Value, error) {
	if t.ID.IsArray() {
		return parseArray(t, s, z)
	}
	if _, ok := oidTypeInfo[t.ID]; ok {
		return parseCatalog(t, s)
	}
	switch t.ID {
	case Unknown, Text:
		return MakeText(s), nil
	case Varchar:
		return applyVarcharLength(s, t, false)
	case Bool:
		b, err := ParseBool(s)
		if err != nil {
			return Null, err
		}
		return MakeBool(b), nil
	case Int2, Int4, Int8:
		n, err := ParseInt(s, t.ID)
		if err != nil {
			return Null, err
		}
		return Value{kind: t.ID, n: n}, nil
	case Numeric:
		d, err := ParseNumeric(s)
		if err != nil {
			return Null, err
		}
		if d, err = applyNumericTypmod(d, t); err != nil {
			return Null, err
		}
		return MakeNumeric(d), nil
	case Float4:
		f, err := ParseFloat4(s)
		if err != nil {
			return Null, err
		}
		return MakeFloat4(f), nil
	case Float8:
		f, err := ParseFloat8(s)
		if err != nil {
			return Null, err
		}
		return MakeFloat8(f), nil
	case Bytea:
		b, err := ParseBytea(s)
		if err != nil {
			return Null, err
		}
		return Value{kind: Bytea, s: b}, nil
	case Date:
		d, err := ParseDate(s)
		if err != nil {
			return Null, err
		}
		return MakeDate(d), nil
	case Time:
		tod, err := ParseTime(s)
		if err != nil {
			return Null, err
		}
		return MakeTime(roundTimePrecision(tod, t.Precision)), nil
	case TimeTZ:
		tod, zone, err := ParseTimeTZ(s, z)
		if err != nil {
			return Null, err
		}
		return MakeTimeTZ(roundTimePrecision(tod, t.Precision), zone), nil
	case Timestamp, TimestampTZ:
		ts, err := parseTimestampZone(t.ID, s, z)
		if err != nil {
			return Null, err
		}
		if ts, err = roundTimestampPrecision(ts, t.Precision); err != nil {
			return Null, err
		}
		return Value{kind: t.ID, n: ts}, nil
	case Json:
		return parseJSON(s)
	case Jsonb:
		j, err := ParseJSONB(s)
		if err != nil {
			return Null, err
		}
		return MakeJSONB(j), nil
	case Interval:
		iv, err := parseInterval(s, t.Fields)
		if err != nil {
			return Null, err
		}
		return MakeInterval(applyIntervalTypmod(iv, t)), nil
	}
	return Null, errs.Newf(errs.FeatureNotSupported, "type %s has no input function", t)
}

// ParseInt parses an integer of kind k (Int2, Int4 or Int8) as int2in,
// int4in and int8in do: optional surrounding whitespace, an optional sign
// and decimal digits.
func ParseInt(s string, k TypeID) (int64, error) {
	i, j := trimSpaceBounds(s)
	p := i
	neg := false
	if p < j && (s[p] == '+' || s[p] == '-') {
		neg = s[p] == '-'
		p++
	}
	if p == j {
		return 0, invalidSyntax(k, s)
	}
	var u uint64
	overflow := false
	for ; p < j; p++ {
		c := s[p]
		if !isDigit(c) {
			return 0, invalidSyntax(k, s)
		}
		if u > (math.MaxUint64-uint64(c-'0'))/10 {
			overflow = true
			continue
		}
		u = u*10 + uint64(c-'0')
	}
	var n int64
	switch {
	case overflow:
	case neg && u <= 1<<63:
		n = int64(-u)
	case !neg && u <= math.MaxInt64:
		n = int64(u)
	default:
		overflow = true
	}
	if overflow || !intFits(n, k) {
		return 0, errs.Newf(errs.NumericOutOfRange, "value %s is out of range for type %s", quoteInput(s), k.baseName())
	}
	return n, nil
}

// ParseBool parses a boolean as boolin does: t, true, y, yes, on, 1 and
// f, false, n, no, off, 0 (any unique prefix of the words, ignoring case
// and surrounding whitespace).
func ParseBool(s string) (bool, error) {
	i, j := trimSpaceBounds(s)
	w := s[i:j]
	if len(w) > 0 {
		prefixOf := func(word string) bool { return len(w) <= len(word) && equalFoldASCII(w, word[:len(w)]) }
		switch w[0] | 0x20 {
		case 't':
			if prefixOf("true") {
				return true, nil
			}
		case 'f':
			if prefixOf("false") {
				return false, nil
			}
		case 'y':
			if prefixOf("yes") {
				return true, nil
			}
		case 'n':
			if prefixOf("no") {
				return false, nil
			}
		case 'o':
			// "o" alone is ambiguous.
			if len(w) >= 2 && prefixOf("on") {
				return true, nil
			}
			if len(w) >= 2 && prefixOf("off") {
				return false, nil
			}
		case '1':
			if len(w) == 1 {
				return true, nil
			}
		case '0':
			if len(w) == 1 {
				return false, nil
			}
		}
	}
	return false, invalidSyntax(Bool, s)
}

// ParseBytea parses bytea input: the hex format (\x followed by pairs of
// hex digits, with whitespace allowed between pairs) or the escape format
// (\\ for a backslash, \ooo for an octal byte, anything else literally).
func ParseBytea(s string) (string, error) {
	if len(s) >= 2 && s[0] == '\\' && s[1] == 'x' {
		out := make([]byte, 0, (len(s)-2)/2)
		for p := 2; p < len(s); {
			c := s[p]
			if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
				p++
				continue
			}
			hi, ok := hexVal(c)
			if !ok {
				return "", errs.Newf(errs.InvalidParameterValue, "invalid hexadecimal digit: %s", quoteInput(string(decodeRune(s[p:]))))
			}
			p++
			if p >= len(s) {
				return "", errs.New(errs.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
			}
			lo, ok := hexVal(s[p])
			if !ok {
				return "", errs.Newf(errs.InvalidParameterValue, "invalid hexadecimal digit: %s", quoteInput(string(decodeRune(s[p:]))))
			}
			p++
			out = append(out, hi<<4|lo)
		}
		return string(out), nil
	}
	out := make([]byte, 0, len(s))
	for p := 0; p < len(s); {
		c := s[p]
		if c != '\\' {
			out = append(out, c)
			p++
			continue
		}
		switch {
		case p+1 < len(s) && s[p+1] == '\\':
			out = append(out, '\\')
			p += 2
		case p+3 < len(s) && isOctal(s[p+1]) && s[p+1] <= '3' && isOctal(s[p+2]) && isOctal(s[p+3]):
			out = append(out, (s[p+1]-'0')<<6|(s[p+2]-'0')<<3|(s[p+3]-'0'))
			p += 4
		default:
			return "", errs.New(errs.InvalidTextRep, "invalid input syntax for type bytea")
		}
	}
	return string(out), nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decodeRune returns the first character of s (one byte when s does not
// start with valid UTF-8).
func decodeRune(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	if n < 1 {
		n = 1
	}
	return s[:n]
}
