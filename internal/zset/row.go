package zset

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// Row tag bytes, one before every value in EncodeRow's format. The values
// are part of the on-disk format (docs/format/rows.md): never renumber; add
// new kinds at the end.
const (
	rowTagNull byte = iota
	rowTagFalse
	rowTagTrue
	rowTagInt2
	rowTagInt4
	rowTagInt8
	rowTagNumeric
	rowTagFloat4
	rowTagFloat8
	rowTagText
	rowTagBytea
	rowTagDate
	rowTagTimestamp
	rowTagTimestampTZ
	rowTagInterval
	rowTagArray
	rowTagOID
	rowTagReg   // then the alias type's offset from RegClass, the OID and the name
	rowTagJsonb // then the length and jsonb_out's text
	rowTagTime  // then the microseconds since midnight, a varint
	// rowTagShapedArray is an array of another shape than one dimension
	// with lower bound 1: the element kind, the dimension count (uvarint),
	// each dimension's length (uvarint) and lower bound (varint), then the
	// elements.
	rowTagShapedArray
	rowTagTimeTZ // then the microseconds since midnight and the zone (seconds west of UTC), varints
)

// Numeric header bits in EncodeRow's format.
const (
	rowNumFormMask  = 0x03 // apd.Form: Finite, Infinite, NaNSignaling, NaN
	rowNumNegative  = 0x04
	rowNumBigCoeff  = 0x08 // coefficient as length-prefixed big-endian bytes, not a uvarint
	rowNumKnownBits = rowNumFormMask | rowNumNegative | rowNumBigCoeff
)

// EncodeRow appends a compact, non-order-preserving encoding of row to dst
// (for state values).
//
// Decoding gives back exactly the values encoded: kind, numeric scale and
// sign, float bits (including -0; a REAL signaling NaN comes back quieted,
// as the float64 round trip of types.Value.Float does), interval fields.
func EncodeRow(dst []byte, row Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(row)))
	for _, v := range row {
		dst = appendRowValue(dst, v)
	}
	return dst
}

func appendRowValue(dst []byte, v types.Value) []byte {
	if v.Kind().IsArray() {
		elems := v.Elems()
		if v.IsPlainArray() {
			dst = append(dst, rowTagArray, byte(v.Kind().Elem()))
			dst = binary.AppendUvarint(dst, uint64(len(elems)))
		} else {
			dims, lbs := v.ArrayShape()
			dst = append(dst, rowTagShapedArray, byte(v.Kind().Elem()))
			dst = binary.AppendUvarint(dst, uint64(len(dims)))
			for i, d := range dims {
				dst = binary.AppendUvarint(dst, uint64(d))
				dst = binary.AppendVarint(dst, int64(lbs[i]))
			}
		}
		for _, e := range elems {
			dst = appendRowValue(dst, e)
		}
		return dst
	}
	switch v.Kind() {
	case types.KindNull:
		return append(dst, rowTagNull)
	case types.Bool:
		if v.Bool() {
			return append(dst, rowTagTrue)
		}
		return append(dst, rowTagFalse)
	case types.Int2:
		return binary.AppendVarint(append(dst, rowTagInt2), v.Int())
	case types.Int4:
		return binary.AppendVarint(append(dst, rowTagInt4), v.Int())
	case types.Int8:
		return binary.AppendVarint(append(dst, rowTagInt8), v.Int())
	case types.Float4:
		return binary.LittleEndian.AppendUint32(append(dst, rowTagFloat4), math.Float32bits(float32(v.Float())))
	case types.Float8:
		return binary.LittleEndian.AppendUint64(append(dst, rowTagFloat8), math.Float64bits(v.Float()))
	case types.Numeric:
		return appendRowNumeric(append(dst, rowTagNumeric), v.Decimal())
	case types.Text:
		s := v.Str()
		return append(binary.AppendUvarint(append(dst, rowTagText), uint64(len(s))), s...)
	case types.Bytea:
		s := v.Str()
		return append(binary.AppendUvarint(append(dst, rowTagBytea), uint64(len(s))), s...)
	case types.Date:
		return binary.AppendVarint(append(dst, rowTagDate), int64(v.Days()))
	case types.Time:
		return binary.AppendVarint(append(dst, rowTagTime), v.Micros())
	case types.TimeTZ:
		micros, zone := v.TimeTZ()
		return binary.AppendVarint(binary.AppendVarint(append(dst, rowTagTimeTZ), micros), int64(zone))
	case types.Timestamp:
		return binary.AppendVarint(append(dst, rowTagTimestamp), v.Micros())
	case types.TimestampTZ:
		return binary.AppendVarint(append(dst, rowTagTimestampTZ), v.Micros())
	case types.Interval:
		iv := v.Interval()
		dst = binary.AppendVarint(append(dst, rowTagInterval), int64(iv.Months))
		dst = binary.AppendVarint(dst, int64(iv.Days))
		return binary.AppendVarint(dst, iv.Micros)
	case types.Jsonb:
		s := types.FormatJSONB(v.JSONB())
		return append(binary.AppendUvarint(append(dst, rowTagJsonb), uint64(len(s))), s...)
	case types.Oid:
		return binary.AppendUvarint(append(dst, rowTagOID), uint64(v.OID()))
	case types.RegClass, types.RegType, types.RegProc, types.RegNamespace, types.RegRole:
		dst = append(dst, rowTagReg, byte(v.Kind()-types.RegClass))
		dst = binary.AppendUvarint(dst, uint64(v.OID()))
		s := v.Str()
		return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
	}
	panic(fmt.Sprintf("zset: cannot encode a value of kind %d in a row", v.Kind()))
}

