package types

import (
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/rockstream/rockstream/internal/errs"
)

// The shape of an array: its dimensions' lengths and lower bounds.
//
// Invariants, as PostgreSQL keeps them for its arrays:
//   - an array with no elements has no dimensions (and no lower bounds);
//   - a non-empty array has 1 to MaxArrayDims dimensions, each of length
//     at least 1, whose product is the number of elements;
//   - each dimension's lower bound + length fits in an int32 (PostgreSQL's
//     ArrayCheckBounds).
//
// The one-dimensional array with lower bound 1 is stored without a shape
// (arrayData's dims and lbs are nil), so MakeArray's arrays and those
// decoded from the formats written before arrays had shapes are the same
// values.

// MaxArrayDims is PostgreSQL's MAXDIM: the most dimensions an array has.
const MaxArrayDims = 6

// MakeArrayShape returns the array with elements elems (row-major, each
// NULL or of kind elem) and dimensions of lengths dims and lower bounds
// lbs, outermost first. The caller guarantees the invariants above (see
// CheckArrayShape); elems with no elements give the empty array whatever
// dims says. The array keeps elems, which the caller must not modify
// afterwards.
func MakeArrayShape(elem Kind, elems []Value, dims, lbs []int) Value {
	if len(elems) == 0 || len(dims) == 1 && lbs[0] == 1 {
		return MakeArray(elem, elems)
	}
	return Value{kind: ArrayOf(valueKindOf(elem)), ref: unsafe.Pointer(&arrayData{
		elems: elems, dims: slices.Clone(dims), lbs: slices.Clone(lbs)})}
}

// ArrayShape returns the lengths and lower bounds of an array value's
// dimensions, outermost first: none for the empty array (and for a value
// that is not an array). The slices must not be modified.
func (v Value) ArrayShape() (dims, lbs []int) {
	b := v.arrayBody()
	switch {
	case b == nil || len(b.elems) == 0:
		return nil, nil
	case b.dims == nil:
		return []int{len(b.elems)}, oneLowerBound
	}
	return b.dims, b.lbs
}

var oneLowerBound = []int{1}

// ArrayNdims returns the number of dimensions of an array value (0 for
// the empty array).
func (v Value) ArrayNdims() int {
	b := v.arrayBody()
	switch {
	case b == nil || len(b.elems) == 0:
		return 0
	case b.dims == nil:
		return 1
	}
	return len(b.dims)
}

// IsPlainArray reports whether an array value is empty or has one
// dimension with lower bound 1, the shape MakeArray makes.
func (v Value) IsPlainArray() bool {
	b := v.arrayBody()
	return b == nil || b.dims == nil
}

// WithElems returns an array of the shape of v with the elements elems
// (as many as v has, of kind elem), as an element-wise conversion makes.
func (v Value) WithElems(elem Kind, elems []Value) Value {
	dims, lbs := v.ArrayShape()
	return MakeArrayShape(elem, elems, dims, lbs)
}

// CheckArrayShape checks dims and lbs against the invariants, with
// PostgreSQL's errors (54000 for too many dimensions or elements or too
// large an upper bound).
func CheckArrayShape(dims, lbs []int) error {
	if len(dims) > MaxArrayDims {
		return tooManyDims(len(dims))
	}
	n := 1
	for i, d := range dims {
		if d < 0 || d > maxArraySize || n*d > maxArraySize {
			return errs.Newf(errs.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", maxArraySize)
		}
		n *= d
		if int64(lbs[i])+int64(d) > math.MaxInt32 {
			return errs.Newf(errs.ProgramLimitExceeded, "array lower bound is too large: %d", lbs[i])
		}
	}
	return nil
}

func tooManyDims(n int) error {
	return errs.Newf(errs.ProgramLimitExceeded, "number of array dimensions (%d) exceeds the maximum allowed (%d)", n, MaxArrayDims)
}

// appendArrayDims appends array_dims' text of a shape: "[lo:hi]" for each
// dimension.
func appendArrayDims(dst []byte, dims, lbs []int) []byte {
	for i, d := range dims {
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, int64(lbs[i]), 10)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(lbs[i]+d-1), 10)
		dst = append(dst, ']')
	}
	return dst
}

