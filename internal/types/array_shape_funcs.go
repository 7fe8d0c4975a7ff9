package types

import (
	"math"
	"slices"
	"strconv"

	"github.com/rockstream/rockstream/internal/errs"
)

// The array functions that read or build an array's shape, as
// PostgreSQL's: array_ndims, array_dims, array_length, array_lower,
// array_upper, cardinality, array_cat, array_append and array_prepend.

// arrayDimension returns the length and lower bound of dimension d
// (1-based) of the array a, and false when a is empty or d is not one of
// its dimensions.
func arrayDimension(a, d Value) (length, lower int, ok bool) {
	dims, lbs := a.ArrayShape()
	k := d.Int()
	if k < 1 || k > int64(len(dims)) {
		return 0, 0, false
	}
	return dims[k-1], lbs[k-1], true
}

// arrayLength is array_length(a, d): NULL for an empty array or a
// dimension it does not have.
func arrayLength(x []Value) (Value, error) {
	n, _, ok := arrayDimension(x[0], x[1])
	if !ok {
		return Null, nil
	}
	return MakeInt(Int4, int64(n)), nil
}

func arrayLower(x []Value) (Value, error) {
	_, lb, ok := arrayDimension(x[0], x[1])
	if !ok {
		return Null, nil
	}
	return MakeInt(Int4, int64(lb)), nil
}

func arrayUpper(x []Value) (Value, error) {
	n, lb, ok := arrayDimension(x[0], x[1])
	if !ok {
		return Null, nil
	}
	return MakeInt(Int4, int64(lb+n-1)), nil
}

func arrayNdims(x []Value) (Value, error) {
	n := x[0].ArrayNdims()
	if n == 0 {
		return Null, nil
	}
	return MakeInt(Int4, int64(n)), nil
}

func arrayDims(x []Value) (Value, error) {
	dims, lbs := x[0].ArrayShape()
	if len(dims) == 0 {
		return Null, nil
	}
	return MakeText(string(appendArrayDims(nil, dims, lbs))), nil
}

// arrayCardinality is cardinality(a): the number of elements, over all
// dimensions.
func arrayCardinality(x []Value) (Value, error) {
	return MakeInt(Int4, int64(len(x[0].Elems()))), nil
}

// incompatibleArrays is array_cat's 2202E error.
func incompatibleArrays(detail string) error {
	e := errs.New(errs.ArraySubscriptError, "cannot concatenate incompatible arrays").(*errs.Error)
	e.Detail = detail
	return e
}

// arrayCat is array_cat and "array || array", as PostgreSQL's: NULL
// arrays count as empty (the result is NULL only when both are NULL) and
// an empty array gives the other. Arrays of equal dimensions are joined
// along the first, whose lower bound the left array's gives; an array of
// one dimension less is added as one more item of the other's first
// dimension. The other dimensions must match in length and lower bound
// (2202E).
func arrayCat(a, b Value) (Value, error) {
	switch {
	case a.IsNull():
		return b, nil
	case b.IsNull():
		return a, nil
	}
	d1, l1 := a.ArrayShape()
	d2, l2 := b.ArrayShape()
	switch {
	case len(d1) == 0 && len(d2) > 0:
		return b, nil
	case len(d2) == 0:
		return a, nil
	}
	var dims, lbs []int
	switch len(d1) - len(d2) {
	case 0:
		if !slices.Equal(d1[1:], d2[1:]) || !slices.Equal(l1[1:], l2[1:]) {
			return Null, incompatibleArrays("Arrays with differing element dimensions are not compatible for concatenation.")
		}
		dims, lbs = slices.Clone(d1), slices.Clone(l1)
		dims[0] += d2[0]
	case -1:
		if !slices.Equal(d1, d2[1:]) || !slices.Equal(l1, l2[1:]) {
			return Null, incompatibleArrays("Arrays with differing dimensions are not compatible for concatenation.")
		}
		dims, lbs = slices.Clone(d2), slices.Clone(l2)
		dims[0]++
	case 1:
		if !slices.Equal(d2, d1[1:]) || !slices.Equal(l2, l1[1:]) {
			return Null, incompatibleArrays("Arrays with differing dimensions are not compatible for concatenation.")
		}
		dims, lbs = slices.Clone(d1), slices.Clone(l1)
		dims[0]++
	default:
		return Null, incompatibleArrays(
			"Arrays of " + strconv.Itoa(len(d1)) + " and " + strconv.Itoa(len(d2)) + " dimensions are not compatible for concatenation.")
	}
	if err := CheckArrayShape(dims, lbs); err != nil {
		return Null, err
	}
	x, y := a.Elems(), b.Elems()
	out := make([]Value, 0, len(x)+len(y))
	out = append(append(out, x...), y...)
	return MakeArrayShape(a.kind.Elem(), out, dims, lbs), nil
}

