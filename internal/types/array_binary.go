package types

import (
	"encoding/binary"
	"errors"

	"github.com/rockstream/rockstream/internal/errs"
)

// The binary format of arrays, as PostgreSQL's array_send and array_recv:
//
//	int32 ndim            number of dimensions; 0 for the empty array
//	int32 flags           1 when some element is NULL, else 0
//	int32 element OID     the element type's OID (varchar elements: 1043)
//	ndim × (int32 length, int32 lower bound)
//	each element: int32 byte length (-1 for NULL), then its binary value
//
// The receive function checks the shape as array_recv does (dimensions,
// sizes, bounds) and keeps it.

// appendArrayBinary is array_send for the array v of array type t.
func appendArrayBinary(dst []byte, v Value, t Type) ([]byte, error) {
	et := t.Elem()
	elems := v.Elems()
	if len(elems) == 0 {
		dst = binary.BigEndian.AppendUint32(dst, 0)
		dst = binary.BigEndian.AppendUint32(dst, 0)
		return binary.BigEndian.AppendUint32(dst, et.OID()), nil
	}
	hasNull := uint32(0)
	for _, e := range elems {
		if e.IsNull() {
			hasNull = 1
			break
		}
	}
	dims, lbs := v.ArrayShape()
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(dims)))
	dst = binary.BigEndian.AppendUint32(dst, hasNull)
	dst = binary.BigEndian.AppendUint32(dst, et.OID())
	for i, d := range dims {
		dst = binary.BigEndian.AppendUint32(dst, uint32(d))
		dst = binary.BigEndian.AppendUint32(dst, uint32(int32(lbs[i])))
	}
	for _, e := range elems {
		if e.IsNull() {
			dst = binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
			continue
		}
		at := len(dst)
		dst = binary.BigEndian.AppendUint32(dst, 0)
		var err error
		if dst, err = AppendBinary(dst, e, et); err != nil {
			return dst, err
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

// parseArrayBinary is array_recv for the array type t, with its checks in
// PostgreSQL's order.
func parseArrayBinary(src []byte, t Type) (Value, error) {
	et := t.Elem()
	r := binReader{b: src}
	ndim := r.int32()
	if r.err == nil && ndim < 0 {
		return Null, errs.Newf(errs.InvalidBinaryRep, "invalid number of dimensions: %d", ndim)
	}
	if r.err == nil && ndim > MaxArrayDims {
		return Null, errs.Newf(errs.ProgramLimitExceeded, "number of array dimensions (%d) exceeds the maximum allowed (%d)", ndim, MaxArrayDims)
	}
	flags := r.int32()
	if r.err == nil && flags != 0 && flags != 1 {
		return Null, errs.New(errs.InvalidBinaryRep, "invalid array flags")
	}
	oid := uint32(r.int32())
	if r.err == nil && oid != et.OID() && oid < firstGenbkiObjectID {
		return Null, errs.Newf(errs.DatatypeMismatch, "binary data has array element type %d (%s) instead of expected %d (%s)",
			oid, oidTypeName(oid), et.OID(), et.ID.baseName())
	}
	dims := make([]int32, 0, 1)
	for i := int32(0); i < ndim && r.err == nil; i++ {
		n, lb := r.int32(), r.int32()
		dims = append(dims, n, lb)
	}
	if r.err != nil {
		return Null, r.err
	}
	nitems := int64(1)
	for i := 0; i < len(dims); i += 2 {
		if dims[i] < 0 {
			return Null, errs.Newf(errs.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", maxArraySize)
		}
		nitems *= int64(dims[i])
		if nitems > maxArraySize {
			return Null, errs.Newf(errs.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", maxArraySize)
		}
		if int64(dims[i+1])+int64(dims[i]) > 1<<31-1 {
			return Null, errs.Newf(errs.ProgramLimitExceeded, "array lower bound is too large: %d", dims[i+1])
		}
	}
	if ndim == 0 || nitems == 0 {
		return MakeArray(et.ID, nil), trailing(src, r.pos)
	}
	shape, lbs := make([]int, ndim), make([]int, ndim)
	for i := range shape {
		shape[i], lbs[i] = int(dims[2*i]), int(dims[2*i+1])
	}
	elems := make([]Value, nitems)
	for i := range elems {
		n := r.int32()
		if r.err != nil {
			return Null, r.err
		}
		if n < -1 || int(n) > len(src)-r.pos {
			return Null, errs.New(errs.InvalidBinaryRep, "insufficient data left in message")
		}
		if n == -1 {
			continue
		}
		e, err := ParseBinary(src[r.pos:r.pos+int(n)], et)
		if errors.Is(err, ErrIncorrectBinaryFormat) {
			return Null, errs.Newf(errs.InvalidBinaryRep, "improper binary format in array element %d", i+1)
		}
		if err != nil {
			return Null, err
		}
		elems[i] = e
		r.pos += int(n)
	}
	return MakeArrayShape(et.ID, elems, shape, lbs), trailing(src, r.pos)
}

// maxArraySize is PostgreSQL's MaxArraySize: the most elements an array
// can have.
const maxArraySize = (1<<30 - 1) / 8

// firstGenbkiObjectID is PostgreSQL's FirstGenbkiObjectId: OIDs below it
// are built-in types, whose mismatch array_recv reports.
const firstGenbkiObjectID = 10000

// oidTypeName names a type OID as format_type_extended does for the
// mismatch message: the type's name, or "???" for an unknown OID.
func oidTypeName(oid uint32) string {
	if t, ok := TypeByOID(oid); ok {
		return t.String()
	}
	if name, ok := otherTypeNames[oid]; ok {
		return name
	}
	return "???"
}

// otherTypeNames are built-in types RockStream does not have, by OID, for
// array_recv's mismatch message.
var otherTypeNames = map[uint32]string{
	18: "\"char\"", 19: "name", 26: "oid", 114: "json", 1042: "character", 1083: "time without time zone",
	2950: "uuid", 3802: "jsonb",
}

// binReader reads big-endian integers with a sticky error, as
// PostgreSQL's pq_getmsgint.
type binReader struct {
	b   []byte
	pos int
	err error
}

func (r *binReader) int32() int32 {
	if r.err != nil {
		return 0
	}
	if len(r.b)-r.pos < 4 {
		r.err = errInsufficientData
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.pos:]))
	r.pos += 4
	return v
}
