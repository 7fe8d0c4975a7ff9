package zset

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/rockstream/rockstream/internal/errs"
)

// Consolidate sorts b by the rows' key encoding, sums the weights of equal
// rows and drops rows whose weight sums to zero. It fails (22003) if a
// weight sum overflows int64. The result may reuse b's storage.
//
// Rows are equal when they are identical value by value, as EncodeRow
// writes them. Rows equal under SQL's = but written differently (numeric
// 1.0 and 1.00, float -0 and 0, intervals '1 mon' and '30 days') have equal
// keys yet stay separate entries, because they are different rows to a
// client; they follow each other, ordered by their row encoding. Grouping
// by SQL equality is for keyed operators (GROUP BY, DISTINCT, joins), which
// use EncodeKey directly.
//
// The result is b[:n] for some n: b's entries are overwritten, and entries
// past n are cleared. On error b is left as it was. Sums are exact whatever
// the order of the weights: only a total outside int64 fails.
func Consolidate(b Batch) (Batch, error) {
	return ConsolidateContext(nil, b)
}

// ConsolidateContext is Consolidate that stops early, returning ctx's
// error unwrapped and leaving b as it was, when ctx is done: it looks at
// ctx every checkInterval units of work (entries encoded, sorted, summed
// or moved), so that a consolidation of millions of rows stops within a
// millisecond or so of a cancel. A nil ctx is never done.
func ConsolidateContext(ctx context.Context, b Batch) (Batch, error) {
	switch len(b) {
	case 0:
		return b, nil
	case 1:
		if b[0].Weight == 0 {
			b[0] = Entry{}
			return b[:0], nil
		}
		return b, nil
	}
	c := consolidatorPool.Get().(*Consolidator)
	out, err := c.ConsolidateContext(ctx, b)
	c.trim()
	consolidatorPool.Put(c)
	return out, err
}

var consolidatorPool = sync.Pool{New: func() any { return new(Consolidator) }}

// Consolidator consolidates batches, reusing its scratch memory from one
// batch to the next. The zero value is ready to use. A Consolidator is not
// safe for concurrent use.
//
// It encodes every row's key once, back to back in one buffer, and sorts
// 16-byte records that stand for the entries (an 8-byte abbreviation of the
// key and an index) with a radix sort, so a batch of any size costs a
// handful of allocations the first time and none once the buffers have
// grown; rows themselves are moved once, into their final place.
type Consolidator struct {
	keys    []byte       // every input row's key, back to back
	entries []keyedEntry // one per input entry with a non-zero weight
	ents    []sortEntry  // entries' sort records, sorted in place
	tmp     []sortEntry  // scatter space for the radix sort
	hist    *radixHistograms
	results []keyedEntry // the last result, entry by entry
	out     Batch        // the result's entries, before they are copied back
	rowBuf  []byte       // row encodings, to tell apart rows with equal keys

	// During ConsolidateContext: its context (nil for none), the units of
	// work done since the last look at it, and its error once done.
	ctx   context.Context
	units int
	err   error
}

// checkInterval is how many units of work ConsolidateContext does between
// looks at its context.
const checkInterval = 1 << 12

// interrupted counts n units of work and reports whether the context is
// done, looking at it when checkInterval units have passed since the last
// look (and remembering its error in c.err).
func (c *Consolidator) interrupted(n int) bool {
	if c.err != nil {
		return true
	}
	if c.ctx == nil {
		return false
	}
	if c.units += n; c.units < checkInterval {
		return false
	}
	c.units = 0
	c.err = c.ctx.Err()
	return c.err != nil
}

// keyedEntry is a batch entry with its key located in the key buffer.
type keyedEntry struct {
	weight   int64
	idx      int32  // position of the entry in the input batch
	off, end uint32 // the key is keys[off:end]
	// lossy says that rows with this key may be written differently (see
	// hasKeyLossyValue).
	lossy bool
}

// sortEntry stands for one keyedEntry while sorting.
type sortEntry struct {
	// abbr is 8 key bytes from the depth being sorted on, big-endian,
	// zero-padded.
	abbr uint64
	k    uint32 // index in Consolidator.entries
	// clen is how many key bytes remain from that depth, capped at 9:
	// 9 says that keys equal in abbr may differ after it.
	clen uint8
	// dup is set by the sort when the key equals the previous entry's.
	dup bool
}

// Consolidate is the package-level Consolidate using c's scratch memory.
// After it returns, Key gives the key of each entry of the result.
func (c *Consolidator) Consolidate(b Batch) (Batch, error) {
	return c.ConsolidateContext(nil, b)
}

