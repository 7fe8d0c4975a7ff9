package state

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/tidwall/btree"
)

// entry is one key in a tree: a value, or (in an Overlay) a deletion.
//
// head holds the key's first 16 bytes (big-endian, zero-padded), so that
// most comparisons during a descent are two integer comparisons on the
// node's own items: comparing the key bytes themselves means following a
// pointer to another allocation, a cache miss in a large tree. Keys share
// long prefixes (a namespace, a relation or operator id, a side), but the
// first 16 bytes usually reach the first column of the encoded key, where
// neighbouring keys differ.
//
// An entry is 32 bytes: kv points at the key's bytes followed by the
// value's (one allocation), klen and vlen are their lengths, the top bit
// of klen marks a deletion and the next one a weight merge operand (in an
// Overlay, see MergeWeight). A tree node's items are entries, so the
// smaller an entry the fewer cache lines a node's search touches and the
// fewer bytes an insertion shifts.
type entry struct {
	head [2]uint64
	kv   *byte
	klen uint32 // the key's length; deletedBit or mergeBit set
	vlen uint32
}

// deletedBit marks a deletion in entry.klen, mergeBit a weight merge
// operand. Keys are far shorter than 1 GiB.
const (
	deletedBit = 1 << 31
	mergeBit   = 1 << 30
	kindBits   = deletedBit | mergeBit
)

// bytes returns the key and the value, in one slice.
func (e entry) bytes() []byte {
	return unsafe.Slice(e.kv, int(e.klen&^kindBits)+int(e.vlen))
}

func (e entry) key() []byte {
	n := e.klen &^ kindBits
	return e.bytes()[:n:n]
}

func (e entry) value() []byte { return e.bytes()[e.klen&^kindBits:] }

// deleted reports whether e is a deletion.
func (e entry) deleted() bool { return e.klen&deletedBit != 0 }

// asDeletion returns e marked as a deletion.
func (e entry) asDeletion() entry {
	e.klen |= deletedBit
	return e
}

// merge reports whether e is a weight merge operand.
func (e entry) merge() bool { return e.klen&mergeBit != 0 }

// asMerge returns e marked as a weight merge operand.
func (e entry) asMerge() entry {
	e.klen |= mergeBit
	return e
}

// asValue returns e as a plain value.
func (e entry) asValue() entry {
	e.klen &^= kindBits
	return e
}

// headOf returns the first 16 bytes of key as two big-endian words,
// padded with zeros.
func headOf(key []byte) [2]uint64 {
	if len(key) >= 16 {
		return [2]uint64{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
	}
	var buf [16]byte
	copy(buf[:], key)
	return [2]uint64{binary.BigEndian.Uint64(buf[:]), binary.BigEndian.Uint64(buf[8:])}
}

// probe returns an entry to look key up with. It refers to key without
// copying it.
func probe(key []byte) entry {
	return entry{head: headOf(key), kv: unsafe.SliceData(key), klen: uint32(len(key))}
}

// owned returns an entry holding copies of key and value, both in one
// allocation.
func owned(key, value []byte) entry {
	kv := make([]byte, len(key)+len(value))
	copy(kv[copy(kv, key):], value)
	return entry{head: headOf(key), kv: unsafe.SliceData(kv), klen: uint32(len(key)), vlen: uint32(len(value))}
}

// entryLess orders entries by key, bytewise. Different heads decide.
// Equal heads mean equal first 16 bytes (zero padding included), so when
// either key is at most 16 bytes long it is a prefix of the other and the
// lengths decide; only two longer keys compare their bytes after the
// head. Most keys of a table row or an aggregate's state fit in 16 bytes:
// their comparisons, the finding of an equal key included, never leave
// the tree's node for the key's own allocation, a cache miss in a large
// tree.
func entryLess(a, b entry) bool {
	if a.head[0] != b.head[0] {
		return a.head[0] < b.head[0]
	}
	if a.head[1] != b.head[1] {
		return a.head[1] < b.head[1]
	}
	la, lb := a.klen&^kindBits, b.klen&^kindBits
	if la <= headLen || lb <= headLen {
		return la < lb
	}
	return bytes.Compare(a.key()[headLen:], b.key()[headLen:]) < 0
}

// headLen is how many bytes of a key its entry's head holds.
const headLen = 16

func newTree() *btree.BTreeG[entry] {
	// The engine drives a store from one goroutine at a time (the shard
	// actor), so the tree's own locks would only cost.
	return btree.NewBTreeGOptions(entryLess, btree.Options{NoLocks: true})
}
