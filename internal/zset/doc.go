// Package zset holds Z-sets — batches of rows with integer weights — and
// the two byte encodings of rows: the order-preserving key encoding and the
// compact row encoding. It is pure: no goroutines, no I/O, no clocks; a
// context is only looked at (ConsolidateContext stops a long consolidation
// once its context is done), never waited on.
//
// # Z-sets and consolidated form
//
// A Batch is a list of (row, weight) entries; its meaning is the function
// from rows to the sum of their weights. A row inserted n times has weight
// +n, deleted n times −n; an update is −old, +new (IVM.md). Many batches
// mean the same Z-set; exactly one is consolidated:
//
//   - every row appears once, rows being the same when their values are
//     identical as EncodeRow writes them;
//   - no weight is 0;
//   - entries are sorted by their rows' key encodings, bytewise, and rows
//     with equal keys by their row encodings.
//
// Consolidate produces that form by sorting, summing and dropping zeros;
// every operator consolidates its output before handing it on, and
// IsConsolidated checks the form in tests.
//
// Rows equal under SQL's = but written differently — numeric 1.0 and 1.00,
// float -0 and 0, intervals '1 mon' and '30 days' — are different rows of a
// Z-set: a client sees them differently, and an update from one to the
// other is a change that must reach the stored table and its views. They
// have equal keys, so they sit next to each other in a consolidated batch.
// Grouping by SQL equality (GROUP BY, DISTINCT, join keys) is the job of
// the keyed operators, which key their state with EncodeKey.
//
// # Weight arithmetic
//
// Weights are int64 and never wrap. AddWeight, MulWeight and NegWeight
// return a NumericOutOfRange (SQLSTATE 22003) error on overflow, and so do
// Consolidate and Batch.Negate. Consolidate sums each row's weights exactly
// (in 128 bits), so the result does not depend on the order of the input:
// only a total outside int64 fails. On error nothing is modified.
//
// # Key encoding
//
// EncodeKey and EncodeKeyDesc append values' memcomparable encodings; the
// byte layout is specified in docs/format/keys.md. For lists of values of
// the same kinds:
//
//   - order: bytes.Compare of two encodings is types.Compare's
//     lexicographic order of the lists, NULLs last (first with
//     EncodeKeyDesc); a key may mix ascending and descending columns;
//   - equality: equal lists (under types.Compare) encode to equal bytes, and
//     different lists to different bytes;
//   - self-delimiting: each value starts with a tag byte naming its kind and
//     direction, and its length follows from its bytes, so the encoding of a
//     prefix of a list is a byte prefix of the list's encoding, and
//     DecodeKey reads values one at a time;
//   - no tag is 0x00 or 0xff: a key never extends another with a 0x00 byte,
//     and KeyPrefixEnd(prefix) bounds the keys that extend prefix.
//
// The same bytes serve as the state store's key, the input of hash
// partitioning, and the consolidation sort key. A key identifies a value up
// to SQL equality, not its exact representation: DecodeKey returns an equal
// value that may differ in numeric scale, float -0 and NaN payload, and the
// months/days split of an interval. Exact values are stored with EncodeRow.
//
// # Row encoding
//
// EncodeRow writes a row compactly (varints, raw float bits, numeric
// exponent and coefficient; docs/format/rows.md) for stored values;
// DecodeRow returns exactly the values written. Decoding is defensive:
// corrupt input yields an XX000 error, never a panic.
package zset