// ConsolidateContext is the package-level ConsolidateContext using c's
// scratch memory. After it returns without error, Key gives the key of
// each entry of the result.
func (c *Consolidator) ConsolidateContext(ctx context.Context, b Batch) (Batch, error) {
	c.ctx, c.units, c.err = ctx, 0, nil
	defer func() { c.ctx, c.err = nil, nil }()
	out, err := c.consolidate(b)
	if err == nil && c.err != nil {
		err = c.err
	}
	if err != nil {
		c.results = c.results[:0]
		return b, err
	}
	return out, nil
}

// consolidate is ConsolidateContext without the context's bookkeeping; it
// returns early once c.interrupted, leaving b as it was.
func (c *Consolidator) consolidate(b Batch) (Batch, error) {
	c.keys, c.entries, c.ents, c.results = c.keys[:0], c.entries[:0], c.ents[:0], c.results[:0]
	if len(b) > math.MaxInt32 {
		return b, errs.New(errs.ProgramLimitExceeded, "batch too large to consolidate: more than 2^31 rows")
	}
	for i := range b {
		if c.interrupted(1) {
			return b, nil
		}
		if b[i].Weight == 0 {
			continue
		}
		off := len(c.keys)
		c.keys = EncodeKey(c.keys, b[i].Row...)
		if uint64(len(c.keys)) > math.MaxUint32 {
			c.keys = c.keys[:0]
			return b, errs.New(errs.ProgramLimitExceeded, "batch too large to consolidate: its keys exceed 4 GiB")
		}
		e := sortEntry{k: uint32(len(c.entries))}
		e.abbreviate(c.keys[off:])
		c.ents = append(c.ents, e)
		c.entries = append(c.entries, keyedEntry{
			weight: b[i].Weight,
			idx:    int32(i),
			off:    uint32(off),
			end:    uint32(len(c.keys)),
			lossy:  hasKeyLossyValue(b[i].Row),
		})
	}

	if cap(c.tmp) < len(c.ents) {
		c.tmp = make([]sortEntry, len(c.ents))
	}
	if c.hist == nil {
		c.hist = new(radixHistograms)
	}
	// The sort is stable and the records start in input order, so equal
	// keys stay in input order and the first of a run is the earliest.
	c.sort(c.ents, c.tmp[:len(c.ents)], 0)
	if c.err != nil {
		return b, nil
	}

	// Sum each run of equal keys, which the sort has marked.
	ents := c.ents
	for i := 0; i < len(ents); {
		if c.interrupted(1) {
			return b, nil
		}
		j := i + 1
		for j < len(ents) && ents[j].dup {
			j++
		}
		if err := c.sumRun(b, ents[i:j]); err != nil {
			c.results = c.results[:0]
			return b, err
		}
		i = j
	}

	// Fetch the rows in a loop of independent loads, which the processor
	// overlaps: the batch is read in key order, at random.
	for _, r := range c.results {
		if c.interrupted(1) {
			clear(c.out)
			c.out = c.out[:0]
			return b, nil
		}
		c.out = append(c.out, Entry{Row: b[r.idx].Row, Weight: r.weight})
	}
	n := copy(b, c.out)
	clear(b[n:])
	clear(c.out) // drop references to rows
	c.out = c.out[:0]
	return b[:n], nil
}

// sumRun appends to c.results the entries that a run of entries with
// equal keys consolidates to: one per distinct row, with its summed weight,
// unless that is zero.
func (c *Consolidator) sumRun(b Batch, run []sortEntry) error {
	first := c.entries[run[0].k]
	if len(run) > 1 && first.lossy && !sameRows(b, c.entries, run) {
		return c.sumRunByRow(b, run)
	}
	var sum weightSum
	for _, e := range run {
		sum.add(c.entries[e.k].weight)
	}
	w, ok := sum.result()
	if !ok {
		return errWeightOutOfRange
	}
	if w != 0 {
		first.weight = w
		c.results = append(c.results, first)
	}
	return nil
}

// sameRows reports whether the rows of a run of equal keys are identical.
// (Equal keys imply identical rows unless the rows hold a value of a kind
// whose key encodes an equality class rather than one representation.)
func sameRows(b Batch, entries []keyedEntry, run []sortEntry) bool {
	row := b[entries[run[0].k].idx].Row
	for _, e := range run[1:] {
		if !identicalRows(row, b[entries[e.k].idx].Row) {
			return false
		}
	}
	return true
}

