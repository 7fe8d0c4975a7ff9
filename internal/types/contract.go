package types

// This file lists the functions the rest of the engine calls on values.
// Bodies marked "not yet implemented" are filled in by the values work.

// String returns t as PostgreSQL's format_type prints it: "integer",
// "bigint", "numeric(10,2)", "character varying(5)", "text",
// "timestamp without time zone", "double precision", ...
func (t Type) String() string { panic("not yet implemented") }

// OID returns the PostgreSQL type OID of t (int4 = 23, text = 25, ...).
func (t Type) OID() uint32 { panic("not yet implemented") }

// TypeByName resolves a type name as CREATE TABLE or CAST writes it
// ("int", "int4", "integer", "pg_catalog.int4", "varchar", "character
// varying", "timestamptz", "double precision", "decimal", ...) with its
// typmods (none, (n) or (p,s)). Unknown names fail with 42704, unsupported
// types with 0A000.
func TypeByName(names []string, typmods []int32) (Type, error) { panic("not yet implemented") }

// Format returns v in PostgreSQL's text output format for type t
// (booleans t/f; floats shortest round-trip; numeric with its scale;
// dates ISO; timestamps "2026-11-30 01:02:03[.ffffff]"; timestamptz in UTC
// with "+00"; intervals in the postgres IntervalStyle; bytea as \x hex).
// NULL formats as "" and the caller decides how to show it.
func Format(v Value, t Type) string { panic("not yet implemented") }

// Parse converts text to a value of type t, as PostgreSQL's input function
// for t does ('12' to int4, '2026-01-02' to date, 't' to bool, ...), with
// PostgreSQL's errors (22P02, 22003, 22007, 22008).
func Parse(t Type, s string) (Value, error) { panic("not yet implemented") }

// CastKind says when a cast from one type to another may be applied.
type CastKind uint8

const (
	NoCast         CastKind = iota // no cast exists
	ExplicitCast                   // only with CAST or ::
	AssignmentCast                 // also when storing into a column
	ImplicitCast                   // also implicitly in expressions
)

// CastContext returns when a cast from one type to another is allowed, as
// PostgreSQL's pg_cast says.
func CastContext(from, to TypeID) CastKind { panic("not yet implemented") }

// Cast converts v to type t (applying typmods: numeric rounding to scale and
// precision checks, varchar length), with PostgreSQL's errors. explicit is
// true for CAST/:: (where varchar(n) truncates silently) and false for
// assignment (where an over-long value fails with 22001).
func Cast(v Value, t Type, explicit bool) (Value, error) { panic("not yet implemented") }

// Operator is a resolved binary or unary operator: the argument types its
// operands must be cast to first, its result type, and how to evaluate it.
type Operator struct {
	Name        string
	Left, Right Type // Left is Unknown-typed for a prefix operator
	Result      Type
	// Eval applies the operator to non-NULL operands already of types Left
	// and Right. Every operator here is strict: a NULL operand gives NULL
	// without calling Eval.
	Eval func(a, b Value) (Value, error)
}

// ResolveBinary picks the operator op ("+", "-", "*", "/", "%", "=", "<>",
// "<", "<=", ">", ">=", "||") for operand types l and r by PostgreSQL's
// operator resolution rules (exact match, then implicit casts, then the
// preferred type of the category; Unknown operands take the other side's
// type). It fails with 42883 when none applies.
func ResolveBinary(op string, l, r Type) (*Operator, error) { panic("not yet implemented") }

// ResolveUnary picks the prefix operator op ("-", "+") for type t.
func ResolveUnary(op string, t Type) (*Operator, error) { panic("not yet implemented") }

// CommonType returns the type that values of the given types resolve to in
// UNION, CASE, COALESCE, IN lists and VALUES, by PostgreSQL's rules (same
// category required; the preferred type or the one every other implicitly
// casts to; all Unknown gives Text). It fails with 42804 when the types do
// not match, naming the construct in the message (context, e.g. "UNION").
func CommonType(context string, ts []Type) (Type, error) { panic("not yet implemented") }

// AggregateType returns the result type of aggregate name ("count", "sum",
// "avg", "min", "max", "bool_and", "bool_or") over an argument of type arg,
// as PostgreSQL types it (sum(int4) is bigint, sum(int8) numeric, avg(int)
// numeric, avg(float4) double precision, count bigint, ...). It fails with
// 42883 when the aggregate does not accept arg.
func AggregateType(name string, arg Type) (Type, error) { panic("not yet implemented") }
