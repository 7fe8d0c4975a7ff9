package ops

import (
	"bytes"
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// This file holds what the outer and semi-joins share: evaluating and
// sorting a delta by join key, walking two deltas key by key, and the
// arrangement of one input by key whose entries carry counts next to the
// row's weight.

// keySpec is the join key of one input.
type keySpec struct {
	exprs []plan.Expr
	// nullSafe[i] makes a NULL in position i a key value (IS NOT
	// DISTINCT FROM); otherwise a row with a NULL there matches nothing.
	nullSafe []bool
}

func newKeySpec(exprs []plan.Expr, nullSafe []bool) keySpec {
	ns := make([]bool, len(exprs))
	copy(ns, nullSafe)
	return keySpec{exprs: exprs, nullSafe: ns}
}

// keyedRow is one delta row with its encoded join key (EncodeKey of the
// key values, without any prefix, so that both inputs' keys compare).
type keyedRow struct {
	// ord is the key's bucket (one byte) then the key: rows are visited in
	// this order, the order of their state in the store.
	ord    []byte
	key    []byte // ord[1:]
	row    zset.Row
	weight int64
}

// index evaluates the key of every row of b. It returns the rows that can
// match, sorted by key's bucket, then key (ties in batch order), and those whose key holds a
// NULL compared with "=", which can match nothing.
func (s keySpec) index(b zset.Batch) ([]keyedRow, zset.Batch, error) {
	if len(b) == 0 {
		return nil, nil, nil
	}
	arena := make([]byte, 0, len(b)*(8*len(s.exprs)+1))
	refs := make([]keyRef, 0, len(b))
	vals := make([]types.Value, 0, len(s.exprs))
	var unmatched zset.Batch
rowLoop:
	for i, e := range b {
		vals = vals[:0]
		for k, x := range s.exprs {
			v, err := x.Eval(e.Row)
			if err != nil {
				return nil, nil, err
			}
			if v.IsNull() && !s.nullSafe[k] {
				unmatched = append(unmatched, e)
				continue rowLoop
			}
			vals = append(vals, v)
		}
		off := len(arena)
		arena = zset.EncodeKey(append(arena, 0), vals...)
		arena[off] = byte(zset.Bucket(arena[off+1:]))
		refs = append(refs, keyRef{off: uint32(off), end: uint32(len(arena)), idx: int32(i)})
	}
	sortKeyRefs(refs, arena)
	out := make([]keyedRow, len(refs))
	for i, r := range refs {
		ord := arena[r.off:r.end:r.end]
		out[i] = keyedRow{ord: ord, key: ord[1:], row: b[r.idx].Row, weight: b[r.idx].Weight}
	}
	return out, unmatched, nil
}

// forEachKey calls fn once for every key present in a or b (both sorted by
// ord, as index sorts them), in that order, with the runs of rows of that key on each side
// (either may be empty).
func forEachKey(w *work, a, b []keyedRow, fn func(key []byte, da, db []keyedRow) error) error {
	for len(a) > 0 || len(b) > 0 {
		if err := w.tick(); err != nil {
			return err
		}
		var ord []byte
		switch {
		case len(a) == 0:
			ord = b[0].ord
		case len(b) == 0:
			ord = a[0].ord
		case bytes.Compare(a[0].ord, b[0].ord) <= 0:
			ord = a[0].ord
		default:
			ord = b[0].ord
		}
		na, nb := run(a, ord), run(b, ord)
		if err := fn(ord[1:], a[:na], b[:nb]); err != nil {
			return err
		}
		a, b = a[na:], b[nb:]
	}
	return nil
}

// run returns how many rows at the front of rs have ord.
func run(rs []keyedRow, ord []byte) int {
	n := 0
	for n < len(rs) && bytes.Equal(rs[n].ord, ord) {
		n++
	}
	return n
}

// arrangement is one input arranged by join key, with optional counts
// stored after each row's weight:
//
//	prefix(key) | EncodeKey(key) | rowSep | EncodeRow(row) → varint(weight) varint(count)...
//
// An entry is deleted when its weight reaches zero.
type arrangement struct {
	prefix  *bucketed
	ncounts int

	keyBuf []byte
	endBuf []byte
	valBuf []byte
	rowBuf []byte
	// scan collects one key's entries: their row encodings back to back.
	scanEnc  []byte
	scanned  []scannedEntry
	scanErr  error
	scanPlen int
	collect  func(k, v []byte) bool
}

type scannedEntry struct {
	off, end int
	weight   int64
	counts   [2]int64
}

const maxCounts = 2

func newArrangement(prefix Prefix, ncounts int) *arrangement {
	a := &arrangement{prefix: prefix.expand(), ncounts: ncounts}
	a.collect = a.collectEntry
	return a
}

// sideEntry is one row of one join key on one side during a step: its
// stored weight and counts, and its change this step.
type sideEntry struct {
	row     zset.Row
	enc     []byte // EncodeRow(row)
	present bool   // stored before this step
	wOld    int64
	dW      int64
	counts  [maxCounts]int64 // stored counts, when present
}

func (a *arrangement) collectEntry(k, v []byte) bool {
	var e scannedEntry
	var err error
	e.weight, v, err = readWeight(v)
	for i := 0; i < a.ncounts && err == nil; i++ {
		e.counts[i], v, err = readWeight(v)
	}
	if err != nil {
		a.scanErr = err
		return false
	}
	e.off = len(a.scanEnc)
	a.scanEnc = append(a.scanEnc, k[a.scanPlen:]...)
	e.end = len(a.scanEnc)
	a.scanned = append(a.scanned, e)
	return true
}

// entryKey sets a.keyBuf to the key of row enc under key.
func (a *arrangement) entryKey(key, enc []byte) []byte {
	a.keyBuf = append(append(append(a.keyBuf[:0], a.prefix.of(key)...), key...), rowSep)
	a.keyBuf = append(a.keyBuf, enc...)
	return a.keyBuf
}

// load returns the entries of key that a step touches: with scan, every
// stored row of the key merged with the delta rows; without, only the
// delta rows, each looked up. Entries are appended to dst.
func (a *arrangement) load(st state.Reader, key []byte, delta []keyedRow, scan bool, dst []sideEntry) ([]sideEntry, error) {
	start := len(dst)
	if scan {
		a.keyBuf = append(append(append(a.keyBuf[:0], a.prefix.of(key)...), key...), rowSep)
		a.endBuf = append(a.endBuf[:0], a.keyBuf...)
		a.endBuf[len(a.endBuf)-1]++
		a.scanEnc, a.scanned, a.scanErr, a.scanPlen = a.scanEnc[:0], a.scanned[:0], nil, len(a.keyBuf)
		if err := st.Scan(a.keyBuf, a.endBuf, a.collect); err != nil {
			return nil, err
		}
		if a.scanErr != nil {
			return nil, a.scanErr
		}
		// One block holds the encodings, owned by the entries.
		encs := append([]byte(nil), a.scanEnc...)
		for _, s := range a.scanned {
			enc := encs[s.off:s.end:s.end]
			row, err := zset.DecodeRow(enc)
			if err != nil {
				return nil, err
			}
			dst = append(dst, sideEntry{row: row, enc: enc, present: true, wOld: s.weight, counts: s.counts})
		}
	}
	stored := dst[start:]
	var pos map[string]int
	if len(stored) > 8 {
		pos = make(map[string]int, len(stored))
		for i := range stored {
			pos[string(stored[i].enc)] = i
		}
	}
	for _, d := range delta {
		enc := zset.EncodeRow(nil, d.row)
		if scan {
			i := -1
			if pos != nil {
				if j, ok := pos[string(enc)]; ok {
					i = j
				}
			} else {
				for j := range stored {
					if bytes.Equal(stored[j].enc, enc) {
						i = j
						break
					}
				}
			}
			if i >= 0 {
				dst[start+i].dW = d.weight
				continue
			}
			dst = append(dst, sideEntry{row: d.row, enc: enc, dW: d.weight})
			continue
		}
		e := sideEntry{row: d.row, enc: enc, dW: d.weight}
		v, ok, err := st.Get(a.entryKey(key, enc))
		if err != nil {
			return nil, err
		}
		if ok {
			e.present = true
			if e.wOld, v, err = readWeight(v); err != nil {
				return nil, err
			}
			for i := 0; i < a.ncounts; i++ {
				if e.counts[i], v, err = readWeight(v); err != nil {
					return nil, err
				}
			}
		}
		dst = append(dst, e)
	}
	return dst, nil
}

// put stores entry e of key with weight w and counts, or deletes it when
// w is zero.
func (a *arrangement) put(st state.Store, key []byte, e *sideEntry, w int64, counts ...int64) error {
	k := a.entryKey(key, e.enc)
	if w == 0 {
		if !e.present {
			return nil
		}
		return st.Delete(k)
	}
	a.valBuf = binary.AppendVarint(a.valBuf[:0], w)
	for i := 0; i < a.ncounts; i++ {
		var c int64
		if i < len(counts) {
			c = counts[i]
		}
		a.valBuf = binary.AppendVarint(a.valBuf, c)
	}
	return st.Set(k, a.valBuf)
}

// deltaIndexes returns the positions of the entries that change weight
// this step.
func deltaIndexes(es []sideEntry, dst []int) []int {
	for i := range es {
		if es[i].dW != 0 {
			dst = append(dst, i)
		}
	}
	return dst
}

// keyPairs is both inputs arranged by key, as the row-by-row joins keep
// them, with one key's entries loaded for a step.
type keyPairs struct {
	left, right *arrangement
	as, bs      []sideEntry // the key's entries of each input
	bDelta      []int       // the positions in bs of changed entries
}

// load reads one key's entries: each input in full where the other
// changed (its rows pair with the other's changes), else only its own
// changed rows.
func (p *keyPairs) load(st state.Reader, key []byte, da, db []keyedRow) error {
	var err error
	if p.as, err = p.left.load(st, key, da, len(db) > 0, p.as[:0]); err != nil {
		return err
	}
	if p.bs, err = p.right.load(st, key, db, len(da) > 0, p.bs[:0]); err != nil {
		return err
	}
	p.bDelta = deltaIndexes(p.bs, p.bDelta[:0])
	return nil
}

// forEachChangedPair calls fn(i, k) for every pair of entries as[i],
// bs[k] of one key in which a row changed: each changed left entry with
// every right entry, each unchanged one with the changed right entries
// (bDelta, from deltaIndexes). Pairs of unchanged rows change nothing.
func forEachChangedPair(w *work, as, bs []sideEntry, bDelta []int, fn func(i, k int) error) error {
	for i := range as {
		if as[i].dW != 0 {
			for k := range bs {
				if err := w.tick(); err != nil {
					return err
				}
				if err := fn(i, k); err != nil {
					return err
				}
			}
			continue
		}
		for _, k := range bDelta {
			if err := w.tick(); err != nil {
				return err
			}
			if err := fn(i, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// sumWeights adds ws with overflow checks.
func sumWeights(ws ...int64) (int64, error) {
	var s int64
	for _, w := range ws {
		var err error
		if s, err = zset.AddWeight(s, w); err != nil {
			return 0, err
		}
	}
	return s, nil
}

// pairDelta is the change of a pair's weight when its rows' weights go
// from wa, wb to wa+da, wb+db: (wa+da)(wb+db) − wa·wb.
func pairDelta(wa, da, wb, db int64) (int64, error) {
	na, err := zset.AddWeight(wa, da)
	if err != nil {
		return 0, err
	}
	nb, err := zset.AddWeight(wb, db)
	if err != nil {
		return 0, err
	}
	n, err := zset.MulWeight(na, nb)
	if err != nil {
		return 0, err
	}
	o, err := zset.MulWeight(wa, wb)
	if err != nil {
		return 0, err
	}
	if o, err = zset.NegWeight(o); err != nil {
		return 0, err
	}
	return zset.AddWeight(n, o)
}