// sumRunByRow is sumRun for a run whose rows are equal under = but not all
// written alike (numeric 1.0 and 1.00, float -0 and 0, intervals '1 mon'
// and '30 days'): they are different rows of the Z-set, ordered by their
// row encoding. Such runs are rare, so this path favours simplicity.
func (c *Consolidator) sumRunByRow(b Batch, run []sortEntry) error {
	type encoded struct {
		off, end uint32 // the row encoding is rowBuf[off:end]
		k        uint32 // index in c.entries
	}
	c.rowBuf = c.rowBuf[:0]
	rows := make([]encoded, len(run))
	for i, e := range run {
		off := len(c.rowBuf)
		c.rowBuf = EncodeRow(c.rowBuf, b[c.entries[e.k].idx].Row)
		rows[i] = encoded{uint32(off), uint32(len(c.rowBuf)), e.k}
	}
	buf := c.rowBuf
	bytesOf := func(r encoded) []byte { return buf[r.off:r.end] }
	slices.SortStableFunc(rows, func(x, y encoded) int { return bytes.Compare(bytesOf(x), bytesOf(y)) })
	for i := 0; i < len(rows); {
		var sum weightSum
		j := i
		for ; j < len(rows) && bytes.Equal(bytesOf(rows[j]), bytesOf(rows[i])); j++ {
			sum.add(c.entries[rows[j].k].weight)
		}
		w, ok := sum.result()
		if !ok {
			return errWeightOutOfRange
		}
		if w != 0 {
			r := c.entries[rows[i].k]
			r.weight = w
			c.results = append(c.results, r)
		}
		i = j
	}
	return nil
}

// Key returns the key encoding of the i-th entry of the batch the last
// Consolidate returned (consecutive entries whose rows differ only in how
// equal values are written have equal keys). The bytes are valid until the
// next call of Consolidate and must not be modified.
func (c *Consolidator) Key(i int) []byte {
	r := c.results[i]
	return c.keys[r.off:r.end:r.end]
}

// key returns the bytes of e's key from depth on.
func (c *Consolidator) key(e sortEntry, depth int) []byte {
	ke := &c.entries[e.k]
	return c.keys[int(ke.off)+depth : ke.end]
}

// abbreviate sets e.abbr and e.clen from k, the bytes of e's key from the
// depth to sort on.
func (e *sortEntry) abbreviate(k []byte) {
	e.clen = uint8(min(len(k), 9))
	if len(k) >= 8 {
		e.abbr = binary.BigEndian.Uint64(k)
		return
	}
	var a uint64
	for i, c := range k {
		a |= uint64(c) << (56 - 8*i)
	}
	e.abbr = a
}

// insertionSortMax is the run length up to which sorting compares keys
// instead of distributing them.
const insertionSortMax = 24

// sort sorts ents stably by their keys' bytes from depth on (all of ents'
// keys are equal before depth, and their abbreviations are taken at depth),
// and sets dup on every entry whose key equals its predecessor's. tmp is
// scratch of ents' length. It returns early, leaving ents unsorted, once
// c.interrupted.
//
// It is a most-significant-first radix sort on 8-byte chunks: each level
// sorts by abbr with a stable least-significant-digit radix sort,
// then recurses into each run of equal chunks that continues past them.
// Runs of duplicate keys end there, so duplicates cost one pass per level,
// not O(log n) comparisons each.
func (c *Consolidator) sort(ents, tmp []sortEntry, depth int) {
	if len(ents) <= insertionSortMax {
		c.insertionSort(ents, depth)
		return
	}
	if c.interrupted(len(ents)) {
		return
	}
	radixSort(ents, tmp, c.hist)
	for i := 0; i < len(ents); {
		if c.interrupted(1) {
			return
		}
		e := ents[i]
		j := i + 1
		for j < len(ents) && ents[j].abbr == e.abbr && ents[j].clen == e.clen {
			j++
		}
		switch {
		case j-i == 1:
		case e.clen <= 8:
			// The keys end within abbr: the run is one key.
			for k := i + 1; k < j; k++ {
				ents[k].dup = true
			}
		default:
			run := ents[i:j]
			for k := range run {
				run[k].abbreviate(c.key(run[k], depth+8))
			}
			c.sort(run, tmp[i:j], depth+8)
		}
		i = j
	}
}

