package runtime

import (
	"encoding/binary"
	"slices"
	"sync"

	"github.com/rockstream/rockstream/internal/zset"
)

// A view's output delta is written twice: into the view's rows
// (applyDelta: each row's stored key and, for an insertion, its stored
// value) and into its change log (logChangesOn: each row's bucket and each
// entry's stored encoding). For a relation without a primary key the two
// need the same encodings of a row: its order key (zset.EncodeKey of the
// whole row, whose routing columns' prefix gives the bucket), its exact
// encoding (zset.EncodeRow, the key's tail) and `weight varint | row`
// (the stored value of an inserted row, and the log entry of any entry).
// encodedDelta computes them once per entry; the keys and values written
// are byte for byte those rowKey, routedRowKey, encodeStored and
// appendLogEntry produce.

// encodedDelta holds, for each entry i of a delta of a relation without a
// primary key, its bucket, its order key and its stored encoding
// (encodeStored of the entry's weight and row), in shared buffers. It is
// borrowed from encodedDeltas and returned with release once both writes
// are done: the writes copy what they keep.
type encodedDelta struct {
	buckets []byte
	keys    []byte
	keyEnds []uint32
	// stored holds each entry's `weight varint | row`; rowAt[i] is where
	// its row begins, storedEnds[i] where it ends.
	stored     []byte
	rowAt      []uint32
	storedEnds []uint32
	// order and first are bucketOrder of buckets: the entries in the
	// order of their stored keys, and where each bucket's begin in it.
	order []int32
	first [zset.Buckets + 1]int32
}

var encodedDeltas = sync.Pool{New: func() any { return new(encodedDelta) }}

// encodeDelta returns the encodings of o's delta, or nil when o's rows are
// keyed by a primary key (their stored keys are not the row's encoding).
func encodeDelta(o *object, delta zset.Batch) *encodedDelta {
	if len(o.pk) != 0 || len(delta) == 0 {
		return nil
	}
	c := encodedDeltas.Get().(*encodedDelta)
	c.buckets, c.keys, c.stored = c.buckets[:0], c.keys[:0], c.stored[:0]
	c.keyEnds, c.rowAt, c.storedEnds = c.keyEnds[:0], c.rowAt[:0], c.storedEnds[:0]
	route := o.route
	if route <= 0 || route >= len(o.cols) {
		route = 0 // routed by the whole row (rowKey)
	}
	for _, e := range delta {
		start := len(c.keys)
		k := route
		if k == 0 || k > len(e.Row) {
			k = len(e.Row)
		}
		c.keys = zset.EncodeKey(c.keys, e.Row[:k]...)
		c.buckets = append(c.buckets, byte(zset.Bucket(c.keys[start:])))
		c.keys = zset.EncodeKey(c.keys, e.Row[k:]...)
		c.keyEnds = append(c.keyEnds, uint32(len(c.keys)))
		c.stored = binary.AppendVarint(c.stored, e.Weight)
		c.rowAt = append(c.rowAt, uint32(len(c.stored)))
		c.stored = zset.EncodeRow(c.stored, e.Row)
		c.storedEnds = append(c.storedEnds, uint32(len(c.stored)))
	}
	c.order, c.first = bucketOrder(c.order, c.buckets)
	return c
}

// bucketOrder returns the indexes of the entries whose buckets are
// buckets, ordered by bucket and, within a bucket, by index (a stable
// counting sort), in dst's storage, and first[b], where bucket b's
// entries begin in that order (first[zset.Buckets] is their count). A
// delta's entries in this order are in the order of their stored keys,
// both of a view's rows (bucket, then the row's key, as the delta sorts
// them) and of its change log (bucket, then seq).
func bucketOrder(dst []int32, buckets []byte) (order []int32, first [zset.Buckets + 1]int32) {
	var starts [zset.Buckets + 1]int32 // starts[b+1]: entries in buckets <= b, once summed
	for _, b := range buckets {
		starts[int(b)+1]++
	}
	for b := 1; b < len(starts); b++ {
		starts[b] += starts[b-1]
	}
	first = starts
	order = slices.Grow(dst[:0], len(buckets))[:len(buckets)]
	for i, b := range buckets {
		order[starts[b]] = int32(i)
		starts[b]++
	}
	return order, first
}

// release returns c to encodedDeltas; a nil c is ignored.
func (c *encodedDelta) release() {
	if c != nil {
		encodedDeltas.Put(c)
	}
}

// storedKey appends entry i's storage key under prefix to dst[:0]: what
// rowKey (or routedRowKey) computes from its row.
func (c *encodedDelta) storedKey(dst, prefix []byte, i int) []byte {
	dst = append(append(dst[:0], prefix...), c.buckets[i])
	dst = append(dst, c.keys[c.keyStart(i):c.keyEnds[i]]...)
	return append(dst, c.stored[c.rowAt[i]:c.storedEnds[i]]...)
}

func (c *encodedDelta) keyStart(i int) uint32 {
	if i == 0 {
		return 0
	}
	return c.keyEnds[i-1]
}

// storedValue is entry i's `weight varint | row` (encodeStored), valid
// until c is released.
func (c *encodedDelta) storedValue(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = c.storedEnds[i-1]
	}
	return c.stored[start:c.storedEnds[i]:c.storedEnds[i]]
}