// arrayAppend is array_append and "array || element" over elements of
// kind ek: a NULL element is appended as NULL, a NULL array is taken as
// empty. The array must be empty or one-dimensional (22000); its lower
// bound is kept.
func arrayAppend(ek Kind, a, e Value) (Value, error) {
	return arrayPush(ek, a, e, false)
}

// arrayPrepend is array_prepend and "element || array", with
// array_append's rules.
func arrayPrepend(ek Kind, e, a Value) (Value, error) {
	return arrayPush(ek, a, e, true)
}

func arrayPush(ek Kind, a, e Value, front bool) (Value, error) {
	dims, lbs := a.ArrayShape()
	if len(dims) > 1 {
		return Null, errs.New(errs.DataException, "argument must be empty or one-dimensional array")
	}
	lb := 1
	if len(dims) == 1 {
		lb = lbs[0]
		if !front && int64(lb)+int64(dims[0]) > math.MaxInt32 || front && lb == math.MinInt32 {
			return Null, errs.New(errs.NumericOutOfRange, "integer out of range")
		}
	}
	x := a.Elems()
	out := make([]Value, 0, len(x)+1)
	if front {
		out = append(append(out, e), x...)
	} else {
		out = append(append(out, x...), e)
	}
	return MakeArrayShape(ek, out, []int{len(out)}, []int{lb}), nil
}

// ArrayOfArrays is the ARRAY[...] of sub-arrays (ARRAY[[1,2],[3,4]],
// ARRAY[ARRAY[1,2], ARRAY[3,4]]) over elements of kind ek, as
// PostgreSQL's ExecEvalArrayExpr: the sub-arrays become the items of a
// new first dimension (lower bound 1) and must all have the same
// dimensions and lower bounds (2202E); when all are empty or NULL the
// result is the empty array, and an empty or NULL one among non-empty
// ones is an error too.
func ArrayOfArrays(ek Kind, subs []Value) (Value, error) {
	var dims, lbs []int
	haveEmpty := false
	n := 0
	for _, s := range subs {
		d, l := s.ArrayShape()
		if len(d) == 0 {
			haveEmpty = true
			continue
		}
		switch {
		case dims == nil:
			if len(d)+1 > MaxArrayDims {
				return Null, tooManyDims(len(d) + 1)
			}
			dims, lbs = append([]int{0}, d...), append([]int{1}, l...)
		case !slices.Equal(dims[1:], d) || !slices.Equal(lbs[1:], l):
			return Null, mismatchedSubarrays()
		}
		dims[0]++
		n += len(s.Elems())
	}
	if dims == nil {
		return MakeArray(ek, nil), nil
	}
	if haveEmpty {
		return Null, mismatchedSubarrays()
	}
	if err := CheckArrayShape(dims, lbs); err != nil {
		return Null, err
	}
	out := make([]Value, 0, n)
	for _, s := range subs {
		out = append(out, s.Elems()...)
	}
	return MakeArrayShape(ek, out, dims, lbs), nil
}

func mismatchedSubarrays() error {
	return errs.New(errs.ArraySubscriptError, "multidimensional arrays must have array expressions with matching dimensions")
}

// AccumArrays is array_agg over arrays (PostgreSQL's array_agg(anyarray))
// with elements of kind ek: the arrays, in order, become the items of a
// new first dimension (lower bound 1). They must be non-NULL (22004),
// non-empty and all of the same dimensions and lower bounds (2202E).
func AccumArrays(ek Kind, items []Value) (Value, error) {
	var dims, lbs []int
	n := 0
	for _, a := range items {
		if a.IsNull() {
			return Null, errs.New(errs.NullValueNotAllowed, "cannot accumulate null arrays")
		}
		d, l := a.ArrayShape()
		switch {
		case len(d) == 0:
			return Null, errs.New(errs.ArraySubscriptError, "cannot accumulate empty arrays")
		case dims == nil:
			if len(d)+1 > MaxArrayDims {
				return Null, tooManyDims(len(d) + 1)
			}
			dims, lbs = append([]int{0}, d...), append([]int{1}, l...)
		case !slices.Equal(dims[1:], d) || !slices.Equal(lbs[1:], l):
			return Null, errs.New(errs.ArraySubscriptError, "cannot accumulate arrays of different dimensionality")
		}
		dims[0]++
		n += len(a.Elems())
	}
	if dims == nil {
		return Null, nil
	}
	if err := CheckArrayShape(dims, lbs); err != nil {
		return Null, err
	}
	out := make([]Value, 0, n)
	for _, a := range items {
		out = append(out, a.Elems()...)
	}
	return MakeArrayShape(ek, out, dims, lbs), nil
}
