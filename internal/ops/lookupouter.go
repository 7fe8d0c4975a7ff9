package ops

import (
	"bytes"
	"context"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// LookupOuterJoin is a LEFT or RIGHT outer join whose nullable input, or
// a semi-, anti- or mark join whose subquery input, is a stored relation
// read by its key (StoredRows), as the inner lookup join reads one
// (lookupjoin.go). The other input, the preserved one (a semi-join's
// left input), is arranged by join key with its weights alone:
//
//	prefix(join key) | 'l' or 'r' | EncodeKey(join key) | 0x01 | EncodeRow(row) → varint(weight)
//
// No match count is stored: a preserved row's count is recomputed from
// the looked-up relation's rows of its key, which a keyed read returns
// (one row for a table's primary key, one group's rows for a routed
// view).
//
// Delta rule, one join key k at a time, with A the preserved input's
// stored rows of k (before the step) and ΔA their change, and B' the
// looked-up relation's stored rows of k (after the epoch's writes, as
// every Step reads them) and ΔB the relation's delta fed to this step.
// The relation's rows before the step are B = B' − ΔB: the runtime has
// written exactly the deltas fed so far to the relation's rows before it
// steps the circuit, and a backfill feeds no delta (B = B', while A is
// empty, so nothing old is counted). For a preserved row r, with weights
// w(r) before and w'(r) = w(r) + Δw(r) after, and for each row s of B ∪ B'
// its weights v(s) and v'(s),
//
//	m(r)  = Σ v(s)  over s with residual(r, s) true   (matches before)
//	m'(r) = Σ v'(s)                                    (matches after)
//
// and the join's change at k is, over the rows r of A ∪ ΔA (all of A when
// ΔB is not empty at k, else ΔA's rows only, whose matches did not change
// otherwise; for a semi-, anti- or mark join without a residual, whose
// m(r) is the same for every r of k, all of A only when ΔB makes it cross
// zero),
//
//	outer:  Σ_s (w'(r)·v'(s) − w(r)·v(s))·(r, s)  +  (w'(r)·[m'(r) = 0] − w(r)·[m(r) = 0])·pad(r)
//	semi:   (w'(r)·[m'(r) > 0] − w(r)·[m(r) > 0])·r
//	anti:   (w'(r)·[m'(r) = 0] − w(r)·[m(r) = 0])·r
//	mark:   w'(r)·(r, m'(r) > 0) − w(r)·(r, m(r) > 0)
//
// so a preserved row flips between padded and matched (in and out of the
// semi- or anti-join) exactly when its key's looked-up rows change,
// whichever of the two inputs changed in the epoch. A preserved row whose
// key holds a NULL matches nothing: it is padded (kept by the anti-join,
// marked FALSE) without being stored; a looked-up delta row with a NULL
// key is dropped, since no preserved row can match it. NULL-safe keys
// (IS NOT DISTINCT FROM) and ANY tests (NOT IN) are not handled: such
// joins keep their arrangements (internal/diff).
//
// A v(s) that comes out negative means the stored rows and the fed delta
// disagree, and fails the step.
type LookupOuterJoin struct {
	kind plan.JoinKind
	// lookupLeft says the looked-up input is the left one (a RIGHT join).
	lookupLeft            bool
	keys, lkeys           keySpec // the preserved input's and the looked-up input's
	residual              plan.Expr
	leftWidth, rightWidth int
	singleMatch           bool
	arr                   *arrangement
	src                   StoredRows
	order                 []int
	preds                 []plan.Expr
	proj                  []int

	// Scratch, reused across steps.
	key   []types.Value
	vals  []types.Value
	es    []sideEntry
	bs    []lookedUp
	rows  rowAlloc
	nulls zset.Row
}

// lookedUp is one looked-up row of a key during a step, with its weight
// before (v) and after (v') the step.
type lookedUp struct {
	row        zset.Row
	enc        []byte
	wOld, wNew int64
}

// NewLookupOuterJoin returns a join of kind plan.LeftJoin, SemiJoin,
// AntiJoin or MarkJoin reading its right input, or plan.RightJoin
// reading its left input, from src, keeping the other input's
// arrangement under prefix. The keys, residual and widths are those of
// NewJoin (no key NULL-safe); singleMatch is plan.Join's. order[i] is the
// join pair whose key gives src's i-th key column, preds filter src's
// rows, and proj, when not nil, gives the looked-up input's columns as
// positions in src's rows (a projection between its scan and the join).
func NewLookupOuterJoin(prefix Prefix, kind plan.JoinKind, leftKeys, rightKeys []plan.Expr, residual plan.Expr, leftWidth, rightWidth int, singleMatch bool,
	src StoredRows, order []int, preds []plan.Expr, proj []int) *LookupOuterJoin {
	j := &LookupOuterJoin{
		kind: kind, lookupLeft: kind == plan.RightJoin,
		keys: newKeySpec(leftKeys, nil), lkeys: newKeySpec(rightKeys, nil),
		residual: residual, leftWidth: leftWidth, rightWidth: rightWidth,
		singleMatch: singleMatch && kind == plan.LeftJoin,
		src:         src, order: order, preds: preds, proj: proj,
		key: make([]types.Value, len(order)),
	}
	side, nulls := byte('l'), rightWidth
	if j.lookupLeft {
		j.keys, j.lkeys = j.lkeys, j.keys
		side, nulls = 'r', leftWidth
	}
	j.arr = newArrangement(prefix.With(side), 0)
	j.nulls = make(zset.Row, nulls)
	return j
}

// Step implements Operator: in[0] is the left delta, in[1] the right one.
func (j *LookupOuterJoin) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	j.rows.bind(ctx)
	dp, dq := in[0], in[1]
	if j.lookupLeft {
		dp, dq = dq, dp
	}
	if len(dp) == 0 && len(dq) == 0 {
		return nil, nil
	}
	pa, pnull, err := j.keys.index(dp)
	if err != nil {
		return nil, err
	}
	qa, _, err := j.lkeys.index(dq)
	if err != nil {
		return nil, err
	}
	var out zset.Batch
	for _, e := range pnull {
		out = j.emit(out, e.Row, false, e.Weight)
	}
	w := &work{ctx: ctx}
	err = forEachKey(w, pa, qa, func(key []byte, da, db []keyedRow) error {
		var err error
		out, err = j.stepKey(w, st, out, key, da, db)
		return err
	})
	if err != nil {
		return nil, err
	}
	return zset.Consolidate(out)
}

