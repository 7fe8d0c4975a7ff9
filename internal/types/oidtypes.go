package types

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// The system catalog's types: object identifiers, their name-printing
// aliases (regclass, regtype, ...), name and "char". They exist so that
// pg_catalog's relations have PostgreSQL's column types and clients'
// catalog queries resolve as they do in PostgreSQL.
//
// Representation:
//   - OID: the identifier in the word (0..4294967295).
//   - REGCLASS, REGTYPE, REGPROC, REGNAMESPACE, REGROLE: the identifier in
//     the word and the object's name, as its output function prints it, in
//     the string ("" when the identifier names no object; it then prints
//     as a number, and 0 prints as "-"). The name is resolved when the
//     value is made (CastReg, with the catalog at hand), so Format needs
//     no catalog. Values compare by identifier only.
//   - NAME and "char": values have kind Text (as VARCHAR's do); the type
//     bounds them (63 bytes; one byte).
const (
	Oid TypeID = 32 + iota
	RegClass
	RegType
	RegProc
	RegNamespace
	RegRole
	Name
	Char
)

func init() {
	for id, c := range oidTypeInfo {
		arrayOID[id] = catalogArrayOIDs[c.typname]
	}
}

// catalogArrayOIDs are pg_type.typarray of the catalog types.
var catalogArrayOIDs = map[string]uint32{
	"oid": 1028, "regclass": 2210, "regtype": 2211, "regproc": 1008, "regnamespace": 4090,
	"regrole": 4097, "name": 1003, "char": 1002,
}

// maxNameBytes is PostgreSQL's NAMEDATALEN - 1: names keep at most 63
// bytes.
const maxNameBytes = 63

// IsCatalogType reports whether id is one of the catalog types above.
func IsCatalogType(id TypeID) bool { return id >= Oid && id <= Char }

// IsReg reports whether id is one of the name-printing OID alias types.
func IsReg(id TypeID) bool { return id >= RegClass && id <= RegRole }

// isOIDKind reports whether values of kind k hold an OID.
func isOIDKind(k Kind) bool { return k >= Oid && k <= RegRole }

// MakeOID returns an OID value.
func MakeOID(oid uint32) Value { return Value{kind: Oid, n: int64(oid)} }

// MakeReg returns a value of the OID alias type id (RegClass, ...) naming
// the object oid, printed as name ("" prints the number).
func MakeReg(id TypeID, oid uint32, name string) Value {
	return Value{kind: id, n: int64(oid), s: name}
}

// OID returns an OID or OID alias value's identifier.
func (v Value) OID() uint32 { return uint32(v.n) }

// oidTypeInfo is the pg_type facts of the catalog types.
var oidTypeInfo = map[TypeID]struct {
	name, typname string
	oid           uint32
}{
	Oid:          {"oid", "oid", 26},
	RegClass:     {"regclass", "regclass", 2205},
	RegType:      {"regtype", "regtype", 2206},
	RegProc:      {"regproc", "regproc", 24},
	RegNamespace: {"regnamespace", "regnamespace", 4089},
	RegRole:      {"regrole", "regrole", 4096},
	Name:         {"name", "name", 19},
	Char:         {`"char"`, "char", 18},
}

// catalogTypeAliases are the names of the catalog types in TypeByName.
var catalogTypeAliases = map[string]TypeID{
	"oid": Oid, "regclass": RegClass, "regtype": RegType, "regproc": RegProc,
	"regnamespace": RegNamespace, "regrole": RegRole, "name": Name, "char": Char,
}

// catalogCastContext is CastContext for casts that involve a catalog type
// (pg_cast's rows for them); ok is false when neither type is one.
func catalogCastContext(from, to TypeID) (k CastKind, ok bool) {
	_, f := oidTypeInfo[from]
	_, t := oidTypeInfo[to]
	if !f && !t {
		return NoCast, false
	}
	switch {
	case from == Name || from == Char:
		switch to {
		case Text:
			return ImplicitCast, true
		case Varchar:
			return AssignmentCast, true
		case Name, Char:
			return ExplicitCast, true
		}
		if from == Name {
			return ExplicitCast, true // I/O conversion from a string type
		}
		return NoCast, true
	case to == Name:
		switch from {
		case Text, Varchar:
			return ImplicitCast, true
		}
		return NoCast, true
	case to == Char:
		switch from {
		case Text, Varchar:
			return AssignmentCast, true
		case Int4:
			return ExplicitCast, true
		}
		return NoCast, true
	case isOIDKind(from) && isOIDKind(to):
		if from == Oid || to == Oid {
			return ImplicitCast, true // binary-coercible
		}
		return NoCast, true
	case isOIDKind(to):
		switch from {
		case Int2, Int4, Int8:
			return ImplicitCast, true
		case Text, Varchar:
			if to == RegClass {
				return ImplicitCast, true // text_regclass
			}
			return ExplicitCast, true
		}
		return NoCast, true
	case isOIDKind(from):
		switch to {
		case Int4, Int8:
			return AssignmentCast, true
		case Text, Varchar:
			return AssignmentCast, true
		}
		return NoCast, true
	}
	return NoCast, true
}

