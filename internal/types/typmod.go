package types

import (
	"sort"
	"strings"
)

// Typmod returns t's modifiers as PostgreSQL's atttypmod encodes them:
// -1 when unconstrained; NUMERIC(p,s) is ((p << 16) | s) + 4; VARCHAR(n)
// is n + 4; TIMESTAMP(p) and TIMESTAMPTZ(p) are p; INTERVAL [fields] [(p)]
// is the field mask (the full range without fields) << 16 | p (0xFFFF
// without a precision).
func (t Type) Typmod() int32 {
	switch t.ID {
	case Numeric:
		if t.Precision >= 0 {
			return (t.Precision<<16 | t.Scale&0xFFFF) + 4
		}
	case Varchar:
		if t.Length >= 0 {
			return t.Length + 4
		}
	case Timestamp, TimestampTZ, Time, TimeTZ:
		if t.Precision >= 0 {
			return t.Precision
		}
	case Interval:
		if t.Precision >= 0 || t.Fields != 0 {
			fields, precision := int32(intervalFullRange), int32(0xFFFF)
			if t.Fields != 0 {
				fields = int32(t.Fields)
			}
			if t.Precision >= 0 {
				precision = t.Precision
			}
			return fields<<16 | precision
		}
	}
	return -1
}

// TypeByOIDTypmod returns the type with the given PostgreSQL OID and
// atttypmod (the inverse of OID and Typmod); ok is false for an OID
// RockStream has no type for.
func TypeByOIDTypmod(oid uint32, typmod int32) (Type, bool) {
	t, ok := TypeByOID(oid)
	if !ok || typmod < 0 {
		return t, ok
	}
	switch t.ID {
	case Numeric:
		if typmod >= 4 {
			m := typmod - 4
			return NumericType(m>>16&0xFFFF, int32(int16(m&0xFFFF))), true
		}
	case Varchar:
		if typmod >= 4 {
			return VarcharType(typmod - 4), true
		}
	case Timestamp, TimestampTZ, Time, TimeTZ:
		if typmod <= maxTimePrecision {
			t.Precision = typmod
		}
	case Interval:
		if p := typmod & 0xFFFF; p <= maxTimePrecision {
			t.Precision = p
		}
		if f, err := intervalFieldsOf(typmod >> 16); err == nil {
			t.Fields = f
		}
	}
	return t, true
}

// FunctionSignature is one overload of a function of the catalog, as
// pg_proc lists it.
type FunctionSignature struct {
	Name      string
	Args      []Type
	Result    Type
	Aggregate bool
	// Volatility is pg_proc.provolatile: 'i' immutable, 's' stable.
	Volatility byte
}

// Functions returns the scalar functions and aggregates RockStream
// implements, sorted by name and argument types. Overloads that exist only
// for resolution (over types RockStream does not have) are left out, as
// are the arrays of the rows of set-returning functions (SeriesRows,
// RegexpMatchesRows, ...), which the binder unnests.
func Functions() []FunctionSignature {
	var out []FunctionSignature
	for name, defs := range functions {
		if strings.HasSuffix(name, " rows") {
			continue
		}
		for _, d := range defs {
			if d.eval == nil || d.unsupported != "" {
				continue
			}
			s := FunctionSignature{Name: name, Result: Of(d.result), Volatility: 'i'}
			if d.stable {
				s.Volatility = 's'
			}
			for _, a := range d.args {
				s.Args = append(s.Args, Of(a))
			}
			out = append(out, s)
		}
	}
	for name, defs := range aggregates {
		for _, d := range defs {
			if d.args[0] == Unknown {
				continue
			}
			out = append(out, FunctionSignature{Name: name, Args: []Type{Of(d.args[0])}, Result: Of(d.result),
				Aggregate: true, Volatility: 'i'})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if len(a.Args) != len(b.Args) {
			return len(a.Args) < len(b.Args)
		}
		for k := range a.Args {
			if a.Args[k].ID != b.Args[k].ID {
				return a.Args[k].ID < b.Args[k].ID
			}
		}
		return a.Aggregate && !b.Aggregate
	})
	return out
}

// CategoryOf returns pg_type.typcategory and typispreferred of id, as
// RockStream's type resolution uses them.
func CategoryOf(id TypeID) (byte, bool) { return byte(id.category()), id.preferred() }
