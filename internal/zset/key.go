package zset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// Key tag bytes, one before every encoded value, ascending variant. The
// descending variant of a value is the bitwise complement of all of its
// ascending bytes, tag included, so descending tags are 0x80-0xfe and a
// decoder tells the two apart by the tag's top bit. No tag is 0x00 or 0xff:
// see KeyPrefixEnd. The layout is specified in docs/format/keys.md; changing
// any of these bytes changes the on-disk format.
const (
	keyTagBool        byte = 0x10
	keyTagInt2        byte = 0x14
	keyTagInt4        byte = 0x15
	keyTagInt8        byte = 0x16
	keyTagNumeric     byte = 0x18
	keyTagFloat4      byte = 0x1c
	keyTagFloat8      byte = 0x1d
	keyTagText        byte = 0x20
	keyTagBytea       byte = 0x22
	keyTagDate        byte = 0x28
	keyTagTime        byte = 0x29
	keyTagTimestamp   byte = 0x2a
	keyTagTimestampTZ byte = 0x2b
	keyTagInterval    byte = 0x2c
	// keyTagTimeTZ is followed by the UTC equivalent (the time plus the
	// zone, in microseconds) in 8 bytes, then the zone (seconds west of
	// UTC) in 4, both sign-flipped: timetz_cmp's order.
	keyTagTimeTZ byte = 0x2d
	keyTagArray  byte = 0x30
	// keyArrayEnd ends an array's elements; it is below every value tag,
	// so an array sorts before its extensions. It ends an array with one
	// dimension and lower bound 1 (or none); the other shapes end with
	// keyArrayEndLow, keyArrayEndHigh or keyArrayEndDims and the shape
	// (docs/format/keys.md), ordered as PostgreSQL orders arrays whose
	// elements are equal.
	keyArrayEnd byte = 0x01
	// keyArrayEndLow ends a one-dimensional array with a lower bound
	// below 1, which follows as 4 bytes (sign bit flipped).
	keyArrayEndLow byte = 0x00
	// keyArrayEndHigh ends a one-dimensional array with a lower bound
	// above 1, which follows as keyArrayEndLow's does.
	keyArrayEndHigh byte = 0x02
	// keyArrayEndDims ends an array of two or more dimensions: their
	// count (1 byte), each length (4 bytes) and each lower bound (4
	// bytes, sign bit flipped) follow.
	keyArrayEndDims byte = 0x03
	// keyTagOID is followed by the OID as 4 big-endian bytes; an OID
	// alias value (regclass, ...) has its own tag, then the OID and its
	// escaped name (the name is determined by the OID, so it never
	// changes the order).
	keyTagOID          byte = 0x34
	keyTagRegClass     byte = 0x35
	keyTagRegType      byte = 0x36
	keyTagRegProc      byte = 0x37
	keyTagRegNamespace byte = 0x38
	keyTagRegRole      byte = 0x39
	// keyTagNull is greater than every other ascending tag, so NULL sorts
	// after every value; complemented (0x80) it is smaller than every
	// descending tag, so descending keys put NULLs first.
	keyTagNull byte = 0x7f
)

// Numeric class bytes, after keyTagNumeric, in value order.
const (
	numClassNegInf byte = 0x01
	numClassNeg    byte = 0x02
	numClassZero   byte = 0x03
	numClassPos    byte = 0x04
	numClassPosInf byte = 0x05
	numClassNaN    byte = 0x06
)

// EncodeKey appends the order-preserving encoding of vals to dst: for any
// two value lists of the same kinds, bytes.Compare of their encodings equals
// the lexicographic types.Compare order of the lists (NULLs last), and equal
// lists encode equally. The encoding is self-delimiting, so a key prefix's
// encoding is a byte prefix of the whole key's. See docs/format/keys.md.
//
// Values that compare equal encode equally even when their representations
// differ (-0 and 0 floats, numeric 1.0 and 1.00, intervals '1 mon' and
// '30 days'), so a key identifies a value under SQL's =, not its exact
// representation; store exact values with EncodeRow. Integer kinds of
// different widths have different tags: values at one key position must
// have one kind, and the planner casts mixed-width keys to a common type.
func EncodeKey(dst []byte, vals ...types.Value) []byte {
	for _, v := range vals {
		dst = appendKeyValue(dst, v)
	}
	return dst
}

