package ops

import (
	"context"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// OuterJoin is a LEFT, RIGHT or FULL equi-join with an optional residual
// predicate (with no keys, a nested-loop outer join):
//
//	a ⟕ b = (a ⋈ b) + pad(rows of a without a match)
//
// RIGHT is the mirror, FULL is both.
//
// State: both inputs arranged by join key, as the inner Join arranges them;
// a row of a preserved input also stores its match count m, the sum of the
// weights of the other input's rows it matches (keys equal and residual
// true, so the count is per row, not per key):
//
//	prefix(join key) | 'l' or 'r' | EncodeKey(join key) | 0x01 | EncodeRow(row) → varint(weight) [varint(m)]
//
// A preserved row whose key holds a NULL compared with "=" matches nothing:
// it is padded without being stored. A NULL-keyed row of an input that is
// not preserved is dropped.
//
// Delta rule, one join key at a time: with the key's stored rows A and B
// of each input (read in full only where the other input changed) merged
// with the deltas, every pair involving a changed row contributes
// w'(r)·w'(s) − w(r)·w(s) to the inner part, and adds Δw(s) to r's match
// count (Δw(r) to s's). A preserved row then contributes
//
//	w'(r)·[m'(r) = 0] − w(r)·[m(r) = 0]
//
// padded rows: a row gaining its first match retracts its padded row, one
// losing its last match emits it. A row first seen this step counts its
// old matches over the other input's stored rows, which the step reads
// since its own input changed.
//
// With SingleMatch (a LEFT join to a scalar subquery) a preserved row left
// with more than one match fails the step with 21000.
type OuterJoin struct {
	leftKeys, rightKeys   keySpec
	residual              plan.Expr
	leftWidth, rightWidth int
	preserveLeft          bool
	preserveRight         bool
	singleMatch           bool
	keyPairs

	// Scratch, reused across steps.
	aCnt, bCnt   []pairCounts
	rows         rowAlloc
	nullsOfLeft  zset.Row
	nullsOfRight zset.Row
}

// pairCounts accumulates, for one entry during a step, the change of its
// match count and (for an entry not stored before) its old match count.
type pairCounts struct {
	delta, old int64
}

// NewOuterJoin returns an outer join of kind plan.LeftJoin, RightJoin or
// FullJoin keeping its arrangements under prefix. The arguments are those
// of NewJoin; singleMatch is plan.Join's SingleMatch.
func NewOuterJoin(prefix Prefix, kind plan.JoinKind, leftKeys, rightKeys []plan.Expr, nullSafe []bool, residual plan.Expr, leftWidth, rightWidth int, singleMatch bool) *OuterJoin {
	j := &OuterJoin{
		leftKeys:      newKeySpec(leftKeys, nullSafe),
		rightKeys:     newKeySpec(rightKeys, nullSafe),
		residual:      residual,
		leftWidth:     leftWidth,
		rightWidth:    rightWidth,
		preserveLeft:  kind == plan.LeftJoin || kind == plan.FullJoin,
		preserveRight: kind == plan.RightJoin || kind == plan.FullJoin,
		singleMatch:   singleMatch && kind == plan.LeftJoin,
		nullsOfLeft:   make(zset.Row, leftWidth),
		nullsOfRight:  make(zset.Row, rightWidth),
	}
	j.left = newArrangement(prefix.With('l'), b2i(j.preserveLeft))
	j.right = newArrangement(prefix.With('r'), b2i(j.preserveRight))
	return j
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// errMoreThanOneRow is PostgreSQL's error for a scalar subquery that
// returns several rows.
func errMoreThanOneRow() error {
	return errs.New(errs.CardinalityViolation, "more than one row returned by a subquery used as an expression")
}

// Step implements Operator: in[0] is the left delta, in[1] the right one.
func (j *OuterJoin) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	j.rows.bind(ctx)
	dl, dr := in[0], in[1]
	if len(dl) == 0 && len(dr) == 0 {
		return nil, nil
	}
	la, lnull, err := j.leftKeys.index(dl)
	if err != nil {
		return nil, err
	}
	rb, rnull, err := j.rightKeys.index(dr)
	if err != nil {
		return nil, err
	}
	var out zset.Batch
	if j.preserveLeft {
		for _, e := range lnull {
			out = append(out, zset.Entry{Row: j.join(e.Row, j.nullsOfRight), Weight: e.Weight})
		}
	}
	if j.preserveRight {
		for _, e := range rnull {
			out = append(out, zset.Entry{Row: j.join(j.nullsOfLeft, e.Row), Weight: e.Weight})
		}
	}
	w := &work{ctx: ctx}
	err = forEachKey(w, la, rb, func(key []byte, da, db []keyedRow) error {
		var err error
		out, err = j.stepKey(w, st, out, key, da, db)
		return err
	})
	if err != nil {
		return nil, err
	}
	return zset.Consolidate(out)
}

// join returns the concatenation of l and r in a new row.
func (j *OuterJoin) join(l, r zset.Row) zset.Row {
	row := j.rows.alloc(j.leftWidth + j.rightWidth)
	copy(row, l)
	copy(row[j.leftWidth:], r)
	return row
}

// stepKey applies one join key's deltas da (left) and db (right).
func (j *OuterJoin) stepKey(w *work, st state.Store, out zset.Batch, key []byte, da, db []keyedRow) (zset.Batch, error) {
	if err := j.load(st, key, da, db); err != nil {
		return nil, err
	}
	as, bs := j.as, j.bs
	j.aCnt = resize(j.aCnt, len(as))
	j.bCnt = resize(j.bCnt, len(bs))
	clear(j.aCnt)
	clear(j.bCnt)
	err := forEachChangedPair(w, as, bs, j.bDelta, func(i, k int) error {
		var err error
		out, err = j.pair(out, &as[i], &bs[k], &j.aCnt[i], &j.bCnt[k])
		return err
	})
	if err != nil {
		return nil, err
	}

	if out, err = j.finish(st, out, key, j.left, as, j.aCnt, j.preserveLeft, true); err != nil {
		return nil, err
	}
	return j.finish(st, out, key, j.right, bs, j.bCnt, j.preserveRight, false)
}

// pair joins one left and one right entry of the same key.
func (j *OuterJoin) pair(out zset.Batch, a, b *sideEntry, ac, bc *pairCounts) (zset.Batch, error) {
	width := j.leftWidth + j.rightWidth
	row := j.join(a.row, b.row)
	if j.residual != nil {
		ok, err := isTrue(j.residual, row)
		if err != nil {
			return nil, err
		}
		if !ok {
			j.rows.unalloc(width)
			return out, nil
		}
	}
	w, err := pairDelta(a.wOld, a.dW, b.wOld, b.dW)
	if err != nil {
		return nil, err
	}
	if w != 0 {
		out = append(out, zset.Entry{Row: row, Weight: w})
	} else {
		j.rows.unalloc(width)
	}
	if ac.delta, err = zset.AddWeight(ac.delta, b.dW); err != nil {
		return nil, err
	}
	if ac.old, err = zset.AddWeight(ac.old, b.wOld); err != nil {
		return nil, err
	}
	if bc.delta, err = zset.AddWeight(bc.delta, a.dW); err != nil {
		return nil, err
	}
	if bc.old, err = zset.AddWeight(bc.old, a.wOld); err != nil {
		return nil, err
	}
	return out, nil
}

// finish emits the padded rows of one input's entries whose weight or
// match count changed, and writes the entries back.
func (j *OuterJoin) finish(st state.Store, out zset.Batch, key []byte, arr *arrangement, es []sideEntry, cnt []pairCounts, preserved, isLeft bool) (zset.Batch, error) {
	for i := range es {
		e := &es[i]
		wNew, err := zset.AddWeight(e.wOld, e.dW)
		if err != nil {
			return nil, err
		}
		if wNew < 0 {
			return nil, negativeCount("outer join row")
		}
		if !preserved {
			if e.dW != 0 {
				if err := arr.put(st, key, e, wNew); err != nil {
					return nil, err
				}
			}
			continue
		}
		// The old match count: stored, or for a row not stored before,
		// counted over the other input's stored rows (all of which were
		// paired with it, since it changed).
		mOld := cnt[i].old
		if e.present {
			mOld = e.counts[0]
		}
		mNew, err := zset.AddWeight(mOld, cnt[i].delta)
		if err != nil {
			return nil, err
		}
		if mNew < 0 {
			return nil, negativeCount("outer join match")
		}
		var w int64
		if mNew == 0 {
			w = wNew
		}
		if mOld == 0 {
			if w, err = zset.AddWeight(w, -e.wOld); err != nil {
				return nil, err
			}
		}
		if w != 0 {
			var row zset.Row
			if isLeft {
				row = j.join(e.row, j.nullsOfRight)
			} else {
				row = j.join(j.nullsOfLeft, e.row)
			}
			out = append(out, zset.Entry{Row: row, Weight: w})
		}
		if j.singleMatch && wNew > 0 && mNew > 1 {
			return nil, errMoreThanOneRow()
		}
		if e.dW != 0 || cnt[i].delta != 0 || (!e.present && wNew != 0) {
			if err := arr.put(st, key, e, wNew, mNew); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
