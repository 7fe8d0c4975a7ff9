package zset

import "github.com/rockstream/rockstream/internal/types"

// This file lists the functions the rest of the engine calls on batches and
// keys. Bodies marked "not yet implemented" are filled in by the Z-set work.

// Consolidate sorts b by the rows' key encoding, sums the weights of equal
// rows and drops rows whose weight sums to zero. It fails (22003) if a
// weight sum overflows int64. The result may reuse b's storage.
func Consolidate(b Batch) (Batch, error) { panic("not yet implemented") }

// AddWeight returns a+b, or an error (22003) on int64 overflow.
func AddWeight(a, b int64) (int64, error) { panic("not yet implemented") }

// MulWeight returns a*b, or an error (22003) on int64 overflow.
func MulWeight(a, b int64) (int64, error) { panic("not yet implemented") }

// EncodeKey appends the order-preserving encoding of vals to dst: for any
// two value lists of the same kinds, bytes.Compare of their encodings equals
// the lexicographic types.Compare order of the lists (NULLs last), and equal
// lists encode equally. The encoding is self-delimiting, so a key prefix's
// encoding is a byte prefix of the whole key's. See docs/format/keys.md.
func EncodeKey(dst []byte, vals ...types.Value) []byte { panic("not yet implemented") }

// EncodeKeyDesc is EncodeKey with the order of every value reversed (for
// ORDER BY ... DESC keys), NULLs first.
func EncodeKeyDesc(dst []byte, vals ...types.Value) []byte { panic("not yet implemented") }

// DecodeKey decodes n values encoded by EncodeKey from the front of key,
// returning them and the rest of key.
func DecodeKey(key []byte, n int) ([]types.Value, []byte, error) { panic("not yet implemented") }

// EncodeRow appends a compact, non-order-preserving encoding of row to dst
// (for state values).
func EncodeRow(dst []byte, row Row) []byte { panic("not yet implemented") }

// DecodeRow decodes a row encoded by EncodeRow.
func DecodeRow(b []byte) (Row, error) { panic("not yet implemented") }