// EncodeKeyDesc is EncodeKey with the order of every value reversed (for
// ORDER BY ... DESC keys), NULLs first.
//
// Each value's bytes are the complement of its EncodeKey bytes. Ascending
// and descending values may be mixed in one key (append with EncodeKey and
// EncodeKeyDesc in turn) and DecodeKey decodes both.
func EncodeKeyDesc(dst []byte, vals ...types.Value) []byte {
	for _, v := range vals {
		start := len(dst)
		dst = appendKeyValue(dst, v)
		invertBytes(dst[start:])
	}
	return dst
}

// KeyPrefixEnd appends prefix followed by 0xff to dst. When prefix is the
// encoding of whole values, the result is an exclusive upper bound of the
// keys that extend prefix: every such key k has prefix <= k < the result
// (the byte after prefix in k is a tag, never 0xff), and every other key
// orders outside [prefix, result). Use it as the end of a range scan.
func KeyPrefixEnd(dst, prefix []byte) []byte {
	dst = append(dst, prefix...)
	return append(dst, 0xff)
}

// DecodeKey decodes n values encoded by EncodeKey (or EncodeKeyDesc) from
// the front of key, returning them and the rest of key.
//
// Each value comes back with the kind it was encoded with, equal under
// types.Compare to the value encoded, but not always in the same
// representation: floats -0 decode as 0 and every NaN as the canonical
// NaN; numerics lose trailing fractional zeros (1.50 decodes as 1.5) and
// keep integers at scale 0; intervals come back as months, days and
// microseconds of the same span ('30 days' decodes as '1 mon').
func DecodeKey(key []byte, n int) ([]types.Value, []byte, error) {
	if n < 0 {
		return nil, key, corruptKey("negative value count")
	}
	vals := make([]types.Value, n)
	for i := range vals {
		v, rest, err := DecodeKeyValue(key)
		if err != nil {
			return nil, key, err
		}
		vals[i], key = v, rest
	}
	return vals, key, nil
}

