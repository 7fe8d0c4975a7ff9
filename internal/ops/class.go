package ops

import (
	"bytes"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Equality classes and their representations.
//
// Keyed operators (DISTINCT, GROUP BY, MIN/MAX, DISTINCT aggregates) group
// values by SQL equality, under which NUMERIC 1.0 and 1.00 (or float -0 and
// 0) are one value, while a Z-set keeps them as different rows. Such an
// operator emits one representation per class, and to emit the same one
// whatever order rows came in (so that incremental equals batch exactly),
// it counts each representation apart and emits the smallest by row
// encoding among those present:
//
//	class prefix | EncodeRow(representation) → varint(count)
//
// where the class prefix is the operator's prefix, the class's
// EncodeKey and repSep.

// repSep ends a class prefix. It is not 0xff, so incrementing it bounds the
// class's keys.
const repSep = 0x01

// repEntry is one representation of a class and its count.
type repEntry struct {
	off, end int // the representation's row encoding, in classScan.buf
	count    int64
}

// classScan reads and updates one class's representations. It is scratch
// space, reused from class to class.
type classScan struct {
	entries []repEntry
	buf     []byte
	end     []byte
	key     []byte
	val     []byte
	err     error
	collect func(k, v []byte) bool // collectRep, bound once
	plen    int
}

func (c *classScan) init() { c.collect = c.collectRep }

func (c *classScan) collectRep(k, v []byte) bool {
	w, _, err := readWeight(v)
	if err != nil {
		c.err = err
		return false
	}
	off := len(c.buf)
	c.buf = append(c.buf, k[c.plen:]...)
	c.entries = append(c.entries, repEntry{off: off, end: len(c.buf), count: w})
	return true
}

// load reads the representations of the class whose keys start with
// prefix (ending in repSep).
func (c *classScan) load(st state.Store, prefix []byte) error {
	c.entries, c.buf, c.err, c.plen = c.entries[:0], c.buf[:0], nil, len(prefix)
	c.end = append(c.end[:0], prefix...)
	c.end[len(c.end)-1]++
	if err := st.Scan(prefix, c.end, c.collect); err != nil {
		return err
	}
	return c.err
}

// rep returns entry i's row encoding.
func (c *classScan) rep(i int) []byte { return c.buf[c.entries[i].off:c.entries[i].end] }

// summary returns the class's total count and its representative: the
// first (smallest) representation with a positive count, or -1.
func (c *classScan) summary() (total int64, first int, err error) {
	first = -1
	for i, e := range c.entries {
		if total, err = zset.AddWeight(total, e.count); err != nil {
			return 0, -1, err
		}
		if first < 0 && e.count > 0 {
			first = i
		}
	}
	return total, first, nil
}

// add adds w to the count of the representation rep (a row encoding) in
// the loaded class under prefix, in the store and in the entries. It
// returns the index of the representation's entry, or -1 when its count
// reached zero and the entry was removed.
func (c *classScan) add(st state.Store, prefix, rep []byte, w int64) (int, error) {
	i := 0
	for ; i < len(c.entries); i++ {
		if cmp := bytes.Compare(c.rep(i), rep); cmp >= 0 {
			if cmp > 0 {
				i = c.insert(i, rep)
			}
			break
		}
	}
	if i == len(c.entries) {
		i = c.insert(i, rep)
	}
	n, err := zset.AddWeight(c.entries[i].count, w)
	if err != nil {
		return 0, err
	}
	c.key = append(append(c.key[:0], prefix...), rep...)
	if n == 0 {
		c.entries = append(c.entries[:i], c.entries[i+1:]...)
		return -1, st.Delete(c.key)
	}
	c.entries[i].count = n
	c.val = appendWeight(c.val[:0], n)
	return i, st.Set(c.key, c.val)
}

func (c *classScan) insert(i int, rep []byte) int {
	off := len(c.buf)
	c.buf = append(c.buf, rep...)
	c.entries = append(c.entries, repEntry{})
	copy(c.entries[i+1:], c.entries[i:])
	c.entries[i] = repEntry{off: off, end: len(c.buf)}
	return i
}
