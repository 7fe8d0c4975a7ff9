package runtime

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// The relation cache keeps the whole contents of small tables and
// materialized views as read at some epoch, so that queries of the
// current state read them from memory instead of scanning the store.
// Scans of a small relation whose rows change in every epoch are slow in
// an LSM store: each replaced row leaves a deletion that every later scan
// steps over until compaction removes it (BenchmarkScanReplaced).
//
// Invariants:
//
//   - An entry holds a relation's contents at the frontier it was read
//     at, under the engine's read lock.
//   - changedAt[id] is the last epoch that wrote the relation's rows (0:
//     none since the engine opened). commitEpoch advances it under the
//     engine's write lock, in the same critical section that makes the
//     epoch visible, so a reader (holding the read lock) never sees an
//     epoch whose changes changedAt does not show.
//   - An entry answers a read of the current state exactly when
//     changedAt[id] <= the entry's epoch: nothing changed the relation
//     since it was read.
//   - Entries are shared by concurrent readers and never modified: a
//     reader gets its own copy of the batch, whose rows have no spare
//     capacity, so that appending to one reallocates.
type relationCache struct {
	// changedAt is guarded by Engine.mu.
	changedAt map[uint64]uint64

	mu struct {
		sync.Mutex
		entries map[uint64]cachedRelation
		rows    int
	}
}

type cachedRelation struct {
	epoch uint64
	rows  zset.Batch
}

// Bounds of the cache: a relation of more rows is not kept (its scan
// costs more than its deletions), and the cache holds at most
// maxCacheRows rows in all.
const (
	maxCachedRelationRows = 4096
	maxCacheRows          = 1 << 17
)

func newRelationCache() *relationCache {
	c := &relationCache{changedAt: map[uint64]uint64{}}
	c.mu.entries = map[uint64]cachedRelation{}
	return c
}

// currentReader is the engine's store at its frontier, read under the
// engine's read lock: relations read through it may come from the cache.
type currentReader struct {
	state.Reader
	eng *Engine
}

// readContents returns the whole contents of o's rows as r holds them,
// from the relation cache when r is the current state, else read on the
// engine's workers when r is the current state and on one goroutine
// otherwise.
func readContents(ctx context.Context, r state.Reader, o *object) (zset.Batch, error) {
	par := serialRead
	if cr, ok := r.(currentReader); ok {
		par = cr.eng.parallelism()
	}
	return readContentsOn(ctx, r, o, par)
}

// readContentsOn is readContents with a read of the store split between
// par's workers when it is large (readStored).
func readContentsOn(ctx context.Context, r state.Reader, o *object, par diff.Parallelism) (zset.Batch, error) {
	if cr, ok := r.(currentReader); ok {
		return cr.eng.cache.read(ctx, cr.Reader, cr.eng.mu.epoch, o, par)
	}
	return readRelationOn(ctx, r, o, par)
}

// read returns o's contents at epoch, the frontier r holds. The caller
// holds the engine's read lock.
func (c *relationCache) read(ctx context.Context, r state.Reader, epoch uint64, o *object, par diff.Parallelism) (zset.Batch, error) {
	c.mu.Lock()
	ent, ok := c.mu.entries[o.id]
	c.mu.Unlock()
	if ok && c.changedAt[o.id] <= ent.epoch {
		return slices.Clone(ent.rows), nil
	}
	rows, err := readRelationOn(ctx, r, o, par)
	if err != nil || len(rows) > maxCachedRelationRows {
		return rows, err
	}
	for i := range rows {
		rows[i].Row = slices.Clip(rows[i].Row)
	}
	c.put(o.id, cachedRelation{epoch: epoch, rows: rows})
	return slices.Clone(rows), nil
}

// lookup returns o's cached contents when they are current, shared: the
// caller must not modify the batch or its rows. The caller holds the
// engine's read lock.
func (c *relationCache) lookup(id uint64) (zset.Batch, bool) {
	c.mu.Lock()
	ent, ok := c.mu.entries[id]
	c.mu.Unlock()
	if !ok || c.changedAt[id] > ent.epoch {
		return nil, false
	}
	return ent.rows, true
}

func (c *relationCache) put(id uint64, ent cachedRelation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.mu.entries[id]; ok {
		if old.epoch > ent.epoch {
			return // a later read got there first
		}
		c.mu.rows -= len(old.rows)
	}
	for other, e := range c.mu.entries {
		if c.mu.rows+len(ent.rows) <= maxCacheRows {
			break
		}
		delete(c.mu.entries, other)
		c.mu.rows -= len(e.rows)
	}
	c.mu.entries[id] = ent
	c.mu.rows += len(ent.rows)
}

// changed records that epoch wrote the rows of the relations ids. The
// caller holds the engine's write lock.
func (c *relationCache) changed(ids []uint64, epoch uint64) {
	for _, id := range ids {
		c.changedAt[id] = epoch
	}
}

// reset forgets every entry, for an engine whose committed state was
// reloaded from the store (storerecover.go). The caller holds the
// engine's write lock.
func (c *relationCache) reset() {
	c.changedAt = map[uint64]uint64{}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.entries = map[uint64]cachedRelation{}
	c.mu.rows = 0
}

// writtenRelations returns the ids of the tables and materialized views
// whose rows ov writes, skipping from one relation's keys to the next.
func writtenRelations(ov *state.Overlay) []uint64 {
	var ids []uint64
	from := []byte{nsTableRows}
	for {
		k, ok := ov.NextWrite(from)
		if !ok || k[0] > nsViewRows {
			return ids
		}
		id, n := binary.Uvarint(k[1:])
		if n <= 0 {
			// Not a relation's key; the next namespace's keys follow.
			from = state.PrefixEnd(k[:1])
			continue
		}
		ids = append(ids, id)
		from = state.PrefixEnd(k[:1+n])
	}
}
