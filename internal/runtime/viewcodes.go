package runtime

import (
	"bytes"
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
	// order is keyOrder's.
	order []int32
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
	return c
}

// keyOrder returns the entries' indices in the order of their storage
// keys under any one prefix: by bucket (a counting sort), then within a
// bucket by order key and row encoding. The slice is c's, valid until c
// is released.
func (c *encodedDelta) keyOrder() []int32 {
	var starts [zset.Buckets + 1]int32
	for _, b := range c.buckets {
		starts[int(b)+1]++
	}
	for b := 1; b <= zset.Buckets; b++ {
		starts[b] += starts[b-1]
	}
	c.order = slices.Grow(c.order[:0], len(c.buckets))[:len(c.buckets)]
	next := starts[:zset.Buckets]
	for i, b := range c.buckets {
		c.order[next[b]] = int32(i)
		next[b]++
	}
	// next[b] is now where bucket b's run ends and the next one's starts.
	start := int32(0)
	for b := range zset.Buckets {
		if run := c.order[start:next[b]]; len(run) > 1 {
			slices.SortFunc(run, c.compareTails)
		}
		start = next[b]
	}
	return c.order
}

// compareTails compares entry i's storage key with entry j's when both
// are in one bucket: their order keys, then their row encodings.
func (c *encodedDelta) compareTails(i, j int32) int {
	if d := bytes.Compare(c.keys[c.keyStart(int(i)):c.keyEnds[i]], c.keys[c.keyStart(int(j)):c.keyEnds[j]]); d != 0 {
		return d
	}
	return bytes.Compare(c.stored[c.rowAt[i]:c.storedEnds[i]], c.stored[c.rowAt[j]:c.storedEnds[j]])
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
