package state

import (
	"bytes"
	"errors"
	"sync/atomic"

	"github.com/tidwall/btree"
)

// errWriteInScan is returned for a write made by a scan callback into the
// store being scanned.
var errWriteInScan = errors.New("state: write during a scan of the same store")

// Memory is an in-memory ordered Store (a B-tree). It copies the keys and
// values it is given; the values it returns are never modified afterwards
// and stay valid. Any number of goroutines may read a Memory at once while
// none writes it; a write needs exclusive access, and a Scan callback must
// not write to the Memory being scanned.
type Memory struct {
	tree     *btree.BTreeG[entry]
	scanning atomic.Int32
	undo     []undoStep // reused by commits of weight merges
}

// NewMemory returns an empty in-memory Store (an ordered tree).
func NewMemory() Store { return &Memory{tree: newTree()} }

// Get implements Reader.
func (m *Memory) Get(key []byte) ([]byte, bool, error) {
	e, ok := m.tree.Get(probe(key))
	if !ok {
		return nil, false, nil
	}
	return e.value(), true, nil
}

// Set implements Writer.
func (m *Memory) Set(key, value []byte) error {
	if m.scanning.Load() > 0 {
		return errWriteInScan
	}
	m.tree.Set(owned(key, value))
	return nil
}

// Delete implements Writer.
func (m *Memory) Delete(key []byte) error {
	if m.scanning.Load() > 0 {
		return errWriteInScan
	}
	m.tree.Delete(probe(key))
	return nil
}

// Scan implements Reader.
func (m *Memory) Scan(lo, hi []byte, fn func(key, value []byte) bool) error {
	m.scanning.Add(1)
	defer m.scanning.Add(-1)
	m.tree.Ascend(probe(lo), func(e entry) bool {
		if hi != nil && bytes.Compare(e.key(), hi) >= 0 {
			return false
		}
		return fn(e.key(), e.value())
	})
	return nil
}

// ScanReverse implements Reader.
func (m *Memory) ScanReverse(lo, hi []byte, fn func(key, value []byte) bool) error {
	m.scanning.Add(1)
	defer m.scanning.Add(-1)
	visit := func(e entry) bool {
		if bytes.Compare(e.key(), lo) < 0 {
			return false
		}
		if hi != nil && bytes.Compare(e.key(), hi) >= 0 {
			return true // hi itself: the pivot is inclusive
		}
		return fn(e.key(), e.value())
	}
	if hi == nil {
		m.tree.Reverse(visit)
	} else {
		m.tree.Descend(probe(hi), visit)
	}
	return nil
}

// Len returns the number of keys stored.
func (m *Memory) Len() int { return m.tree.Len() }

// Overlay is a Store that buffers writes over a parent Store. Reads see
// the overlay's own writes merged over the parent's contents; Commit
// applies the writes to the parent, Discard drops them. Overlays nest: the
// parent may itself be an Overlay. The parent must not be written to
// while the overlay holds writes, and a Scan callback must not write to the
// overlay being scanned. Any number of goroutines may read an Overlay at
// once while none writes it (the workers of a parallel step all read the
// epoch's overlay); a write needs exclusive access.
type Overlay struct {
	parent   Store
	writes   *btree.BTreeG[entry]
	scanning atomic.Int32
	// merges says writes may hold weight merge operands (MergeWeight).
	merges bool
}

// NewOverlay returns an empty overlay over parent.
func NewOverlay(parent Store) *Overlay {
	return &Overlay{parent: parent, writes: newTree()}
}

// Parent returns the store the overlay writes through to on Commit.
func (o *Overlay) Parent() Store { return o.parent }

// Len returns the number of buffered writes (sets, deletes and weight
// merges).
func (o *Overlay) Len() int { return o.writes.Len() }

// Get implements Reader.
func (o *Overlay) Get(key []byte) ([]byte, bool, error) {
	if e, ok := o.writes.Get(probe(key)); ok {
		if e.deleted() {
			return nil, false, nil
		}
		if e.merge() {
			old, found, err := o.parent.Get(key)
			if err != nil {
				return nil, false, err
			}
			v, err := resolve(e, old, found)
			return v, err == nil, err
		}
		return e.value(), true, nil
	}
	return o.parent.Get(key)
}