// emit appends preserved row r's output row for a match state, with
// weight w: a padded row (outer, unmatched), r (semi matched, anti
// unmatched), or r with its mark; nothing otherwise.
func (j *LookupOuterJoin) emit(out zset.Batch, r zset.Row, matched bool, w int64) zset.Batch {
	if w == 0 {
		return out
	}
	switch j.kind {
	case plan.LeftJoin, plan.RightJoin:
		if !matched {
			out = append(out, zset.Entry{Row: j.join(r, j.nulls), Weight: w})
		}
	case plan.SemiJoin:
		if matched {
			out = append(out, zset.Entry{Row: r, Weight: w})
		}
	case plan.AntiJoin:
		if !matched {
			out = append(out, zset.Entry{Row: r, Weight: w})
		}
	case plan.MarkJoin:
		row := j.rows.alloc(len(r) + 1)
		copy(row, r)
		row[len(r)] = types.MakeBool(matched)
		out = append(out, zset.Entry{Row: row, Weight: w})
	}
	return out
}

// join returns preserved row r and looked-up row s concatenated in the
// join's column order, in a new row.
func (j *LookupOuterJoin) join(r, s zset.Row) zset.Row {
	row := j.rows.alloc(j.leftWidth + j.rightWidth)
	if j.lookupLeft {
		r, s = s, r
	}
	copy(row, r)
	copy(row[j.leftWidth:], s)
	return row
}

