package ops

import (
	"bytes"
	"context"
	"math"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TopK keeps, in each partition of its input, the rows at positions
// offset+1 to offset+count in ORDER BY order, ties broken by the whole row
// (plan.TopK). With rowNumber, each output row carries its position in
// the partition as one more bigint column.
//
// State: the input in a sorted arrangement (sorted.go), under the
// operator's prefix. Nothing else: the previous top of a partition is read
// back from the arrangement.
//
// Per step, for each partition the delta touches: scan the first
// offset+count+d copies of the partition's old rows, where d is the number
// of copies the delta deletes in it (a bounded prefix scan, never the
// whole partition); merge the delta into that prefix in memory, which
// gives the new partition's first offset+count copies exactly (a delete
// pulls in the rows after the old window, which the scan already holds);
// emit the new window minus the old one; write the delta to the
// arrangement. A partition whose delta sorts entirely after its old window
// only has its arrangement updated.
//
// Without a count (OFFSET alone), the output is every row but the first
// offset ones: the delta minus the change of those first rows.
type TopK struct {
	arr       sortedArrangement
	count     int64
	offset    int64
	rowNumber bool
	// insertOnly: the input never retracts (InsertOnly).
	insertOnly bool

	// Scratch, reused across steps.
	delta   sortedDelta
	buf     []byte
	entries []sortedEntry
	oldList []listEntry
	newList []listEntry
	oldWin  []winCopy
	newWin  []winCopy
	rows    rowAlloc
	// pruneBuf and pruneEntries hold the partition prune reads.
	pruneBuf     []byte
	pruneEntries []sortedEntry
}

// winCopy is a run of copies of one row in a window, starting at 0-based
// position pos.
type winCopy struct {
	entry  int
	pos    int64
	copies int64
}

// NewTopK returns a TopK keeping its arrangement under prefix. count < 0
// means no limit; rowNumber requires a count.
func NewTopK(prefix Prefix, partitionBy []plan.Expr, keys []plan.SortKey, count, offset int64, rowNumber bool) *TopK {
	return &TopK{
		arr:   newSortedArrangement(prefix, partitionBy, keys),
		count: count, offset: offset, rowNumber: rowNumber,
	}
}

// InsertOnly declares that every row the operator will take is an
// insertion, its input being insert-only. With a count, a row past the
// window of its partition then never returns to it, so the arrangement
// keeps only the first offset+count copies of each partition: rows the
// delta adds past them are not written, and rows it pushes out are
// deleted. A retraction fails as an internal error. It is called before
// the first step, the same way for every circuit over the operator's
// state.
func (t *TopK) InsertOnly() { t.insertOnly = true }

// Kept returns how many copies per partition an insert-only top-k keeps
// (offset+count), or -1 when it keeps every row (no InsertOnly, or no
// count).
func (t *TopK) Kept() int64 {
	if !t.insertOnly || t.count < 0 {
		return -1
	}
	_, hi := t.window()
	return hi
}

// satAdd adds non-negative counts, saturating at MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Step implements Operator.
func (t *TopK) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	t.rows.bind(ctx)
	if len(in[0]) == 0 || t.count == 0 {
		return nil, nil
	}
	w := &work{ctx: ctx}
	if err := t.delta.load(w, &t.arr, in[0]); err != nil {
		return nil, err
	}
	var out zset.Batch
	err := t.delta.partitions(w, func(part []byte, rows []sortedDeltaEntry) error {
		var err error
		out, err = t.partition(w, st, part, rows, out)
		return err
	})
	if err != nil {
		return nil, err
	}
	return zset.ConsolidateContext(ctx, out)
}

// window is the end of the positions the operator emits (exclusive), or
// MaxInt64 without a count; without a count the rows it tracks are the
// first offset ones.
func (t *TopK) window() (lo, hi int64) {
	if t.count < 0 {
		return 0, t.offset
	}
	return t.offset, satAdd(t.offset, t.count)
}

func (t *TopK) partition(w *work, st state.Store, part []byte, rows []sortedDeltaEntry, out zset.Batch) (zset.Batch, error) {
	lo, hi := t.window()
	bounded := t.insertOnly && t.count >= 0
	var deleted int64
	for i := range rows {
		if rows[i].weight < 0 && t.insertOnly {
			return nil, errs.New(errs.Internal, "internal error: a retraction reached a top-k over insert-only input")
		}
		if rows[i].weight < 0 {
			if rows[i].weight == math.MinInt64 {
				return nil, negativeCount("arranged row")
			}
			deleted = satAdd(deleted, -rows[i].weight)
		}
	}
	var complete bool
	var err error
	t.buf, t.entries, complete, err = t.arr.scanPartition(st, part, satAdd(hi, deleted), t.buf[:0], t.entries[:0])
	if err != nil {
		return nil, err
	}
	t.oldList = t.oldList[:0]
	for _, e := range t.entries {
		t.oldList = append(t.oldList, listEntry{key: t.buf[e.off:e.end], layout: e.layout, weight: e.weight})
	}

	// When the whole delta sorts after the last row of the old window,
	// the window keeps its rows and positions.
	unchanged := false
	if b := boundary(t.oldList, hi); b != nil && bytes.Compare(t.delta.key(&rows[0]), b) > 0 {
		unchanged = true
		if bounded {
			return out, nil // rows past the window: never in it
		}
	}
	if !unchanged {
		var err error
		if t.newList, err = mergeDelta(w, t.newList[:0], t.oldList, &t.delta, rows, complete); err != nil {
			return nil, err
		}
		t.oldWin = windowOf(t.oldWin[:0], t.oldList, lo, hi)
		t.newWin = windowOf(t.newWin[:0], t.newList, lo, hi)
		sign := int64(1)
		if t.count < 0 {
			sign = -1 // the output is everything but the window
		}
		if out, err = t.emit(out, sign); err != nil {
			return nil, err
		}
	}
	for i := range rows {
		if err := w.tick(); err != nil {
			return nil, err
		}
		r := &rows[i]
		if t.count < 0 {
			out = append(out, zset.Entry{Row: r.row, Weight: r.weight})
		}
		if err := t.arr.add(st, t.delta.key(r), r.layout, r.weight); err != nil {
			return nil, err
		}
	}
	if bounded {
		return out, t.prune(st, part, hi)
	}
	return out, nil
}

