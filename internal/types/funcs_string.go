package types

import (
	"crypto/md5"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// String functions. Text is UTF-8 and functions count characters, not
// bytes, as PostgreSQL does in a UTF8 database. Case mapping is the
// simple Unicode one (one character to one character), which is what
// PostgreSQL's lower(), upper() and initcap() do with the C.UTF-8
// locale.

var (
	errNegativeSubstring = errs.New(errs.SubstringError, "negative substring length not allowed")
	errLengthTooLarge    = errs.New(errs.ProgramLimitExceeded, "requested length too large")
	errFieldZero         = errs.New(errs.InvalidParameterValue, "field position must not be zero")
)

// maxAllocSize is PostgreSQL's limit on one allocation (MaxAllocSize): no
// text or bytea value can be longer.
const maxAllocSize = 0x3fffffff

func init() {
	addFunc("lower", Text, textLower, Text)
	addFunc("upper", Text, textUpper, Text)
	addPhantom("lower", []TypeID{phantomAny}, []TypeID{phantomAny})
	addPhantom("upper", []TypeID{phantomAny}, []TypeID{phantomAny})
	addFunc("initcap", Text, textInitcap, Text)

	addFunc("length", Int4, textCharLength, Text)
	addFunc("length", Int4, byteaLength, Bytea)
	addPhantom("length", []TypeID{phantomBit}, []TypeID{phantomBpchar}, []TypeID{phantomGeometry},
		[]TypeID{phantomGeometry}, []TypeID{phantomUser}, []TypeID{Bytea, phantomName})
	for _, name := range []string{"char_length", "character_length"} {
		addFunc(name, Int4, textCharLength, Text)
		addPhantom(name, []TypeID{phantomBpchar})
	}
	addFunc("octet_length", Int4, byteaLength, Text)
	addFunc("octet_length", Int4, byteaLength, Bytea)
	addPhantom("octet_length", []TypeID{phantomBit}, []TypeID{phantomBpchar})
	addFunc("bit_length", Int4, bitLength, Text)
	addFunc("bit_length", Int4, bitLength, Bytea)
	addPhantom("bit_length", []TypeID{phantomBit})

	for _, name := range []string{"substring", "substr"} {
		addFunc(name, Text, textSubstr, Text, Int4, Int4)
		addFunc(name, Text, textSubstr, Text, Int4)
		addFunc(name, Bytea, byteaSubstr, Bytea, Int4, Int4)
		addFunc(name, Bytea, byteaSubstr, Bytea, Int4)
	}
	addPhantom("substring", []TypeID{phantomBit, Int4}, []TypeID{phantomBit, Int4, Int4})
	addFunc("substring", Text, regexSubstring, Text, Text) // regex_funcs.go
	addFunc("overlay", Text, textOverlay, Text, Text, Int4, Int4)
	addFunc("overlay", Text, textOverlay, Text, Text, Int4)
	addFunc("overlay", Bytea, byteaOverlay, Bytea, Bytea, Int4, Int4)
	addFunc("overlay", Bytea, byteaOverlay, Bytea, Bytea, Int4)
	addPhantom("overlay", []TypeID{phantomBit, phantomBit, Int4}, []TypeID{phantomBit, phantomBit, Int4, Int4})

	addFunc("position", Int4, textPosition, Text, Text)
	addFunc("position", Int4, byteaPosition, Bytea, Bytea)
	addPhantom("position", []TypeID{phantomBit, phantomBit})
	addFunc("strpos", Int4, textPosition, Text, Text)

	addFunc("btrim", Text, textTrim(true, true), Text, Text)
	addFunc("btrim", Text, textTrim(true, true), Text)
	addFunc("btrim", Bytea, byteaTrim(true, true), Bytea, Bytea)
	addFunc("ltrim", Text, textTrim(true, false), Text, Text)
	addFunc("ltrim", Text, textTrim(true, false), Text)
	addFunc("ltrim", Bytea, byteaTrim(true, false), Bytea, Bytea)
	addFunc("rtrim", Text, textTrim(false, true), Text, Text)
	addFunc("rtrim", Text, textTrim(false, true), Text)
	addFunc("rtrim", Bytea, byteaTrim(false, true), Bytea, Bytea)

	addFunc("replace", Text, textReplace, Text, Text, Text)
	addFunc("translate", Text, textTranslate, Text, Text, Text)
	addFunc("split_part", Text, textSplitPart, Text, Text, Int4)
	addFunc("left", Text, textLeft, Text, Int4)
	addFunc("right", Text, textRight, Text, Int4)
	addFunc("lpad", Text, textPad(true), Text, Int4, Text)
	addFunc("lpad", Text, textPad(true), Text, Int4)
	addFunc("rpad", Text, textPad(false), Text, Int4, Text)
	addFunc("rpad", Text, textPad(false), Text, Int4)
	addFunc("repeat", Text, textRepeat, Text, Int4)
	addFunc("reverse", Text, textReverse, Text)
	addFunc("starts_with", Bool, textStartsWith, Text, Text)
	addFunc("md5", Text, md5Hex, Text)
	addFunc("md5", Text, md5Hex, Bytea)
	addFunc("ascii", Int4, textASCII, Text)
	addFunc("chr", Text, textChr, Int4)
	addFunc("to_hex", Text, toHex(32), Int4)
	addFunc("to_hex", Text, toHex(64), Int8)
}

func textLower(a []Value) (Value, error) { return MakeText(mapRunes(a[0].s, unicode.ToLower)), nil }
func textUpper(a []Value) (Value, error) { return MakeText(mapRunes(a[0].s, unicode.ToUpper)), nil }

// Lower returns s with every character mapped to lower case, as lower()
// does (ILIKE compares lowered text).
func Lower(s string) string { return mapRunes(s, unicode.ToLower) }

// mapRunes maps each character of s by f, returning s itself when nothing
// changes.
func mapRunes(s string, f func(rune) rune) string {
	for i, r := range s {
		if f(r) != r {
			var b strings.Builder
			b.Grow(len(s))
			b.WriteString(s[:i])
			for _, r := range s[i:] {
				b.WriteRune(f(r))
			}
			return b.String()
		}
	}
	return s
}

// isAlnum reports whether r is a letter or digit, as iswalnum does in the
// C.UTF-8 locale.
func isAlnumRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Nl, r) ||
		unicode.Is(unicode.Other_Alphabetic, r)
}

