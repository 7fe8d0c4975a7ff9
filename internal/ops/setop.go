package ops

import (
	"bytes"
	"context"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// SetOp is INTERSECT [ALL] or EXCEPT [ALL] of its two inputs. Rows are
// compared with SQL's = (NULL equal to NULL), so NUMERIC 1.0 and 1.00 are
// one row; the one emitted is the smallest representation (by row
// encoding) present in the left input (see class.go). With wl copies of a
// row in the left input and wr in the right, the output holds
//
//	INTERSECT ALL  min(wl, wr)        INTERSECT  1 if wl > 0 and wr > 0
//	EXCEPT ALL     max(wl − wr, 0)    EXCEPT     1 if wl > 0 and wr = 0
//
// copies of it, and 0 otherwise.
//
// State: each representation's accumulated weight in each input,
//
//	prefix(row) | EncodeKey(row) | 0x01 | 'l' or 'r' | EncodeRow(row) → varint(weight)
//
// (the prefix in the bucket of EncodeKey(row), which both inputs are
// routed by)
//
// Per step, for each row class that either delta touches: read the class's
// weights (one prefix scan), apply both deltas, and emit the change of the
// formula, −old +new, when the count or the representative changed.
type SetOp struct {
	kind   plan.SetOpKind
	all    bool
	prefix *bucketed

	// Scratch, reused across steps.
	keys   []byte
	items  []setOpItem
	refs   []keyRef
	cls    classScan
	rep    []byte
	oldRep []byte
	cpre   []byte
}

// setOpItem is one delta row with its side.
type setOpItem struct {
	row    zset.Row
	weight int64
	side   byte
}

// Sides of a SetOp, as stored.
const (
	sideLeft  byte = 'l'
	sideRight byte = 'r'
)

// NewSetOp returns a SetOp keeping its weights under prefix.
func NewSetOp(prefix Prefix, kind plan.SetOpKind, all bool) *SetOp {
	s := &SetOp{kind: kind, all: all, prefix: prefix.expand()}
	s.cls.init()
	return s
}

// count is the number of output copies of a class with wl left and wr
// right copies.
func (s *SetOp) count(wl, wr int64) int64 {
	switch {
	case s.kind == plan.Intersect && s.all:
		return max(min(wl, wr), 0)
	case s.kind == plan.Intersect:
		if wl > 0 && wr > 0 {
			return 1
		}
	case s.all:
		return max(wl-wr, 0)
	default:
		if wl > 0 && wr <= 0 {
			return 1
		}
	}
	return 0
}

// summary returns the loaded class's total weight on each side and its
// representative: the first (smallest) left representation with a
// positive weight, or -1.
func (s *SetOp) summary() (wl, wr int64, rep int, err error) {
	rep = -1
	for i, e := range s.cls.entries {
		r := s.cls.rep(i)
		if r[0] == sideLeft {
			if wl, err = zset.AddWeight(wl, e.count); err != nil {
				return 0, 0, -1, err
			}
			if rep < 0 && e.count > 0 {
				rep = i
			}
			continue
		}
		if wr, err = zset.AddWeight(wr, e.count); err != nil {
			return 0, 0, -1, err
		}
	}
	return wl, wr, rep, nil
}

// Step implements Operator: in[0] is the left input's delta, in[1] the
// right's.
func (s *SetOp) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	n := len(in[0]) + len(in[1])
	if n == 0 {
		return nil, nil
	}
	s.items, s.refs, s.keys = s.items[:0], s.refs[:0], s.keys[:0]
	for i, b := range in[:2] {
		side := sideLeft
		if i == 1 {
			side = sideRight
		}
		for _, e := range b {
			off := len(s.keys)
			s.keys = zset.EncodeKey(s.keys, e.Row...)
			s.refs = append(s.refs, keyRef{off: uint32(off), end: uint32(len(s.keys)), idx: int32(len(s.items))})
			s.items = append(s.items, setOpItem{row: e.Row, weight: e.Weight, side: side})
		}
	}
	sortKeyRefs(s.refs, s.keys)
	var out zset.Batch
	for i, classes := 0, 0; i < len(s.refs); classes++ {
		if err := Interrupted(ctx, classes); err != nil {
			return nil, err
		}
		k := s.keys[s.refs[i].off:s.refs[i].end]
		j := i + 1
		for j < len(s.refs) && bytes.Equal(s.keys[s.refs[j].off:s.refs[j].end], k) {
			j++
		}
		var err error
		if out, err = s.class(st, k, s.refs[i:j], out); err != nil {
			return nil, err
		}
		i = j
	}
	return zset.Consolidate(out)
}

// class applies the delta rows refs of one row class (key k) and appends
// the class's output change to out.
func (s *SetOp) class(st state.Store, k []byte, refs []keyRef, out zset.Batch) (zset.Batch, error) {
	s.cpre = append(append(append(s.cpre[:0], s.prefix.of(k)...), k...), repSep)
	if err := s.cls.load(st, s.cpre); err != nil {
		return nil, err
	}
	wl, wr, first, err := s.summary()
	if err != nil {
		return nil, err
	}
	oldCount := s.count(wl, wr)
	s.oldRep = s.oldRep[:0]
	if oldCount > 0 {
		s.oldRep = append(s.oldRep, s.cls.rep(first)[1:]...)
	}
	for _, r := range refs {
		it := &s.items[r.idx]
		s.rep = zset.EncodeRow(append(s.rep[:0], it.side), it.row)
		if _, err := s.cls.add(st, s.cpre, s.rep, it.weight); err != nil {
			return nil, err
		}
	}
	if wl, wr, first, err = s.summary(); err != nil {
		return nil, err
	}
	if wl < 0 || wr < 0 {
		return nil, negativeCount("set operation")
	}
	newCount := s.count(wl, wr)
	var newRep []byte
	if newCount > 0 {
		newRep = s.cls.rep(first)[1:]
	}
	if oldCount == newCount && bytes.Equal(s.oldRep, newRep) {
		return out, nil
	}
	if oldCount > 0 {
		row, err := zset.DecodeRow(s.oldRep)
		if err != nil {
			return nil, err
		}
		out = append(out, zset.Entry{Row: row, Weight: -oldCount})
	}
	if newCount > 0 {
		row, err := zset.DecodeRow(newRep)
		if err != nil {
			return nil, err
		}
		out = append(out, zset.Entry{Row: row, Weight: newCount})
	}
	return out, nil
}
