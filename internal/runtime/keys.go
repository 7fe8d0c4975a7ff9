package runtime

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Key namespaces of the state store. See docs/format/storage.md.
const (
	nsTableRows byte = 0x01 // table rows:     0x01 | id | row key → weight | row
	nsViewRows  byte = 0x02 // view contents:  0x02 | id | row key → weight | row
	nsOpState   byte = 0x03 // operator state: 0x03 | id | operator's own keys
	nsQuery     byte = 0xff // scratch state of an ad-hoc query's circuit
)

func relPrefix(ns byte, id uint64) []byte {
	return binary.AppendUvarint([]byte{ns}, id)
}

// rowKey is the storage key of row under prefix: the row's order-preserving
// key (so rows scan in SQL order) followed by its exact encoding (so rows
// equal under = but differently written, such as 1.0 and 1.00, stay
// distinct).
func rowKey(dst, prefix []byte, row zset.Row) []byte {
	dst = append(dst[:0], prefix...)
	dst = zset.EncodeKey(dst, row...)
	return zset.EncodeRow(dst, row)
}

// encodeStored encodes a stored row's value: its weight, then the row.
func encodeStored(dst []byte, w int64, row zset.Row) []byte {
	dst = binary.AppendVarint(dst[:0], w)
	return zset.EncodeRow(dst, row)
}

func decodeStored(v []byte) (zset.Entry, error) {
	w, n := binary.Varint(v)
	if n <= 0 {
		return zset.Entry{}, errs.New(errs.Internal, "corrupt stored row: bad weight")
	}
	row, err := zset.DecodeRow(v[n:])
	if err != nil {
		return zset.Entry{}, fmt.Errorf("corrupt stored row: %w", err)
	}
	return zset.Entry{Row: row, Weight: w}, nil
}

// readRelation returns the stored contents of the relation under prefix as
// a batch in key order.
func readRelation(ctx context.Context, r state.Reader, prefix []byte) (zset.Batch, error) {
	return appendStored(ctx, r, keyRange{prefix, state.PrefixEnd(prefix)}, nil)
}

// appendStored appends the stored rows under kr, in key order, to out.
func appendStored(ctx context.Context, r state.Reader, kr keyRange, out zset.Batch) (zset.Batch, error) {
	var derr error
	err := r.Scan(kr.lo, kr.hi, func(_, v []byte) bool {
		if derr = ops.Interrupted(ctx, len(out)); derr != nil {
			return false
		}
		e, err := decodeStored(v)
		if err != nil {
			derr = err
			return false
		}
		out = append(out, e)
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// applyDelta adds a consolidated delta to the stored relation under
// prefix. keyOf returns each row's storage key. Retractions are applied
// before insertions so that a keyed row replaced within one delta is
// removed before its successor is written.
func applyDelta(st state.Store, prefix []byte, delta zset.Batch, keyOf func(dst, prefix []byte, row zset.Row) []byte) error {
	var kbuf, vbuf []byte
	for pass := 0; pass < 2; pass++ {
		for _, e := range delta {
			if (pass == 0) != (e.Weight < 0) {
				continue
			}
			kbuf = keyOf(kbuf, prefix, e.Row)
			old, ok, err := st.Get(kbuf)
			if err != nil {
				return err
			}
			var w int64
			if ok {
				prev, err := decodeStored(old)
				if err != nil {
					return err
				}
				w = prev.Weight
			}
			w, err = zset.AddWeight(w, e.Weight)
			if err != nil {
				return err
			}
			switch {
			case w < 0:
				return errs.Newf(errs.Internal, "internal error: negative weight %d for a stored row", w)
			case w == 0:
				err = st.Delete(kbuf)
			default:
				vbuf = encodeStored(vbuf, w, e.Row)
				err = st.Set(kbuf, vbuf)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// deletePrefix removes every key under prefix.
func deletePrefix(st state.Store, prefix []byte) error {
	return deleteRange(st, prefix, state.PrefixEnd(prefix))
}