// textInitcap upper-cases the first letter of each word and lower-cases
// the rest; a word is a run of letters and digits.
func textInitcap(a []Value) (Value, error) {
	var b strings.Builder
	b.Grow(len(a[0].s))
	prevAlnum := false
	for _, r := range a[0].s {
		if prevAlnum {
			r = unicode.ToLower(r)
		} else {
			r = unicode.ToUpper(r)
		}
		b.WriteRune(r)
		prevAlnum = isAlnumRune(r)
	}
	return MakeText(b.String()), nil
}

func textCharLength(a []Value) (Value, error) {
	return MakeInt(Int4, int64(utf8.RuneCountInString(a[0].s))), nil
}

func byteaLength(a []Value) (Value, error) { return MakeInt(Int4, int64(len(a[0].s))), nil }

func bitLength(a []Value) (Value, error) { return MakeInt(Int4, 8*int64(len(a[0].s))), nil }

// substrBounds returns the 0-based [from, to) range of a substring taken
// at 1-based start for length characters (to = -1: to the end), as
// PostgreSQL's text_substring computes it, with ok false for an empty
// result.
func substrBounds(a []Value) (from, to int64, ok bool, err error) {
	start := a[1].n
	from = max(start, 1) - 1
	if len(a) < 3 {
		return from, -1, true, nil
	}
	length := a[2].n
	if length < 0 {
		return 0, 0, false, errNegativeSubstring
	}
	end := start + length // no overflow: both are int32
	if end > math.MaxInt32 {
		return from, -1, true, nil
	}
	if end < 1 || end-1 <= from {
		return 0, 0, false, nil
	}
	return from, end - 1, true, nil
}

func textSubstr(a []Value) (Value, error) {
	from, to, ok, err := substrBounds(a)
	if err != nil || !ok {
		return MakeText(""), err
	}
	return MakeText(runeSlice(a[0].s, from, to)), nil
}

func byteaSubstr(a []Value) (Value, error) {
	from, to, ok, err := substrBounds(a)
	if err != nil || !ok {
		return MakeBytea(nil), err
	}
	s := a[0].s
	if from >= int64(len(s)) {
		return Value{kind: Bytea}, nil
	}
	if to < 0 || to > int64(len(s)) {
		to = int64(len(s))
	}
	return Value{kind: Bytea, s: s[from:to]}, nil
}

// runeSlice returns the characters [from, to) of s (to < 0: to the end).
func runeSlice(s string, from, to int64) string {
	i, n := 0, int64(0)
	for n < from && i < len(s) {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
		n++
	}
	if to < 0 {
		return s[i:]
	}
	j := i
	for n < to && j < len(s) {
		_, w := utf8.DecodeRuneInString(s[j:])
		j += w
		n++
	}
	return s[i:j]
}

