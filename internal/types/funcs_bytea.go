package types

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// Binary string functions with PostgreSQL 15's results and errors
// (encode.c, varlena.c, mbutils.c): encode and decode in the hex, base64
// and escape formats; convert, convert_from and convert_to between UTF8
// (the database encoding), SQL_ASCII and LATIN1; get_bit, set_bit,
// get_byte, set_byte and bit_count; sha224, sha256, sha384 and sha512.
//
// Encoding names are matched as PostgreSQL matches them: case and every
// character but letters and digits ignored ("utf-8" is UTF8, "unicode"
// too). A name PostgreSQL does not know fails with 22023; one it knows
// but RockStream does not convert (EUC_JP, WIN1252, ...) with 0A000.

func init() {
	addFunc("encode", Text, byteaEncode, Bytea, Text)
	addFunc("decode", Bytea, byteaDecode, Text, Text)
	addFunc("convert", Bytea, byteaConvert, Bytea, Name, Name)
	addFunc("convert_from", Text, byteaConvertFrom, Bytea, Name)
	addFunc("convert_to", Bytea, byteaConvertTo, Text, Name)
	addFunc("get_bit", Int4, byteaGetBit, Bytea, Int8)
	addPhantom("get_bit", []TypeID{phantomBit, Int4})
	addFunc("set_bit", Bytea, byteaSetBit, Bytea, Int8, Int4)
	addPhantom("set_bit", []TypeID{phantomBit, Int4, Int4})
	addFunc("get_byte", Int4, byteaGetByte, Bytea, Int4)
	addFunc("set_byte", Bytea, byteaSetByte, Bytea, Int4, Int4)
	addFunc("bit_count", Int8, byteaBitCount, Bytea)
	addPhantom("bit_count", []TypeID{phantomBit})
	addFunc("sha224", Bytea, shaFn(func(b []byte) []byte { s := sha256.Sum224(b); return s[:] }), Bytea)
	addFunc("sha256", Bytea, shaFn(func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }), Bytea)
	addFunc("sha384", Bytea, shaFn(func(b []byte) []byte { s := sha512.Sum384(b); return s[:] }), Bytea)
	addFunc("sha512", Bytea, shaFn(func(b []byte) []byte { s := sha512.Sum512(b); return s[:] }), Bytea)
}

func shaFn(sum func([]byte) []byte) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) { return MakeBytea(sum([]byte(a[0].s))), nil }
}

func unrecognizedFormat(name string) error {
	return errs.Newf(errs.InvalidParameterValue, "unrecognized encoding: %s", quoteInput(name))
}

func byteaEncode(a []Value) (Value, error) {
	src := a[0].s
	switch strings.ToLower(a[1].s) {
	case "hex":
		return MakeText(hex.EncodeToString([]byte(src))), nil
	case "base64":
		return MakeText(base64Encode(src)), nil
	case "escape":
		return MakeText(escapeEncode(src)), nil
	}
	return Null, unrecognizedFormat(a[1].s)
}

