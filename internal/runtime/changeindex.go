package runtime

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// The change-log index tells readers of the current state which buckets
// of a view's change log hold entries after an epoch, so that reading a
// view's recent changes (SUBSCRIBE polls, sinks, AS OF EPOCH) seeks only
// those buckets instead of all 256, and the view's last change is known
// without a seek (docs/format/storage.md, "0x05 view change log").
//
// It is kept in memory, not in the store: the store already holds what
// it says, and a durable summary would be a second copy of the log's
// shape that every build, upgrade and repair must keep in step, with a
// new layout version. In memory it costs 2 KiB per view and is rebuilt,
// when a view is first read after the engine opens, with one reverse
// seek per bucket, the cost one lastChange call had before.
// BenchmarkReadChanges and BenchmarkLastChange (docs/BENCHMARKS.md)
// measure the reads with and without it.
//
// Invariants:
//
//   - An entry holds, for each bucket of one materialized view's change
//     log, the last epoch with an entry in that bucket in the committed
//     store at the engine's frontier, or 0 when the bucket has none
//     (epoch 0 commits nothing). It is exact, never a bound: a bucket
//     whose entry says e holds an entry at epoch e and none later.
//   - Entries change only under the engine's write lock, in commitEpoch,
//     in the critical section that makes the epoch visible; readers read
//     them under the read lock. A reader that finds no entry builds one
//     from the store under the read lock, so from the committed state,
//     and installs it before any later epoch can commit.
//   - Only reads through currentReader (the committed store at the
//     frontier, under the read lock) use the index; any other reader (a
//     transaction's overlay, an offline check) scans every bucket.
type changeIndex struct {
	mu    sync.Mutex // guards views; entries are guarded by Engine.mu
	views map[uint64]*bucketEpochs
}

// bucketEpochs is one view's entry: the last epoch logged in each bucket.
type bucketEpochs [zset.Buckets]uint64

func newChangeIndex() *changeIndex {
	return &changeIndex{views: map[uint64]*bucketEpochs{}}
}

// lookup returns the entry of the view with id, building it from r (the
// committed store; the caller holds the engine's read lock) when absent.
// The caller must not modify it.
func (c *changeIndex) lookup(r state.Reader, id uint64) (*bucketEpochs, error) {
	c.mu.Lock()
	ent := c.views[id]
	c.mu.Unlock()
	if ent != nil {
		return ent, nil
	}
	ent, err := scanBucketEpochs(r, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.views[id]; cur != nil {
		return cur, nil // another reader built it from the same state
	}
	c.views[id] = ent
	return ent, nil
}

// scanBucketEpochs reads the last epoch of each bucket of a view's
// change log: one reverse seek per bucket.
func scanBucketEpochs(r state.Reader, id uint64) (*bucketEpochs, error) {
	prefix := relPrefix(nsChangeLog, id)
	ent := new(bucketEpochs)
	for b := 0; b < zset.Buckets; b++ {
		lo := append(slices.Clip(prefix), byte(b))
		err := r.ScanReverse(lo, state.PrefixEnd(lo), func(k, _ []byte) bool {
			if len(k) >= len(lo)+8 {
				ent[b] = binary.BigEndian.Uint64(k[len(lo):])
			}
			return false
		})
		if err != nil {
			return nil, err
		}
	}
	return ent, nil
}

// after returns the buckets with entries later than epoch, in order.
func (ent *bucketEpochs) after(epoch uint64) []int {
	var out []int
	for b, last := range ent {
		if last > epoch {
			out = append(out, b)
		}
	}
	return out
}

// last returns the last epoch with an entry in any bucket, and false when
// the log is empty.
func (ent *bucketEpochs) last() (uint64, bool) {
	m := uint64(0)
	for _, e := range ent {
		m = max(m, e)
	}
	return m, m > 0
}

// committed brings the index to the epoch just committed: logged holds
// the buckets each view's log gained entries in at epoch, trimmed the
// horizon each view's log was trimmed to (entries before it deleted),
// and old and next are the catalogs before and after the epoch. The
// caller holds the engine's write lock.
func (c *changeIndex) committed(epoch uint64, logged map[uint64][]int, trimmed map[uint64]uint64, old, next *catalog) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, horizon := range trimmed {
		if ent := c.views[id]; ent != nil {
			for b, last := range ent {
				if last < horizon {
					ent[b] = 0
				}
			}
		}
	}
	for id, buckets := range logged {
		if ent := c.views[id]; ent != nil {
			for _, b := range buckets {
				ent[b] = epoch
			}
		}
	}
	if old == next {
		return
	}
	// A view created in this epoch has a new id: all of its log is in
	// logged, so its entry is known without reading the store.
	for _, v := range next.matviewsInOrder() {
		if o := old.byName[v.name]; o != nil && o.id == v.id {
			continue
		}
		if c.views[v.id] == nil {
			ent := new(bucketEpochs)
			for _, b := range logged[v.id] {
				ent[b] = epoch
			}
			c.views[v.id] = ent
		}
	}
	// A dropped view's log is gone with it; ids are never reused.
	live := map[uint64]bool{}
	for _, v := range next.matviewsInOrder() {
		live[v.id] = true
	}
	for id := range c.views {
		if !live[id] {
			delete(c.views, id)
		}
	}
}

// reset forgets every entry, for an engine whose committed state was
// reloaded from the store (storerecover.go); readers rebuild them from
// the store. The caller holds the engine's write lock.
func (c *changeIndex) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.views = map[uint64]*bucketEpochs{}
}

// loggedBuckets returns, for each view whose change log ov writes
// entries of epoch into, the buckets it writes them into, in order. It
// seeks from one bucket's entries of epoch to the next bucket's, stepping
// over the deletions a trim writes (all of older epochs).
func loggedBuckets(ov *state.Overlay, epoch uint64) map[uint64][]int {
	var out map[uint64][]int
	from := []byte{nsChangeLog}
	for {
		k, ok := ov.NextWrite(from)
		if !ok || k[0] != nsChangeLog {
			return out
		}
		id, n := binary.Uvarint(k[1:])
		if n <= 0 {
			return out // not a change-log key: nothing of the namespace follows
		}
		prefix := bytes.Clone(k[:1+n])
		if len(k) != len(prefix)+17 {
			from = append(bytes.Clone(k), 0) // not an entry's key
			continue
		}
		b := int(k[len(prefix)])
		at := binary.BigEndian.Uint64(k[len(prefix)+1:])
		switch {
		case at < epoch:
			from = binary.BigEndian.AppendUint64(append(prefix, byte(b)), epoch)
			continue
		case at == epoch:
			if _, live, err := ov.Get(k); err == nil && !live {
				// Deleted in the epoch that wrote it (the view was
				// dropped): look further in the bucket.
				from = append(bytes.Clone(k), 0)
				continue
			}
			if out == nil {
				out = map[uint64][]int{}
			}
			out[id] = append(out[id], b)
		}
		if b == zset.Buckets-1 {
			if from = state.PrefixEnd(prefix); from == nil {
				return out
			}
			continue
		}
		from = append(prefix, byte(b+1))
	}
}