// appendRowNumeric appends a header byte (form, sign, coefficient format),
// the exponent as a zigzag varint and the coefficient: a uvarint when it
// fits in 64 bits, else its length and big-endian bytes.
func appendRowNumeric(dst []byte, d *apd.Decimal) []byte {
	h := byte(d.Form) & rowNumFormMask
	if d.Negative {
		h |= rowNumNegative
	}
	small := d.Coeff.IsUint64()
	if !small {
		h |= rowNumBigCoeff
	}
	dst = append(dst, h)
	dst = binary.AppendVarint(dst, int64(d.Exponent))
	if small {
		return binary.AppendUvarint(dst, d.Coeff.Uint64())
	}
	b := d.Coeff.Bytes()
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// DecodeRow decodes a row encoded by EncodeRow.
func DecodeRow(b []byte) (Row, error) {
	return DecodeRowAppend(nil, b)
}

// DecodeRowAppend decodes a row encoded by EncodeRow, appending its values
// to dst (pass a reused row's [:0] to avoid allocating one per row). The
// text values of one row share one copy of b's bytes. On error it returns
// dst as it was.
func DecodeRowAppend(dst Row, b []byte) (Row, error) {
	start := len(dst)
	d := rowDecoder{b: b}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(b)) {
		// Every value takes at least one byte.
		d.fail("value count exceeds row length")
	}
	if d.err != nil {
		return dst, d.err
	}
	dst = growRow(dst, int(n))
	for i := uint64(0); i < n && d.err == nil; i++ {
		dst = append(dst, d.value())
	}
	if d.err == nil && d.pos != len(b) {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		clear(dst[start:])
		return dst[:start], d.err
	}
	return dst, nil
}

// growRow makes room for n more values in r. The capacity grows
// geometrically, so that decoding many rows into one buffer (a join's
// matches) copies each value a constant number of times on average.
func growRow(r Row, n int) Row { return slices.Grow(r, n) }

// rowDecoder reads EncodeRow's format with a sticky error: after the first
// failure every read returns a zero value and err stays set.
type rowDecoder struct {
	b   []byte
	pos int
	// str is b as a string, made on the first text value so that all the
	// row's strings share one allocation.
	str string
	err error
}

func (d *rowDecoder) fail(what string) {
	if d.err == nil {
		d.err = errs.Newf(errs.Internal, "corrupt row encoding at byte %d: %s", d.pos, what)
	}
}

func (d *rowDecoder) byte() byte {
	if d.err != nil || d.pos >= len(d.b) {
		d.fail("truncated")
		return 0
	}
	c := d.b[d.pos]
	d.pos++
	return c
}

func (d *rowDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	u, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.pos += n
	return u
}

func (d *rowDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b[d.pos:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.pos += n
	return x
}

// varintRange reads a varint that must lie in [lo, hi].
func (d *rowDecoder) varintRange(lo, hi int64) int64 {
	x := d.varint()
	if x < lo || x > hi {
		d.fail("value out of range for its type")
		return 0
	}
	return x
}

// bytes returns the next n bytes, or nil after a failure.
func (d *rowDecoder) bytes(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)-d.pos) {
		d.fail("truncated")
		return nil
	}
	s := d.b[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return s
}

// uvarintMax reads an unsigned varint no greater than hi.
func (d *rowDecoder) uvarintMax(hi uint64) uint64 {
	u := d.uvarint()
	if u > hi {
		d.fail("value out of range")
		return 0
	}
	return u
}

