package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Key namespaces of the state store. See docs/format/storage.md.
const (
	nsTableRows byte = 0x01 // table rows:     0x01 | id | bucket | row key → weight | row
	nsViewRows  byte = 0x02 // view contents:  0x02 | id | bucket | row key → weight | row
	nsOpState   byte = 0x03 // operator state: 0x03 | id | bucket | operator | operator's own keys
	nsQuery     byte = 0xff // scratch state of an ad-hoc query's circuit
)

func relPrefix(ns byte, id uint64) []byte {
	b := make([]byte, 1, 1+binary.MaxVarintLen64)
	b[0] = ns
	return binary.AppendUvarint(b, id)
}

// Every stored key of a relation's rows and of a view's change log has
// the bucket of the row's routing key (zset.Bucket) right after the
// object's prefix: prefix | bucket u8 | the rest. One bucket's rows of one
// object are therefore the contiguous range [prefix|b, prefix|b+1). A
// key's order key is the key without its bucket byte: prefix | the rest.
// Rows are in SQL order by their order keys, which is the order readers
// of a whole relation or of a key range return them in (readStored).

// groupRoute returns how many leading columns of a materialized view
// with plan p and n columns route its rows: the GROUP BY key's, when the
// view's first columns are exactly the key of its top aggregate (through
// filters and projections that pass columns on), so that the view's rows
// are partitioned like the aggregate's groups and a read fixing the key
// touches one bucket; else 0, the whole row. The result is recorded with
// the view (route_columns) and never derived again for it.
func groupRoute(p plan.Node, n int) int {
	cols := make([]int, n) // the columns of the node reached that the view's are
	for i := range cols {
		cols[i] = i
	}
	for {
		switch x := p.(type) {
		case *plan.Filter:
			p = x.Input
		case *plan.Project:
			for i, c := range cols {
				if c < 0 {
					continue
				}
				ref, ok := x.Exprs[c].(*plan.ColRef)
				if !ok {
					cols[i] = -1 // computed: no input column
					continue
				}
				cols[i] = ref.Index
			}
			p = x.Input
		case *plan.Aggregate:
			g := len(x.GroupBy)
			if g == 0 || g >= n {
				return 0
			}
			seen := make([]bool, g)
			for _, c := range cols[:g] {
				if c < 0 || c >= g || seen[c] {
					return 0
				}
				seen[c] = true
			}
			return g
		default:
			return 0
		}
	}
}

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

