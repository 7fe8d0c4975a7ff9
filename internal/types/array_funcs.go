package types

import (
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// Array operators and functions. PostgreSQL declares them over the
// polymorphic anyarray/anycompatiblearray; here each is registered once
// per element type, which resolves the calls PostgreSQL resolves (an
// untyped literal takes the array's element or array type) with the same
// result types.

// arrayElemTypes are the element types with array types.
var arrayElemTypes = []TypeID{Bool, Int2, Int4, Int8, Numeric, Float4, Float8, Text, Varchar, Bytea,
	Date, Timestamp, TimestampTZ, Interval, Time, TimeTZ,
	Oid, RegClass, RegType, RegProc, RegNamespace, RegRole, Name, Char}

func init() {
	for _, e := range arrayElemTypes {
		a := ArrayOf(e)
		addComparisons(a, a, compareOps(compareArrays))
		addBinary("@>", a, a, Bool, func(x, y Value) (Value, error) { return MakeBool(arrayContains(x, y)), nil })
		addBinary("<@", a, a, Bool, func(x, y Value) (Value, error) { return MakeBool(arrayContains(y, x)), nil })
		addBinary("&&", a, a, Bool, func(x, y Value) (Value, error) { return MakeBool(arrayOverlaps(x, y)), nil })
		addNonStrictBinary("||", a, a, a, arrayCat)
		ek := valueKindOf(e)
		addNonStrictBinary("||", a, e, a, func(x, y Value) (Value, error) { return arrayAppend(ek, x, y) })
		addNonStrictBinary("||", e, a, a, func(x, y Value) (Value, error) { return arrayPrepend(ek, x, y) })

		addFunc("array_length", Int4, arrayLength, a, Int4)
		addFunc("array_upper", Int4, arrayUpper, a, Int4)
		addFunc("array_lower", Int4, arrayLower, a, Int4)
		addFunc("array_ndims", Int4, arrayNdims, a)
		addFunc("array_dims", Text, arrayDims, a)
		addFunc("array_positions", ArrayOf(Int4), arrayPositions, a, e).nonStrict = true
		addFunc("cardinality", Int4, arrayCardinality, a)
		addFunc("array_to_string", Text, arrayToString, a, Text)
		addFunc("array_to_string", Text, arrayToString, a, Text, Text).nonStrict = true
		addFunc("array_position", Int4, arrayPosition, a, e).nonStrict = true
		addFunc("array_position", Int4, arrayPosition, a, e, Int4).nonStrict = true
		addFunc("array_append", a, func(x []Value) (Value, error) { return arrayAppend(ek, x[0], x[1]) }, a, e).nonStrict = true
		addFunc("array_prepend", a, func(x []Value) (Value, error) { return arrayPrepend(ek, x[0], x[1]) }, e, a).nonStrict = true
		addFunc("array_cat", a, func(x []Value) (Value, error) { return arrayCat(x[0], x[1]) }, a, a).nonStrict = true
		addFunc("array_remove", a, arrayRemove, a, e).nonStrict = true

		// max(anyarray), min(anyarray).
		addAggregate("min", a, a)
		addAggregate("max", a, a)
	}
	addFunc("string_to_array", ArrayOf(Text), stringToArray, Text, Text).nonStrict = true
	addFunc("string_to_array", ArrayOf(Text), stringToArray, Text, Text, Text).nonStrict = true
}

// addNonStrictBinary registers an operator that sees NULL operands.
func addNonStrictBinary(name string, l, r, result TypeID, eval func(a, b Value) (Value, error)) {
	addBinary(name, l, r, result, eval)
	defs := binaryOps[name]
	defs[len(defs)-1].op.NonStrict = true
}

// arrayContains is "a @> b": every non-NULL element of b equals some
// element of a; a NULL element of b is never contained.
func arrayContains(a, b Value) bool {
	for _, y := range b.Elems() {
		if y.IsNull() || !arrayHas(a, y) {
			return false
		}
	}
	return true
}

// arrayOverlaps is "a && b": some non-NULL element is in both.
func arrayOverlaps(a, b Value) bool {
	for _, y := range b.Elems() {
		if !y.IsNull() && arrayHas(a, y) {
			return true
		}
	}
	return false
}

// arrayHas reports whether a non-NULL x equals an element of a.
func arrayHas(a, x Value) bool {
	for _, e := range a.Elems() {
		if !e.IsNull() && Compare(e, x) == 0 {
			return true
		}
	}
	return false
}

// arrayToString is array_to_string(a, sep [, null]): the elements' text
// joined by sep, NULL elements skipped unless null is given (and not NULL).
func arrayToString(x []Value) (Value, error) {
	if x[0].IsNull() || x[1].IsNull() {
		return Null, nil
	}
	sep := x[1].s
	nullText, withNull := "", len(x) > 2 && !x[2].IsNull()
	if withNull {
		nullText = x[2].s
	}
	var b []byte
	first := true
	et := Of(x[0].kind.Elem())
	for _, e := range x[0].Elems() {
		if e.IsNull() && !withNull {
			continue
		}
		if !first {
			b = append(b, sep...)
		}
		first = false
		if e.IsNull() {
			b = append(b, nullText...)
		} else {
			b = AppendFormat(b, e, et)
		}
	}
	return MakeText(string(b)), nil
}

// stringToArray is string_to_array(s, sep [, null]): s split at each sep
// (into characters when sep is NULL; the whole string when sep is empty),
// elements equal to null becoming NULL. An empty s gives the empty array.
func stringToArray(x []Value) (Value, error) {
	if x[0].IsNull() {
		return Null, nil
	}
	s := x[0].s
	var parts []string
	switch {
	case s == "":
	case x[1].IsNull():
		for _, r := range s {
			parts = append(parts, string(r))
		}
	case x[1].s == "":
		parts = []string{s}
	default:
		parts = strings.Split(s, x[1].s)
	}
	elems := make([]Value, len(parts))
	hasNull := len(x) > 2 && !x[2].IsNull()
	for i, p := range parts {
		if hasNull && p == x[2].s {
			elems[i] = Null
		} else {
			elems[i] = MakeText(p)
		}
	}
	return MakeArray(Text, elems), nil
}

// arrayPosition is array_position(a, x [, start]): the subscript of the
// first element not distinct from x (NULL finds a NULL element), at or
// after start; NULL when there is none or a is NULL.
func arrayPosition(x []Value) (Value, error) {
	if x[0].IsNull() {
		return Null, nil
	}
	if x[0].ArrayNdims() > 1 {
		return Null, errs.New(errs.FeatureNotSupported, "searching for elements in multidimensional arrays is not supported")
	}
	lb := 1
	if _, lbs := x[0].ArrayShape(); lbs != nil {
		lb = lbs[0]
	}
	start := lb
	if len(x) > 2 {
		if x[2].IsNull() {
			return Null, errs.New(errs.NullValueNotAllowed, "initial position must not be null")
		}
		start = int(x[2].Int())
	}
	for i, e := range x[0].Elems() {
		if i+lb < start {
			continue
		}
		if notDistinct(e, x[1]) {
			return MakeInt(Int4, int64(i+lb)), nil
		}
	}
	return Null, nil
}

// arrayPositions is array_positions(a, x): the subscripts of the elements
// not distinct from x, in order; NULL when a is NULL.
func arrayPositions(x []Value) (Value, error) {
	if x[0].IsNull() {
		return Null, nil
	}
	if x[0].ArrayNdims() > 1 {
		return Null, errs.New(errs.FeatureNotSupported, "searching for elements in multidimensional arrays is not supported")
	}
	lb := 1
	if _, lbs := x[0].ArrayShape(); lbs != nil {
		lb = lbs[0]
	}
	out := []Value{}
	for i, e := range x[0].Elems() {
		if notDistinct(e, x[1]) {
			out = append(out, MakeInt(Int4, int64(i+lb)))
		}
	}
	return MakeArray(Int4, out), nil
}

// notDistinct is "e IS NOT DISTINCT FROM x".
func notDistinct(e, x Value) bool {
	return e.IsNull() && x.IsNull() || !e.IsNull() && !x.IsNull() && Compare(e, x) == 0
}

// arrayRemove is array_remove(a, x): a without the elements not distinct
// from x; its lower bound is kept, as PostgreSQL's array_replace keeps it.
func arrayRemove(x []Value) (Value, error) {
	if x[0].IsNull() {
		return Null, nil
	}
	if x[0].ArrayNdims() > 1 {
		return Null, errs.New(errs.FeatureNotSupported, "removing elements from multidimensional arrays is not supported")
	}
	var out []Value
	for _, e := range x[0].Elems() {
		if notDistinct(e, x[1]) {
			continue
		}
		out = append(out, e)
	}
	if _, lbs := x[0].ArrayShape(); len(out) > 0 && lbs != nil {
		return MakeArrayShape(x[0].kind.Elem(), out, []int{len(out)}, lbs), nil
	}
	return MakeArray(x[0].kind.Elem(), out), nil
}

// ArraySubscript returns a[i] of a one-dimensional array: NULL when i is
// outside the array or either is NULL (see ArrayElement).
func ArraySubscript(a, i Value) Value { return ArrayElement(a, []Value{i}) }
