package types

import (
	"strconv"
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
	Date, Timestamp, TimestampTZ, Interval, Time,
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
		addNonStrictBinary("||", a, e, a, func(x, y Value) (Value, error) { return arrayAppend(ek, x, y), nil })
		addNonStrictBinary("||", e, a, a, func(x, y Value) (Value, error) { return arrayPrepend(ek, x, y), nil })

		addFunc("array_length", Int4, arrayLength, a, Int4)
		addFunc("array_upper", Int4, arrayLength, a, Int4)
		addFunc("array_lower", Int4, arrayLower, a, Int4)
		addFunc("array_ndims", Int4, arrayNdims, a)
		addFunc("array_dims", Text, arrayDims, a)
		addFunc("cardinality", Int4, func(x []Value) (Value, error) {
			return MakeInt(Int4, int64(len(x[0].Elems()))), nil
		}, a)
		addFunc("array_to_string", Text, arrayToString, a, Text)
		addFunc("array_to_string", Text, arrayToString, a, Text, Text).nonStrict = true
		addFunc("array_position", Int4, arrayPosition, a, e).nonStrict = true
		addFunc("array_position", Int4, arrayPosition, a, e, Int4).nonStrict = true
		addFunc("array_append", a, func(x []Value) (Value, error) { return arrayAppend(ek, x[0], x[1]), nil }, a, e).nonStrict = true
		addFunc("array_prepend", a, func(x []Value) (Value, error) { return arrayPrepend(ek, x[0], x[1]), nil }, e, a).nonStrict = true
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

// arrayCat is array_cat and "array || array": NULL arrays count as empty;
// the result is NULL only when both are NULL.
func arrayCat(a, b Value) (Value, error) {
	switch {
	case a.IsNull():
		return b, nil
	case b.IsNull():
		return a, nil
	}
	x, y := a.Elems(), b.Elems()
	out := make([]Value, 0, len(x)+len(y))
	out = append(append(out, x...), y...)
	return MakeArray(a.kind.Elem(), out), nil
}

// arrayAppend is array_append and "array || element" over elements of
// kind ek: a NULL element is appended as NULL, a NULL array is taken as
// empty.
func arrayAppend(ek Kind, a, e Value) Value {
	x := a.Elems()
	out := make([]Value, 0, len(x)+1)
	out = append(append(out, x...), e)
	return MakeArray(ek, out)
}

// arrayPrepend is array_prepend and "element || array".
func arrayPrepend(ek Kind, e, a Value) Value {
	x := a.Elems()
	out := make([]Value, 0, len(x)+1)
	out = append(append(out, e), x...)
	return MakeArray(ek, out)
}

// arrayLength is array_length and array_upper for lower bound 1: the
// length of dimension 1, NULL for an empty array or another dimension.
func arrayLength(x []Value) (Value, error) {
	n := len(x[0].Elems())
	if n == 0 || x[1].Int() != 1 {
		return Null, nil
	}
	return MakeInt(Int4, int64(n)), nil
}

func arrayLower(x []Value) (Value, error) {
	if len(x[0].Elems()) == 0 || x[1].Int() != 1 {
		return Null, nil
	}
	return MakeInt(Int4, 1), nil
}

func arrayNdims(x []Value) (Value, error) {
	if len(x[0].Elems()) == 0 {
		return Null, nil
	}
	return MakeInt(Int4, 1), nil
}

func arrayDims(x []Value) (Value, error) {
	n := len(x[0].Elems())
	if n == 0 {
		return Null, nil
	}
	return MakeText("[1:" + strconv.Itoa(n) + "]"), nil
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
	start := 1
	if len(x) > 2 {
		if x[2].IsNull() {
			return Null, errs.New(errs.NullValueNotAllowed, "initial position must not be null")
		}
		start = int(x[2].Int())
	}
	for i, e := range x[0].Elems() {
		if i+1 < start {
			continue
		}
		if e.IsNull() && x[1].IsNull() || !e.IsNull() && !x[1].IsNull() && Compare(e, x[1]) == 0 {
			return MakeInt(Int4, int64(i+1)), nil
		}
	}
	return Null, nil
}

// arrayRemove is array_remove(a, x): a without the elements not distinct
// from x.
func arrayRemove(x []Value) (Value, error) {
	if x[0].IsNull() {
		return Null, nil
	}
	var out []Value
	for _, e := range x[0].Elems() {
		if e.IsNull() && x[1].IsNull() || !e.IsNull() && !x[1].IsNull() && Compare(e, x[1]) == 0 {
			continue
		}
		out = append(out, e)
	}
	return MakeArray(x[0].kind.Elem(), out), nil
}

// ArraySubscript returns a[i] (1-based), NULL when i is out of range or
// either is NULL.
func ArraySubscript(a, i Value) Value {
	if a.IsNull() || i.IsNull() {
		return Null
	}
	elems, n := a.Elems(), i.Int()
	if n < 1 || n > int64(len(elems)) {
		return Null
	}
	return elems[n-1]
}

// ArraySlice returns a[lo:hi] (1-based, inclusive; a missing bound is
// the array's own), clipped to the array, as PostgreSQL's array slices:
// the empty array when the range is empty or outside, NULL when a bound
// given is NULL.
func ArraySlice(a, lo, hi Value, hasLo, hasHi bool) Value {
	if a.IsNull() || hasLo && lo.IsNull() || hasHi && hi.IsNull() {
		return Null
	}
	elems := a.Elems()
	from, to := int64(1), int64(len(elems))
	if hasLo {
		from = max(from, lo.Int())
	}
	if hasHi {
		to = min(to, hi.Int())
	}
	if from > to {
		return MakeArray(a.kind.Elem(), nil)
	}
	out := make([]Value, to-from+1)
	copy(out, elems[from-1:to])
	return MakeArray(a.kind.Elem(), out)
}
