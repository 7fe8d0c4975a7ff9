package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"sync"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// A read of stored rows that covers every bucket (a whole relation, or a
// key range over the relation's leading columns that does not fix its
// routing key) is split between workers when it is large: worker i of n
// reads and decodes the buckets it owns (zset.BucketOwner) into its own
// part, keeping each row's order key as read, and the parts' sorted
// runs, one per bucket and range, are merged into key order once, also
// on the workers: worker j merges every run's rows of the j-th of n
// ranges of order keys (mergeSplit). The read's size is estimated from
// bucket 0, read first on the calling goroutine, whose keys also cut
// those ranges: rows are spread evenly over the buckets by the hash of
// their routing keys. A read that is not split merges on the calling
// goroutine, recomputing the run heads' order keys from their rows
// rather than keeping a key per row.
//
// Invariants:
//   - The result is the same batch, in the same order, for any number of
//     workers: the runs are merged by order key, and no two stored rows of
//     a relation share an order key.
//   - The workers only read r, concurrently: every state.Reader a read is
//     given (the in-memory store, an overlay while nothing writes it, a
//     Pebble DB or snapshot) is safe for concurrent reads.
//   - A worker that fails or sees ctx end stops the others; the read then
//     returns ctx's error if ctx ended, else the failing worker's.
//   - Any cut of the order keys gives the same merge: the ranges only
//     decide which worker places which rows.

// serialRead reads on the calling goroutine.
var serialRead = diff.Parallelism{Workers: 1}

// storedPart is one worker's share of a read: its rows in runs sorted by
// order key, which m records.
type storedPart struct {
	rows zset.Batch
	m    bucketMerge
}

