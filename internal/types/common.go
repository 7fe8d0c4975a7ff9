package types

import (
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// CommonType returns the type that values of the given types resolve to in
// UNION, CASE, COALESCE, IN lists and VALUES, by PostgreSQL's rules (same
// category required; the preferred type or the one every other implicitly
// casts to; all Unknown gives Text). It fails with 42804 when the types do
// not match, naming the construct in the message (context, e.g. "UNION").
//
// As in PostgreSQL (select_common_type and select_common_typmod), the
// result keeps the inputs' type modifiers only when every input has the
// same type and modifiers.
func CommonType(context string, ts []Type) (Type, error) {
	if len(ts) == 0 {
		return Of(Text), nil
	}
	first := ts[0]
	if first.ID != Unknown {
		same := true
		for _, t := range ts[1:] {
			if t.ID != first.ID {
				same = false
				break
			}
		}
		if same {
			for _, t := range ts[1:] {
				if t != first {
					return Of(first.ID), nil
				}
			}
			return first, nil
		}
	}
	p := first.ID
	for _, t := range ts[1:] {
		n := t.ID
		if n == Unknown || n == p {
			continue
		}
		switch {
		case p == Unknown:
			p = n
		case n.category() != p.category():
			return Type{}, errs.Newf(errs.DatatypeMismatch, "%s types %s and %s cannot be matched", context, p.baseName(), n.baseName())
		case !p.preferred() && implicitlyCoercible(p, n) && !implicitlyCoercible(n, p):
			p = n
		}
	}
	if p == Unknown {
		p = Text
	}
	for _, t := range ts {
		if !implicitlyCoercible(t.ID, p) {
			return Type{}, errs.Newf(errs.CannotCoerce, "%s could not convert type %s to %s", context, t.ID.baseName(), p.baseName())
		}
	}
	return Of(p), nil
}

// aggregates lists the signatures of the supported aggregates, as
// (argument type, result type) pairs like pg_aggregate and pg_proc have
// them.
var aggregates = map[string][]*opDef{}

func addAggregate(name string, arg, result TypeID) {
	aggregates[name] = append(aggregates[name], &opDef{args: [2]TypeID{arg}, result: result})
}

func init() {
	for _, a := range [][2]TypeID{
		{Int2, Int8}, {Int4, Int8}, {Int8, Numeric}, {Numeric, Numeric},
		{Float4, Float4}, {Float8, Float8}, {Interval, Interval},
	} {
		addAggregate("sum", a[0], a[1])
	}
	for _, a := range [][2]TypeID{
		{Int2, Numeric}, {Int4, Numeric}, {Int8, Numeric}, {Numeric, Numeric},
		{Float4, Float8}, {Float8, Float8}, {Interval, Interval},
	} {
		addAggregate("avg", a[0], a[1])
	}
	for _, t := range []TypeID{Int2, Int4, Int8, Numeric, Float4, Float8, Text, Date, Timestamp, TimestampTZ, Interval} {
		addAggregate("min", t, t)
		addAggregate("max", t, t)
	}
	for _, name := range []string{"bool_and", "bool_or", "every"} {
		addAggregate(name, Bool, Bool)
	}
}

// AggregateType returns the result type of aggregate name ("count", "sum",
// "avg", "min", "max", "bool_and", "bool_or") over an argument of type arg,
// as PostgreSQL types it (sum(int4) is bigint, sum(int8) numeric, avg(int)
// numeric, avg(float4) double precision, count bigint, ...). It fails with
// 42883 when the aggregate does not accept arg.
func AggregateType(name string, arg Type) (Type, error) {
	_, result, err := ResolveAggregate(name, arg)
	return result, err
}

// ResolveAggregate resolves aggregate name over an argument of type arg as
// PostgreSQL's function resolution does: it returns the type the argument
// must be cast to (max(varchar) takes text) and the result type. count
// accepts any argument. ("every" is bool_and's SQL-standard name.)
func ResolveAggregate(name string, arg Type) (argType, result Type, err error) {
	name = strings.ToLower(name)
	if name == "count" {
		return arg, Of(Int8), nil
	}
	cands, known := aggregates[name]
	if !known {
		return Type{}, Type{}, errs.Newf(errs.UndefinedFunction, "function %s(%s) does not exist", name, arg.ID.baseName())
	}
	d, err := selectOperator(cands, []TypeID{arg.ID})
	if err != nil {
		return Type{}, Type{}, errs.Newf(errs.AmbiguousFunction, "function %s(%s) is not unique", name, arg.ID.baseName())
	}
	if d == nil {
		return Type{}, Type{}, errs.Newf(errs.UndefinedFunction, "function %s(%s) does not exist", name, arg.ID.baseName())
	}
	argType = Of(d.args[0])
	if arg.ID == d.args[0] {
		argType = arg
	}
	return argType, Of(d.result), nil
}
