package ops

import (
	"bytes"

	"github.com/rockstream/rockstream/internal/state"
)

// SetInputs declares which of the join's inputs are sets: every row such
// a side's input ever holds has weight 1, as the rows of a table with a
// primary key do (its rows are distinct: their keys are). The planner
// declares it (internal/diff); the join then writes that side's
// arrangement without reading it first (arrangeSet). A side declared a
// set whose input is not one is arranged wrongly.
func (j *Join) SetInputs(left, right bool) { j.leftSet, j.rightSet = left, right }

// arrangeSide adds the probes' rows to one side's arrangement, through
// arrangeSet when the side is a set.
func (j *Join) arrangeSide(w *work, st state.Store, ps []probe, set bool) error {
	if set {
		return j.arrangeSet(w, st, ps)
	}
	return j.arrange(w, st, ps)
}

// arrangeSet is arrange for a side whose input is a set. Before the step
// the side holds a row with weight 0 or 1, and after it too, so a row the
// batch holds once with weight +1 was not arranged and is now with weight
// 1, and one the batch holds once with weight −1 was arranged with weight
// 1 and is now deleted: neither needs the arrangement read, which is most
// of arrange's cost. A row the batch holds more than once (an
// unconsolidated batch: inserted and deleted in one epoch), or with
// another weight, is added to what the arrangement holds, as arrange does.
// ps is sorted by join key, so equal rows are in one run of equal keys.
func (j *Join) arrangeSet(w *work, st state.Store, ps []probe) error {
	for i := 0; i < len(ps); {
		n := i + 1
		for n < len(ps) && bytes.Equal(ps[n].key, ps[i].key) {
			n++
		}
		run := ps[i:n]
		i = n
		if len(run) == 1 {
			if err := w.tick(); err != nil {
				return err
			}
			j.keyBuf = j.arrangedKey(j.keyBuf[:0], run[0])
			if err := j.arrangeOnce(st, j.keyBuf, run[0].weight); err != nil {
				return err
			}
			continue
		}
		if err := j.arrangeRun(w, st, run); err != nil {
			return err
		}
	}
	return nil
}

// arrangeRun arranges the rows of one join key: each distinct row once
// through arrangeOnce when the batch holds it once, every copy through
// addWeightAt otherwise.
func (j *Join) arrangeRun(w *work, st state.Store, run []probe) error {
	j.runKeys = j.runKeys[:0]
	j.runRefs = j.runRefs[:0]
	for i, p := range run {
		off := len(j.runKeys)
		j.runKeys = j.arrangedKey(j.runKeys, p)
		j.runRefs = append(j.runRefs, keyRef{off: uint32(off), end: uint32(len(j.runKeys)), idx: int32(i)})
	}
	sortKeyRefs(j.runRefs, j.runKeys)
	refs := j.runRefs
	for i := 0; i < len(refs); {
		n := i + 1
		key := j.runKeys[refs[i].off:refs[i].end]
		for n < len(refs) && bytes.Equal(j.runKeys[refs[n].off:refs[n].end], key) {
			n++
		}
		for _, r := range refs[i:n] {
			if err := w.tick(); err != nil {
				return err
			}
			wt := run[r.idx].weight
			var err error
			if n-i == 1 {
				err = j.arrangeOnce(st, key, wt)
			} else {
				j.valBuf, err = addWeightAt(st, key, wt, j.valBuf)
			}
			if err != nil {
				return err
			}
		}
		i = n
	}
	return nil
}

// arrangeOnce arranges a row of a set side that the batch holds once,
// with weight w, under its arrangement key.
func (j *Join) arrangeOnce(st state.Store, key []byte, w int64) error {
	switch w {
	case 1:
		j.valBuf = appendWeight(j.valBuf[:0], 1)
		return st.Set(key, j.valBuf)
	case -1:
		return st.Delete(key)
	}
	var err error
	j.valBuf, err = addWeightAt(st, key, w, j.valBuf)
	return err
}