// textOverlay is overlay(s placing r from start [for count]): the
// characters of s before start, then r, then s from start+count on
// (count defaults to r's length).
func textOverlay(a []Value) (Value, error) {
	s, r := a[0].s, a[1].s
	start := a[2].n
	count := int64(utf8.RuneCountInString(r))
	if len(a) > 3 {
		count = a[3].n
	}
	if start <= 0 {
		return Null, errNegativeSubstring
	}
	end := start + count
	if end > math.MaxInt32 || end < math.MinInt32 {
		return Null, errIntOverflow
	}
	head, err := textSubstr([]Value{a[0], MakeInt(Int4, 1), MakeInt(Int4, start-1)})
	if err != nil {
		return Null, err
	}
	tail := runeSlice(s, max(end, 1)-1, -1)
	return MakeText(head.s + r + tail), nil
}

func byteaOverlay(a []Value) (Value, error) {
	s, r := a[0].s, a[1].s
	start := a[2].n
	count := int64(len(r))
	if len(a) > 3 {
		count = a[3].n
	}
	if start <= 0 {
		return Null, errNegativeSubstring
	}
	end := start + count
	if end > math.MaxInt32 || end < math.MinInt32 {
		return Null, errIntOverflow
	}
	head := s[:min(start-1, int64(len(s)))]
	tail := ""
	if e := max(end, 1) - 1; e < int64(len(s)) {
		tail = s[e:]
	}
	return Value{kind: Bytea, s: head + r + tail}, nil
}

var errIntOverflow = errs.New(errs.NumericOutOfRange, "integer out of range")

// textPosition is strpos(s, sub): the 1-based character position of the
// first occurrence of sub in s, 0 when there is none, 1 for an empty sub.
func textPosition(a []Value) (Value, error) {
	i := strings.Index(a[0].s, a[1].s)
	if i < 0 {
		return MakeInt(Int4, 0), nil
	}
	return MakeInt(Int4, int64(utf8.RuneCountInString(a[0].s[:i]))+1), nil
}

func byteaPosition(a []Value) (Value, error) {
	return MakeInt(Int4, int64(strings.Index(a[0].s, a[1].s))+1), nil
}

// textTrim removes the characters of the set (default: a space) from the
// start and/or end of a text.
func textTrim(left, right bool) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		s, set := a[0].s, " "
		if len(a) > 1 {
			set = a[1].s
		}
		if set == "" {
			return a[0], nil
		}
		if left {
			s = strings.TrimLeftFunc(s, func(r rune) bool { return strings.ContainsRune(set, r) })
		}
		if right {
			s = strings.TrimRightFunc(s, func(r rune) bool { return strings.ContainsRune(set, r) })
		}
		return MakeText(s), nil
	}
}

// byteaTrim removes the bytes of the set from the start and/or end.
func byteaTrim(left, right bool) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		s, set := a[0].s, a[1].s
		if set == "" {
			return a[0], nil
		}
		i, j := 0, len(s)
		if left {
			for i < j && strings.IndexByte(set, s[i]) >= 0 {
				i++
			}
		}
		if right {
			for j > i && strings.IndexByte(set, s[j-1]) >= 0 {
				j--
			}
		}
		return Value{kind: Bytea, s: s[i:j]}, nil
	}
}

func textReplace(a []Value) (Value, error) {
	if a[1].s == "" {
		return a[0], nil
	}
	return MakeText(strings.ReplaceAll(a[0].s, a[1].s, a[2].s)), nil
}

// textTranslate replaces each character of s found in from by the
// character at the same position of to, deleting it when to is shorter.
func textTranslate(a []Value) (Value, error) {
	from := []rune(a[1].s)
	to := []rune(a[2].s)
	var b strings.Builder
	b.Grow(len(a[0].s))
	for _, r := range a[0].s {
		i := -1
		for k, f := range from {
			if f == r {
				i = k
				break
			}
		}
		switch {
		case i < 0:
			b.WriteRune(r)
		case i < len(to):
			b.WriteRune(to[i])
		}
	}
	return MakeText(b.String()), nil
}

// textSplitPart returns field n (1-based; negative counts from the end)
// of s split at delim.
func textSplitPart(a []Value) (Value, error) {
	s, delim, n := a[0].s, a[1].s, a[2].n
	if n == 0 {
		return Null, errFieldZero
	}
	if s == "" {
		return MakeText(""), nil
	}
	if delim == "" {
		if n == 1 || n == -1 {
			return a[0], nil
		}
		return MakeText(""), nil
	}
	parts := strings.Split(s, delim)
	if n < 0 {
		n += int64(len(parts)) + 1
		if n <= 0 {
			return MakeText(""), nil
		}
	}
	if n > int64(len(parts)) {
		return MakeText(""), nil
	}
	return MakeText(parts[n-1]), nil
}

// textLeft returns the first n characters (all but the last -n when n is
// negative).
func textLeft(a []Value) (Value, error) {
	s, n := a[0].s, a[1].n
	if n < 0 {
		n += int64(utf8.RuneCountInString(s))
		if n <= 0 {
			return MakeText(""), nil
		}
	}
	return MakeText(runeSlice(s, 0, n)), nil
}

