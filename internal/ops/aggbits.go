package ops

import (
	"encoding/binary"
	"math/bits"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// bit_and, bit_or and bit_xor over smallint, integer and bigint. Each
// keeps the count of its non-NULL inputs (the result is NULL when there
// are none) and:
//
//   - bit_xor, which is linear: the XOR of its inputs. w copies of a value
//     contribute it once when w is odd, and a deletion XORs it out again.
//   - bit_and and bit_or: for each of the 64 bits of the (sign-extended)
//     value, how many inputs have it set, so that a deletion is exact: a bit
//     of bit_and is set when every input has it (its count equals the
//     count of inputs), a bit of bit_or when any does. Over insert-only
//     input (Aggregate.InsertOnly) they keep the running AND or OR alone.
//
// Cost: O(64) per input row and per group read, state O(groups).

// addBits folds w copies of the non-NULL integer v into a.
func (s *aggSpec) addBits(a *accum, v types.Value, w int64) error {
	x := v.Int()
	if s.fn == fnBitXor {
		if w%2 != 0 {
			a.x ^= x
		}
		return addCount(&a.n, w)
	}
	if s.insertOnly {
		if w <= 0 {
			return errs.New(errs.Internal, "internal error: a retraction reached a bit_and or bit_or over insert-only input")
		}
		switch {
		case a.n == 0:
			a.x = x
		case s.fn == fnBitAnd:
			a.x &= x
		default:
			a.x |= x
		}
		return addCount(&a.n, w)
	}
	for u := uint64(x); u != 0; u &= u - 1 {
		b := bits.TrailingZeros64(u)
		if err := addCount(&a.ones[b], w); err != nil {
			return err
		}
	}
	return addCount(&a.n, w)
}

// bitsValue returns the aggregate's result: NULL over no input.
func (s *aggSpec) bitsValue(a *accum) types.Value {
	if a.n == 0 {
		return types.Null
	}
	x := a.x
	if s.fn != fnBitXor && !s.insertOnly {
		var u uint64
		for b, c := range a.ones {
			if (s.fn == fnBitAnd && c == a.n) || (s.fn == fnBitOr && c > 0) {
				u |= 1 << b
			}
		}
		x = int64(u)
	}
	return types.MakeInt(s.result.ID, x)
}

// storeBits appends the count and the value, or for bit_and and bit_or
// over input that retracts, the per-bit counts as 64 uvarints (bytea).
func (s *aggSpec) storeBits(row zset.Row, a *accum) zset.Row {
	row = append(row, i8(a.n))
	if s.fn == fnBitXor || s.insertOnly {
		return append(row, i8(a.x))
	}
	var buf []byte
	for _, c := range a.ones {
		buf = binary.AppendUvarint(buf, uint64(c))
	}
	return append(row, types.MakeBytea(buf))
}

// loadBits decodes what storeBits wrote.
func (s *aggSpec) loadBits(a *accum, f zset.Row) error {
	a.n = f[0].Int()
	if s.fn == fnBitXor || s.insertOnly {
		a.x = f[1].Int()
		return nil
	}
	buf := []byte(f[1].Str())
	for b := range a.ones {
		c, n := binary.Uvarint(buf)
		if n <= 0 {
			return corrupt("bit counts")
		}
		a.ones[b], buf = int64(c), buf[n:]
	}
	if len(buf) != 0 {
		return corrupt("bit counts")
	}
	return nil
}