// readStored returns the stored rows of the relation under prefix whose
// order keys lie in ranges (sorted, disjoint), in order-key order. A
// range within one bucket is read from it; any other range is read from
// every bucket's part of it (the whole relation in one scan per worker),
// and the buckets' sorted runs are merged by order key: computed by
// orderKey from the rows at the runs' heads, or, when orderKey is nil or
// the read was split, kept from the stored keys as they are read.
func readStored(ctx context.Context, r state.Reader, prefix []byte, ranges []keyRange, orderKey func(dst []byte, row zset.Row) []byte, par diff.Parallelism) (zset.Batch, error) {
	merge := slices.ContainsFunc(ranges, func(kr keyRange) bool { return kr.bucket == allBuckets })
	first := &storedPart{m: bucketMerge{orderKey: orderKey, keep: orderKey == nil}}
	if !merge {
		if err := first.read(ctx, r, prefix, ranges, 0, zset.Buckets, false); err != nil {
			return nil, err
		}
		return first.rows, nil
	}
	n, next := min(par.Workers, zset.Buckets), 0
	if n > 1 {
		next = 1
		first.m.keep = true
		if err := first.read(ctx, r, prefix, ranges, 0, 1, true); err != nil {
			return nil, err
		}
		if (len(first.rows)+1)*zset.Buckets < par.MinRows {
			n = 1
		}
	}
	n0 := len(first.rows)
	// Each worker's share of the rows, estimated from bucket 0's, with
	// room for the estimate's error.
	share, keyLen := (n0+1)*zset.Buckets/n*9/8, len(first.m.keys)/max(n0, 1)
	if n > 1 {
		first.presize(share, keyLen)
	}
	if n <= 1 {
		if err := first.read(ctx, r, prefix, ranges, next, zset.Buckets, true); err != nil {
			return nil, err
		}
		return mergeParts([]*storedPart{first}), nil
	}
	parts := make([]*storedPart, n)
	parts[0] = first
	failed := make([]error, n)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := ownedBuckets(i, n)
		if i == 0 {
			lo = 1 // read above
		} else {
			parts[i] = &storedPart{m: bucketMerge{orderKey: orderKey, keep: true}}
			parts[i].presize(share, keyLen)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := parts[i].read(wctx, r, prefix, ranges, lo, hi, true); err != nil {
				failed[i] = err
				stop()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range failed {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	return mergeSplit(parts, n0, n), nil
}

// presize makes room in p for about rows rows of keys of about keyLen
// bytes.
func (p *storedPart) presize(rows, keyLen int) {
	p.rows = slices.Grow(p.rows, rows-len(p.rows))
	p.m.keys = slices.Grow(p.m.keys, rows*keyLen-len(p.m.keys))
	p.m.ends = slices.Grow(p.m.ends, rows-len(p.m.ends))
}

// ownedBuckets is the range of buckets [lo, hi) that worker i of n owns.
func ownedBuckets(i, n int) (lo, hi int) {
	return (i*zset.Buckets + n - 1) / n, ((i+1)*zset.Buckets + n - 1) / n
}

// read appends to p the rows of buckets [blo, bhi) under ranges, in
// ranges' order and, within a range, bucket by bucket; with merge, m
// records their runs.
func (p *storedPart) read(ctx context.Context, r state.Reader, prefix []byte, ranges []keyRange, blo, bhi int, merge bool) error {
	if blo >= bhi {
		return nil
	}
	var derr error
	collect := func(k, v []byte) bool {
		if derr = ops.Interrupted(ctx, len(p.rows)); derr != nil {
			return false
		}
		e, err := decodeStored(v)
		if err != nil {
			derr = err
			return false
		}
		if merge {
			p.m.add(len(p.rows), k[len(prefix)], k[len(prefix)+1:])
		}
		p.rows = append(p.rows, e)
		return true
	}
	scan := func(lo, hi []byte) error {
		p.m.bucket = -1 // a new scan starts a new run
		err := r.Scan(lo, hi, collect)
		if err == nil {
			err = derr
		}
		return err
	}
	// The scans' bounds share one buffer, large enough for any range's
	// bound with its bucket byte (bucketBound).
	size := len(prefix) + 1
	for _, kr := range ranges {
		size = max(size, len(kr.lo)+1, len(kr.hi)+1)
	}
	buf := make([]byte, 2*size)
	lo, hi := buf[:0:size], buf[size:size]
	for _, kr := range ranges {
		switch {
		case kr.bucket != allBuckets:
			if kr.bucket < blo || kr.bucket >= bhi {
				continue
			}
			b := byte(kr.bucket)
			lo = bucketBound(lo, prefix, b, kr.lo)
			hi = bucketBound(hi, prefix, b, kr.hi)
			if err := scan(lo, hi); err != nil {
				return err
			}
		case bytes.Equal(kr.lo, prefix) && !bytes.HasPrefix(kr.hi, prefix):
			// The whole relation's buckets [blo, bhi): one scan, one run
			// per bucket.
			lo = bucketBound(lo, prefix, byte(blo), kr.lo)
			hi = bucketBound(hi, prefix, byte(bhi-1), kr.hi)
			if err := scan(lo, hi); err != nil {
				return err
			}
		default:
			for b := blo; b < bhi; b++ {
				lo = bucketBound(lo, prefix, byte(b), kr.lo)
				hi = bucketBound(hi, prefix, byte(b), kr.hi)
				if err := scan(lo, hi); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// bucketMerge records the sorted runs of rows read bucket by bucket, to
// merge them into one sequence sorted by order key.
type bucketMerge struct {
	orderKey func(dst []byte, row zset.Row) []byte
	// keep says that the rows' order keys are kept as read: when
	// orderKey is nil, and when a read is split, so that the workers, not
	// the merge, pay for them.
	keep bool
	// keys holds, when keep, the rows' order keys without the prefix,
	// concatenated; row i's ends at ends[i]. Neither holds pointers, so
	// that the collector does not scan them.
	keys   []byte
	ends   []uint64
	starts []int // the first row of each run
	bucket int   // the bucket of the run being read; -1 before a scan
}

// add records row i, stored under bucket b with order key k (without the
// prefix); rows are added in the order they are read.
func (m *bucketMerge) add(i int, b byte, k []byte) {
	if int(b) != m.bucket {
		m.starts = append(m.starts, i)
		m.bucket = int(b)
	}
	if !m.keep {
		return
	}
	m.keys = append(m.keys, k...)
	m.ends = append(m.ends, uint64(len(m.keys)))
}

func (m *bucketMerge) key(i int) []byte {
	var lo uint64
	if i > 0 {
		lo = m.ends[i-1]
	}
	return m.keys[lo:m.ends[i]]
}

// run is a sorted run of rows of a part, [next, end) of its rows.
type run struct {
	p         *storedPart
	next, end int
	key       []byte // the order key of rows[next]
	lead      uint64 // its first 8 bytes, big-endian, zero-padded
}

// partRuns returns the non-empty runs of parts, and how many rows they
// hold.
func partRuns(parts []*storedPart) ([]run, int) {
	var runs []run
	total := 0
	for _, p := range parts {
		total += len(p.rows)
		for i, s := range p.m.starts {
			end := len(p.rows)
			if i+1 < len(p.m.starts) {
				end = p.m.starts[i+1]
			}
			if s < end {
				runs = append(runs, run{p: p, next: s, end: end})
			}
		}
	}
	return runs, total
}

// mergeParts returns the rows of parts, whose runs their merges
// recorded, in order-key order: a k-way merge over a binary heap of the
// runs' heads. A single run is returned as it is.
func mergeParts(parts []*storedPart) zset.Batch {
	runs, total := partRuns(parts)
	switch len(runs) {
	case 0:
		return nil
	case 1:
		return runs[0].p.rows
	}
	return mergeRuns(runs, make(zset.Batch, 0, total))
}

// mergeSplit is mergeParts on n workers, for parts that keep their order
// keys, the first of which begins with the rows of bucket 0 (its first
// n0 rows), in key order. Those rows, a sample of the relation's keys
// (rows are spread over the buckets by the hash of their routing keys),
// split the order keys into n ranges of about as many rows; worker j
// merges every run's rows of range j into its place in the result.
func mergeSplit(parts []*storedPart, n0, n int) zset.Batch {
	runs, total := partRuns(parts)
	if len(runs) <= 1 || n0 < n {
		return mergeParts(parts)
	}
	m0 := &parts[0].m
	// cuts[j*len(runs)+r] is where range j begins in run r; range j ends
	// where range j+1 begins, the last at the run's end.
	cuts := make([]int, (n+1)*len(runs))
	at := make([]int, n+1) // where range j's rows begin in the result
	for r, rn := range runs {
		cuts[r] = rn.next
		cuts[n*len(runs)+r] = rn.end
	}
	for j := 1; j < n; j++ {
		split := m0.key(n0 * j / n)
		for r, rn := range runs {
			m := &rn.p.m
			cuts[j*len(runs)+r] = rn.next + sort.Search(rn.end-rn.next, func(i int) bool {
				return bytes.Compare(m.key(rn.next+i), split) >= 0
			})
		}
	}
	for j := range n {
		at[j+1] = at[j]
		for r := range runs {
			at[j+1] += cuts[(j+1)*len(runs)+r] - cuts[j*len(runs)+r]
		}
	}
	out := make(zset.Batch, total)
	var wg sync.WaitGroup
	for j := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h []run
			for r, rn := range runs {
				lo, hi := cuts[j*len(runs)+r], cuts[(j+1)*len(runs)+r]
				if lo < hi {
					h = append(h, run{p: rn.p, next: lo, end: hi})
				}
			}
			mergeRuns(h, out[at[j]:at[j]:at[j+1]])
		}()
	}
	wg.Wait()
	return out
}

// mergeRuns appends the rows of runs (at least one) to dst in order-key
// order: a k-way merge over a binary heap of the runs' heads.
func mergeRuns(h []run, dst zset.Batch) zset.Batch {
	keyOf := func(hd *run) {
		if m := &hd.p.m; m.keep {
			hd.key = m.key(hd.next)
		} else {
			hd.key = m.orderKey(hd.key[:0], hd.p.rows[hd.next].Row)
		}
		var lead [8]byte
		copy(lead[:], hd.key)
		hd.lead = binary.BigEndian.Uint64(lead[:])
	}
	for i := range h {
		keyOf(&h[i])
	}
	less := func(a, b int) bool {
		if h[a].lead != h[b].lead {
			return h[a].lead < h[b].lead
		}
		return bytes.Compare(h[a].key, h[b].key) < 0
	}
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && less(c+1, c) {
				c++
			}
			if !less(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		dst = append(dst, h[0].p.rows[h[0].next])
		if h[0].next++; h[0].next == h[0].end {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		} else {
			keyOf(&h[0])
		}
		down(0)
	}
	return dst
}
