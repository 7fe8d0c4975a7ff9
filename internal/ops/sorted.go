package ops

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A sorted arrangement keeps an input in the order TopK and Window read
// it: by partition, then by the ORDER BY keys, then by the whole row,
//
//	prefix(partition) | EncodeKey(partition values) | sort key | EncodeKey(row) | 0x01 | EncodeRow(row)
//	    → varint(weight) | uvarint(length of the EncodeRow part) | uvarint(length of the key up to the sort key's end)
//
// so that a partition is one prefix scan visiting its rows in order, and
// the first rows of a partition are a bounded scan. The whole row after
// the sort key makes the order total (SQL leaves the order of rows equal
// on every ORDER BY key open) and depends only on the rows, never on when
// they arrived. The exact row (EncodeRow) ends the key: rows equal under =
// but written differently (NUMERIC 1.0 and 1.00) are different rows, and
// the value's first length field finds it without decoding the key; the
// second delimits the sort key, so that peers (rows equal on every ORDER BY
// key) are found by comparing bytes.
//
// The sort key is each ORDER BY value in turn: EncodeKey for ASC NULLS
// LAST, EncodeKeyDesc for DESC NULLS FIRST (the defaults); for the other
// two placements of NULL, a marker byte first, 0x00 for a NULL placed
// first, 0x01 and the value for a non-NULL, 0x02 for a NULL placed last.
type sortedArrangement struct {
	prefix      *bucketed
	partitionBy []plan.Expr
	keys        []plan.SortKey

	vals []types.Value
	val  []byte
	end  []byte
}

func newSortedArrangement(prefix Prefix, partitionBy []plan.Expr, keys []plan.SortKey) sortedArrangement {
	t := prefix.expand()
	_, t.byValue = singleRowBucket(partitionBy)
	return sortedArrangement{prefix: t, partitionBy: partitionBy, keys: keys}
}

// Null placement markers for sort keys whose NULLs go where the value
// encoding would not put them.
const (
	nullFirstMarker byte = 0x00
	valueMarker     byte = 0x01
	nullLastMarker  byte = 0x02
)

// appendSortKey appends the encoding of v as the ORDER BY key k.
func appendSortKey(dst []byte, v types.Value, k plan.SortKey) []byte {
	if k.NullsFirst != k.Desc {
		switch {
		case v.IsNull() && k.NullsFirst:
			return append(dst, nullFirstMarker)
		case v.IsNull():
			return append(dst, nullLastMarker)
		}
		dst = append(dst, valueMarker)
	}
	if k.Desc {
		return zset.EncodeKeyDesc(dst, v)
	}
	return zset.EncodeKey(dst, v)
}

// entryKey appends row's arrangement key to dst. It returns the key and
// its layout.
func (a *sortedArrangement) entryKey(dst []byte, row zset.Row) (key []byte, l keyLayout, err error) {
	start := len(dst)
	// The prefix's length is known before its bucket: reserve it, encode
	// the partition after it, then fill it in.
	plen := a.prefix.plen()
	dst = append(dst, a.prefix.at(0)...)
	a.vals = a.vals[:0]
	for _, e := range a.partitionBy {
		v, err := e.Eval(row)
		if err != nil {
			return nil, l, err
		}
		a.vals = append(a.vals, v)
	}
	dst = zset.EncodeKey(dst, a.vals...)
	copy(dst[start:], a.prefix.of(dst[start+plen:]))
	l.partLen = len(dst) - start
	for _, k := range a.keys {
		v, err := k.Expr.Eval(row)
		if err != nil {
			return nil, l, err
		}
		dst = appendSortKey(dst, v, k)
	}
	l.sortEnd = len(dst) - start
	dst = append(zset.EncodeKey(dst, row...), repSep)
	before := len(dst)
	dst = zset.EncodeRow(dst, row)
	l.rowLen = len(dst) - before
	return dst, l, nil
}

// keyLayout delimits the parts of an arrangement key: key[:partLen] is
// the partition prefix, key[partLen:sortEnd] the sort key, and the last
// rowLen bytes the exact row.
type keyLayout struct {
	partLen, sortEnd, rowLen int
}

// row returns the exact-row part of key.
func (l keyLayout) row(key []byte) []byte { return key[len(key)-l.rowLen:] }

// sortedEntry is one arranged row: its key (in a caller's buffer) and
// weight.
type sortedEntry struct {
	off, end int // the key, in the buffer the entries were collected into
	layout   keyLayout
	weight   int64
}

// scanPartition appends to buf and entries the arranged rows of the
// partition whose keys start with part, in order, until their weights add
// up to at least need (all of them when need < 0). complete reports that
// the scan reached the partition's end.
func (a *sortedArrangement) scanPartition(st state.Reader, part []byte, need int64, buf []byte, entries []sortedEntry) (_ []byte, _ []sortedEntry, complete bool, err error) {
	a.end = zset.KeyPrefixEnd(a.end[:0], part)
	var total int64
	complete = true
	var scanErr error
	err = st.Scan(part, a.end, func(k, v []byte) bool {
		if need >= 0 && total >= need {
			complete = false
			return false
		}
		w, rest, err := readWeight(v)
		if err != nil {
			scanErr = err
			return false
		}
		n, m := binary.Uvarint(rest)
		if m <= 0 || n > uint64(len(k)-len(part)) {
			scanErr = corrupt("sorted arrangement entry")
			return false
		}
		se, m2 := binary.Uvarint(rest[m:])
		if m2 <= 0 || se < uint64(len(part)) || se > uint64(len(k))-n {
			scanErr = corrupt("sorted arrangement entry")
			return false
		}
		off := len(buf)
		buf = append(buf, k...)
		l := keyLayout{partLen: len(part), sortEnd: int(se), rowLen: int(n)}
		entries = append(entries, sortedEntry{off: off, end: len(buf), layout: l, weight: w})
		if total, scanErr = zset.AddWeight(total, w); scanErr != nil {
			return false
		}
		return true
	})
	if err == nil {
		err = scanErr
	}
	return buf, entries, complete, err
}

