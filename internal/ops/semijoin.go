package ops

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// mark is the three-valued result of testing a row against a subquery.
type mark uint8

const (
	markFalse mark = iota
	markTrue
	markNull
)

func (m mark) value() types.Value {
	switch m {
	case markTrue:
		return types.MakeBool(true)
	case markFalse:
		return types.MakeBool(false)
	}
	return types.Null
}

// SemiJoin computes, for every left row, its mark against the right rows
// it matches (its decorrelated subquery's rows, plan.Join), and returns
// the left rows whose mark is TRUE (plan.SemiJoin: EXISTS, IN), those whose
// mark is FALSE (plan.AntiJoin: NOT EXISTS, NOT IN), or every left row with
// its mark appended (plan.MarkJoin: a subquery test inside an expression).
// Δout is, over the left rows r whose weight or mark changes,
//
//	out(r, mark'(r))·w'(r) − out(r, mark(r))·w(r)
//
// and a left row whose key holds a NULL compared with "=" has an empty
// subquery: its mark is FALSE, and it passes statelessly.
//
// Keyed mode, when there is no residual and the test is absent or x = y
// with x over the left row and y over the right one (IN): the mark depends
// only on the join key k (and x), so the right input is kept as counts
// (prefix(k) is the operator's prefix in the bucket of EncodeKey(k), the
// key both inputs are routed by),
//
//	prefix(k) | 'c' | EncodeKey(k) → varint(rows) [varint(rows with y NULL)]
//	prefix(k) | 'v' | EncodeKey(k, y) → varint(rows with that y)   (y not NULL)
//	prefix(k) | 'l' | EncodeKey(k [, x]) | 0x01 | EncodeRow(row) → varint(weight)
//
// and the left input is arranged by k (and x). A left row's mark is FALSE
// when its key has no rows; otherwise, for EXISTS, TRUE; for IN, NULL if x
// is NULL, else TRUE if some y equals x, else NULL if some y is NULL, else
// FALSE (PostgreSQL's IN and, negated, NOT IN). Only a count crossing
// zero changes marks: the left rows of the key (rows or NULL count), or
// those with x equal to the y whose count crossed. The right rows
// themselves are not stored.
//
// Row mode, otherwise: the right input is arranged by key as the inner
// join arranges it, and each left row stores how many matching right rows
// (residual true) make the test TRUE and how many make it NULL,
//
//	prefix(k) | 'l' | EncodeKey(k) | 0x01 | EncodeRow(row) → varint(weight) varint(true) varint(null)
//	prefix(k) | 'r' | EncodeKey(k) | 0x01 | EncodeRow(row) → varint(weight)
//
// maintained pair by pair as OuterJoin maintains its match counts; the mark
// is TRUE when the true count is positive, else NULL when the null count
// is, else FALSE.
type SemiJoin struct {
	kind                  plan.JoinKind
	leftKeys, rightKeys   keySpec
	residual, test        plan.Expr
	leftWidth, rightWidth int

	// Keyed mode.
	keyed          bool
	probeX, probeY plan.Expr // the IN operands; nil for EXISTS
	lPrefix        *bucketed
	cPrefix        *bucketed
	vPrefix        *bucketed

	// Row mode.
	keyPairs

	// Scratch, reused across steps.
	aCnt       []markCounts
	pairRow    zset.Row
	rows       rowAlloc
	keyBuf     []byte
	valBuf     []byte
	endBuf     []byte
	ys         []yChange
	scanned    []leftEntry
	scanBuf    []byte
	scanErr    error
	scanPlen   int
	collect    func(k, v []byte) bool
	probeCache struct {
		x        []byte
		old, new int64
	}
}

// markCounts accumulates one left entry's counts during a step in row
// mode: the change and (for an entry not stored before) the old value of
// its true and null counts.
type markCounts struct {
	dT, dN, oT, oN int64
}