// prune deletes the copies of the partition's arranged rows past position
// hi, for an insert-only top-k: the partition then holds at most hi
// copies, and pruning after each step reads at most hi plus the step's
// rows.
func (t *TopK) prune(st state.Store, part []byte, hi int64) error {
	var err error
	t.pruneBuf, t.pruneEntries, _, err = t.arr.scanPartition(st, part, -1, t.pruneBuf[:0], t.pruneEntries[:0])
	if err != nil {
		return err
	}
	var pos int64
	for _, e := range t.pruneEntries {
		if e.weight <= 0 {
			continue
		}
		keep := min(max(hi-pos, 0), e.weight)
		pos = satAdd(pos, e.weight)
		if keep < e.weight {
			if err := t.arr.add(st, t.pruneBuf[e.off:e.end], e.layout, keep-e.weight); err != nil {
				return err
			}
		}
	}
	return nil
}

// boundary returns the key of the row at position hi-1 of list, or nil
// when list holds fewer copies.
func boundary(list []listEntry, hi int64) []byte {
	if hi <= 0 {
		return nil
	}
	var pos int64
	for _, e := range list {
		pos = satAdd(pos, max(e.weight, 0))
		if pos >= hi {
			return e.key
		}
	}
	return nil
}

// windowOf appends the copies of list's rows at positions [lo, hi).
func windowOf(dst []winCopy, list []listEntry, lo, hi int64) []winCopy {
	var pos int64
	for i, e := range list {
		if e.weight <= 0 {
			continue
		}
		start, end := pos, satAdd(pos, e.weight)
		pos = end
		if end <= lo {
			continue
		}
		if start >= hi {
			break
		}
		s, f := max(start, lo), min(end, hi)
		dst = append(dst, winCopy{entry: i, pos: s, copies: f - s})
	}
	return dst
}

// emit appends −old window +new window (times sign) to out, leaving out
// the rows (and, with row numbers, positions) both windows share.
func (t *TopK) emit(out zset.Batch, sign int64) (zset.Batch, error) {
	if t.rowNumber {
		return t.emitNumbered(out)
	}
	i, j := 0, 0
	for i < len(t.oldWin) || j < len(t.newWin) {
		var c int
		switch {
		case i >= len(t.oldWin):
			c = 1
		case j >= len(t.newWin):
			c = -1
		default:
			c = bytes.Compare(t.oldList[t.oldWin[i].entry].key, t.newList[t.newWin[j].entry].key)
		}
		var e listEntry
		var w int64
		switch {
		case c < 0:
			e, w = t.oldList[t.oldWin[i].entry], -t.oldWin[i].copies
			i++
		case c > 0:
			e, w = t.newList[t.newWin[j].entry], t.newWin[j].copies
			j++
		default:
			e, w = t.newList[t.newWin[j].entry], t.newWin[j].copies-t.oldWin[i].copies
			i, j = i+1, j+1
		}
		if w == 0 {
			continue
		}
		row, err := t.decode(e, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, zset.Entry{Row: row, Weight: w * sign})
	}
	return out, nil
}

// emitNumbered is emit for output rows that carry their position: a copy
// is unchanged only when the same row stays at the same position.
func (t *TopK) emitNumbered(out zset.Batch) (zset.Batch, error) {
	type item struct {
		e   listEntry
		pos int64
	}
	expand := func(win []winCopy, list []listEntry) []item {
		var items []item
		for _, w := range win {
			for k := int64(0); k < w.copies; k++ {
				items = append(items, item{list[w.entry], w.pos + k})
			}
		}
		return items
	}
	olds, news := expand(t.oldWin, t.oldList), expand(t.newWin, t.newList)
	i, j := 0, 0
	for i < len(olds) || j < len(news) {
		var c int
		switch {
		case i >= len(olds):
			c = 1
		case j >= len(news):
			c = -1
		default:
			if c = bytes.Compare(olds[i].e.key, news[j].e.key); c == 0 {
				c = cmpInt64(olds[i].pos, news[j].pos)
			}
		}
		var it item
		var w int64
		switch {
		case c < 0:
			it, w = olds[i], -1
			i++
		case c > 0:
			it, w = news[j], 1
			j++
		default:
			i, j = i+1, j+1
			continue
		}
		row, err := t.decode(it.e, it.pos+1)
		if err != nil {
			return nil, err
		}
		out = append(out, zset.Entry{Row: row, Weight: w})
	}
	return out, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// decode returns e's row, with rn appended when the operator numbers rows.
func (t *TopK) decode(e listEntry, rn int64) (zset.Row, error) {
	row, err := zset.DecodeRow(e.layout.row(e.key))
	if err != nil {
		return nil, err
	}
	if !t.rowNumber {
		return row, nil
	}
	out := t.rows.alloc(len(row) + 1)
	copy(out, row)
	out[len(row)] = types.MakeInt(types.Int8, rn)
	return out, nil
}