func byteaDecode(a []Value) (Value, error) {
	var (
		out string
		err error
	)
	switch strings.ToLower(a[1].s) {
	case "hex":
		out, err = hexDecode(a[0].s)
	case "base64":
		out, err = base64Decode(a[0].s)
	case "escape":
		out, err = escapeDecode(a[0].s)
	default:
		return Null, unrecognizedFormat(a[1].s)
	}
	if err != nil {
		return Null, err
	}
	return MakeBytea([]byte(out)), nil
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// base64Encode is PostgreSQL's base64 encoding: padded, with a newline
// after every 76 characters of output (also after the last group when it
// fills a line).
func base64Encode(src string) string {
	var b strings.Builder
	lineEnd := 76
	buf, pos := 0, 2
	for i := 0; i < len(src); i++ {
		buf |= int(src[i]) << (pos << 3)
		pos--
		if pos < 0 {
			b.WriteByte(base64Alphabet[(buf>>18)&0x3f])
			b.WriteByte(base64Alphabet[(buf>>12)&0x3f])
			b.WriteByte(base64Alphabet[(buf>>6)&0x3f])
			b.WriteByte(base64Alphabet[buf&0x3f])
			pos, buf = 2, 0
		}
		if b.Len() >= lineEnd {
			b.WriteByte('\n')
			lineEnd = b.Len() + 76
		}
	}
	if pos != 2 {
		b.WriteByte(base64Alphabet[(buf>>18)&0x3f])
		b.WriteByte(base64Alphabet[(buf>>12)&0x3f])
		if pos == 0 {
			b.WriteByte(base64Alphabet[(buf>>6)&0x3f])
		} else {
			b.WriteByte('=')
		}
		b.WriteByte('=')
	}
	return b.String()
}

func isEncodingSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// firstChar returns the character of s at i as PostgreSQL's messages
// quote it (one UTF-8 character).
func firstChar(s string, i int) string {
	_, n := utf8.DecodeRuneInString(s[i:])
	return s[i : i+max(n, 1)]
}

// base64Decode is PostgreSQL's pg_base64_decode: whitespace is skipped,
// "=" may only end a group of two or three symbols.
func base64Decode(src string) (string, error) {
	var out []byte
	buf, pos, end := 0, 0, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		if isEncodingSpace(c) {
			continue
		}
		b := 0
		if c == '=' {
			if end == 0 {
				switch pos {
				case 2:
					end = 1
				case 3:
					end = 2
				default:
					return "", errs.New(errs.InvalidParameterValue, `unexpected "=" while decoding base64 sequence`)
				}
			}
		} else {
			b = strings.IndexByte(base64Alphabet, c)
			if b < 0 || c == 0 {
				return "", errs.Newf(errs.InvalidParameterValue, "invalid symbol %s found while decoding base64 sequence", quoteInput(firstChar(src, i)))
			}
		}
		buf = buf<<6 + b
		pos++
		if pos == 4 {
			out = append(out, byte(buf>>16))
			if end == 0 || end > 1 {
				out = append(out, byte(buf>>8))
			}
			if end == 0 || end > 2 {
				out = append(out, byte(buf))
			}
			buf, pos = 0, 0
		}
	}
	if pos != 0 {
		err := errs.New(errs.InvalidParameterValue, "invalid base64 end sequence").(*errs.Error)
		err.Hint = "Input data is missing padding, is truncated, or is otherwise corrupted."
		return "", err
	}
	return string(out), nil
}

func hexDigit(s string, i int) (byte, error) {
	c := s[i]
	switch {
	case c >= '0' && c <= '9':
		return c - '0', nil
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, nil
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, nil
	}
	return 0, errs.Newf(errs.InvalidParameterValue, "invalid hexadecimal digit: %s", quoteInput(firstChar(s, i)))
}

