package state

import "github.com/tidwall/btree"

// hintDepth is how many stores of an overlay chain a Hint remembers a
// path in: a table write's overlay (beside the views') over a
// statement's over an epoch's, and the store under them, which holds
// most keys and is where a search from the root costs most.
const hintDepth = 4

// Hint remembers where the last point operation made through it went in
// each in-memory tree along a chain of overlays, so that an operation on
// the same key or a nearby one (the write of a key just read, the next of
// a run of sorted keys) starts from there instead of searching each tree
// from its root. A hint changes only the cost of an operation, never its
// result. The zero Hint is ready to use; a Hint belongs to one goroutine,
// and should follow one chain of stores (another chain only costs it its
// use).
type Hint struct {
	paths [hintDepth]btree.PathHint
}

// GetHinted is r.Get(key), through h.
func GetHinted(r Reader, key []byte, h *Hint) ([]byte, bool, error) {
	return getHinted(r, key, h, 0)
}

func getHinted(r Reader, key []byte, h *Hint, depth int) ([]byte, bool, error) {
	if depth >= hintDepth {
		return r.Get(key)
	}
	switch s := r.(type) {
	case *Overlay:
		if e, ok := s.writes.GetHint(probe(key), &h.paths[depth]); ok {
			if e.deleted() {
				return nil, false, nil
			}
			if e.merge() {
				old, found, err := getHinted(s.parent, key, h, depth+1)
				if err != nil {
					return nil, false, err
				}
				v, err := resolve(e, old, found)
				return v, err == nil, err
			}
			return e.value(), true, nil
		}
		return getHinted(s.parent, key, h, depth+1)
	case memoryHolder:
		e, ok := s.memory().tree.GetHint(probe(key), &h.paths[depth])
		if !ok {
			return nil, false, nil
		}
		return e.value(), true, nil
	}
	return r.Get(key)
}

// SetHinted is w.Set(key, value), through h.
func SetHinted(w Writer, key, value []byte, h *Hint) error {
	switch s := w.(type) {
	case *Overlay:
		if s.scanning.Load() > 0 {
			return errWriteInScan
		}
		s.writes.SetHint(owned(key, value), &h.paths[0])
		return nil
	case *Memory:
		if s.scanning.Load() > 0 {
			return errWriteInScan
		}
		s.tree.SetHint(owned(key, value), &h.paths[0])
		return nil
	}
	return w.Set(key, value)
}

// DeleteHinted is w.Delete(key), through h.
func DeleteHinted(w Writer, key []byte, h *Hint) error {
	switch s := w.(type) {
	case *Overlay:
		if s.scanning.Load() > 0 {
			return errWriteInScan
		}
		e := owned(key, nil).asDeletion()
		s.writes.SetHint(e, &h.paths[0])
		return nil
	case *Memory:
		if s.scanning.Load() > 0 {
			return errWriteInScan
		}
		s.tree.DeleteHint(probe(key), &h.paths[0])
		return nil
	}
	return w.Delete(key)
}
