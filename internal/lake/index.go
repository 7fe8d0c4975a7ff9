package lake

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/internal/storage"
)

// An access path for the filter DuckLake uses most: "table_id" = n.
// Every row version of a table with an integer column named table_id has
// an index entry
//
//	'I' | oid:u32be | col:u16be | value:u64be (sign bit flipped) | tid:u64be | begin:u64be
//
// written in the batch that writes the version, kept when the version
// ends (readers at older revisions still need it) and removed with it
// (gc.go). A scan by index finds
// the candidates, reads each version's key to decide visibility, and
// evaluates the whole filter on the rows, so the index never decides
// what a statement sees, only what it reads. Entries of one value sort
// by tid, the order a full scan returns.
const nsIndex = 'I'

// recIndex is the record kind of an index entry (empty payload).
const recIndex = 5

// indexedColumn returns the column of t that has an index entry per row
// version, or -1.
func indexedColumn(t *Table) int {
	if t.Temp {
		return -1
	}
	c := t.col("table_id")
	if c < 0 || !t.Cols[c].Type.isInt() {
		return -1
	}
	return c
}

func indexValuePrefix(oid uint32, col int, v int64) []byte {
	k := make([]byte, 0, 31)
	k = append(k, nsIndex)
	k = binary.BigEndian.AppendUint32(k, oid)
	k = binary.BigEndian.AppendUint16(k, uint16(col))
	return binary.BigEndian.AppendUint64(k, uint64(v)^(1<<63))
}

func indexKey(oid uint32, col int, v int64, tid int64, begin uint64) []byte {
	k := indexValuePrefix(oid, col, v)
	k = binary.BigEndian.AppendUint64(k, uint64(tid))
	return binary.BigEndian.AppendUint64(k, begin)
}

var indexRecord = storage.EncodeRecord(recIndex, formatVersion, nil)

// indexProbe is an equality on the indexed column, found in a filter.
type indexProbe struct {
	col int
	val int64
}

// probeFor finds "indexed column = integer constant" among the top-level
// conjuncts of a bound filter on relation 0.
func probeFor(t *Table, where expr) (indexProbe, bool) {
	col := indexedColumn(t)
	if col < 0 {
		return indexProbe{}, false
	}
	var find func(e expr) (indexProbe, bool)
	find = func(e expr) (indexProbe, bool) {
		switch e := e.(type) {
		case eBool:
			if e.and {
				for _, a := range e.args {
					if p, ok := find(a); ok {
						return p, true
					}
				}
			}
		case eCmp:
			if e.op != "=" {
				return indexProbe{}, false
			}
			l, r := e.l, e.r
			if _, ok := l.(eConst); ok {
				l, r = r, l
			}
			s, ok1 := l.(eSlot)
			c, ok2 := r.(eConst)
			if ok1 && ok2 && s.rel == 0 && s.col == col && !c.v.Null && c.v.T.isInt() {
				return indexProbe{col: col, val: c.v.I}, true
			}
		}
		return indexProbe{}, false
	}
	return find(where)
}

// scanIndex calls fn, in tid order, with the row versions of t visible
// at rev whose indexed column may equal p.val (the caller filters).
func (s *Store) scanIndex(t *Table, p indexProbe, rev uint64, fn func(tid int64, begin uint64, rec []byte) (bool, error)) error {
	prefix := indexValuePrefix(t.OID, p.col, p.val)
	type cand struct {
		tid   int64
		begin uint64
	}
	var cands []cand
	var ferr error
	err := s.db.Scan(prefix, prefixEnd(prefix), func(k, v []byte) bool {
		if len(k) != len(prefix)+16 {
			ferr = fmt.Errorf("%w: index key %x has the wrong shape", ErrCorrupted, k)
			return false
		}
		if kind, _, _, err := storage.DecodeRecord(v); err != nil || kind != recIndex {
			ferr = fmt.Errorf("%w: index entry %x", ErrCorrupted, k)
			return false
		}
		tid := int64(binary.BigEndian.Uint64(k[len(prefix):]))
		begin := binary.BigEndian.Uint64(k[len(prefix)+8:])
		if begin <= rev {
			cands = append(cands, cand{tid, begin})
		}
		return true
	})
	if err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	for _, c := range cands {
		vp := rowKey(t.OID, c.tid, c.begin, 0)[:21]
		more := true
		err := s.db.Scan(vp, prefixEnd(vp), func(k, v []byte) bool {
			_, _, _, end, err := rowKeyParts(k)
			if err != nil {
				ferr = err
				return false
			}
			if end > rev {
				more, ferr = fn(c.tid, c.begin, v)
			}
			return false
		})
		if err != nil {
			return err
		}
		if ferr != nil || !more {
			return ferr
		}
	}
	return nil
}
