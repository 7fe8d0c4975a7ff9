package types

// TypeID identifies a SQL type.
type TypeID uint8

// The supported SQL types. Unknown is the type of an untyped literal ('abc'
// or NULL before resolution), as in PostgreSQL. The numbers are part of the
// on-disk key and row formats (an array's element kind is stored as its
// TypeID, docs/format): never renumber them; add new types at the end,
// below arrayFlag (array.go).
const (
	Unknown TypeID = iota
	Bool
	Int2
	Int4
	Int8
	Numeric
	Float4
	Float8
	Text
	Varchar
	Bytea
	Date
	Timestamp
	TimestampTZ
	Interval
	// Jsonb is PostgreSQL's jsonb (jsonb.go).
	Jsonb
	// Time is time without time zone (time.go).
	Time
	// TimeTZ is time with time zone (timetz.go).
	TimeTZ
)

// Type is a SQL type with its modifiers.
type Type struct {
	ID TypeID
	// Precision and Scale are NUMERIC's typmod; Precision is -1 when
	// unconstrained. When Precision is set, Scale is the scale, which may be
	// negative (NUMERIC(3,-1) rounds to tens, as in PostgreSQL 15). For
	// TIMESTAMP, TIMESTAMPTZ, TIME, TIMETZ and INTERVAL, Precision is the number of
	// fractional-second digits kept (0..6), or -1 for all six.
	Precision, Scale int32
	// Length is VARCHAR's maximum length in characters; -1 when unbounded.
	Length int32
	// Fields is INTERVAL's field restriction (INTERVAL DAY, ...); 0 when
	// there is none.
	Fields IntervalFields
	// Vector marks the array types int2[] and oid[] as PostgreSQL's
	// int2vector and oidvector (vector.go).
	Vector bool
}

// Of returns the unconstrained type with the given ID.
func Of(id TypeID) Type { return Type{ID: id, Precision: -1, Scale: -1, Length: -1} }