// castCatalog is Cast for a catalog target type. Names for OID alias types
// are not resolved here (CastReg does that); such a value prints as its
// number.
func castCatalog(v Value, t Type) (Value, error) {
	from := v.kind
	switch t.ID {
	case Oid:
		switch {
		case isOIDKind(from):
			return MakeOID(v.OID()), nil
		case isIntKind(from):
			return intToOID(v.n, from)
		}
	case RegClass, RegType, RegProc, RegNamespace, RegRole:
		switch {
		case from == t.ID:
			return v, nil
		case from == Oid:
			return MakeReg(t.ID, v.OID(), ""), nil
		case isIntKind(from):
			o, err := intToOID(v.n, from)
			if err != nil {
				return Null, err
			}
			return MakeReg(t.ID, o.OID(), ""), nil
		}
	case Int4:
		if isOIDKind(from) {
			return MakeInt(Int4, int64(int32(uint32(v.n)))), nil
		}
	case Int8:
		if isOIDKind(from) {
			return MakeInt(Int8, v.n), nil
		}
	case Name:
		if from == Text {
			return MakeText(truncateName(v.s)), nil
		}
	case Char:
		switch from {
		case Text:
			return MakeText(charOf(v.s)), nil
		case Int4:
			if v.n < -128 || v.n > 127 {
				return Null, errs.New(errs.NumericOutOfRange, `"char" out of range`)
			}
			return MakeText(charText(byte(v.n))), nil
		}
	}
	return Null, cannotCast(from, t)
}

// intToOID converts an integer to an OID as PostgreSQL's casts do: a
// negative smallint or integer wraps (-1 is 4294967295), and a bigint
// outside 0..2^32-1 is out of range.
func intToOID(n int64, from Kind) (Value, error) {
	if from == Int8 && (n < 0 || n > 1<<32-1) {
		return Null, errs.New(errs.NumericOutOfRange, "OID out of range")
	}
	return MakeOID(uint32(n)), nil
}

// truncateName cuts s to at most 63 bytes on a character boundary, as
// name's input function does.
func truncateName(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	cut := maxNameBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut]
}

// charOf is "char"'s input: the first byte of s ("" for the empty
// string, whose "char" is the zero byte), or the byte written in octal as
// \ooo. A value holds its output text: a byte with the high bit set is
// kept as \ooo, as charout prints it.
func charOf(s string) string {
	if s == "" {
		return ""
	}
	if len(s) == 4 && s[0] == '\\' && isOctal(s[1]) && isOctal(s[2]) && isOctal(s[3]) {
		b := (s[1]-'0')<<6 | (s[2]-'0')<<3 | (s[3] - '0')
		return charText(b)
	}
	return charText(s[0])
}

// charText is charout of the byte b.
func charText(b byte) string {
	switch {
	case b == 0:
		return ""
	case b >= 0x80:
		return string([]byte{'\\', '0' + b>>6, '0' + b>>3&7, '0' + b&7})
	}
	return string([]byte{b})
}

// parseCatalog parses text as a catalog type. OID alias types accept only
// a numeric OID (or "-" for 0) here; names need the catalog (CastReg).
func parseCatalog(t Type, s string) (Value, error) {
	switch t.ID {
	case Oid:
		return parseOID(s)
	case Name:
		return MakeText(truncateName(s)), nil
	case Char:
		return MakeText(charOf(s)), nil
	}
	if o, ok, err := regNumber(t.ID, s); ok || err != nil {
		return MakeReg(t.ID, o, ""), err
	}
	return Null, errs.Newf(errs.FeatureNotSupported, "%s input needs the catalog: cast the text in a query", t.ID.baseName())
}

// regNumber reads an OID alias's numeric input: digits are an OID, "-" is
// 0. ok is false when s is a name.
func regNumber(id TypeID, s string) (uint32, bool, error) {
	if s == "-" {
		return 0, true, nil
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false, nil
	}
	v, err := parseOID(s)
	if err != nil {
		return 0, true, err
	}
	return v.OID(), true, nil
}