// hexDecode is PostgreSQL's hex_decode: pairs of digits, whitespace
// allowed between pairs.
func hexDecode(s string) (string, error) {
	out := make([]byte, 0, len(s)/2)
	for i := 0; i < len(s); i++ {
		if isEncodingSpace(s[i]) {
			continue
		}
		hi, err := hexDigit(s, i)
		if err != nil {
			return "", err
		}
		i++
		if i >= len(s) {
			return "", errs.New(errs.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
		}
		lo, err := hexDigit(s, i)
		if err != nil {
			return "", err
		}
		out = append(out, hi<<4|lo)
	}
	return string(out), nil
}

// escapeEncode writes zero bytes and bytes with the high bit set as \ooo
// and doubles backslashes.
func escapeEncode(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == 0 || c >= 0x80:
			b.WriteByte('\\')
			b.WriteByte('0' + c>>6)
			b.WriteByte('0' + (c>>3)&7)
			b.WriteByte('0' + c&7)
		case c == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// escapeDecode reads \ooo (first digit 0-3) and \\; any other backslash
// is an error.
func escapeDecode(s string) (string, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		switch {
		case s[i] != '\\':
			out = append(out, s[i])
			i++
		case i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && s[i+2] >= '0' && s[i+2] <= '7' && s[i+3] >= '0' && s[i+3] <= '7':
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i += 2
		default:
			return "", errs.New(errs.InvalidTextRep, "invalid input syntax for type bytea")
		}
	}
	return string(out), nil
}

// Encodings: the ones converted here, and every other name PostgreSQL
// knows (pg_encname_tbl), by cleaned name.
const (
	encUTF8     = "UTF8"
	encSQLASCII = "SQL_ASCII"
	encLatin1   = "LATIN1"
)

var encodingNames = func() map[string]string {
	m := map[string]string{
		"unicode": encUTF8, "sqlascii": encSQLASCII, "iso88591": encLatin1,
		"abc": "WIN1258", "alt": "WIN866", "euccn": "EUC_CN", "eucjis2004": "EUC_JIS_2004", "eucjp": "EUC_JP",
		"euckr": "EUC_KR", "euctw": "EUC_TW", "iso885910": "LATIN6", "iso885913": "LATIN7", "iso885914": "LATIN8",
		"iso885915": "LATIN9", "iso885916": "LATIN10", "iso88592": "LATIN2", "iso88593": "LATIN3", "iso88594": "LATIN4",
		"iso88595": "ISO_8859_5", "iso88596": "ISO_8859_6", "iso88597": "ISO_8859_7", "iso88598": "ISO_8859_8",
		"iso88599": "LATIN5", "koi8": "KOI8R", "mskanji": "SJIS", "muleinternal": "MULE_INTERNAL",
		"shiftjis": "SJIS", "shiftjis2004": "SHIFT_JIS_2004", "tcvn": "WIN1258", "tcvn5712": "WIN1258",
		"vscii": "WIN1258", "win": "WIN1251", "win932": "SJIS", "win936": "GBK", "win949": "UHC", "win950": "BIG5",
		"windows932": "SJIS", "windows936": "GBK", "windows949": "UHC", "windows950": "BIG5",
	}
	for _, n := range []string{"BIG5", "GB18030", "GBK", "JOHAB", "KOI8R", "KOI8U", "SJIS", "UHC", encUTF8} {
		m[strings.ToLower(n)] = n
	}
	for i := 1; i <= 10; i++ {
		m["latin"+strconv.Itoa(i)] = "LATIN" + strconv.Itoa(i)
	}
	for _, n := range []string{"1250", "1251", "1252", "1253", "1254", "1255", "1256", "1257", "1258", "866", "874"} {
		m["win"+n] = "WIN" + n
		m["windows"+n] = "WIN" + n
	}
	return m
}()

// lookupEncoding returns the PostgreSQL name of the encoding named name,
// or "".
func lookupEncoding(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
		}
	}
	return encodingNames[b.String()]
}

// convertBytes converts s from the encoding named from to the one named
// to, as pg_convert does: both names must be known, s must be valid in
// its encoding, and every character must exist in the target.
func convertBytes(s, fromName, toName string) (string, error) {
	from, to := lookupEncoding(fromName), lookupEncoding(toName)
	if from == "" {
		return "", errs.Newf(errs.InvalidParameterValue, "invalid source encoding name %s", quoteInput(fromName))
	}
	if to == "" {
		return "", errs.Newf(errs.InvalidParameterValue, "invalid destination encoding name %s", quoteInput(toName))
	}
	for _, e := range []string{from, to} {
		if e != encUTF8 && e != encSQLASCII && e != encLatin1 {
			return "", errs.Newf(errs.FeatureNotSupported, "conversion between encodings %s and %s is not supported: only UTF8, SQL_ASCII and LATIN1 are", from, to)
		}
	}
	if err := verifyEncoding(from, s); err != nil {
		return "", err
	}
	switch {
	case from == to || to == encSQLASCII:
		return s, nil
	case from == encSQLASCII:
		return s, verifyEncoding(to, s)
	case from == encLatin1: // to UTF8
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteRune(rune(s[i]))
		}
		return b.String(), nil
	}
	// UTF8 to LATIN1.
	out := make([]byte, 0, len(s))
	for i, r := range s {
		if r > 0xff {
			return "", errs.Newf(errs.UntranslatableCharacter, "character with byte sequence %s in encoding %q has no equivalent in encoding %q",
				byteList(s[i:i+utf8.RuneLen(r)]), encUTF8, encLatin1)
		}
		out = append(out, byte(r))
	}
	return string(out), nil
}

