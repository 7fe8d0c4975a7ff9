package ops

import (
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Lookup joins: an inner join one of whose inputs is a stored relation
// read by its key.
//
// When one input of a Join is a relation whose stored rows are keyed by
// the join key (a table whose primary key is the join key, a view routed
// by its group key), the join
// keeps no arrangement of it: it reads the relation's stored rows by key
// instead (StoredRows). That relation's rows are in the store that Step
// reads, and at each Step they are its new version, b' = b + Δb: the
// runtime writes a relation's rows before it steps the circuits reading
// it, in every epoch, and a backfill feeds no delta of a relation read
// this way (its whole contents are already stored, so the probe of the
// other input's delta finds them). The delta rule keeps its form with the
// sides chosen so that the stored relation is only ever read new:
//
//	looked-up right: Δ(a⋈b) = Δa⋈b' + a⋈Δb  (a from its arrangement, before Δa)
//	looked-up left:  Δ(a⋈b) = a'⋈Δb + Δa⋈b  (b from its arrangement, before Δb)
//
// so the pair Δa⋈Δb is counted once. The other input is arranged as in
// any join. A relation read this way must be read nowhere else in the
// circuit (its delta would reach this join's probe and another operator
// in a backfill that feeds it no delta). Outer, semi-, anti- and mark
// joins that read their nullable input by key are LookupOuterJoin
// (lookupouter.go).
//
// When the looked-up relation's keys are immutable (LookUp's immutable:
// an append-only table read by its primary key, whose row under a key,
// once stored, is never updated or deleted, and no second row is ever
// stored under that key), a row of the other input whose key finds a
// stored row (whether or not it passes the filters) is not arranged:
// the arrangement is probed only by the looked-up relation's delta, which
// will never again hold that key. Only the rows whose key has no stored
// row yet (a bid on an auction still to come) are arranged. The
// arrangement still holds what was arranged before the key's row came;
// nothing ever reads it again, and a retraction of such a row, finding
// the key stored, is not arranged either, so both halves of it stay
// unread. The choice changes no result, only the state's size, and
// either state (the arrangement of every row, or of the unmatched ones)
// is read correctly by a circuit of either kind.

// StoredRows reads a stored relation's current rows by key.
type StoredRows interface {
	// Rows calls fn with each row (in the scan's shape) and weight that
	// st holds for the relation under key, the values of the relation's
	// key columns in its key order, until fn returns an error, which
	// Rows returns. fn may keep the row's values.
	Rows(st state.Reader, key []types.Value, fn func(row zset.Row, weight int64) error) error
}

// lookupSide is a Join input read through StoredRows.
type lookupSide struct {
	src StoredRows
	// left says the looked-up input is the left one.
	left bool
	// order[i] is the join pair whose key gives the relation's i-th key
	// column.
	order []int
	// preds filter the relation's rows (the filters between its scan and
	// the join).
	preds []plan.Expr
	// immutable says a key's stored row never changes or goes, and no
	// other row is ever stored under it: the other input's rows whose key
	// finds a stored row are not arranged.
	immutable bool
	key       []types.Value // scratch: the key in the relation's order
	found     bool          // scratch: the key's lookup found a stored row
}

// LookUp makes the join read its left (left true) or right input from
// src instead of arranging it: order[i] is the join pair (an index into
// the join's keys) matching src's i-th key column, and every key column
// is matched by one pair; preds are the filters the input's rows pass
// before the join. immutable says src's keys are immutable (an
// append-only table's primary key): a row under a key, once stored, is
// never changed or deleted, and no other is ever stored under it. It
// must be called before the first Step, and the same way for every
// instance of the circuit.
func (j *Join) LookUp(left bool, src StoredRows, order []int, preds []plan.Expr, immutable bool) {
	j.lookup = &lookupSide{src: src, left: left, order: order, preds: preds, immutable: immutable, key: make([]types.Value, len(order))}
}

// LooksUp reports whether the join reads an input by key, and which.
func (j *Join) LooksUp() (looksUp, left bool) {
	if j.lookup == nil {
		return false, false
	}
	return true, j.lookup.left
}

// stepLookup is Step for a join with a looked-up input.
func (j *Join) stepLookup(w *work, st state.Store, lp, rp []probe) (zset.Batch, error) {
	var out zset.Batch
	var err error
	if j.lookup.left {
		// a' ⋈ Δb, a read as stored.
		if out, rp, err = j.probeStored(w, st, out, rp, j.rightKeys, false); err != nil {
			return nil, err
		}
		// Δa ⋈ b, with b not yet holding Δb.
		if out, err = j.probe(w, st, out, lp, j.leftPrefix, j.rightPrefix, true); err != nil {
			return nil, err
		}
		return out, j.arrangeSide(w, st, rp, j.rightSet)
	}
	// Δa ⋈ b', b read as stored.
	if out, lp, err = j.probeStored(w, st, out, lp, j.leftKeys, true); err != nil {
		return nil, err
	}
	// a ⋈ Δb, with a not yet holding Δa.
	if out, err = j.probe(w, st, out, rp, j.rightPrefix, j.leftPrefix, false); err != nil {
		return nil, err
	}
	return out, j.arrangeSide(w, st, lp, j.leftSet)
}

// probeStored joins each run of equal-keyed probes (of the arranged
// input, whose key expressions are keys) with the looked-up relation's
// stored rows under the same key and appends the pairs to out. It
// returns the probes to arrange: all of ps, or, when the relation's keys
// are immutable, those whose key found no stored row (ps compacted in
// place, in order).
func (j *Join) probeStored(w *work, st state.Store, out zset.Batch, ps []probe, keys []plan.Expr, deltaLeft bool) (zset.Batch, []probe, error) {
	l := j.lookup
	arrange := ps[:0]
	for i := 0; i < len(ps); {
		n := i + 1
		for n < len(ps) && string(ps[n].key) == string(ps[i].key) {
			n++
		}
		run := ps[i:n]
		i = n
		null := false
		for k, pair := range l.order {
			v, err := keys[pair].Eval(run[0].row)
			if err != nil {
				return nil, nil, err
			}
			// A stored key column is never NULL, so a NULL key matches
			// nothing, with = or IS NOT DISTINCT FROM.
			null = null || v.IsNull()
			l.key[k] = v
		}
		if null {
			// No stored row has it (a NULL key compared with IS NOT
			// DISTINCT FROM): arranged as any key without a stored row.
			arrange = append(arrange, run...)
			continue
		}
		j.matches = j.matches[:0]
		j.matchVals = j.matchVals[:0]
		l.found = false
		err := l.src.Rows(st, l.key, func(row zset.Row, weight int64) error {
			if err := w.tick(); err != nil {
				return err
			}
			l.found = true
			for _, p := range l.preds {
				ok, err := isTrue(p, row)
				if err != nil || !ok {
					return err
				}
			}
			off := len(j.matchVals)
			j.matchVals = append(j.matchVals, row...)
			j.matches = append(j.matches, match{off: off, end: len(j.matchVals), weight: weight})
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if out, err = j.pairUp(w, out, run, deltaLeft); err != nil {
			return nil, nil, err
		}
		if !l.immutable || !l.found {
			// arrange never overtakes run: it is at most i − len(run).
			arrange = append(arrange, run...)
		}
	}
	return out, arrange, nil
}
