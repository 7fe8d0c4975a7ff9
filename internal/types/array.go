package types

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"
)

// Arrays are PostgreSQL's: up to six dimensions, each with a length and a
// lower bound (1 unless the value says otherwise). An array type's TypeID
// is its element type's ID with the array flag set (ArrayOf), so integer[]
// is ArrayOf(Int4), whatever the number of dimensions of its values (as in
// PostgreSQL, integer[][] is integer[]); the modifiers of an array Type
// (NUMERIC(p,s), VARCHAR(n), TIMESTAMP(p)) are its elements'.
//
// An array Value's kind is ArrayOf(element kind) — an array of VARCHAR has
// kind ArrayOf(Text), as a VARCHAR value has kind Text — and it holds its
// elements in row-major order (the last subscript varying fastest), each
// NULL or of the element kind, and its shape (array_shape.go). The empty
// array has no dimensions (array_length is NULL, cardinality 0), as in
// PostgreSQL.

// arrayFlag marks an array TypeID. Element type IDs are below it and the
// phantom types of funcs.go above arrayFlag|maxElem.
const arrayFlag TypeID = 0x40

// IsArray reports whether id is an array type.
func (id TypeID) IsArray() bool { return id&^(arrayFlag-1) == arrayFlag }

// Elem returns the element type of an array type ID, or Unknown when id
// is not an array.
func (id TypeID) Elem() TypeID {
	if !id.IsArray() {
		return Unknown
	}
	return id &^ arrayFlag
}

// ArrayOf returns the array type ID over the element type ID elem, which
// must be a base type (not Unknown, not an array).
func ArrayOf(elem TypeID) TypeID {
	if elem == Unknown || elem >= arrayFlag {
		panic(fmt.Sprintf("types.ArrayOf: no array type over %s", elem.baseName()))
	}
	return elem | arrayFlag
}

// HasArrayType reports whether elem has an array type (ArrayOf(elem) is
// defined).
func HasArrayType(elem TypeID) bool {
	return elem != Unknown && (elem <= Jsonb || elem == Time || elem == TimeTZ || IsCatalogType(elem))
}

// ArrayType returns the array type whose elements have type elem (with its
// modifiers): ArrayType(NumericType(10,2)) is numeric(10,2)[].
func ArrayType(elem Type) Type {
	elem.ID = ArrayOf(elem.ID)
	return elem
}

// Elem returns the element type of an array type, with the array's
// modifiers; for a non-array type it returns Of(Unknown).
func (t Type) Elem() Type {
	if !t.ID.IsArray() {
		return Of(Unknown)
	}
	t.ID = t.ID.Elem()
	t.Vector = false
	return t
}

// arrayOID is the OID of the array type over each element type, as in
// pg_type's typarray.
var arrayOID = map[TypeID]uint32{
	Bool: 1000, Int2: 1005, Int4: 1007, Int8: 1016, Numeric: 1231,
	Float4: 1021, Float8: 1022, Text: 1009, Varchar: 1015, Bytea: 1001,
	Date: 1182, Time: 1183, TimeTZ: 1270, Timestamp: 1115, TimestampTZ: 1185, Interval: 1187, Jsonb: 3807,
}

// MakeArray returns an array value whose elements have kind elem (each
// element NULL or of kind elem; the element type VARCHAR is taken as its
// kind, Text). The array keeps elems, which the caller must not modify
// afterwards.
func MakeArray(elem Kind, elems []Value) Value {
	return Value{kind: ArrayOf(valueKindOf(elem)), ref: unsafe.Pointer(&arrayData{elems: elems})}
}

// arrayData is the body of an array value.
type arrayData struct {
	elems []Value
	// dims and lbs are the lengths and lower bounds of the dimensions,
	// outermost first. Both are nil for the empty array and for a
	// one-dimensional array with lower bound 1, the common shape, so that
	// such an array costs no more than its elements (MakeArrayShape
	// keeps to this).
	dims, lbs []int
}

// Elems returns an array value's elements (nil for the empty array). The
// slice must not be modified.
func (v Value) Elems() []Value {
	if b := v.arrayBody(); b != nil {
		return b.elems
	}
	return nil
}

// compareArrays orders arrays as PostgreSQL's array_cmp: element by element
// in row-major order (NULL elements after all others and equal to each
// other), then the array with fewer elements first, then fewer
// dimensions, then the dimension lengths, then the lower bounds, each
// outermost first. Arrays are equal only when their shapes are.
func compareArrays(a, b Value) int {
	x, y := a.Elems(), b.Elems()
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := Compare(x[i], y[i]); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	dx, lx := a.ArrayShape()
	dy, ly := b.ArrayShape()
	if c := cmp.Compare(len(dx), len(dy)); c != 0 {
		return c
	}
	if c := slices.Compare(dx, dy); c != 0 {
		return c
	}
	return slices.Compare(lx, ly)
}

// castArray converts an array to the array type t element by element, as
// PostgreSQL's array_map applies the element cast.
func castArray(v Value, t Type, explicit bool) (Value, error) {
	et := t.Elem()
	in := v.Elems()
	out := make([]Value, len(in))
	for i, e := range in {
		c, err := Cast(e, et, explicit)
		if err != nil {
			return Null, err
		}
		out[i] = c
	}
	return v.WithElems(valueKindOf(et.ID), out), nil
}

// valueKindOf returns the kind of the values of type id: Text for VARCHAR,
// id itself otherwise.
func valueKindOf(id TypeID) Kind {
	if id == Varchar || id == Name || id == Char {
		return Text
	}
	return id
}

// arrayCastContext is CastContext when either side is an array: between
// arrays, the element types' cast context (as PostgreSQL's array coercion);
// from text, the input function (explicit); to text, the output function
// (assignment).
func arrayCastContext(from, to TypeID) CastKind {
	switch {
	case from.IsArray() && to.IsArray():
		return CastContext(from.Elem(), to.Elem())
	case to.IsArray() && (from == Text || from == Varchar):
		return ExplicitCast
	case from.IsArray() && (to == Text || to == Varchar):
		return AssignmentCast
	}
	return NoCast
}