// string returns the next n bytes as a substring of the row's one string.
func (d *rowDecoder) string(n uint64) string {
	start := d.pos
	if d.bytes(n) == nil || n == 0 {
		return ""
	}
	if d.str == "" {
		d.str = string(d.b)
	}
	return d.str[start : start+int(n)]
}

// arrayShape reads the dimensions of a rowTagShapedArray and returns them
// with the element count; the shape must be a valid one that is not one
// dimension with lower bound 1.
func (d *rowDecoder) arrayShape() (dims, lbs []int, n uint64) {
	nd := d.uvarint()
	if nd < 1 || nd > types.MaxArrayDims {
		d.fail("bad array shape")
		return nil, nil, 0
	}
	dims, lbs = make([]int, nd), make([]int, nd)
	n = 1
	for i := range dims {
		l, lb := d.uvarint(), d.varint()
		if l < 1 || l > uint64(len(d.b)) || lb < math.MinInt32 || lb > math.MaxInt32 {
			d.fail("bad array shape")
			return nil, nil, 0
		}
		dims[i], lbs[i] = int(l), int(lb)
		if n *= l; n > uint64(len(d.b)) {
			d.fail("bad array shape")
			return nil, nil, 0
		}
	}
	if d.err == nil && (types.CheckArrayShape(dims, lbs) != nil || nd == 1 && lbs[0] == 1) {
		d.fail("bad array shape")
	}
	return dims, lbs, n
}

func (d *rowDecoder) value() types.Value {
	return d.valueAt(0)
}