// parseOID is oidin: an integer from -2147483648 to 4294967295 with
// optional surrounding spaces; negative values wrap.
func parseOID(s string) (Value, error) {
	t := strings.TrimSpace(s)
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return Null, errs.Newf(errs.NumericOutOfRange, "value %s is out of range for type oid", quoteInput(s))
		}
		return Null, errs.Newf(errs.InvalidTextRep, "invalid input syntax for type oid: %s", quoteInput(s))
	}
	if n < -1<<31 || n > 1<<32-1 {
		return Null, errs.Newf(errs.NumericOutOfRange, "value %s is out of range for type oid", quoteInput(s))
	}
	return MakeOID(uint32(n)), nil
}

// appendCatalogFormat appends the output text of an OID or OID alias
// value.
func appendCatalogFormat(dst []byte, v Value) []byte {
	if v.kind != Oid {
		if v.s != "" {
			return append(dst, v.s...)
		}
		if v.n == 0 {
			return append(dst, '-')
		}
	}
	return strconv.AppendUint(dst, uint64(uint32(v.n)), 10)
}

// RegCatalog resolves the names of the OID alias types: the system
// catalog as one query sees it.
type RegCatalog interface {
	// RegLookup returns the OID of the object of alias type id named
	// name, as that type's input function reads it (regclass:
	// "[schema.]relation", regtype: a type name, ...), and the name its
	// output function prints. A name that names nothing fails with
	// PostgreSQL's error (42P01 for a relation, 42704 for a type or role,
	// 3F000 for a schema).
	RegLookup(id TypeID, name string) (oid uint32, display string, err error)
	// RegName returns the printed name of the object of alias type id
	// with the given OID; ok is false when there is none.
	RegName(id TypeID, oid uint32) (display string, ok bool)
}

// CastReg is Cast for a cast whose target or source is an OID alias type:
// text input looks the name up in cat, and an OID gets its object's name.
// A cast of other types is Cast's.
func CastReg(v Value, t Type, explicit bool, cat RegCatalog) (Value, error) {
	if v.IsNull() || !IsReg(t.ID) || cat == nil {
		return Cast(v, t, explicit)
	}
	if v.kind == Text {
		s := strings.TrimSpace(v.s)
		if o, ok, err := regNumber(t.ID, s); ok || err != nil {
			if err != nil {
				return Null, err
			}
			name, _ := cat.RegName(t.ID, o)
			return MakeReg(t.ID, o, name), nil
		}
		o, name, err := cat.RegLookup(t.ID, s)
		if err != nil {
			return Null, err
		}
		return MakeReg(t.ID, o, name), nil
	}
	r, err := Cast(v, t, explicit)
	if err != nil || r.IsNull() {
		return r, err
	}
	name, _ := cat.RegName(t.ID, r.OID())
	return MakeReg(t.ID, r.OID(), name), nil
}

// appendCatalogBinary is the binary output of the catalog types: an OID
// (and every OID alias) as 4 bytes big-endian, a name as its bytes, a
// "char" as its byte.
func appendCatalogBinary(dst []byte, v Value, t Type) ([]byte, error) {
	switch {
	case isOIDKind(t.ID) && isOIDKind(v.kind):
		return binary.BigEndian.AppendUint32(dst, v.OID()), nil
	case t.ID == Name && v.kind == Text:
		return append(dst, v.s...), nil
	case t.ID == Char && v.kind == Text:
		return append(dst, charByte(v.s)), nil
	}
	return dst, errs.Newf(errs.Internal, "a %s value cannot be sent as %s", v.kind, t)
}

// parseCatalogBinary is the binary input of the catalog types. An OID
// alias arrives as its OID, without a name.
func parseCatalogBinary(src []byte, t Type) (Value, error) {
	switch t.ID {
	case Name:
		return MakeText(truncateName(string(src))), nil
	case Char:
		if len(src) < 1 {
			return Null, errInsufficientData
		}
		return MakeText(charText(src[0])), trailing(src, 1)
	}
	if len(src) < 4 {
		return Null, errInsufficientData
	}
	o := binary.BigEndian.Uint32(src)
	if t.ID == Oid {
		return MakeOID(o), trailing(src, 4)
	}
	return MakeReg(t.ID, o, ""), trailing(src, 4)
}

// charByte is the byte a "char" value's text stands for.
func charByte(s string) byte {
	switch {
	case s == "":
		return 0
	case len(s) == 4 && s[0] == '\\':
		return (s[1]-'0')<<6 | (s[2]-'0')<<3 | (s[3] - '0')
	}
	return s[0]
}
