package runtime

import (
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/zset"
)

// A change-log record (docs/format/storage.md, "0x05 view change log")
// holds the entries of one bucket of one delta a view logged in an epoch,
// in seq order, under the key of its first entry:
//
//	0x05 | id | bucket u8 | epoch u64be | seq u64be → entry*
//	entry = seq offset uvarint | length uvarint | weight varint | row
//
// where an entry's seq is the key's plus its offset (the first entry's
// offset is 0, the offsets increase) and length counts the bytes of the
// weight and the row. One record in place of one key per entry is one
// tree insertion, one allocation and one object for the collector to
// mark for all of a bucket's entries.

// maxLogRecord is the size past which a record is closed and the
// bucket's next entries start another (keyed by the seq of the first of
// them): a large delta's records stay small enough to be written and
// read without holding one large buffer per bucket.
const maxLogRecord = 64 << 10

// appendLogEntry appends one entry of a record to dst: the change of row
// by weight, offset seqs after the record's first entry. scratch is
// reused for the entry's encoding and returned.
func appendLogEntry(dst, scratch []byte, offset uint64, weight int64, row zset.Row) (out, scratchOut []byte) {
	scratch = encodeStored(scratch, weight, row)
	return appendStoredLogEntry(dst, offset, scratch), scratch
}

// appendStoredLogEntry is appendLogEntry of an entry already encoded by
// encodeStored.
func appendStoredLogEntry(dst []byte, offset uint64, stored []byte) []byte {
	dst = binary.AppendUvarint(dst, offset)
	dst = binary.AppendUvarint(dst, uint64(len(stored)))
	return append(dst, stored...)
}

// decodeLogRecord calls fn with each entry of the record v, whose key's
// seq is first, in order: the entry's seq and its change. The rows do
// not refer to v.
func decodeLogRecord(v []byte, first uint64, fn func(seq uint64, e zset.Entry)) error {
	if len(v) == 0 {
		return errs.New(errs.DataCorrupted, "corrupt change-log record: no entries; the store is damaged: restore it from a checkpoint")
	}
	prev, at := uint64(0), 0
	for at < len(v) {
		off, n := binary.Uvarint(v[at:])
		if n <= 0 || (at == 0 && off != 0) || (at > 0 && off <= prev) {
			return errs.New(errs.DataCorrupted, "corrupt change-log record: bad seq offset; the store is damaged: restore it from a checkpoint")
		}
		at += n
		size, n := binary.Uvarint(v[at:])
		if n <= 0 || size > uint64(len(v)-at-n) {
			return errs.New(errs.DataCorrupted, "corrupt change-log record: bad entry length; the store is damaged: restore it from a checkpoint")
		}
		at += n
		e, err := decodeStored(v[at : at+int(size)])
		if err != nil {
			return errs.Newf(errs.DataCorrupted, "corrupt change-log record: %v; the store is damaged: restore it from a checkpoint", err)
		}
		at += int(size)
		fn(first+off, e)
		prev = off
	}
	return nil
}

// logRecordOf returns the row and the one-entry record of a change-log
// value of layouts 1 and 2 (weight varint | row, one key per entry),
// after checking that it decodes.
func logRecordOf(v []byte) (zset.Row, []byte, error) {
	e, err := decodeStored(v)
	if err != nil {
		return nil, nil, err
	}
	out := binary.AppendUvarint(nil, 0)
	out = binary.AppendUvarint(out, uint64(len(v)))
	return e.Row, append(out, v...), nil
}