// stepKey applies one join key's deltas: da of the preserved input, db of
// the looked-up one.
func (j *LookupOuterJoin) stepKey(w *work, st state.Store, out zset.Batch, key []byte, da, db []keyedRow) (zset.Batch, error) {
	outer := j.kind == plan.LeftJoin || j.kind == plan.RightJoin
	var err error
	if outer || j.residual != nil {
		// Every pair of the key may change: the preserved rows are read
		// in full when the looked-up ones changed, and the looked-up
		// rows only when there are preserved rows to pair them with.
		if j.es, err = j.arr.load(st, key, da, len(db) > 0, j.es[:0]); err != nil {
			return nil, err
		}
		if len(j.es) == 0 {
			return out, nil
		}
		if err := j.loadLookedUp(w, st, da, db); err != nil {
			return nil, err
		}
	} else {
		// The match count is the key's: the preserved rows of the key
		// are read only when it crosses zero.
		if err := j.loadLookedUp(w, st, da, db); err != nil {
			return nil, err
		}
		var mOld, mNew int64
		for _, s := range j.bs {
			if mOld, err = zset.AddWeight(mOld, s.wOld); err != nil {
				return nil, err
			}
			if mNew, err = zset.AddWeight(mNew, s.wNew); err != nil {
				return nil, err
			}
		}
		flips := len(db) > 0 && (mOld > 0) != (mNew > 0)
		if j.es, err = j.arr.load(st, key, da, flips, j.es[:0]); err != nil {
			return nil, err
		}
	}
	width := j.leftWidth + j.rightWidth
	for i := range j.es {
		e := &j.es[i]
		wNew, err := zset.AddWeight(e.wOld, e.dW)
		if err != nil {
			return nil, err
		}
		if wNew < 0 {
			return nil, negativeCount("lookup join row")
		}
		var mOld, mNew int64
		for k := range j.bs {
			if err := w.tick(); err != nil {
				return nil, err
			}
			s := &j.bs[k]
			var row zset.Row
			if j.residual != nil || outer {
				row = j.join(e.row, s.row)
			}
			if j.residual != nil {
				ok, err := isTrue(j.residual, row)
				if err != nil {
					return nil, err
				}
				if !ok {
					j.rows.unalloc(width)
					continue
				}
			}
			if mOld, err = zset.AddWeight(mOld, s.wOld); err != nil {
				return nil, err
			}
			if mNew, err = zset.AddWeight(mNew, s.wNew); err != nil {
				return nil, err
			}
			if !outer {
				if row != nil {
					j.rows.unalloc(width)
				}
				continue
			}
			d, err := pairDelta(e.wOld, e.dW, s.wOld, s.wNew-s.wOld)
			if err != nil {
				return nil, err
			}
			if d == 0 {
				j.rows.unalloc(width)
				continue
			}
			out = append(out, zset.Entry{Row: row, Weight: d})
		}
		if j.singleMatch && wNew > 0 && mNew > 1 {
			return nil, errMoreThanOneRow()
		}
		out = j.emit(out, e.row, mOld > 0, -e.wOld)
		out = j.emit(out, e.row, mNew > 0, wNew)
		if e.dW != 0 {
			if err := j.arr.put(st, key, e, wNew); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// loadLookedUp sets j.bs to the looked-up rows of the key of da or db
// (one of them not empty) with their weights before and after the step:
// after, the relation's stored rows (under its filters); before, those
// less db.
func (j *LookupOuterJoin) loadLookedUp(w *work, st state.Store, da, db []keyedRow) error {
	var err error
	if len(da) > 0 {
		j.vals, err = evalKeys(j.vals[:0], j.keys.exprs, da[0].row)
	} else {
		j.vals, err = evalKeys(j.vals[:0], j.lkeys.exprs, db[0].row)
	}
	if err != nil {
		return err
	}
	for k, pair := range j.order {
		j.key[k] = j.vals[pair]
	}
	j.bs = j.bs[:0]
	// A semi-, anti- or mark join without a residual needs the rows'
	// weights alone, unless the rows must be matched with db's.
	rows := j.residual != nil || j.kind == plan.LeftJoin || j.kind == plan.RightJoin || len(db) > 0
	err = j.src.Rows(st, j.key, func(row zset.Row, weight int64) error {
		if err := w.tick(); err != nil {
			return err
		}
		for _, p := range j.preds {
			ok, err := isTrue(p, row)
			if err != nil || !ok {
				return err
			}
		}
		if !rows {
			j.bs = append(j.bs, lookedUp{wOld: weight, wNew: weight})
			return nil
		}
		if j.proj != nil {
			cut := make(zset.Row, len(j.proj))
			for i, c := range j.proj {
				cut[i] = row[c]
			}
			row = cut
		}
		var enc []byte
		if len(db) > 0 {
			enc = zset.EncodeRow(nil, row)
		}
		j.bs = append(j.bs, lookedUp{row: row, enc: enc, wOld: weight, wNew: weight})
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range db {
		enc := zset.EncodeRow(nil, d.row)
		i := 0
		for i < len(j.bs) && !bytes.Equal(j.bs[i].enc, enc) {
			i++
		}
		if i == len(j.bs) {
			j.bs = append(j.bs, lookedUp{row: d.row, enc: enc})
		}
		if j.bs[i].wOld, err = zset.AddWeight(j.bs[i].wOld, -d.weight); err != nil {
			return err
		}
	}
	for i := range j.bs {
		if j.bs[i].wOld < 0 {
			return negativeCount("looked-up row")
		}
	}
	return nil
}

// evalKeys appends the values of exprs over row to dst.
func evalKeys(dst []types.Value, exprs []plan.Expr, row zset.Row) ([]types.Value, error) {
	for _, x := range exprs {
		v, err := x.Eval(row)
		if err != nil {
			return nil, err
		}
		dst = append(dst, v)
	}
	return dst, nil
}
