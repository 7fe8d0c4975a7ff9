package state

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/tidwall/btree"
)

// Weighted values. A value written by MergeWeight is `weight varint |
// payload`, the stored form of a weighted row: adding an operand to a
// stored value sums the weights and keeps the operand's payload, the
// newer one. An Overlay keeps an operand whose key it has not written as
// a merge entry, without reading its parent: reads through the overlay
// add it to the parent's value, and Commit adds it to the parent's value
// there (in a Memory during the insertion it makes anyway). Only positive
// operand weights are accepted, so a sum never reaches zero and a merge
// never turns into a deletion.

// ErrWeightOverflow is returned when a sum of weights leaves int64
// (SQLSTATE 22003, as zset.AddWeight's).
var ErrWeightOverflow = errs.New(errs.NumericOutOfRange,
	"row multiplicity out of range: a row's accumulated count does not fit in a 64-bit integer")

// errBadWeight is returned for a weighted value or operand that does not
// start with a varint weight, or an operand whose weight is not positive.
var errBadWeight = errors.New("state: corrupt weighted value: bad weight")

// MergeWeight adds operand (`weight varint | payload`, weight > 0) to
// the weighted value stored under key in st: afterwards st holds the sum
// of the weights with operand's payload, or operand itself when the key
// was absent. Into an Overlay the write reads only the overlay's own
// writes (through h), never its parent.
func MergeWeight(st Store, key, operand []byte, h *Hint) error {
	if w, n := binary.Varint(operand); n <= 0 || w <= 0 {
		return errBadWeight
	}
	o, ok := st.(*Overlay)
	if !ok {
		old, found, err := GetHinted(st, key, h)
		if err != nil {
			return err
		}
		if !found {
			return SetHinted(st, key, operand, h)
		}
		v, err := addWeights(old, operand)
		if err != nil {
			return err
		}
		return SetHinted(st, key, v, h)
	}
	if o.scanning.Load() > 0 {
		return errWriteInScan
	}
	// Most operands are for keys the overlay has not written: the operand
	// goes in with one descent of the tree, and the rare key it replaces
	// is put right through the same path.
	e := owned(key, operand).asMerge()
	prev, found := o.writes.SetHint(e, &h.paths[0])
	if !found {
		o.merges = true
		return nil
	}
	switch {
	case prev.deleted():
		e = e.asValue()
	default:
		v, err := addWeights(prev.value(), operand)
		if err != nil {
			o.writes.SetHint(prev, &h.paths[0])
			return err
		}
		e = owned(key, v)
		if prev.merge() {
			e = e.asMerge()
		}
	}
	o.writes.SetHint(e, &h.paths[0])
	return nil
}

// addWeights returns newer added to older: the sum of their weights and
// newer's payload.
func addWeights(older, newer []byte) ([]byte, error) {
	a, n := binary.Varint(older)
	b, m := binary.Varint(newer)
	if n <= 0 || m <= 0 {
		return nil, errBadWeight
	}
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return nil, ErrWeightOverflow
	}
	payload := newer[m:]
	out := make([]byte, 0, binary.MaxVarintLen64+len(payload))
	out = binary.AppendVarint(out, a+b)
	return append(out, payload...), nil
}

// resolve returns the value a reader of an overlay sees for its entry e
// over the parent's value (found says the parent has one): e's own value,
// or for a merge operand its sum with the parent's.
func resolve(e entry, parent []byte, found bool) ([]byte, error) {
	if !e.merge() || !found {
		return e.value(), nil
	}
	return addWeights(parent, e.value())
}

// undoStep is how to take back one write of a commit into a Memory: put
// prev back, or delete key when there was none.
type undoStep struct {
	key  entry
	prev entry
	had  bool
}

// keepUndoSteps is the most undo steps a Memory keeps for its next commit.
const keepUndoSteps = 1 << 14

// commitMergesIntoMemory is commitIntoMemory for an overlay holding merge
// operands: each operand is added to the tree's value during its own
// insertion. A sum that overflows takes back every write made so far and
// leaves the overlay as it was.
func (o *Overlay) commitMergesIntoMemory(m *Memory) error {
	var hint btree.PathHint
	undo := slices.Grow(m.undo[:0], o.writes.Len())
	var err error
	o.writes.Scan(func(e entry) bool {
		step := undoStep{key: e}
		switch {
		case e.deleted():
			step.prev, step.had = m.tree.DeleteHint(e, &hint)
		case e.merge():
			step.prev, step.had = m.tree.SetHint(e.asValue(), &hint)
			if step.had {
				var v []byte
				if v, err = addWeights(step.prev.value(), e.value()); err != nil {
					m.tree.SetHint(step.prev, &hint)
					return false
				}
				m.tree.SetHint(owned(e.key(), v), &hint)
			}
		default:
			step.prev, step.had = m.tree.SetHint(e, &hint)
		}
		undo = append(undo, step)
		return true
	})
	if err != nil {
		for i := len(undo) - 1; i >= 0; i-- {
			if s := undo[i]; s.had {
				m.tree.Set(s.prev)
			} else {
				m.tree.Delete(s.key)
			}
		}
	}
	clear(undo)
	m.undo = undo[:0]
	if cap(undo) > keepUndoSteps {
		m.undo = nil // a large commit's steps, which hold pointers, are not kept for the next
	}
	if err != nil {
		return err
	}
	o.writes.Clear()
	o.merges = false
	return nil
}

// commitMergesIntoOverlay is commitIntoOverlay for an overlay holding
// merge operands. It first adds every operand whose key p has written to
// p's entry, looking up the keys of the smaller of the two trees in the
// other (an overflow then changes nothing), then commits as
// commitIntoOverlay does, o's entries winning, and puts the sums in.
func (o *Overlay) commitMergesIntoOverlay(p *Overlay) error {
	var sums []entry
	var err error
	add := func(older, newer entry) bool {
		if older.deleted() {
			sums = append(sums, newer.asValue())
			return true
		}
		var v []byte
		if v, err = addWeights(older.value(), newer.value()); err != nil {
			return false
		}
		sum := owned(newer.key(), v)
		if older.merge() {
			sum = sum.asMerge()
		}
		sums = append(sums, sum)
		return true
	}
	var hint btree.PathHint
	if o.writes.Len() <= p.writes.Len() {
		o.writes.Scan(func(e entry) bool {
			if !e.merge() {
				return true
			}
			prev, found := p.writes.GetHint(e, &hint)
			return !found || add(prev, e)
		})
	} else {
		p.writes.Scan(func(e entry) bool {
			own, found := o.writes.GetHint(e, &hint)
			return !found || !own.merge() || add(e, own)
		})
	}
	if err != nil {
		return err
	}
	o.commitIntoOverlay(p)
	hint = btree.PathHint{}
	for _, e := range sums {
		p.writes.SetHint(e, &hint)
	}
	p.merges = true
	o.merges = false
	return nil
}

// commitMergeInto writes merge operand e into a parent that is neither a
// Memory nor an Overlay, by reading the parent's value and writing the
// sum. (The Pebble store's own weight merge would find an overflow only
// when the key is next read, too late to refuse the commit.)
func commitMergeInto(parent Store, e entry) error {
	old, found, err := parent.Get(e.key())
	if err != nil {
		return err
	}
	v, err := resolve(e, old, found)
	if err != nil {
		return err
	}
	return parent.Set(e.key(), v)
}