// Set implements Writer.
func (o *Overlay) Set(key, value []byte) error {
	if o.scanning.Load() > 0 {
		return errWriteInScan
	}
	o.writes.Set(owned(key, value))
	return nil
}

// Delete implements Writer. The deletion hides the parent's value until
// Commit removes it there.
func (o *Overlay) Delete(key []byte) error {
	if o.scanning.Load() > 0 {
		return errWriteInScan
	}
	e := owned(key, nil).asDeletion()
	o.writes.Set(e)
	return nil
}

// Scan implements Reader: it merges the overlay's writes in [lo, hi) with
// the parent's keys, the overlay's entry winning on equal keys.
func (o *Overlay) Scan(lo, hi []byte, fn func(key, value []byte) bool) error {
	o.scanning.Add(1)
	defer o.scanning.Add(-1)
	if !o.writesIn(lo, hi) {
		return o.parent.Scan(lo, hi, fn)
	}
	it := o.writes.Iter()
	defer it.Release()
	own, ok := it.Seek(probe(lo)), true
	ownItem := func() (entry, bool) {
		if !own {
			return entry{}, false
		}
		e := it.Item()
		if hi != nil && bytes.Compare(e.key(), hi) >= 0 {
			own = false
			return entry{}, false
		}
		return e, true
	}
	// emitBefore emits the overlay's entries below key (all when key is
	// nil) and reports whether the overlay has key itself, positioned on it.
	emitBefore := func(key []byte) (same bool) {
		for {
			e, has := ownItem()
			if !has {
				return false
			}
			c := -1
			if key != nil {
				c = bytes.Compare(e.key(), key)
			}
			if c == 0 {
				return true
			}
			if c > 0 {
				return false
			}
			if !e.deleted() && !fn(e.key(), e.value()) {
				ok = false
				return false
			}
			own = it.Next()
		}
	}
	var merr error
	err := o.parent.Scan(lo, hi, func(k, v []byte) bool {
		if emitBefore(k) {
			e := it.Item()
			own = it.Next()
			if e.deleted() {
				return true
			}
			var value []byte
			if value, merr = resolve(e, v, true); merr != nil {
				ok = false
				return false
			}
			ok = fn(e.key(), value)
			return ok
		}
		if !ok {
			return false
		}
		ok = fn(k, v)
		return ok
	})
	if err != nil {
		return err
	}
	if !ok {
		return merr
	}
	emitBefore(nil)
	return nil
}

// ScanReverse implements Reader.
func (o *Overlay) ScanReverse(lo, hi []byte, fn func(key, value []byte) bool) error {
	o.scanning.Add(1)
	defer o.scanning.Add(-1)
	if !o.writesIn(lo, hi) {
		return o.parent.ScanReverse(lo, hi, fn)
	}
	it := o.writes.Iter()
	defer it.Release()
	var own bool
	if hi == nil {
		own = it.Last()
	} else if it.Seek(probe(hi)) {
		own = it.Prev()
	} else {
		own = it.Last()
	}
	ok := true
	ownItem := func() (entry, bool) {
		if !own {
			return entry{}, false
		}
		e := it.Item()
		if bytes.Compare(e.key(), lo) < 0 {
			own = false
			return entry{}, false
		}
		return e, true
	}
	// emitAbove emits the overlay's entries above key (all when key is
	// nil) and reports whether the overlay has key itself, positioned on it.
	emitAbove := func(key []byte) (same bool) {
		for {
			e, has := ownItem()
			if !has {
				return false
			}
			c := 1
			if key != nil {
				c = bytes.Compare(e.key(), key)
			}
			if c == 0 {
				return true
			}
			if c < 0 {
				return false
			}
			if !e.deleted() && !fn(e.key(), e.value()) {
				ok = false
				return false
			}
			own = it.Prev()
		}
	}
	var merr error
	err := o.parent.ScanReverse(lo, hi, func(k, v []byte) bool {
		if emitAbove(k) {
			e := it.Item()
			own = it.Prev()
			if e.deleted() {
				return true
			}
			var value []byte
			if value, merr = resolve(e, v, true); merr != nil {
				ok = false
				return false
			}
			ok = fn(e.key(), value)
			return ok
		}
		if !ok {
			return false
		}
		ok = fn(k, v)
		return ok
	})
	if err != nil {
		return err
	}
	if !ok {
		return merr
	}
	emitAbove(nil)
	return nil
}