// routedRowKey is rowKey for rows routed by their first k columns: the
// bucket is that of those columns' key; the key that follows is the same.
func routedRowKey(dst, prefix []byte, row zset.Row, k int) []byte {
	dst = append(append(dst[:0], prefix...), 0)
	dst = zset.EncodeKey(dst, row[:k]...)
	dst[len(prefix)] = byte(zset.Bucket(dst[len(prefix)+1:]))
	dst = zset.EncodeKey(dst, row[k:]...)
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

// viewRowBucket is the bucket of a row of materialized view o: that of
// its routing columns.
func (o *object) viewRowBucket(row zset.Row, scratch []byte) (int, []byte) {
	if k := o.route; k > 0 && k < len(row) {
		row = row[:k]
	}
	return rowBucket(row, scratch)
}

// encodeStored encodes a stored row's value: its weight, then the row.
func encodeStored(dst []byte, w int64, row zset.Row) []byte {
	dst = binary.AppendVarint(dst[:0], w)
	return zset.EncodeRow(dst, row)
}

// storedWeight is the weight of a stored row (decodeStored's, without
// decoding the row).
func storedWeight(v []byte) (int64, error) {
	w, n := binary.Varint(v)
	if n <= 0 {
		return 0, errs.New(errs.Internal, "corrupt stored row: bad weight")
	}
	return w, nil
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

// readRelation returns the stored contents of relation o as a batch in
// key order, read on one goroutine.
func readRelation(ctx context.Context, r state.Reader, o *object) (zset.Batch, error) {
	return readRelationOn(ctx, r, o, serialRead)
}

// readRelationOn is readRelation split between par's workers when the
// relation is large (readStored).
func readRelationOn(ctx context.Context, r state.Reader, o *object, par diff.Parallelism) (zset.Batch, error) {
	if o.unstored {
		return nil, unstoredReadError(o)
	}
	prefix := o.rowsPrefix()
	return readStored(ctx, r, prefix, []keyRange{{lo: prefix, hi: state.PrefixEnd(prefix), bucket: allBuckets}}, o.rowOrderKey(), par)
}

// rowOrderKey returns the function that computes the order key of a
// stored row of o, without the prefix, from the row; nil when o's order
// keys are not a function of its rows (arrival order).
func (o *object) rowOrderKey() func(dst []byte, row zset.Row) []byte {
	if o.storesInArrivalOrder() {
		return nil
	}
	keyOf := o.orderKeyOf()
	return func(dst []byte, row zset.Row) []byte { return keyOf(dst, nil, row) }
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

// applyDelta adds a consolidated delta to the stored relation under
// prefix. keyOf returns each row's storage key. Retractions are applied
// before insertions so that a keyed row replaced within one delta is
// removed before its successor is written.
//
// An insertion (a positive weight) cannot make a stored weight zero or
// negative, so it is written as a weight merge (state.MergeWeight)
// without reading the stored row: in an overlay it reads only the
// overlay's own writes, and the sum with the store's weight is made when
// the overlay commits. A retraction reads the stored weight, to delete
// the row when it reaches zero and to refuse a negative one; its write
// goes through the path its read just found (a hint reset per row: the
// rows come in no key order, so the previous row's path would only cost
// a comparison more), which saves the write's descent of the overlay's
// tree.
func applyDelta(st state.Store, prefix []byte, delta zset.Batch, keyOf func(dst, prefix []byte, row zset.Row) []byte) error {
	var vbuf []byte
	return applyDeltaKeyed(st, delta, nil,
		func(dst []byte, i int) []byte { return keyOf(dst, prefix, delta[i].Row) },
		func(i int) []byte {
			vbuf = encodeStored(vbuf, delta[i].Weight, delta[i].Row)
			return vbuf
		})
}

// applyEncodedDelta is applyDelta for a delta whose keys and inserted
// values enc holds (encodeDelta): they are copied, not encoded again. The
// entries are written in the order of their stored keys (enc.order: by
// bucket, then as the delta orders them), each through the path the
// previous one's write found, so a write lands beside the previous one
// instead of descending the overlay's tree from its root.
func applyEncodedDelta(st state.Store, prefix []byte, delta zset.Batch, enc *encodedDelta) error {
	return applyDeltaKeyed(st, delta, enc.order,
		func(dst []byte, i int) []byte { return enc.storedKey(dst, prefix, i) },
		enc.storedValue)
}

// applyDeltaKeyed is applyDelta with entry i's storage key appended to
// dst[:0] by keyAt and its stored value as an insertion (encodeStored of
// its weight and row) returned by insertedAt. order, when not nil, is
// the entries' indexes in the order of their keys: they are written in
// that order, with one hint carried from each to the next.
func applyDeltaKeyed(st state.Store, delta zset.Batch, order []int32, keyAt func(dst []byte, i int) []byte, insertedAt func(i int) []byte) error {
	var kbuf, vbuf []byte
	var hint state.Hint
	for pass := 0; pass < 2; pass++ {
		for at := range delta {
			i := at
			if order != nil {
				i = int(order[at])
			}
			e := delta[i]
			if (pass == 0) != (e.Weight < 0) {
				continue
			}
			kbuf = keyAt(kbuf, i)
			if order == nil {
				hint = state.Hint{}
			}
			if e.Weight > 0 {
				if err := state.MergeWeight(st, kbuf, insertedAt(i), &hint); err != nil {
					return err
				}
				continue
			}
			old, ok, err := state.GetHinted(st, kbuf, &hint)
			if err != nil {
				return err
			}
			var w int64
			if ok {
				if w, err = storedWeight(old); err != nil {
					return err
				}
			}
			w, err = zset.AddWeight(w, e.Weight)
			if err != nil {
				return err
			}
			switch {
			case w < 0:
				return errs.Newf(errs.Internal, "internal error: negative weight %d for a stored row", w)
			case w == 0:
				err = state.DeleteHinted(st, kbuf, &hint)
			default:
				vbuf = encodeStored(vbuf, w, e.Row)
				err = state.SetHinted(st, kbuf, vbuf, &hint)
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
