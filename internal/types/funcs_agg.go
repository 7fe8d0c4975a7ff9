package types

import (
	"github.com/rockstream/rockstream/internal/errs"
)

// Aggregates beyond count, sum, avg, min, max and the boolean ones:
// string_agg, the variance family, the bitwise aggregates and
// percentile_cont's ordered argument, with PostgreSQL's signatures.
// (percentile_disc and mode take any sortable type; the binder types
// them.)

func init() {
	for _, name := range []string{"bit_and", "bit_or", "bit_xor"} {
		for _, t := range []TypeID{Int2, Int4, Int8} {
			addAggregate(name, t, t)
		}
	}
	addAggregate("percentile_cont", Float8, Float8)
	addAggregate("percentile_cont", Interval, Interval)
	for _, name := range []string{"var_samp", "var_pop", "variance", "stddev", "stddev_samp", "stddev_pop"} {
		for _, a := range [][2]TypeID{
			{Int2, Numeric}, {Int4, Numeric}, {Int8, Numeric}, {Numeric, Numeric},
			{Float4, Float8}, {Float8, Float8},
		} {
			addAggregate(name, a[0], a[1])
		}
	}
}

// stringAggSigs are string_agg's overloads: (text, text) and (bytea,
// bytea).
var stringAggSigs = [][]TypeID{{Text, Text}, {Bytea, Bytea}}

// ResolveStringAgg resolves string_agg(value, delimiter) over arguments of
// the given types: it returns the types the two arguments must be
// converted to, which are also the result's type.
func ResolveStringAgg(value, delim Type) ([]Type, error) {
	in := []TypeID{value.ID, delim.ID}
	i := -1
	for k, sig := range stringAggSigs {
		if equalIDs(sig, in) {
			i = k
		}
	}
	if i < 0 {
		var err error
		if i, err = selectSignature(stringAggSigs, in); err != nil {
			return nil, errs.Newf(errs.AmbiguousFunction, "function string_agg(%s) is not unique", typeList([]Type{value, delim}))
		}
		if i < 0 {
			return nil, errs.Newf(errs.UndefinedFunction, "function string_agg(%s) does not exist", typeList([]Type{value, delim}))
		}
	}
	out := make([]Type, 2)
	for k, t := range stringAggSigs[i] {
		out[k] = Of(t)
		if in[k] == t {
			out[k] = []Type{value, delim}[k]
		}
	}
	return out, nil
}
