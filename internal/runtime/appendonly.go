package runtime

import (
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// An append-only table (CREATE TABLE ... APPEND ONLY, or WITH
// (append_only)) takes inserts only: UPDATE, DELETE, TRUNCATE, INSERT ...
// ON CONFLICT DO UPDATE and a source's deletes and upserts fail, so every
// delta it ever sends its views is a set of insertions.
//
// Without a primary key, its rows are stored in arrival order rather than
// in row order: key 0x01 | id uvarint | bucket u8 | seq u64be (bucket:
// that of the whole row), value weight varint | row, with seq counted per
// table from 0 (the next one is kept in the metadata under append/<id
// uvarint>). Readers merge the buckets by seq, which restores the arrival
// order. Writing a row then reads nothing
// and encodes the row once; equal rows inserted apart are separate
// entries, which every reader adds up as weights (docs/format/storage.md).
// With a primary key the rows keep the keyed layout, which the key check
// reads anyway.

// appendOnlyError is the error of a change an append-only table refuses.
func appendOnlyError(o *object, what string) error {
	return errs.Newf(errs.WrongObjectType, "cannot %s table %q because it is append-only: it takes INSERT and COPY FROM only", what, o.name)
}

// storesInArrivalOrder reports whether o's rows use the arrival-order
// layout.
func (o *object) storesInArrivalOrder() bool { return o.appendOnly && len(o.pk) == 0 }

func appendSeqKey(id uint64) []byte {
	return binary.AppendUvarint(append([]byte{nsMeta}, "append/"...), id)
}

// appendRows stores the insertions of delta, in order, after the rows the
// table has.
func appendRows(st state.Store, o *object, delta zset.Batch) error {
	seqKey := appendSeqKey(o.id)
	next, _, err := readUint64(st, seqKey)
	if err != nil {
		return err
	}
	prefix := o.rowsPrefix()
	key := make([]byte, 0, len(prefix)+9)
	var val, scratch []byte
	for _, e := range delta {
		if e.Weight <= 0 {
			return errs.Newf(errs.Internal, "internal error: a change of weight %d to append-only table %q", e.Weight, o.name)
		}
		var b int
		b, scratch = rowBucket(e.Row, scratch)
		key = binary.BigEndian.AppendUint64(append(append(key[:0], prefix...), byte(b)), next)
		next++
		val = encodeStored(val, e.Weight, e.Row)
		if err := st.Set(key, val); err != nil {
			return err
		}
	}
	return st.Set(seqKey, binary.BigEndian.AppendUint64(nil, next))
}
