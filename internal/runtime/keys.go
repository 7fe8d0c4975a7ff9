package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

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

// Every stored key of a relation's rows and of a view's change log has
// the bucket of the row's routing key (zset.Bucket) right after the
// object's prefix: prefix | bucket u8 | the rest. One bucket's rows of one
// object are therefore the contiguous range [prefix|b, prefix|b+1). A
// key's order key is the key without its bucket byte: prefix | the rest.
// Rows are in SQL order by their order keys, which is the order readers
// of a whole relation or of a key range return them in (readStored).

// rowKey is the storage key of row under prefix: its bucket, the row's
// order-preserving key (the routing key, so rows scan in SQL order within
// a bucket) and its exact encoding (so rows equal under = but differently
// written, such as 1.0 and 1.00, stay distinct).
func rowKey(dst, prefix []byte, row zset.Row) []byte {
	dst = append(append(dst[:0], prefix...), 0)
	dst = zset.EncodeKey(dst, row...)
	dst[len(prefix)] = byte(zset.Bucket(dst[len(prefix)+1:]))
	return zset.EncodeRow(dst, row)
}

// rowOrderKey is rowKey's order key: rowKey without the bucket.
func rowOrderKey(dst, prefix []byte, row zset.Row) []byte {
	dst = append(dst[:0], prefix...)
	dst = zset.EncodeKey(dst, row...)
	return zset.EncodeRow(dst, row)
}

// rowBucket is the bucket of row routed by all its columns.
func rowBucket(row zset.Row, scratch []byte) (int, []byte) {
	scratch = zset.EncodeKey(scratch[:0], row...)
	return zset.Bucket(scratch), scratch
}

// orderKey returns the order key of the stored key k under prefix.
func orderKey(dst, prefix, k []byte) []byte {
	return append(append(dst[:0], prefix...), k[len(prefix)+1:]...)
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
	return readStored(ctx, r, prefix, []keyRange{{lo: prefix, hi: state.PrefixEnd(prefix)}}, nil)
}

// readStored appends the stored rows of the relation under prefix whose
// order keys lie in ranges (sorted, disjoint), in order-key order, to
// out. A range that fixes the whole routing key (point) is read from its
// one bucket; any other range is read from every bucket's part of it, and
// the buckets' rows are merged by order key.
func readStored(ctx context.Context, r state.Reader, prefix []byte, ranges []keyRange, out zset.Batch) (zset.Batch, error) {
	start := len(out)
	var keys []byte // the order keys (without prefix) of out[start:], concatenated
	var ends []int  // ends[i] is where the key of out[start+i] ends in keys
	merge := slices.ContainsFunc(ranges, func(kr keyRange) bool { return !kr.point })
	var derr error
	collect := func(k, v []byte) bool {
		if derr = ops.Interrupted(ctx, len(out)); derr != nil {
			return false
		}
		e, err := decodeStored(v)
		if err != nil {
			derr = err
			return false
		}
		out = append(out, e)
		if merge {
			keys = append(keys, k[len(prefix)+1:]...)
			ends = append(ends, len(keys))
		}
		return true
	}
	var lo, hi []byte
	for _, kr := range ranges {
		if kr.point {
			b := byte(zset.Bucket(kr.lo[len(prefix):]))
			lo = bucketBound(lo, prefix, b, kr.lo)
			hi = bucketBound(hi, prefix, b, kr.hi)
			if err := r.Scan(lo, hi, collect); err != nil || derr != nil {
				return nil, errors.Join(err, derr)
			}
			continue
		}
		for b := 0; b < zset.Buckets; b++ {
			lo = bucketBound(lo, prefix, byte(b), kr.lo)
			hi = bucketBound(hi, prefix, byte(b), kr.hi)
			if err := r.Scan(lo, hi, collect); err != nil || derr != nil {
				return nil, errors.Join(err, derr)
			}
		}
	}
	if merge {
		sortByKeys(out[start:], keys, ends)
	}
	return out, nil
}

// bucketBound maps the order-key bound k of a range under prefix to the
// stored-key bound within bucket b: prefix | b | the rest of k. A bound
// that ends the prefix's whole range (PrefixEnd(prefix), not under
// prefix) ends the bucket.
func bucketBound(dst, prefix []byte, b byte, k []byte) []byte {
	dst = append(append(dst[:0], prefix...), b)
	if !bytes.HasPrefix(k, prefix) {
		if b == 0xff {
			return append(dst[:0], k...)
		}
		dst[len(prefix)] = b + 1
		return dst
	}
	return append(dst, k[len(prefix):]...)
}

// sortByKeys sorts rows by their keys, rows[i]'s key being
// keys[ends[i-1]:ends[i]].
func sortByKeys(rows zset.Batch, keys []byte, ends []int) {
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	key := func(i int32) []byte {
		lo := 0
		if i > 0 {
			lo = ends[i-1]
		}
		return keys[lo:ends[i]]
	}
	slices.SortFunc(idx, func(a, b int32) int { return bytes.Compare(key(a), key(b)) })
	sorted := make(zset.Batch, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
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