// insertionSort sorts ents stably by their keys' bytes from depth on and
// marks duplicates as sort does.
func (c *Consolidator) insertionSort(ents []sortEntry, depth int) {
	for i := 1; i < len(ents); i++ {
		e := ents[i]
		ek := c.key(e, depth)
		j := i
		for ; j > 0 && bytes.Compare(c.key(ents[j-1], depth), ek) > 0; j-- {
			ents[j] = ents[j-1]
		}
		ents[j] = e
	}
	for i := 1; i < len(ents); i++ {
		ents[i].dup = bytes.Equal(c.key(ents[i-1], depth), c.key(ents[i], depth))
	}
}

// radixHistograms counts, per byte of abbr (least significant first), how
// many entries have each value.
type radixHistograms [8][256]int32

// radixCombinedMin is the length from which radixSort counts all bytes in
// one pass (clearing all eight histograms) rather than one pass per varying
// byte (clearing only the histograms it needs).
const radixCombinedMin = 4096

// radixSort sorts ents stably by abbr, least significant byte first,
// skipping the bytes on which all entries agree. tmp is scratch of ents'
// length.
//
// Sorting on abbr alone orders keys whose remaining bytes fit in it (clen
// <= 8) only because no key is another key followed by 0x00 bytes: two
// keys whose zero-padded abbreviations are equal and one of which ends
// within them would be such a pair. EncodeKey guarantees it: a key that
// extends another continues with a tag byte, never 0x00 (keys.md).
func radixSort(ents, tmp []sortEntry, h *radixHistograms) {
	// Find the bytes that vary: the bits where some entry differs from
	// the first.
	first := ents[0].abbr
	var diff uint64
	for i := range ents {
		diff |= ents[i].abbr ^ first
	}
	if diff == 0 {
		return
	}
	combined := len(ents) >= radixCombinedMin
	if combined {
		clear(h[:])
		for i := range ents {
			a := ents[i].abbr
			h[0][byte(a)]++
			h[1][byte(a>>8)]++
			h[2][byte(a>>16)]++
			h[3][byte(a>>24)]++
			h[4][byte(a>>32)]++
			h[5][byte(a>>40)]++
			h[6][byte(a>>48)]++
			h[7][byte(a>>56)]++
		}
	}
	src, dst := ents, tmp
	for d := range 8 {
		shift := 8 * uint(d)
		if byte(diff>>shift) == 0 {
			continue
		}
		counts := &h[d]
		if !combined {
			clear(counts[:])
			for i := range src {
				counts[byte(src[i].abbr>>shift)]++
			}
		}
		var sum int32
		for v := range counts {
			c := counts[v]
			counts[v] = sum
			sum += c
		}
		for _, e := range src {
			v := byte(e.abbr >> shift)
			dst[counts[v]] = e
			counts[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ents[0] {
		copy(ents, src)
	}
}

// maxPooledScratch bounds the scratch memory a pooled Consolidator keeps
// per buffer, so that one huge batch does not pin its memory for the life
// of the process.
const maxPooledScratch = 16 << 20

// trim releases scratch buffers larger than maxPooledScratch.
func (c *Consolidator) trim() {
	if cap(c.keys) > maxPooledScratch {
		c.keys = nil
	}
	if cap(c.entries)*24 > maxPooledScratch {
		c.entries = nil
	}
	if cap(c.ents)*16 > maxPooledScratch {
		c.ents, c.tmp = nil, nil
	}
	if cap(c.results)*24 > maxPooledScratch {
		c.results = nil
	}
	if cap(c.out)*32 > maxPooledScratch {
		c.out = nil
	}
	if cap(c.rowBuf) > maxPooledScratch {
		c.rowBuf = nil
	}
}

// Negate negates every weight of b in place (the Z-set −b). It fails
// (22003), leaving b unchanged, if a weight is math.MinInt64.
func (b Batch) Negate() error {
	for _, e := range b {
		if e.Weight == math.MinInt64 {
			return errWeightOutOfRange
		}
	}
	for i := range b {
		b[i].Weight = -b[i].Weight
	}
	return nil
}

// IsConsolidated reports whether b is in consolidated form: no zero
// weight, and sorted by strictly increasing (key encoding, row encoding).
// It encodes every row, so it is meant for assertions and tests, not hot
// paths.
func IsConsolidated(b Batch) bool {
	var prevKey, key, prevRow, row []byte
	for i, e := range b {
		if e.Weight == 0 {
			return false
		}
		key = EncodeKey(key[:0], e.Row...)
		row = EncodeRow(row[:0], e.Row)
		if i > 0 {
			c := bytes.Compare(prevKey, key)
			if c > 0 || c == 0 && bytes.Compare(prevRow, row) >= 0 {
				return false
			}
		}
		prevKey, key = key, prevKey
		prevRow, row = row, prevRow
	}
	return true
}