// DecodeKeyValue decodes one value encoded by EncodeKey or EncodeKeyDesc
// from the front of key, returning it and the rest of key. See DecodeKey
// for how the value may differ from the encoded one.
func DecodeKeyValue(key []byte) (types.Value, []byte, error) {
	if len(key) == 0 {
		return types.Null, key, corruptKey("missing value")
	}
	tag, mask := key[0], byte(0)
	if tag >= 0x80 {
		tag, mask = ^tag, 0xff
	}
	body := key[1:]
	switch tag {
	case keyTagNull:
		return types.Null, body, nil
	case keyTagBool:
		u, rest, err := readFixed(body, 1, mask)
		if err != nil || u > 1 {
			return types.Null, key, corruptKey("bad boolean")
		}
		return types.MakeBool(u == 1), rest, nil
	case keyTagInt2:
		u, rest, err := readFixed(body, 2, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeInt(types.Int2, int64(int16(uint16(u)^1<<15))), rest, nil
	case keyTagInt4:
		u, rest, err := readFixed(body, 4, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeInt(types.Int4, int64(int32(uint32(u)^1<<31))), rest, nil
	case keyTagInt8:
		u, rest, err := readFixed(body, 8, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeInt(types.Int8, int64(u^1<<63)), rest, nil
	case keyTagFloat4:
		u, rest, err := readFixed(body, 4, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeFloat4(math.Float32frombits(float32FromKey(uint32(u)))), rest, nil
	case keyTagFloat8:
		u, rest, err := readFixed(body, 8, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeFloat8(math.Float64frombits(float64FromKey(u))), rest, nil
	case keyTagNumeric:
		d, rest, err := decodeNumericKey(body, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeNumeric(d), rest, nil
	case keyTagText, keyTagBytea:
		s, rest, err := decodeEscaped(body, mask)
		if err != nil {
			return types.Null, key, err
		}
		if tag == keyTagText {
			return types.MakeText(s), rest, nil
		}
		return types.MakeBytea([]byte(s)), rest, nil
	case keyTagDate:
		u, rest, err := readFixed(body, 4, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeDate(int32(uint32(u) ^ 1<<31)), rest, nil
	case keyTagTimestamp, keyTagTimestampTZ, keyTagTime:
		u, rest, err := readFixed(body, 8, mask)
		if err != nil {
			return types.Null, key, err
		}
		if tag == keyTagTime {
			return types.MakeTime(int64(u ^ 1<<63)), rest, nil
		}
		if tag == keyTagTimestamp {
			return types.MakeTimestamp(int64(u ^ 1<<63)), rest, nil
		}
		return types.MakeTimestampTZ(int64(u ^ 1<<63)), rest, nil
	case keyTagArray:
		return decodeArrayKey(key, body, mask)
	case keyTagJsonb:
		j, rest, err := decodeJSONBKey(body, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeJSONB(j), rest, nil
	case keyTagTimeTZ:
		u, rest, err := readFixed(body, 8, mask)
		if err != nil {
			return types.Null, key, err
		}
		z, rest, err := readFixed(rest, 4, mask)
		if err != nil {
			return types.Null, key, err
		}
		zone := int32(uint32(z) ^ 1<<31)
		micros := int64(u^1<<63) - int64(zone)*1_000_000
		if micros < 0 || micros > 86_400_000_000 {
			return types.Null, key, corruptKey("time with time zone out of range")
		}
		return types.MakeTimeTZ(micros, zone), rest, nil
	case keyTagInterval:
		days, rest, err := readFixed(body, 5, mask)
		if err != nil {
			return types.Null, key, err
		}
		micros, rest, err := readFixed(rest, 5, mask)
		if err != nil {
			return types.Null, key, err
		}
		iv, ok := intervalFromSpan(int64(days)-intervalDaysBias, int64(micros))
		if !ok {
			return types.Null, key, corruptKey("interval out of range")
		}
		return types.MakeInterval(iv), rest, nil
	case keyTagOID:
		u, rest, err := readFixed(body, 4, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeOID(uint32(u)), rest, nil
	case keyTagRegClass, keyTagRegType, keyTagRegProc, keyTagRegNamespace, keyTagRegRole:
		u, rest, err := readFixed(body, 4, mask)
		if err != nil {
			return types.Null, key, err
		}
		name, rest, err := decodeEscaped(rest, mask)
		if err != nil {
			return types.Null, key, err
		}
		return types.MakeReg(types.RegClass+types.TypeID(tag-keyTagRegClass), uint32(u), name), rest, nil
	}
	return types.Null, key, corruptKey(fmt.Sprintf("unknown tag 0x%02x", key[0]))
}

// decodeArrayKey decodes an array's element kind, elements and end marker
// from body (the bytes after the tag of key), each byte XORed with mask.
// The elements carry their own direction in their tags.
func decodeArrayKey(key, body []byte, mask byte) (types.Value, []byte, error) {
	if len(body) == 0 {
		return types.Null, key, corruptKey("truncated array")
	}
	elem := types.Kind(body[0] ^ mask)
	if !types.HasArrayType(elem) || elem == types.Varchar {
		return types.Null, key, corruptKey("bad array element kind")
	}
	body = body[1:]
	var elems []types.Value
	for {
		if len(body) == 0 {
			return types.Null, key, corruptKey("unterminated array")
		}
		switch body[0] ^ mask {
		case keyArrayEnd:
			return types.MakeArray(elem, elems), body[1:], nil
		case keyArrayEndLow, keyArrayEndHigh, keyArrayEndDims:
			return decodeArrayShapeKey(key, body, mask, elem, elems)
		}
		if body[0]^mask == keyTagArray {
			return types.Null, key, corruptKey("nested array")
		}
		v, rest, err := DecodeKeyValue(body)
		if err != nil {
			return types.Null, key, err
		}
		if !v.IsNull() && v.Kind() != elem {
			return types.Null, key, corruptKey("array element of another kind")
		}
		elems, body = append(elems, v), rest
	}
}

// decodeArrayShapeKey decodes the shape after the elements of an array
// whose end marker (body[0]) is not keyArrayEnd.
func decodeArrayShapeKey(key, body []byte, mask byte, elem types.Kind, elems []types.Value) (types.Value, []byte, error) {
	marker := body[0] ^ mask
	body = body[1:]
	nd := 1
	if marker == keyArrayEndDims {
		if len(body) == 0 {
			return types.Null, key, corruptKey("truncated array shape")
		}
		nd, body = int(body[0]^mask), body[1:]
		if nd < 2 || nd > types.MaxArrayDims {
			return types.Null, key, corruptKey("bad array dimension count")
		}
	}
	dims, lbs := make([]int, nd), make([]int, nd)
	n := 1
	for i := range dims {
		if nd == 1 {
			dims[0] = len(elems)
			continue
		}
		u, rest, err := readFixed(body, 4, mask)
		if err != nil {
			return types.Null, key, err
		}
		dims[i], body = int(u), rest
		n *= dims[i]
	}
	for i := range lbs {
		u, rest, err := readFixed(body, 4, mask)
		if err != nil {
			return types.Null, key, err
		}
		lbs[i], body = int(int32(uint32(u)^1<<31)), rest
	}
	switch {
	case nd == 1 && marker == keyArrayEndLow && lbs[0] >= 1,
		nd == 1 && marker == keyArrayEndHigh && lbs[0] <= 1,
		len(elems) == 0 || nd > 1 && n != len(elems),
		types.CheckArrayShape(dims, lbs) != nil:
		return types.Null, key, corruptKey("bad array shape")
	}
	return types.MakeArrayShape(elem, elems, dims, lbs), body, nil
}

func corruptKey(what string) error {
	return errs.Newf(errs.Internal, "corrupt key encoding: %s", what)
}

// appendKeyValue appends v's ascending key encoding.
func appendKeyValue(dst []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.KindNull:
		return append(dst, keyTagNull)
	case types.Bool:
		if v.Bool() {
			return append(dst, keyTagBool, 1)
		}
		return append(dst, keyTagBool, 0)
	case types.Int2:
		n := v.Int()
		if n != int64(int16(n)) {
			panic("zset: smallint value out of range: " + strconv.FormatInt(n, 10))
		}
		return binary.BigEndian.AppendUint16(append(dst, keyTagInt2), uint16(n)^1<<15)
	case types.Int4:
		n := v.Int()
		if n != int64(int32(n)) {
			panic("zset: integer value out of range: " + strconv.FormatInt(n, 10))
		}
		return binary.BigEndian.AppendUint32(append(dst, keyTagInt4), uint32(n)^1<<31)
	case types.Int8:
		return binary.BigEndian.AppendUint64(append(dst, keyTagInt8), uint64(v.Int())^1<<63)
	case types.Float4:
		return binary.BigEndian.AppendUint32(append(dst, keyTagFloat4), float32Key(float32(v.Float())))
	case types.Float8:
		return binary.BigEndian.AppendUint64(append(dst, keyTagFloat8), float64Key(v.Float()))
	case types.Numeric:
		return appendNumericKey(append(dst, keyTagNumeric), v.Decimal())
	case types.Text:
		return appendEscaped(append(dst, keyTagText), v.Str())
	case types.Bytea:
		return appendEscaped(append(dst, keyTagBytea), v.Str())
	case types.Date:
		return binary.BigEndian.AppendUint32(append(dst, keyTagDate), uint32(v.Days())^1<<31)
	case types.Time:
		return binary.BigEndian.AppendUint64(append(dst, keyTagTime), uint64(v.Micros())^1<<63)
	case types.TimeTZ:
		micros, zone := v.TimeTZ()
		dst = binary.BigEndian.AppendUint64(append(dst, keyTagTimeTZ), uint64(micros+int64(zone)*1_000_000)^1<<63)
		return binary.BigEndian.AppendUint32(dst, uint32(zone)^1<<31)
	case types.Timestamp:
		return binary.BigEndian.AppendUint64(append(dst, keyTagTimestamp), uint64(v.Micros())^1<<63)
	case types.TimestampTZ:
		return binary.BigEndian.AppendUint64(append(dst, keyTagTimestampTZ), uint64(v.Micros())^1<<63)
	case types.Interval:
		days, micros := intervalSpan(v.Interval())
		dst = append(dst, keyTagInterval)
		dst = appendUint40(dst, uint64(days+intervalDaysBias))
		return appendUint40(dst, uint64(micros))
	case types.Oid:
		return binary.BigEndian.AppendUint32(append(dst, keyTagOID), v.OID())
	case types.RegClass, types.RegType, types.RegProc, types.RegNamespace, types.RegRole:
		dst = binary.BigEndian.AppendUint32(append(dst, keyTagRegClass+byte(v.Kind()-types.RegClass)), v.OID())
		return appendEscaped(dst, v.Str())
	case types.Jsonb:
		return appendJSONBKey(append(dst, keyTagJsonb), v.JSONB())
	}
	if v.Kind().IsArray() {
		dst = append(dst, keyTagArray, byte(v.Kind().Elem()))
		for _, e := range v.Elems() {
			dst = appendKeyValue(dst, e)
		}
		return appendArrayShapeKey(dst, v)
	}
	panic(fmt.Sprintf("zset: cannot encode a value of kind %d in a key", v.Kind()))
}

// appendArrayShapeKey appends the end marker of the array v and, for
// shapes other than one dimension with lower bound 1, the shape.
func appendArrayShapeKey(dst []byte, v types.Value) []byte {
	if v.IsPlainArray() {
		return append(dst, keyArrayEnd)
	}
	dims, lbs := v.ArrayShape()
	switch {
	case len(dims) > 1:
		dst = append(dst, keyArrayEndDims, byte(len(dims)))
		for _, d := range dims {
			dst = binary.BigEndian.AppendUint32(dst, uint32(d))
		}
	case lbs[0] < 1:
		dst = append(dst, keyArrayEndLow)
	default:
		dst = append(dst, keyArrayEndHigh)
	}
	for _, lb := range lbs {
		dst = binary.BigEndian.AppendUint32(dst, uint32(int32(lb))^1<<31)
	}
	return dst
}

func invertBytes(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// readFixed reads an n-byte big-endian unsigned integer, each byte XORed
// with mask.
func readFixed(b []byte, n int, mask byte) (uint64, []byte, error) {
	if len(b) < n {
		return 0, b, corruptKey("truncated value")
	}
	var u uint64
	for _, c := range b[:n] {
		u = u<<8 | uint64(c^mask)
	}
	return u, b[n:], nil
}

// float64Key maps a float's bits to an unsigned integer in the float's
// order: negative floats have all bits flipped (larger magnitude, smaller
// key), non-negative ones only the sign bit. -0 is first made 0 and every
// NaN the canonical quiet NaN, which then maps above +Inf.
func float64Key(f float64) uint64 {
	if f != f {
		return canonicalNaN64 | 1<<63
	}
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// The quiet NaNs with no payload that every NaN is keyed as.
const (
	canonicalNaN64 = 0x7ff8000000000000
	canonicalNaN32 = 0x7fc00000
)

func float64FromKey(k uint64) uint64 {
	if k>>63 != 0 {
		return k &^ (1 << 63)
	}
	return ^k
}

// float32Key is float64Key for REAL.
func float32Key(f float32) uint32 {
	if f != f {
		return canonicalNaN32 | 1<<31
	}
	if f == 0 {
		f = 0
	}
	b := math.Float32bits(f)
	if b>>31 != 0 {
		return ^b
	}
	return b | 1<<31
}

func float32FromKey(k uint32) uint32 {
	if k>>31 != 0 {
		return k &^ (1 << 31)
	}
	return ^k
}

// appendEscaped appends s with every 0x00 byte written as 0x00 0xff,
// followed by the terminator 0x00 0x01. The terminator is smaller than any
// continuation (an escaped 0x00 or a byte >= 0x01), so a string sorts before
// its extensions, and no encoded string is a prefix of another's encoding.
func appendEscaped(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, 0x00, 0xff)
		s = s[i+1:]
	}
	dst = append(dst, s...)
	return append(dst, 0x00, 0x01)
}

// decodeEscaped reverses appendEscaped on bytes XORed with mask.
func decodeEscaped(b []byte, mask byte) (string, []byte, error) {
	i := bytes.IndexByte(b, mask)
	if i < 0 || i+1 >= len(b) {
		return "", b, corruptKey("unterminated string")
	}
	if b[i+1]^mask == 0x01 && mask == 0 {
		// No escapes: the common case, one allocation.
		return string(b[:i]), b[i+2:], nil
	}
	var out []byte
	for {
		i := bytes.IndexByte(b, mask)
		if i < 0 || i+1 >= len(b) {
			return "", b, corruptKey("unterminated string")
		}
		start := len(out)
		out = append(out, b[:i]...)
		if mask != 0 {
			invertBytes(out[start:])
		}
		switch b[i+1] ^ mask {
		case 0x01:
			return string(out), b[i+2:], nil
		case 0xff:
			out = append(out, 0x00)
			b = b[i+2:]
		default:
			return "", b, corruptKey("bad string escape")
		}
	}
}

// appendNumericKey appends a class byte and, for finite non-zero values,
// the value as 0.d1d2...dn × 10^exp with d1 != 0 and dn != 0: exp as an
// ordered varint, then the digits two to a byte (pair value + 1, so 1-100,
// the last pair padded with a 0 digit) and a 0x00 terminator. Larger exp
// means a larger magnitude, and for equal exp the digit strings compare as
// fractions; a shorter string is a prefix whose terminator sorts first. For
// negative values everything after the class byte is complemented, so a
// larger magnitude sorts first. Trailing zeros are stripped, so equal values
// of different scales encode equally.
func appendNumericKey(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, numClassNaN)
	case apd.Infinite:
		if d.Negative {
			return append(dst, numClassNegInf)
		}
		return append(dst, numClassPosInf)
	}
	if d.Coeff.Sign() == 0 {
		return append(dst, numClassZero)
	}
	var buf [40]byte
	digits := d.Coeff.Append(buf[:0], 10)
	exp := int64(d.Exponent) + int64(len(digits))
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if d.Negative {
		dst = append(dst, numClassNeg)
	} else {
		dst = append(dst, numClassPos)
	}
	start := len(dst)
	dst = appendOrderedVarint(dst, exp)
	for i := 0; i < len(digits); i += 2 {
		pair := (digits[i] - '0') * 10
		if i+1 < len(digits) {
			pair += digits[i+1] - '0'
		}
		dst = append(dst, pair+1)
	}
	dst = append(dst, 0x00)
	if d.Negative {
		invertBytes(dst[start:])
	}
	return dst
}

// decodeNumericKey reverses appendNumericKey on bytes XORed with mask.
func decodeNumericKey(b []byte, mask byte) (*apd.Decimal, []byte, error) {
	if len(b) == 0 {
		return nil, b, corruptKey("truncated numeric")
	}
	class, b := b[0]^mask, b[1:]
	d := new(apd.Decimal)
	switch class {
	case numClassNaN:
		d.Form = apd.NaN
		return d, b, nil
	case numClassNegInf, numClassPosInf:
		d.Form, d.Negative = apd.Infinite, class == numClassNegInf
		return d, b, nil
	case numClassZero:
		return d, b, nil
	case numClassPos:
	case numClassNeg:
		d.Negative, mask = true, ^mask
	default:
		return nil, b, corruptKey("bad numeric class")
	}
	exp, b, err := readOrderedVarint(b, mask)
	if err != nil {
		return nil, b, err
	}
	var buf [40]byte
	digits := buf[:0]
	for {
		if len(b) == 0 {
			return nil, b, corruptKey("unterminated numeric")
		}
		c := b[0] ^ mask
		b = b[1:]
		if c == 0 {
			break
		}
		if c > 100 {
			return nil, b, corruptKey("bad numeric digits")
		}
		digits = append(digits, '0'+(c-1)/10, '0'+(c-1)%10)
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 || digits[0] == '0' {
		return nil, b, corruptKey("bad numeric digits")
	}
	// Integers come back at scale 0 (100, not 1E+2), as PostgreSQL keeps
	// no negative scales, up to PostgreSQL's 131072 digits before the
	// decimal point.
	scale := exp - int64(len(digits))
	if scale > 0 && exp <= maxNumericIntDigits {
		for ; scale > 0; scale-- {
			digits = append(digits, '0')
		}
	}
	if scale < math.MinInt32 || scale > math.MaxInt32 {
		return nil, b, corruptKey("numeric exponent out of range")
	}
	d.Exponent = int32(scale)
	if len(digits) <= 19 {
		u, _ := strconv.ParseUint(string(digits), 10, 64)
		d.Coeff.SetUint64(u)
	} else if _, ok := d.Coeff.SetString(string(digits), 10); !ok {
		return nil, b, corruptKey("bad numeric digits")
	}
	return d, b, nil
}

// maxNumericIntDigits is PostgreSQL's limit on a numeric's digits before
// the decimal point.
const maxNumericIntDigits = 131072

// appendOrderedVarint appends x so that byte order is integer order: a
// header byte 0x80+n for x >= 0 (n = 0..8 big-endian bytes follow, the
// fewest that hold x) and 0x80-n for x < 0 (n = 1..8 bytes of x's two's
// complement, the fewest with x >= -256^n). Longer positive numbers are
// larger and longer negative numbers smaller, so the header orders numbers
// of different lengths and the bytes those of equal length.
func appendOrderedVarint(dst []byte, x int64) []byte {
	u := uint64(x)
	var n int
	if x >= 0 {
		n = (bits.Len64(u) + 7) / 8
		dst = append(dst, byte(0x80+n))
	} else {
		n = max(1, (bits.Len64(^u)+7)/8)
		dst = append(dst, byte(0x80-n))
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(u>>(8*i)))
	}
	return dst
}

func readOrderedVarint(b []byte, mask byte) (int64, []byte, error) {
	if len(b) == 0 {
		return 0, b, corruptKey("truncated varint")
	}
	h := b[0] ^ mask
	neg := h < 0x80
	n := int(h) - 0x80
	if neg {
		n = 0x80 - int(h)
	}
	if n > 8 {
		return 0, b, corruptKey("bad varint")
	}
	u, rest, err := readFixed(b[1:], n, mask)
	if err != nil {
		return 0, b, err
	}
	if neg && n < 8 {
		u |= ^uint64(0) << (8 * n) // sign-extend
	}
	return int64(u), rest, nil
}

// Interval keys hold the span as (days, micros) with 0 <= micros < one day
// (see intervalSpan), each in 5 bytes: days biased by 2^39 (|days| < 2^37),
// micros unbiased (< 2^37).
const intervalDaysBias = 1 << 39

const usecsPerDay = 24 * 60 * 60 * 1_000_000

// intervalSpan returns iv's length, with 30-day months and 24-hour days, as
// days*usecsPerDay + micros with 0 <= micros < usecsPerDay: the pair orders
// intervals as PostgreSQL compares them, without the 128-bit arithmetic the
// span in microseconds would need.
func intervalSpan(iv types.IntervalValue) (days, micros int64) {
	days = 30*int64(iv.Months) + int64(iv.Days)
	q, r := iv.Micros/usecsPerDay, iv.Micros%usecsPerDay
	if r < 0 {
		q, r = q-1, r+usecsPerDay
	}
	return days + q, r
}

// intervalFromSpan returns an interval of the given span: as many whole
// 30-day months as fit, then days, then microseconds, all of one sign.
// It reports false if no interval has that span.
func intervalFromSpan(days, micros int64) (types.IntervalValue, bool) {
	if micros < 0 || micros >= usecsPerDay {
		return types.IntervalValue{}, false
	}
	if days < 0 && micros > 0 {
		days, micros = days+1, micros-usecsPerDay
	}
	months := clampInt32(days / 30)
	days -= 30 * int64(months)
	d := clampInt32(days)
	days -= int64(d)
	// What did not fit in months and days goes into micros.
	extra, err := MulWeight(days, usecsPerDay)
	if err != nil {
		return types.IntervalValue{}, false
	}
	micros, err = AddWeight(micros, extra)
	if err != nil {
		return types.IntervalValue{}, false
	}
	return types.IntervalValue{Months: months, Days: d, Micros: micros}, true
}

func clampInt32(x int64) int32 {
	return int32(min(max(x, math.MinInt32), math.MaxInt32))
}

// appendUint40 appends the low 40 bits of u big-endian.
func appendUint40(dst []byte, u uint64) []byte {
	return append(dst, byte(u>>32), byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}