// textRight returns the last n characters (all but the first -n when n is
// negative).
func textRight(a []Value) (Value, error) {
	s, n := a[0].s, a[1].n
	count := int64(utf8.RuneCountInString(s))
	if n < 0 {
		n += count
		if n <= 0 {
			return MakeText(""), nil
		}
	}
	return MakeText(runeSlice(s, max(count-n, 0), -1)), nil
}

// textPad pads s on the left (lpad) or right (rpad) to length characters
// with copies of fill (default: a space), truncating s when it is longer.
func textPad(left bool) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		s, length, fill := a[0].s, a[1].n, " "
		if len(a) > 2 {
			fill = a[2].s
		}
		if length < 0 {
			length = 0
		}
		n := int64(utf8.RuneCountInString(s))
		if n > length {
			n = length
			s = runeSlice(s, 0, length)
		}
		if fill == "" {
			length = n
		}
		if length*utf8.UTFMax+4 > maxAllocSize {
			return Null, errLengthTooLarge
		}
		if n == length {
			return MakeText(s), nil
		}
		fr := []rune(fill)
		var b strings.Builder
		b.Grow(len(s) + int(length-n)*len(fill)/len(fr) + 4)
		if !left {
			b.WriteString(s)
		}
		for i := int64(0); i < length-n; i++ {
			b.WriteRune(fr[i%int64(len(fr))])
		}
		if left {
			b.WriteString(s)
		}
		return MakeText(b.String()), nil
	}
}

func textRepeat(a []Value) (Value, error) {
	s, count := a[0].s, max(a[1].n, 0)
	total := count * int64(len(s))
	if total > math.MaxInt32-4 || total+4 > maxAllocSize {
		return Null, errLengthTooLarge
	}
	return MakeText(strings.Repeat(s, int(count))), nil
}

func textReverse(a []Value) (Value, error) {
	r := []rune(a[0].s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return MakeText(string(r)), nil
}

func textStartsWith(a []Value) (Value, error) {
	return MakeBool(strings.HasPrefix(a[0].s, a[1].s)), nil
}

func md5Hex(a []Value) (Value, error) {
	sum := md5.Sum([]byte(a[0].s))
	return MakeText(hex.EncodeToString(sum[:])), nil
}

// textASCII returns the code of the first character (0 for an empty
// text).
func textASCII(a []Value) (Value, error) {
	if a[0].s == "" {
		return MakeInt(Int4, 0), nil
	}
	r, _ := utf8.DecodeRuneInString(a[0].s)
	return MakeInt(Int4, int64(r)), nil
}

// textChr returns the character with the given code.
func textChr(a []Value) (Value, error) {
	if a[0].n < 0 {
		return Null, errs.New(errs.InvalidParameterValue, "character number must be positive")
	}
	c := uint32(a[0].n)
	switch {
	case c == 0:
		return Null, errs.New(errs.ProgramLimitExceeded, "null character not permitted")
	case c > 0x10ffff:
		return Null, errs.Newf(errs.ProgramLimitExceeded, "requested character too large for encoding: %d", c)
	case c >= 0xd800 && c <= 0xdfff:
		return Null, errs.Newf(errs.ProgramLimitExceeded, "requested character not valid for encoding: %d", c)
	}
	return MakeText(string(rune(c))), nil
}

func toHex(bits int) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		u := uint64(a[0].n)
		if bits == 32 {
			u = uint64(uint32(a[0].n))
		}
		return MakeText(strconv.FormatUint(u, 16)), nil
	}
}

// Concat is concat(...): the text of every non-NULL argument, as its
// type's output function writes it, joined.
func Concat(a []Value) (Value, error) { return ConcatZone(UTCZone)(a) }

// ConcatZone is concat in the session time zone z.
func ConcatZone(z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		var b strings.Builder
		for _, v := range a {
			if !v.IsNull() {
				b.WriteString(FormatZone(v, Type{}, z))
			}
		}
		return MakeText(b.String()), nil
	}
}

// ConcatWS is concat_ws(sep, ...): the text of every non-NULL argument
// after the first, joined by sep; NULL when sep is NULL.
func ConcatWS(a []Value) (Value, error) { return ConcatWSZone(UTCZone)(a) }

// ConcatWSZone is concat_ws in the session time zone z.
func ConcatWSZone(z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) { return concatWS(a, z) }
}

func concatWS(a []Value, z Zone) (Value, error) {
	if a[0].IsNull() {
		return Null, nil
	}
	var b strings.Builder
	first := true
	for _, v := range a[1:] {
		if v.IsNull() {
			continue
		}
		if !first {
			b.WriteString(a[0].s)
		}
		first = false
		b.WriteString(FormatZone(v, Type{}, z))
	}
	return MakeText(b.String()), nil
}