// yChange is the change of one probe value's count in keyed mode.
type yChange struct {
	y        []byte // EncodeKey(y)
	d        int64
	old, new int64
}

// leftEntry is one stored left row found by a keyed-mode scan: its probe
// value's encoding (in probe mode) and its row's, at
// scanBuf[off:xEnd] and scanBuf[xEnd:end].
type leftEntry struct {
	off, xEnd, end int
	weight         int64
}

// NewSemiJoin returns a semi-, anti- or mark join (kind is plan.SemiJoin,
// AntiJoin or MarkJoin) keeping its state under prefix. Keys, residual and
// widths are those of NewJoin; test is plan.Join's Test.
func NewSemiJoin(prefix Prefix, kind plan.JoinKind, leftKeys, rightKeys []plan.Expr, nullSafe []bool, residual, test plan.Expr, leftWidth, rightWidth int) *SemiJoin {
	j := &SemiJoin{
		kind:       kind,
		leftKeys:   newKeySpec(leftKeys, nullSafe),
		rightKeys:  newKeySpec(rightKeys, nullSafe),
		residual:   residual,
		test:       test,
		leftWidth:  leftWidth,
		rightWidth: rightWidth,
		pairRow:    make(zset.Row, leftWidth+rightWidth),
	}
	if residual == nil {
		if test == nil {
			j.keyed = true
		} else if x, y, ok := ProbeOf(test, leftWidth); ok {
			j.keyed, j.probeX, j.probeY = true, x, y
		}
	}
	if j.keyed {
		j.lPrefix = prefix.With('l').expand()
		j.cPrefix = prefix.With('c').expand()
		j.vPrefix = prefix.With('v').expand()
		j.collect = j.collectLeft
	} else {
		j.left = newArrangement(prefix.With('l'), 2)
		j.right = newArrangement(prefix.With('r'), 0)
	}
	return j
}

// Keyed reports whether the join keeps the right input as counts (keyed
// mode) rather than arranged rows.
func (j *SemiJoin) Keyed() bool { return j.keyed }

// ProbeOf reports whether a test is "x = y" with x reading only the
// first leftWidth columns of the concatenated row and y only the others,
// and returns x and y (still over the concatenated row). Both must have the
// same type, so that their key encodings compare as "=" does.
func ProbeOf(test plan.Expr, leftWidth int) (x, y plan.Expr, ok bool) {
	b, isBin := test.(*plan.BinOp)
	if !isBin || b.Op.Name != "=" || b.Op.Result.ID != types.Bool || b.Left.Type().ID != b.Right.Type().ID {
		return nil, nil, false
	}
	l, r := sideOf(b.Left, leftWidth), sideOf(b.Right, leftWidth)
	switch {
	case l&2 == 0 && r&1 == 0:
		return b.Left, b.Right, true
	case l&1 == 0 && r&2 == 0:
		return b.Right, b.Left, true
	}
	return nil, nil, false
}

