package types

import "strconv"

// PostgreSQL's int2vector and oidvector, the system catalog's vector types
// (pg_index.indkey, pg_proc.proargtypes, ...). A vector is an array of
// int2 or oid that differs from int2[] and oid[] only at the edges:
//   - its type has OID 22 (int2vector) or 30 (oidvector) and its own name;
//   - its text output is the elements separated by single spaces ("1 2"),
//     the empty vector printing as the empty string;
//   - it is subscripted from 0, as PostgreSQL stores vectors with lower
//     bound 0 (indkey[0] is the first column).
//
// A vector Type is an array Type (ID ArrayOf(Int2) or ArrayOf(Oid)) with
// Vector set, so every array operation (unnest, ANY, casts to regtype[],
// array_to_string, ...) applies unchanged; its values are plain arrays.
// Vectors have no NULL elements. They exist only as pg_catalog column
// types: TypeByName does not accept their names.

// Int2VectorType returns the type int2vector.
func Int2VectorType() Type {
	t := Of(ArrayOf(Int2))
	t.Vector = true
	return t
}

// OidVectorType returns the type oidvector.
func OidVectorType() Type {
	t := Of(ArrayOf(Oid))
	t.Vector = true
	return t
}

// Vector type OIDs, as in pg_type.
const (
	int2VectorOID = 22
	oidVectorOID  = 30
)

// vectorName returns the name of the vector type t ("int2vector").
func vectorName(t Type) string {
	if t.ID == ArrayOf(Oid) {
		return "oidvector"
	}
	return "int2vector"
}

// vectorOID returns the pg_type OID of the vector type t.
func vectorOID(t Type) uint32 {
	if t.ID == ArrayOf(Oid) {
		return oidVectorOID
	}
	return int2VectorOID
}

// vectorByOID returns the vector type with the given OID.
func vectorByOID(oid uint32) (Type, bool) {
	switch oid {
	case int2VectorOID:
		return Int2VectorType(), true
	case oidVectorOID:
		return OidVectorType(), true
	}
	return Type{}, false
}

// appendVectorText appends int2vectorout's or oidvectorout's text of the
// vector v: its elements separated by spaces.
func appendVectorText(dst []byte, v Value) []byte {
	for i, e := range v.Elems() {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = strconv.AppendInt(dst, e.n, 10)
	}
	return dst
}

// VectorSubscript returns v[i] of the vector v, counting from 0; NULL when
// i is out of range or either is NULL.
func VectorSubscript(v, i Value) Value {
	if i.IsNull() {
		return Null
	}
	return ArraySubscript(v, MakeInt(Int4, i.Int()+1))
}
