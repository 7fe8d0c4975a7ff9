package storage

import (
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// Iterators kept between reads. Opening a Pebble iterator (acquiring the
// current version, building the merging iterator over the memtables and
// levels, opening the tables' iterators) for every read was about a
// quarter of the CPU of a one-row Scan (BenchmarkScanPoint); a Scan of
// the DB therefore takes an iterator opened by an earlier Scan, moves its
// bounds (SetBounds) and seeks, and gives it back.
//
// A Pebble iterator reads the state of its creation, so an iterator is
// reused only while no commit has been applied since it was opened:
//
//   - gen counts the batches applied (and the instances closed or
//     replaced). Commit bumps it
//     right after Pebble applies a batch, successful or not, before
//     Commit returns, and closes the iterators kept.
//   - A read notes gen before it opens an iterator, and keeps it only
//     if gen is unchanged when it gives it back. So an iterator noted at
//     generation g saw every batch applied before gen reached g, and a
//     read that starts after a Commit returned (of any session) finds
//     gen past every iterator opened before that commit: it opens a new
//     one. Reads see every acknowledged commit, as with an iterator per
//     read.
//   - Every kept iterator was opened at the current generation (bumping
//     empties the pool under its lock), and belongs to the current
//     instance: the pool is emptied before an instance closes or a
//     recovery replaces it. A kept iterator pins the version it reads,
//     until the next commit or Close.
//
// Snapshots and reads of a stopped DB do not use the pool.
type iterPool struct {
	mu struct {
		sync.Mutex
		// gen is the generation of the applied batches.
		gen uint64
		// free are the iterators kept, all opened at gen.
		free []*pebble.Iterator
	}
}

// maxPooledIters bounds the iterators kept: about the reads under way at
// once. A read that finds the pool full closes its iterator.
const maxPooledIters = 32

// take returns a kept iterator with its bounds set to [lo, hi), or nil
// when none is kept, and the generation to give it (or a new one) back
// at.
func (p *iterPool) take(lo, hi []byte) (*pebble.Iterator, uint64) {
	p.mu.Lock()
	gen := p.mu.gen
	n := len(p.mu.free)
	if n == 0 {
		p.mu.Unlock()
		return nil, gen
	}
	it := p.mu.free[n-1]
	p.mu.free[n-1] = nil
	p.mu.free = p.mu.free[:n-1]
	p.mu.Unlock()
	it.SetBounds(lo, hi)
	return it, gen
}

// give keeps it, opened (or taken) at generation gen, for a later read,
// or closes it when a batch has been applied since or the pool is full.
func (p *iterPool) give(it *pebble.Iterator, gen uint64) error {
	p.mu.Lock()
	if gen == p.mu.gen && len(p.mu.free) < maxPooledIters {
		p.mu.free = append(p.mu.free, it)
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	return it.Close()
}

// invalidate starts a new generation: no iterator opened before it is
// used again. It closes the kept ones unless the instance is wedged
// (closing could then block on it); those are dropped with the instance.
func (p *iterPool) invalidate(closeKept bool) {
	p.mu.Lock()
	p.mu.gen++
	free := p.mu.free
	p.mu.free = nil
	p.mu.Unlock()
	if !closeKept {
		return
	}
	for _, it := range free {
		_ = it.Close()
	}
}

// live returns r as the reader of the current instance, whose iterators
// are kept between reads (iterpool.go), or r itself when it is a
// snapshot.
func (d *DB) live(r pebbleReader) pebbleReader {
	if pdb, ok := r.(*pebble.DB); ok && pdb == d.db {
		return pooledReader{pdb}
	}
	return r
}

// pooledReader reads the current instance through the DB's kept
// iterators.
type pooledReader struct{ *pebble.DB }

// openIter opens an iterator of r over [lo, hi): a kept one, with the
// generation to give it back at, when r reads the current instance.
func (d *DB) openIter(r pebbleReader, lo, hi []byte) (*pebble.Iterator, uint64, error) {
	var gen uint64
	if _, pooled := r.(pooledReader); pooled {
		var it *pebble.Iterator
		if it, gen = d.iters.take(lo, hi); it != nil {
			return it, gen, nil
		}
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	return it, gen, err
}

// closeIter ends a read through it, opened by openIter at gen: the
// iterator of a read of the current instance that ended well is kept.
func (d *DB) closeIter(r pebbleReader, it *pebble.Iterator, gen uint64, ok bool) error {
	if _, pooled := r.(pooledReader); pooled && ok {
		return d.iters.give(it, gen)
	}
	return it.Close()
}

// wedged reports whether the current instance is wedged: closing its
// iterators could then block on it.
func (d *DB) wedged() bool {
	inst := d.inst.Load()
	return inst != nil && inst.wedged.Load()
}