// valueAt decodes a value at array nesting depth depth: the elements of an
// array (depth 1) cannot be arrays.
func (d *rowDecoder) valueAt(depth int) types.Value {
	switch tag := d.byte(); tag {
	case rowTagArray, rowTagShapedArray:
		elem := types.Kind(d.byte())
		var dims, lbs []int
		n := uint64(0)
		if tag == rowTagArray {
			n = d.uvarint()
		} else {
			dims, lbs, n = d.arrayShape()
		}
		if d.err != nil || depth > 0 || !types.HasArrayType(elem) || elem == types.Varchar || n > uint64(len(d.b)-d.pos) {
			d.fail("bad array")
			return types.Null
		}
		elems := make([]types.Value, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			e := d.valueAt(depth + 1)
			if !e.IsNull() && e.Kind() != elem {
				d.fail("array element of another kind")
			}
			elems = append(elems, e)
		}
		if d.err == nil && dims != nil {
			return types.MakeArrayShape(elem, elems, dims, lbs)
		}
		if d.err == nil {
			return types.MakeArray(elem, elems)
		}
	case rowTagNull:
		return types.Null
	case rowTagFalse, rowTagTrue:
		return types.MakeBool(tag == rowTagTrue)
	case rowTagInt2:
		return types.MakeInt(types.Int2, d.varintRange(math.MinInt16, math.MaxInt16))
	case rowTagInt4:
		return types.MakeInt(types.Int4, d.varintRange(math.MinInt32, math.MaxInt32))
	case rowTagInt8:
		return types.MakeInt(types.Int8, d.varint())
	case rowTagFloat4:
		if b := d.bytes(4); b != nil {
			return types.MakeFloat4(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		}
	case rowTagFloat8:
		if b := d.bytes(8); b != nil {
			return types.MakeFloat8(math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
	case rowTagNumeric:
		if dec := d.numeric(); dec != nil {
			return types.MakeNumeric(dec)
		}
	case rowTagText:
		s := d.string(d.uvarint())
		if d.err == nil {
			return types.MakeText(s)
		}
	case rowTagBytea:
		if b := d.bytes(d.uvarint()); d.err == nil {
			return types.MakeBytea(b) // MakeBytea copies
		}
	case rowTagDate:
		return types.MakeDate(int32(d.varintRange(math.MinInt32, math.MaxInt32)))
	case rowTagTimestamp:
		return types.MakeTimestamp(d.varint())
	case rowTagTime:
		return types.MakeTime(d.varintRange(0, 86_400_000_000))
	case rowTagTimeTZ:
		micros := d.varintRange(0, 86_400_000_000)
		return types.MakeTimeTZ(micros, int32(d.varintRange(math.MinInt32, math.MaxInt32)))
	case rowTagTimestampTZ:
		return types.MakeTimestampTZ(d.varint())
	case rowTagInterval:
		months := d.varintRange(math.MinInt32, math.MaxInt32)
		days := d.varintRange(math.MinInt32, math.MaxInt32)
		micros := d.varint()
		return types.MakeInterval(types.IntervalValue{Months: int32(months), Days: int32(days), Micros: micros})
	case rowTagJsonb:
		s := d.string(d.uvarint())
		if d.err != nil {
			return types.Null
		}
		j, err := types.ParseJSONB(s)
		if err != nil {
			d.fail("bad jsonb text")
			return types.Null
		}
		return types.MakeJSONB(j)
	case rowTagOID:
		return types.MakeOID(uint32(d.uvarintMax(math.MaxUint32)))
	case rowTagReg:
		alias := d.byte()
		if alias > byte(types.RegRole-types.RegClass) {
			d.fail("bad OID alias type")
			return types.Null
		}
		oid := uint32(d.uvarintMax(math.MaxUint32))
		name := d.string(d.uvarint())
		if d.err == nil {
			return types.MakeReg(types.RegClass+types.TypeID(alias), oid, name)
		}
	default:
		d.pos--
		d.fail(fmt.Sprintf("unknown tag %d", tag))
	}
	return types.Null
}

func (d *rowDecoder) numeric() *apd.Decimal {
	h := d.byte()
	if h&^rowNumKnownBits != 0 {
		d.fail("bad numeric header")
	}
	exp := d.varintRange(math.MinInt32, math.MaxInt32)
	dec := &apd.Decimal{
		Form:     apd.Form(h & rowNumFormMask),
		Negative: h&rowNumNegative != 0,
		Exponent: int32(exp),
	}
	if h&rowNumBigCoeff != 0 {
		if b := d.bytes(d.uvarint()); b != nil {
			dec.Coeff.SetBytes(b)
		}
	} else {
		dec.Coeff.SetUint64(d.uvarint())
	}
	if d.err != nil {
		return nil
	}
	return dec
}

// hasKeyLossyValue reports whether row holds a value of a kind whose key
// encodes its equality class rather than its exact representation: floats
// (-0, NaN payloads), numerics (scale) and intervals (months/days split).
func hasKeyLossyValue(row Row) bool {
	for _, v := range row {
		k := v.Kind()
		if k.IsArray() {
			k = k.Elem()
		}
		switch k {
		case types.Float4, types.Float8, types.Numeric, types.Interval, types.Jsonb:
			return true
		}
	}
	return false
}

// identicalRows reports whether a and b hold the same values written the
// same way: whether EncodeRow encodes them to the same bytes.
func identicalRows(a, b Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !identicalValues(a[i], b[i]) {
			return false
		}
	}
	return true
}

// IdenticalValues reports whether x and y have the same kind and exact
// representation (float bits, numeric form, sign, exponent and
// coefficient, interval fields, array elements): whether EncodeRow
// encodes them to the same bytes.
func IdenticalValues(x, y types.Value) bool { return identicalValues(x, y) }

func identicalValues(x, y types.Value) bool {
	if x.Kind() != y.Kind() {
		return false
	}
	switch x.Kind() {
	case types.KindNull:
		return true
	case types.Bool:
		return x.Bool() == y.Bool()
	case types.Int2, types.Int4, types.Int8:
		return x.Int() == y.Int()
	case types.Float4:
		return math.Float32bits(float32(x.Float())) == math.Float32bits(float32(y.Float()))
	case types.Float8:
		return math.Float64bits(x.Float()) == math.Float64bits(y.Float())
	case types.Numeric:
		p, q := x.Decimal(), y.Decimal()
		return p.Form == q.Form && p.Negative == q.Negative && p.Exponent == q.Exponent &&
			p.Coeff.Cmp(&q.Coeff) == 0
	case types.Text, types.Bytea:
		return x.Str() == y.Str()
	case types.Date:
		return x.Days() == y.Days()
	case types.Timestamp, types.TimestampTZ, types.Time:
		return x.Micros() == y.Micros()
	case types.Interval:
		return x.Interval() == y.Interval()
	case types.TimeTZ:
		xm, xz := x.TimeTZ()
		ym, yz := y.TimeTZ()
		return xm == ym && xz == yz
	case types.Jsonb:
		return types.FormatJSONB(x.JSONB()) == types.FormatJSONB(y.JSONB())
	case types.Oid, types.RegClass, types.RegType, types.RegProc, types.RegNamespace, types.RegRole:
		// The identifier and the name it prints as (resolved when the value
		// was made).
		return x.OID() == y.OID() && x.Str() == y.Str()
	}
	if x.Kind().IsArray() {
		dx, lx := x.ArrayShape()
		dy, ly := y.ArrayShape()
		return slices.Equal(dx, dy) && slices.Equal(lx, ly) && identicalRows(x.Elems(), y.Elems())
	}
	return false
}