// NextWrite returns the first key at or after from that the overlay has
// written (set or deleted), or false when there is none. The key is the
// overlay's own: the caller must not modify it.
func (o *Overlay) NextWrite(from []byte) ([]byte, bool) {
	var key []byte
	o.writes.Ascend(probe(from), func(e entry) bool {
		key = e.key()
		return false
	})
	return key, key != nil
}

// writesIn reports whether the overlay holds a write in [lo, hi). Most
// point lookups and prefix scans during an epoch touch keys the epoch has
// not written, and then the parent answers alone.
func (o *Overlay) writesIn(lo, hi []byte) bool {
	found := false
	o.writes.Ascend(probe(lo), func(e entry) bool {
		found = hi == nil || bytes.Compare(e.key(), hi) < 0
		return false
	})
	return found
}

// Commit applies the overlay's writes to its parent, in key order, and
// empties it. If the parent fails a write, Commit returns the error and
// the overlay keeps every write; the parent may then hold some of them,
// so a caller that needs all-or-nothing commits into an Overlay or a
// batch.
//
// Into a Memory (or a Store embedding one) or another Overlay, Commit
// hands over its entries, which are its own immutable copies, instead of
// copying them again, and an overlay committed into an overlay keeps
// whichever of the two trees is larger and moves the smaller one's
// entries into it. Weight merge operands (MergeWeight) are added to the
// parent's values; into a Memory or an Overlay a sum that overflows fails
// the whole commit and changes neither store.
func (o *Overlay) Commit() error {
	switch p := o.parent.(type) {
	case *Overlay:
		if p.scanning.Load() == 0 {
			if o.merges {
				return o.commitMergesIntoOverlay(p)
			}
			o.commitIntoOverlay(p)
			return nil
		}
	case memoryHolder:
		if m := p.memory(); m.scanning.Load() == 0 {
			if o.merges {
				return o.commitMergesIntoMemory(m)
			}
			o.commitIntoMemory(m)
			return nil
		}
	}
	var err error
	o.writes.Scan(func(e entry) bool {
		switch {
		case e.deleted():
			err = o.parent.Delete(e.key())
		case e.merge():
			err = commitMergeInto(o.parent, e)
		default:
			err = o.parent.Set(e.key(), e.value())
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	o.writes.Clear()
	o.merges = false
	return nil
}

// commitIntoMemory applies the writes to m. They come in key order, so a
// path hint (where the previous key went) saves most of each descent when
// consecutive writes land in the same leaf.
func (o *Overlay) commitIntoMemory(m *Memory) {
	var hint btree.PathHint
	o.writes.Scan(func(e entry) bool {
		if e.deleted() {
			m.tree.DeleteHint(e, &hint)
		} else {
			m.tree.SetHint(e, &hint)
		}
		return true
	})
	o.writes.Clear()
}

// commitIntoOverlay merges the writes into p's, o's winning on equal keys
// (a deletion stays a deletion that hides p's parent's value). The
// smaller tree's entries are inserted into the larger one, which becomes
// p's; a statement committed into an epoch that has written nothing yet
// costs no insertion at all.
func (o *Overlay) commitIntoOverlay(p *Overlay) {
	var hint btree.PathHint
	if o.writes.Len() > p.writes.Len() {
		p.writes.Scan(func(e entry) bool {
			if prev, shadowed := o.writes.SetHint(e, &hint); shadowed {
				o.writes.SetHint(prev, &hint)
			}
			return true
		})
		p.writes, o.writes = o.writes, p.writes
	} else {
		o.writes.Scan(func(e entry) bool {
			p.writes.SetHint(e, &hint)
			return true
		})
	}
	o.writes.Clear()
}

// memoryHolder is implemented by a Memory and, through embedding, by any
// Store that embeds a *Memory; Commit writes into such a store's Memory
// directly, and a hinted read (GetHinted) reads that Memory's tree. A
// type embedding *Memory must therefore not give Get, Set or Delete
// another meaning.
type memoryHolder interface{ memory() *Memory }

func (m *Memory) memory() *Memory { return m }

// Discard drops the overlay's writes.
func (o *Overlay) Discard() {
	o.writes.Clear()
	o.merges = false
}