// allLowerBoundsOne reports whether every lower bound is 1 (array_out
// then writes no dimension decoration).
func allLowerBoundsOne(lbs []int) bool {
	for _, l := range lbs {
		if l != 1 {
			return false
		}
	}
	return true
}

// ArrayElement returns a[subs...] as PostgreSQL's array_get_element: the
// element at those subscripts, NULL when a subscript is NULL, when their
// number is not the array's number of dimensions, or when one is outside
// its dimension.
func ArrayElement(a Value, subs []Value) Value {
	if a.IsNull() {
		return Null
	}
	dims, lbs := a.ArrayShape()
	if len(subs) != len(dims) {
		return Null
	}
	off := 0
	for i, s := range subs {
		if s.IsNull() {
			return Null
		}
		k := s.Int() - int64(lbs[i])
		if k < 0 || k >= int64(dims[i]) {
			return Null
		}
		off = off*dims[i] + int(k)
	}
	return a.Elems()[off]
}

// SliceBound is one subscript range of an array slice: a missing bound
// (Has false) is the dimension's own.
type SliceBound struct {
	Lo, Hi       Value
	HasLo, HasHi bool
}

// ArraySliceDims returns a[lo:hi][lo:hi]... as PostgreSQL's
// array_get_slice: NULL when a bound given is NULL; the empty array when
// there are more ranges than dimensions or a range, clipped to its
// dimension, is empty; else the elements in the ranges (dimensions past
// the ranges taken whole), with lower bounds 1.
func ArraySliceDims(a Value, ranges []SliceBound) Value {
	if a.IsNull() {
		return Null
	}
	for _, r := range ranges {
		if r.HasLo && r.Lo.IsNull() || r.HasHi && r.Hi.IsNull() {
			return Null
		}
	}
	ek := a.kind.Elem()
	dims, lbs := a.ArrayShape()
	if len(ranges) > len(dims) {
		return MakeArray(ek, nil)
	}
	from := make([]int, len(dims))
	outDims := make([]int, len(dims))
	n := 1
	for i := range dims {
		lo, hi := int64(lbs[i]), int64(lbs[i]+dims[i]-1)
		if i < len(ranges) {
			if r := ranges[i]; r.HasLo {
				lo = max(lo, r.Lo.Int())
			}
			if r := ranges[i]; r.HasHi {
				hi = min(hi, ranges[i].Hi.Int())
			}
		}
		if lo > hi {
			return MakeArray(ek, nil)
		}
		from[i], outDims[i] = int(lo)-lbs[i], int(hi-lo+1)
		n *= outDims[i]
	}
	elems := a.Elems()
	out := make([]Value, 0, n)
	idx := make([]int, len(dims))
	for {
		off := 0
		for i := range dims {
			off = off*dims[i] + from[i] + idx[i]
		}
		out = append(out, elems[off])
		i := len(dims) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < outDims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	ones := make([]int, len(dims))
	for i := range ones {
		ones[i] = 1
	}
	return MakeArrayShape(ek, out, outDims, ones)
}

// NestArray builds a nested result over an array's dimensions, as
// array_to_json nests them: leaf of each element, node of the results of
// each sub-array's items, up to the whole array (node of none for the
// empty array).
func NestArray[T any](v Value, leaf func(Value) T, node func([]T) T) T {
	dims, _ := v.ArrayShape()
	elems := v.Elems()
	if len(dims) == 0 {
		return node(nil)
	}
	var nest func(level, off int) T
	nest = func(level, off int) T {
		items := make([]T, dims[level])
		if level == len(dims)-1 {
			for i := range items {
				items[i] = leaf(elems[off+i])
			}
			return node(items)
		}
		stride := 1
		for _, d := range dims[level+1:] {
			stride *= d
		}
		for i := range items {
			items[i] = nest(level+1, off+i*stride)
		}
		return node(items)
	}
	return nest(0, 0)
}
