// Package copyfmt reads and writes the data of PostgreSQL's COPY: the text
// format, CSV and the binary format, as PostgreSQL 15 defines them.
//
// It is pure: an Encoder appends rows to byte slices, a Decoder reads rows
// from an io.Reader, and neither knows about tables, transactions or the
// wire protocol.
//
// Invariants:
//   - Encoding is byte-identical to PostgreSQL's COPY ... TO output for the
//     same rows, options and column types (text escapes, CSV quoting rules,
//     binary framing), so that a client cannot tell the two apart.
//   - Decoding accepts exactly what PostgreSQL's COPY ... FROM accepts and
//     fails where it fails, with the same SQLSTATE and message, and with
//     the CONTEXT line PostgreSQL gives (errs.Error.Where): the relation,
//     the line number (counted as PostgreSQL counts it, the header being
//     line 1) and, when a value is at fault, the column and its text.
//   - A Decoder never panics on any input; it returns an error.
//   - Decoding is streaming: memory is bounded by the longest line (or
//     binary tuple), never by the size of the input.
package copyfmt