// verifyEncoding checks that s is valid in the encoding enc (no zero
// bytes; valid UTF-8 for UTF8), with pg_verify_mbstr's error.
func verifyEncoding(enc, s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0 {
			return invalidEncoding(enc, s[i:i+1])
		}
		if enc != encUTF8 || c < 0x80 {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			l := 1
			switch {
			case c&0xe0 == 0xc0:
				l = 2
			case c&0xf0 == 0xe0:
				l = 3
			case c&0xf8 == 0xf0:
				l = 4
			}
			return invalidEncoding(enc, s[i:min(len(s), i+l)])
		}
		i += n
	}
	return nil
}

func invalidEncoding(enc, seq string) error {
	return errs.Newf(errs.CharacterNotInRepertoire, "invalid byte sequence for encoding %q: %s", enc, byteList(seq))
}

// byteList prints bytes as PostgreSQL's encoding errors do: "0xc3 0x28".
func byteList(s string) string {
	parts := make([]string, min(len(s), 8))
	for i := range parts {
		parts[i] = "0x" + hex.EncodeToString([]byte{s[i]})
	}
	return strings.Join(parts, " ")
}

func byteaConvert(a []Value) (Value, error) {
	out, err := convertBytes(a[0].s, a[1].s, a[2].s)
	if err != nil {
		return Null, err
	}
	return MakeBytea([]byte(out)), nil
}

func byteaConvertFrom(a []Value) (Value, error) {
	out, err := convertBytes(a[0].s, a[1].s, encUTF8)
	if err != nil {
		return Null, err
	}
	return MakeText(out), nil
}

func byteaConvertTo(a []Value) (Value, error) {
	out, err := convertBytes(a[0].s, encUTF8, a[1].s)
	if err != nil {
		return Null, err
	}
	return MakeBytea([]byte(out)), nil
}

func bitIndexError(n int64, length int) error {
	return errs.Newf(errs.ArraySubscriptError, "index %d out of valid range, 0..%d", n, int64(length)*8-1)
}

func byteIndexError(n int64, length int) error {
	return errs.Newf(errs.ArraySubscriptError, "index %d out of valid range, 0..%d", n, length-1)
}

func byteaGetBit(a []Value) (Value, error) {
	s, n := a[0].s, a[1].n
	if n < 0 || n >= int64(len(s))*8 {
		return Null, bitIndexError(n, len(s))
	}
	return MakeInt(Int4, int64(s[n/8]>>(n%8))&1), nil
}

func byteaSetBit(a []Value) (Value, error) {
	s, n, bit := a[0].s, a[1].n, a[2].n
	if n < 0 || n >= int64(len(s))*8 {
		return Null, bitIndexError(n, len(s))
	}
	if bit != 0 && bit != 1 {
		return Null, errs.New(errs.InvalidParameterValue, "new bit must be 0 or 1")
	}
	b := []byte(s)
	if bit == 1 {
		b[n/8] |= 1 << (n % 8)
	} else {
		b[n/8] &^= 1 << (n % 8)
	}
	return MakeBytea(b), nil
}

func byteaGetByte(a []Value) (Value, error) {
	s, n := a[0].s, a[1].n
	if n < 0 || n >= int64(len(s)) {
		return Null, byteIndexError(n, len(s))
	}
	return MakeInt(Int4, int64(s[n])), nil
}

func byteaSetByte(a []Value) (Value, error) {
	s, n := a[0].s, a[1].n
	if n < 0 || n >= int64(len(s)) {
		return Null, byteIndexError(n, len(s))
	}
	b := []byte(s)
	b[n] = byte(a[2].n)
	return MakeBytea(b), nil
}

func byteaBitCount(a []Value) (Value, error) {
	n := 0
	for i := 0; i < len(a[0].s); i++ {
		n += bits.OnesCount8(a[0].s[i])
	}
	return MakeInt(Int8, int64(n)), nil
}
