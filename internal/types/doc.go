// Package types is RockStream's SQL value layer: the supported types, the
// representation of values, and PostgreSQL 15's semantics for them — text
// input and output, casts, operators and their resolution, the common type
// of UNION/CASE branches, and aggregate result types.
//
// # Types
//
// A Type is a TypeID with its modifiers: NUMERIC(p,s), VARCHAR(n) and the
// fractional-second precision of TIMESTAMP(p), TIMESTAMPTZ(p) and
// INTERVAL(p). Unknown is the type of an untyped literal before resolution,
// as in PostgreSQL. Type names, OIDs, categories, preferred types and the
// cast table (CastContext) follow pg_type and pg_cast.
//
// # Values
//
// A Value is a small tagged struct; the zero Value is NULL. Its kind is the
// TypeID of its representation:
//
//   - BOOLEAN, SMALLINT, INTEGER, BIGINT: in the int64 word (booleans 0/1);
//     a SMALLINT or INTEGER value is always within its type's range.
//   - REAL, DOUBLE PRECISION: the IEEE bits in the word; a REAL holds a
//     float32 and computes in single precision.
//   - NUMERIC: a pointer to an apd.Decimal in canonical form — a finite
//     value has Exponent <= 0 and -Exponent is its display scale (1.50 is
//     150×10^-2), zero is never negative; NaN and ±Infinity are apd forms.
//   - TEXT and VARCHAR: the string (kind Text for both; a VARCHAR's length
//     limit belongs to the column type, not the value). Text is UTF-8.
//   - BYTEA: the bytes, held in a string.
//   - DATE: days since 1970-01-01 (int32); math.MinInt32 and math.MaxInt32
//     are -infinity and infinity.
//   - TIMESTAMP and TIMESTAMPTZ: microseconds since 1970-01-01 00:00:00
//     (UTC for TIMESTAMPTZ); math.MinInt64 and math.MaxInt64 are -infinity
//     and infinity. A TIMESTAMPTZ is an instant; how it reads as a
//     wall-clock time (text, casts, fields, calendar arithmetic) depends
//     on the session time zone, a Zone (zone_session.go) that callers
//     pass to the ...Zone variants of Format, Parse and Cast and bind
//     into zone-dependent functions and operators (InZone). The zero Zone
//     is UTC, in which a TIMESTAMPTZ prints with "+00".
//   - INTERVAL: months, days and microseconds kept apart, as PostgreSQL
//     keeps them; comparison treats a month as 30 days and a day as 24
//     hours.
//   - JSONB: a pointer to an immutable tree of JSON nodes in jsonb's normal
//     form (jsonb.go): object keys unique and in storage order (shorter
//     first, then bytewise), numbers canonical NUMERIC values, strings
//     without NUL. Values compare in jsonb's btree order (objects >
//     arrays > booleans > numbers > strings > null, a top-level scalar
//     counting as a one-element array).
//   - Arrays (kind ArrayOf(element kind)): a pointer to the elements, each
//     NULL or of the element kind; one dimension, lower bound 1 (array.go).
//     Arrays compare element by element, NULL elements last, then by
//     length, as PostgreSQL's array_cmp.
//
// Values are immutable. Strings and decimals referenced by a Value are
// never modified after the Value is made, so values may be copied and
// shared between goroutines freely; every operation returns a new value.
// Decimals that no caller can tell apart (NaN, the infinities) may be
// shared.
//
// The calendar is the proleptic Gregorian one with PostgreSQL's ranges:
// dates from 4714-11-24 BC to 5874897-12-31, timestamps from 4714-11-24 BC
// to 294247-01-10 04:00:54.775806 (the int64 microsecond limit; PostgreSQL
// itself goes on to 294276 AD).
//
// # Collation and ordering
//
// Text compares bytewise, which is PostgreSQL's C collation (RockStream's
// only collation; a PostgreSQL oracle must be initialized with
// --locale=C.UTF-8 to agree). Compare orders values as PostgreSQL's btree
// operator classes do; NaN is greater than every other float or numeric and
// equal to itself.
//
// # Text, casts and operators
//
// Format and Parse are PostgreSQL's output and input functions with
// DateStyle ISO, MDY, IntervalStyle postgres and extra_float_digits 1
// (shortest round-trip floats). Errors carry PostgreSQL's SQLSTATEs and
// message texts (internal/errs).
//
// ResolveBinary and ResolveUnary implement PostgreSQL's operator
// resolution over a catalog of the operators on the supported types
// (cross-type integer and float operators, date/time arithmetic, text and
// bytea concatenation, anynonarray || text), so mixed-type expressions pick
// the same operator, argument casts and result type as PostgreSQL.
// Evaluation never resolves anything: Operator.Eval applies a resolved
// operator to operands already cast to its argument types. Integer
// arithmetic, comparison and AppendFormat do not allocate.
//
// AppendBinary and ParseBinary are the types' send and receive functions:
// PostgreSQL 15's binary format byte for byte, with its receive-side checks,
// errors and typmod application (docs/wire.md).
//
// Text that depends on the clock ('now', 'today', 'tomorrow', 'yesterday')
// is rejected with 0A000, since values must be deterministic.
package types