// Step implements Operator: in[0] is the left delta, in[1] the right one.
func (j *SemiJoin) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	j.rows.bind(ctx)
	dl, dr := in[0], in[1]
	if len(dl) == 0 && len(dr) == 0 {
		return nil, nil
	}
	la, lnull, err := j.leftKeys.index(dl)
	if err != nil {
		return nil, err
	}
	rb, _, err := j.rightKeys.index(dr)
	if err != nil {
		return nil, err
	}
	var out zset.Batch
	for _, e := range lnull {
		out = j.emit(out, e.Row, 0, markFalse, e.Weight, markFalse)
	}
	w := &work{ctx: ctx}
	err = forEachKey(w, la, rb, func(key []byte, da, db []keyedRow) error {
		var err error
		if j.keyed {
			out, err = j.stepKeyed(st, out, key, da, db)
		} else {
			out, err = j.stepRows(w, st, out, key, da, db)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return zset.Consolidate(out)
}

// emit appends the change of a left row's output when its weight goes
// from wOld to wNew and its mark from mOld to mNew.
func (j *SemiJoin) emit(out zset.Batch, row zset.Row, wOld int64, mOld mark, wNew int64, mNew mark) zset.Batch {
	switch j.kind {
	case plan.MarkJoin:
		if mOld == mNew {
			if w := wNew - wOld; w != 0 {
				out = append(out, zset.Entry{Row: j.marked(row, mNew), Weight: w})
			}
			return out
		}
		if wOld != 0 {
			out = append(out, zset.Entry{Row: j.marked(row, mOld), Weight: -wOld})
		}
		if wNew != 0 {
			out = append(out, zset.Entry{Row: j.marked(row, mNew), Weight: wNew})
		}
		return out
	}
	want := markTrue
	if j.kind == plan.AntiJoin {
		want = markFalse
	}
	var w int64
	if mNew == want {
		w += wNew
	}
	if mOld == want {
		w -= wOld
	}
	if w != 0 {
		out = append(out, zset.Entry{Row: row, Weight: w})
	}
	return out
}

func (j *SemiJoin) marked(row zset.Row, m mark) zset.Row {
	r := j.rows.alloc(j.leftWidth + 1)
	copy(r, row)
	r[j.leftWidth] = m.value()
	return r
}

// stepRows applies one key's deltas in row mode.
func (j *SemiJoin) stepRows(w *work, st state.Store, out zset.Batch, key []byte, da, db []keyedRow) (zset.Batch, error) {
	if err := j.load(st, key, da, db); err != nil {
		return nil, err
	}
	as, bs := j.as, j.bs
	j.aCnt = resize(j.aCnt, len(as))
	clear(j.aCnt)
	err := forEachChangedPair(w, as, bs, j.bDelta, func(i, k int) error { return j.pair(&as[i], &bs[k], &j.aCnt[i]) })
	if err != nil {
		return nil, err
	}
	for i := range as {
		a, c := &as[i], &j.aCnt[i]
		tOld, nOld := c.oT, c.oN
		if a.present {
			tOld, nOld = a.counts[0], a.counts[1]
		}
		tNew, err := zset.AddWeight(tOld, c.dT)
		if err != nil {
			return nil, err
		}
		nNew, err := zset.AddWeight(nOld, c.dN)
		if err != nil {
			return nil, err
		}
		wNew, err := zset.AddWeight(a.wOld, a.dW)
		if err != nil {
			return nil, err
		}
		if tNew < 0 || nNew < 0 || wNew < 0 {
			return nil, negativeCount("semi-join")
		}
		out = j.emit(out, a.row, a.wOld, countMark(tOld, nOld), wNew, countMark(tNew, nNew))
		if a.dW != 0 || c.dT != 0 || c.dN != 0 || (!a.present && wNew != 0) {
			if err := j.left.put(st, key, a, wNew, tNew, nNew); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range j.bDelta {
		b := &bs[k]
		wNew, err := zset.AddWeight(b.wOld, b.dW)
		if err != nil {
			return nil, err
		}
		if wNew < 0 {
			return nil, negativeCount("semi-join")
		}
		if err := j.right.put(st, key, b, wNew); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func countMark(t, n int64) mark {
	switch {
	case t > 0:
		return markTrue
	case n > 0:
		return markNull
	}
	return markFalse
}

// pair counts one left and one right entry of the same key.
func (j *SemiJoin) pair(a, b *sideEntry, c *markCounts) error {
	copy(j.pairRow, a.row)
	copy(j.pairRow[j.leftWidth:], b.row)
	if j.residual != nil {
		ok, err := isTrue(j.residual, j.pairRow)
		if err != nil || !ok {
			return err
		}
	}
	m := markTrue
	if j.test != nil {
		v, err := j.test.Eval(j.pairRow)
		if err != nil {
			return err
		}
		switch {
		case v.IsNull():
			m = markNull
		case !v.Bool():
			return nil
		}
	}
	var err error
	if m == markTrue {
		if c.dT, err = zset.AddWeight(c.dT, b.dW); err == nil {
			c.oT, err = zset.AddWeight(c.oT, b.wOld)
		}
		return err
	}
	if c.dN, err = zset.AddWeight(c.dN, b.dW); err == nil {
		c.oN, err = zset.AddWeight(c.oN, b.wOld)
	}
	return err
}

// keyedMark is the mark of a left row in keyed mode: tot rows in its key,
// nulls of them with y NULL, cnt with y equal to its x.
func (j *SemiJoin) keyedMark(xNull bool, cnt, tot, nulls int64) mark {
	switch {
	case tot <= 0:
		return markFalse
	case j.probeX == nil:
		return markTrue
	case xNull:
		return markNull
	case cnt > 0:
		return markTrue
	case nulls > 0:
		return markNull
	}
	return markFalse
}

// stepKeyed applies one key's deltas in keyed mode.
func (j *SemiJoin) stepKeyed(st state.Store, out zset.Batch, key []byte, da, db []keyedRow) (zset.Batch, error) {
	probe := j.probeX != nil
	// The right rows' counts, before and after.
	cKey := append(append(j.keyBuf[:0], j.cPrefix.of(key)...), key...)
	var tot, nulls int64
	v, ok, err := st.Get(cKey)
	if err != nil {
		return nil, err
	}
	if ok {
		if tot, v, err = readWeight(v); err == nil && probe {
			nulls, _, err = readWeight(v)
		}
		if err != nil {
			return nil, err
		}
	}
	newTot, newNulls := tot, nulls
	j.ys = j.ys[:0]
	for _, r := range db {
		if newTot, err = zset.AddWeight(newTot, r.weight); err != nil {
			return nil, err
		}
		if !probe {
			continue
		}
		y, err := j.evalRight(j.probeY, r.row)
		if err != nil {
			return nil, err
		}
		if y.IsNull() {
			if newNulls, err = zset.AddWeight(newNulls, r.weight); err != nil {
				return nil, err
			}
			continue
		}
		j.ys = append(j.ys, yChange{y: zset.EncodeKey(nil, y), d: r.weight})
	}
	if newTot < 0 || newNulls < 0 {
		return nil, negativeCount("semi-join")
	}
	if len(db) > 0 {
		if newTot == 0 {
			err = st.Delete(cKey)
		} else {
			j.valBuf = binary.AppendVarint(j.valBuf[:0], newTot)
			if probe {
				j.valBuf = binary.AppendVarint(j.valBuf, newNulls)
			}
			err = st.Set(cKey, j.valBuf)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := j.applyYs(st, key); err != nil {
		return nil, err
	}

	// Stored left rows whose mark changes.
	switch {
	case (tot > 0) != (newTot > 0) || (probe && (nulls > 0) != (newNulls > 0)):
		if err := j.scanLeft(st, key, nil); err != nil {
			return nil, err
		}
		j.probeCache.x = nil
		for _, e := range j.scanned {
			xNull := probe && isNullKey(j.entryX(e))
			var cOld, cNew int64
			if probe && !xNull {
				if cOld, cNew, err = j.probeCount(st, key, j.entryX(e)); err != nil {
					return nil, err
				}
			}
			mOld, mNew := j.keyedMark(xNull, cOld, tot, nulls), j.keyedMark(xNull, cNew, newTot, newNulls)
			if mOld == mNew {
				continue
			}
			row, err := zset.DecodeRow(j.entryRow(e))
			if err != nil {
				return nil, err
			}
			out = j.emit(out, row, e.weight, mOld, e.weight, mNew)
		}
	case probe:
		for _, y := range j.ys {
			if (y.old > 0) == (y.new > 0) {
				continue
			}
			if err := j.scanLeft(st, key, y.y); err != nil {
				return nil, err
			}
			mOld, mNew := j.keyedMark(false, y.old, tot, nulls), j.keyedMark(false, y.new, newTot, newNulls)
			if mOld == mNew {
				continue
			}
			for _, e := range j.scanned {
				row, err := zset.DecodeRow(j.entryRow(e))
				if err != nil {
					return nil, err
				}
				out = j.emit(out, row, e.weight, mOld, e.weight, mNew)
			}
		}
	}

	// The left delta, under the new counts.
	j.probeCache.x = nil
	for _, r := range da {
		k := append(append(j.keyBuf[:0], j.lPrefix.of(key)...), key...)
		xNull := false
		var cnt int64
		if probe {
			x, err := j.evalLeft(j.probeX, r.row)
			if err != nil {
				return nil, err
			}
			xNull = x.IsNull()
			xk := len(k)
			k = zset.EncodeKey(k, x)
			if !xNull {
				if _, cnt, err = j.probeCount(st, key, k[xk:]); err != nil {
					return nil, err
				}
			}
		}
		out = j.emit(out, r.row, 0, markFalse, r.weight, j.keyedMark(xNull, cnt, newTot, newNulls))
		k = zset.EncodeRow(append(k, rowSep), r.row)
		j.keyBuf = k
		w, err := addWeightChecked(st, k, r.weight, &j.valBuf)
		if err != nil {
			return nil, err
		}
		if w < 0 {
			return nil, negativeCount("semi-join")
		}
	}
	return out, nil
}

// applyYs reads and updates the counts of the probe values in j.ys,
// merging repeated values, and records their old and new counts.
func (j *SemiJoin) applyYs(st state.Store, key []byte) error {
	if len(j.ys) == 0 {
		return nil
	}
	// Sort by value (the delta is sorted by row) and merge equal values,
	// so that probeCount can search them.
	slices.SortFunc(j.ys, func(a, b yChange) int { return bytes.Compare(a.y, b.y) })
	ys := j.ys[:1]
	for _, y := range j.ys[1:] {
		last := &ys[len(ys)-1]
		if !bytes.Equal(last.y, y.y) {
			ys = append(ys, y)
			continue
		}
		d, err := zset.AddWeight(last.d, y.d)
		if err != nil {
			return err
		}
		last.d = d
	}
	j.ys = ys
	for i := range ys {
		y := &ys[i]
		vk := append(append(append(j.keyBuf[:0], j.vPrefix.of(key)...), key...), y.y...)
		j.keyBuf = vk
		v, ok, err := st.Get(vk)
		if err != nil {
			return err
		}
		if ok {
			if y.old, _, err = readWeight(v); err != nil {
				return err
			}
		}
		if y.new, err = zset.AddWeight(y.old, y.d); err != nil {
			return err
		}
		if y.new < 0 {
			return negativeCount("semi-join")
		}
		if y.new == 0 {
			err = st.Delete(vk)
		} else {
			j.valBuf = binary.AppendVarint(j.valBuf[:0], y.new)
			err = st.Set(vk, j.valBuf)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// probeCount returns the old and new count of right rows of key whose y
// equals the probe value x (EncodeKey(x), not NULL).
func (j *SemiJoin) probeCount(st state.Reader, key, x []byte) (old, new int64, err error) {
	if i, ok := slices.BinarySearchFunc(j.ys, x, func(y yChange, x []byte) int { return bytes.Compare(y.y, x) }); ok {
		return j.ys[i].old, j.ys[i].new, nil
	}
	if j.probeCache.x != nil && bytes.Equal(j.probeCache.x, x) {
		return j.probeCache.old, j.probeCache.new, nil
	}
	vk := append(append(append([]byte(nil), j.vPrefix.of(key)...), key...), x...)
	v, ok, err := st.Get(vk)
	if err != nil {
		return 0, 0, err
	}
	var n int64
	if ok {
		if n, _, err = readWeight(v); err != nil {
			return 0, 0, err
		}
	}
	j.probeCache.x = append(j.probeCache.x[:0], x...)
	j.probeCache.old, j.probeCache.new = n, n
	return n, n, nil
}

// isNullKey reports whether a one-value key encoding is NULL's.
func isNullKey(k []byte) bool {
	return bytes.Equal(k, nullKey)
}

var nullKey = zset.EncodeKey(nil, types.Null)

// scanLeft collects the stored left rows of key (and, when x is not nil,
// of probe value x) into j.scanned.
func (j *SemiJoin) scanLeft(st state.Reader, key, x []byte) error {
	lo := append(append(append(j.keyBuf[:0], j.lPrefix.of(key)...), key...), x...)
	j.keyBuf = lo
	j.endBuf = zset.KeyPrefixEnd(j.endBuf[:0], lo)
	j.scanned, j.scanBuf, j.scanErr, j.scanPlen = j.scanned[:0], j.scanBuf[:0], nil, j.lPrefix.plen()+len(key)
	if err := st.Scan(lo, j.endBuf, j.collect); err != nil {
		return err
	}
	return j.scanErr
}

// collectLeft is scanLeft's callback: k is lPrefix | key | [x] | 0x01 |
// EncodeRow(row).
func (j *SemiJoin) collectLeft(k, v []byte) bool {
	w, _, err := readWeight(v)
	if err != nil {
		j.scanErr = err
		return false
	}
	rest := k[j.scanPlen:]
	xLen := 0
	if j.probeX != nil {
		_, after, err := zset.DecodeKey(rest, 1)
		if err != nil {
			j.scanErr = err
			return false
		}
		xLen = len(rest) - len(after)
	}
	if len(rest) <= xLen || rest[xLen] != rowSep {
		j.scanErr = corrupt("semi-join key")
		return false
	}
	off := len(j.scanBuf)
	j.scanBuf = append(append(j.scanBuf, rest[:xLen]...), rest[xLen+1:]...)
	j.scanned = append(j.scanned, leftEntry{off: off, xEnd: off + xLen, end: len(j.scanBuf), weight: w})
	return true
}

func (j *SemiJoin) entryX(e leftEntry) []byte   { return j.scanBuf[e.off:e.xEnd] }
func (j *SemiJoin) entryRow(e leftEntry) []byte { return j.scanBuf[e.xEnd:e.end] }

// evalLeft evaluates e, which reads only left columns of the concatenated
// row, over a left row.
func (j *SemiJoin) evalLeft(e plan.Expr, row zset.Row) (types.Value, error) {
	copy(j.pairRow, row)
	return e.Eval(j.pairRow)
}

// evalRight evaluates e, which reads only right columns of the
// concatenated row, over a right row.
func (j *SemiJoin) evalRight(e plan.Expr, row zset.Row) (types.Value, error) {
	copy(j.pairRow[j.leftWidth:], row)
	return e.Eval(j.pairRow)
}

// addWeightChecked adds w to the weight under key and returns the new
// weight; buf is scratch.
func addWeightChecked(st state.Store, key []byte, w int64, buf *[]byte) (int64, error) {
	v, ok, err := st.Get(key)
	if err != nil {
		return 0, err
	}
	var cur int64
	if ok {
		if cur, _, err = readWeight(v); err != nil {
			return 0, err
		}
	}
	if cur, err = zset.AddWeight(cur, w); err != nil {
		return 0, err
	}
	if cur == 0 {
		return 0, st.Delete(key)
	}
	*buf = appendWeight((*buf)[:0], cur)
	return cur, st.Set(key, *buf)
}

// sideOf reports which part of a concatenated row e reads: bit 1 the
// first width columns, bit 2 the rest.
func sideOf(e plan.Expr, width int) int {
	s := 0
	plan.ColumnsRead(e, func(c *plan.ColRef) {
		if c.Index < width {
			s |= 1
		} else {
			s |= 2
		}
	})
	return s
}
