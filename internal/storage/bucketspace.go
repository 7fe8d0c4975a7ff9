package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
)

// The key spaces a bucket export moves (docs/format/storage.md, "Key
// namespaces"). Every key of a bucketed space is `ns | id uvarint |
// bucket u8 | ...`, so that one object's data in one bucket is the
// contiguous range [ns | id | b, ns | id | b+1). The catalog (0x00) and the
// metadata (0x04) are not bucketed; the query scratch (0xff) is never
// stored.
var bucketedSpaces = [...]byte{
	0x01, // table rows
	0x02, // view contents
	0x03, // operator state
	0x05, // view change log
	0x06, // index entries
}

// Keys outside the bucketed spaces that exports read and imports write
// (docs/format/storage.md, "0x04 metadata").
var (
	nsCatalogKey   = []byte{0x00}
	metaLayoutKey  = []byte("\x04layout")
	metaFrontier   = []byte("\x04frontier")
	metaAppendPref = []byte("\x04append/")
	metaViewRows   = []byte("\x04vr/")
)

// NumBuckets is the number of virtual buckets every row is hashed into.
const NumBuckets = 256

// BucketSet is a set of buckets, as a bitmap.
type BucketSet [NumBuckets / 64]uint64

// NewBucketSet returns the set of the given buckets.
func NewBucketSet(buckets ...uint8) BucketSet {
	var s BucketSet
	for _, b := range buckets {
		s.Add(b)
	}
	return s
}

// Add adds bucket b.
func (s *BucketSet) Add(b uint8) { s[b/64] |= 1 << (b % 64) }

// Has reports whether b is in the set.
func (s BucketSet) Has(b uint8) bool { return s[b/64]&(1<<(b%64)) != 0 }

// Len is the number of buckets in the set.
func (s BucketSet) Len() int {
	n := 0
	for b := range NumBuckets {
		if s.Has(uint8(b)) {
			n++
		}
	}
	return n
}

// List returns the buckets in ascending order.
func (s BucketSet) List() []int {
	var out []int
	for b := range NumBuckets {
		if s.Has(uint8(b)) {
			out = append(out, b)
		}
	}
	return out
}

// bucketSetOf builds a set from a manifest's list, which must be strictly
// ascending buckets.
func bucketSetOf(list []int) (BucketSet, error) {
	var s BucketSet
	for i, b := range list {
		if b < 0 || b >= NumBuckets || (i > 0 && b <= list[i-1]) {
			return s, fmt.Errorf("the bucket list %v is not strictly ascending buckets of 0..255", list)
		}
		s.Add(uint8(b))
	}
	return s, nil
}

// runs returns the set as maximal runs of consecutive buckets [lo, hi].
func (s BucketSet) runs() [][2]int {
	var out [][2]int
	for b := 0; b < NumBuckets; b++ {
		if !s.Has(uint8(b)) {
			continue
		}
		lo := b
		for b+1 < NumBuckets && s.Has(uint8(b+1)) {
			b++
		}
		out = append(out, [2]int{lo, b})
	}
	return out
}

// keyRange is a half-open key range [start, end).
type keyRange struct{ start, end []byte }

// bucketRanges returns, in key order, the ranges that hold the data of
// the buckets of s for every object in ids: for each bucketed space, each
// id and each run of consecutive buckets [lo, hi], the range [ns | id |
// lo, ns | id | hi+1), the last bucket's range ending where the object's
// prefix does. ids need not be sorted: uvarint prefixes do not sort as
// numbers, so the ranges are sorted by their bytes.
func bucketRanges(ids []uint64, s BucketSet) []keyRange {
	runs := s.runs()
	var out []keyRange
	for _, ns := range bucketedSpaces {
		for _, id := range ids {
			prefix := binary.AppendUvarint([]byte{ns}, id)
			for _, r := range runs {
				start := append(slices.Clip(prefix), byte(r[0]))
				var end []byte
				if r[1] == NumBuckets-1 {
					end = state.PrefixEnd(prefix)
				} else {
					end = append(slices.Clip(prefix), byte(r[1]+1))
				}
				out = append(out, keyRange{start, end})
			}
		}
	}
	slices.SortFunc(out, func(a, b keyRange) int { return bytes.Compare(a.start, b.start) })
	return out
}

// findRange returns the index of the range of rs (sorted, disjoint) that holds
// key, or -1.
func findRange(rs []keyRange, key []byte) int {
	i, _ := slices.BinarySearchFunc(rs, key, func(r keyRange, k []byte) int { return bytes.Compare(r.start, k) })
	// rs[i].start > key or == key.
	if i < len(rs) && bytes.Equal(rs[i].start, key) {
		return i
	}
	if i > 0 && bytes.Compare(key, rs[i-1].end) < 0 {
		return i - 1
	}
	return -1
}

// storeShape is what a bucket export and import agree on about a store:
// its layout version, its catalog (the ids of its objects and a digest of
// every catalog record) and the epoch it holds.
type storeShape struct {
	layout  uint64
	catalog string
	ids     []uint64
	epoch   uint64
	// appendNext is the next seq of each append-only table
	// (`append/<id>`), by the key's suffix.
	appendNext map[string]uint64
}

// readShape reads the shape of the store as r sees it (one snapshot).
func readShape(r pebbleReader) (storeShape, error) {
	var sh storeShape
	var err error
	if sh.layout, _, err = readU64(r, metaLayoutKey); err != nil {
		return sh, err
	}
	if sh.epoch, _, err = readU64(r, metaFrontier); err != nil {
		return sh, err
	}
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	err = scanRaw(r, nsCatalogKey, []byte{0x01}, func(k, v []byte) error {
		if len(k) != 9 {
			return corrupted(nil, "storage: catalog key %x is not 9 bytes", k)
		}
		sh.ids = append(sh.ids, binary.BigEndian.Uint64(k[1:]))
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(k)))])
		h.Write(k)
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))])
		h.Write(v)
		return nil
	})
	if err != nil {
		return sh, err
	}
	sh.catalog = hex.EncodeToString(h.Sum(nil))
	sh.appendNext = map[string]uint64{}
	err = scanRaw(r, metaAppendPref, state.PrefixEnd(metaAppendPref), func(k, v []byte) error {
		if len(v) != 8 {
			return corrupted(nil, "storage: the append counter %q is %d bytes, want 8", k, len(v))
		}
		sh.appendNext[hex.EncodeToString(k[len(metaAppendPref):])] = binary.BigEndian.Uint64(v)
		return nil
	})
	return sh, err
}

// readU64 reads a u64be value.
func readU64(r pebbleReader, key []byte) (uint64, bool, error) {
	v, closer, err := r.Get(key)
	if err == pebble.ErrNotFound {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, wrapf(errs.IOError, err, "storage: reading %q", key)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, false, corrupted(nil, "storage: %q is %d bytes, want 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), true, nil
}

// scanRaw calls fn for every key in [lo, hi) that r sees.
func scanRaw(r pebbleReader, lo, hi []byte, fn func(k, v []byte) error) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return wrapf(errs.IOError, err, "storage: scanning")
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return wrapf(errs.IOError, err, "storage: scanning")
		}
		if err := fn(it.Key(), v); err != nil {
			_ = it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		_ = it.Close()
		return wrapf(errs.IOError, err, "storage: scanning")
	}
	return it.Close()
}