// add adds w to the weight of the arranged row under key (laid out as l),
// deleting the entry at zero. It fails when a weight would go negative.
func (a *sortedArrangement) add(st state.Store, key []byte, l keyLayout, w int64) error {
	v, ok, err := st.Get(key)
	if err != nil {
		return err
	}
	var cur int64
	if ok {
		if cur, _, err = readWeight(v); err != nil {
			return err
		}
	}
	if cur, err = zset.AddWeight(cur, w); err != nil {
		return err
	}
	switch {
	case cur < 0:
		return negativeCount("arranged row")
	case cur == 0:
		return st.Delete(key)
	}
	a.val = binary.AppendUvarint(appendWeight(a.val[:0], cur), uint64(l.rowLen))
	a.val = binary.AppendUvarint(a.val, uint64(l.sortEnd))
	return st.Set(key, a.val)
}

// sortedDelta is the delta of a sorted arrangement: each row's key, with
// the rows grouped by partition and sorted by key.
type sortedDelta struct {
	buf     []byte
	entries []sortedDeltaEntry
	refs    []keyRef
	tmp     []keyRef // scratch for sorting refs
	sorted  []sortedDeltaEntry
}

// sortedDeltaEntry is one delta row and its arrangement key.
type sortedDeltaEntry struct {
	off, end int // key in sortedDelta.buf
	layout   keyLayout
	row      zset.Row
	weight   int64
}

// load computes the arrangement keys of the rows of b and sorts them,
// counting its work on w (a canceled step stops with ctx's error).
func (d *sortedDelta) load(w *work, a *sortedArrangement, b zset.Batch) error {
	d.buf, d.entries, d.refs = d.buf[:0], d.entries[:0], d.refs[:0]
	for _, e := range b {
		if err := w.tick(); err != nil {
			return err
		}
		off := len(d.buf)
		var l keyLayout
		var err error
		if d.buf, l, err = a.entryKey(d.buf, e.Row); err != nil {
			return err
		}
		d.refs = append(d.refs, keyRef{off: uint32(off), end: uint32(len(d.buf)), idx: int32(len(d.entries))})
		d.entries = append(d.entries, sortedDeltaEntry{off: off, end: len(d.buf), layout: l, row: e.Row, weight: e.Weight})
	}
	var err error
	if d.tmp, err = sortKeyRefsInterruptibly(w, d.refs, d.tmp, d.buf); err != nil {
		return err
	}
	d.sorted = resize(d.sorted, len(d.refs))
	for i, r := range d.refs {
		if err := w.tick(); err != nil {
			return err
		}
		d.sorted[i] = d.entries[r.idx]
	}
	return nil
}

func (d *sortedDelta) key(e *sortedDeltaEntry) []byte { return d.buf[e.off:e.end] }

func (d *sortedDelta) part(e *sortedDeltaEntry) []byte { return d.buf[e.off : e.off+e.layout.partLen] }

// partitions calls fn for each run of sorted entries with one partition.
func (d *sortedDelta) partitions(w *work, fn func(part []byte, rows []sortedDeltaEntry) error) error {
	for i := 0; i < len(d.sorted); {
		if err := w.tick(); err != nil {
			return err
		}
		p := d.part(&d.sorted[i])
		j := i + 1
		for j < len(d.sorted) && bytes.Equal(d.part(&d.sorted[j]), p) {
			j++
		}
		if err := fn(p, d.sorted[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// listEntry is one arranged row of a partition, old or new.
type listEntry struct {
	key    []byte
	layout keyLayout
	weight int64
}

// mergeDelta appends to dst the partition's rows after the delta rows
// (sorted, one partition's) are applied to old, the partition's first rows
// before them. Unless complete (old is the whole partition), delta rows
// sorting after old's last row are left out: the result is then exactly
// the new partition's first rows up to old's last key. A row whose weight
// reaches zero is dropped; a negative one is kept for the state update to
// report. Its work is counted on w.
func mergeDelta(w *work, dst, old []listEntry, d *sortedDelta, rows []sortedDeltaEntry, complete bool) ([]listEntry, error) {
	var last []byte
	if !complete && len(old) > 0 {
		last = old[len(old)-1].key
	}
	// Growing dst once, to its most entries, spares the copies (long,
	// without a look at the context) of growing it as it fills.
	dst = slices.Grow(dst, len(old)+len(rows))
	i, j := 0, 0
	for i < len(old) || j < len(rows) {
		if err := w.tick(); err != nil {
			return nil, err
		}
		var dk []byte
		if j < len(rows) {
			dk = d.key(&rows[j])
			if last != nil && bytes.Compare(dk, last) > 0 {
				dk, j = nil, len(rows)
			}
		}
		switch {
		case dk == nil && i >= len(old):
			return dst, nil
		case dk == nil:
			dst = append(dst, old[i])
			i++
		case i >= len(old):
			dst = append(dst, listEntry{key: dk, layout: rows[j].layout, weight: rows[j].weight})
			j++
		default:
			switch c := bytes.Compare(old[i].key, dk); {
			case c < 0:
				dst = append(dst, old[i])
				i++
			case c > 0:
				dst = append(dst, listEntry{key: dk, layout: rows[j].layout, weight: rows[j].weight})
				j++
			default:
				e := old[i]
				e.weight += rows[j].weight // overflow and sign are checked when the state is written
				if e.weight != 0 {
					dst = append(dst, e)
				}
				i, j = i+1, j+1
			}
		}
	}
	return dst, nil
}
