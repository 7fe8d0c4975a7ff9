package ops

import (
	"bytes"
	"context"
	"sort"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Window computes window functions (plan.Window): each input row goes out
// with one more column per function.
//
// State: the input in a sorted arrangement (sorted.go) by partition, ORDER
// BY keys and whole row, under the operator's prefix. Rows equal on every
// ORDER BY key (peers) are ordered by their whole row, so row_number and
// ROWS frames are functions of the input, never of arrival order.
//
// Per step, for each partition the delta touches (and no other): read the
// partition, merge the delta into it in memory, evaluate every function
// over the old and the new partition, and emit −old +new for the rows
// whose outputs differ; then write the delta to the arrangement. Both
// partitions share their rows before the first delta row, so evaluation
// starts at the first position whose output can depend on a changed row
// (firstAffected: for a running aggregate or a ROWS frame ending at the
// current row, the first changed row itself), and rows are decoded only
// when read. Frames slide: an invertible aggregate (count, sum, avg,
// bool_and, bool_or) adds each row once as it enters the frame and removes
// it once as it leaves, min and max use a sparse table of range extremes,
// so a partition of n rows costs O(n log n) whatever the frames.
type Window struct {
	arr sortedArrangement
	fns []windowFn

	// Scratch, reused across steps.
	delta   sortedDelta
	buf     []byte
	entries []sortedEntry
	oldList []listEntry
	newList []listEntry
	old     windowPartition
	new     windowPartition
	rows    rowAlloc
}

// NewWindow returns a Window keeping its arrangement under prefix.
func NewWindow(prefix Prefix, partitionBy []plan.Expr, orderBy []plan.SortKey, funcs []plan.WindowFunc) (*Window, error) {
	w := &Window{arr: newSortedArrangement(prefix, partitionBy, orderBy)}
	for _, f := range funcs {
		fn, err := newWindowFn(f)
		if err != nil {
			return nil, err
		}
		if hasRangeOffset(&f.Frame) && fn.call.UsesFrame() {
			if len(orderBy) != 1 {
				return nil, errs.New(errs.Internal, "a RANGE frame with an offset needs exactly one ORDER BY key")
			}
			off := f.Frame.Start.ValueType
			if !isOffset(f.Frame.Start.Kind) {
				off = f.Frame.End.ValueType
			}
			if fn.rangeKey, err = newRangeKey(orderBy[0], off, f.Frame.Zone); err != nil {
				return nil, err
			}
		}
		w.fns = append(w.fns, fn)
	}
	return w, nil
}

// Step implements Operator.
func (w *Window) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	w.rows.bind(ctx)
	if len(in[0]) == 0 {
		return nil, nil
	}
	wk := &work{ctx: ctx}
	if err := w.delta.load(wk, &w.arr, in[0]); err != nil {
		return nil, err
	}
	var out zset.Batch
	err := w.delta.partitions(wk, func(part []byte, rows []sortedDeltaEntry) error {
		var err error
		out, err = w.partition(wk, st, part, rows, out)
		return err
	})
	if err != nil {
		return nil, err
	}
	// Consolidating a large partition's output takes long.
	return zset.ConsolidateContext(ctx, out)
}

func (w *Window) partition(wk *work, st state.Store, part []byte, rows []sortedDeltaEntry, out zset.Batch) (zset.Batch, error) {
	var err error
	w.buf, w.entries, _, err = w.arr.scanPartition(st, part, -1, w.buf[:0], w.entries[:0])
	if err != nil {
		return nil, err
	}
	w.oldList = w.oldList[:0]
	for _, e := range w.entries {
		w.oldList = append(w.oldList, listEntry{key: w.buf[e.off:e.end], layout: e.layout, weight: e.weight})
	}
	if w.newList, err = mergeDelta(wk, w.newList[:0], w.oldList, &w.delta, rows, true); err != nil {
		return nil, err
	}
	for i := range rows {
		if err := wk.tick(); err != nil {
			return nil, err
		}
		r := &rows[i]
		if err := w.arr.add(st, w.delta.key(r), r.layout, r.weight); err != nil {
			return nil, err
		}
	}
	if err := w.old.load(wk, w.oldList); err != nil {
		return nil, err
	}
	if err := w.new.load(wk, w.newList); err != nil {
		return nil, err
	}
	// The partitions agree on their rows before the first delta row; the
	// outputs that depend on those rows alone are the same in both and are
	// neither computed nor compared.
	from := w.old.firstAffected(w.fns, w.old.positionOf(w.delta.key(&rows[0])))
	if err := w.old.evaluate(wk, w.fns, from); err != nil {
		return nil, err
	}
	if err := w.new.evaluate(wk, w.fns, from); err != nil {
		return nil, err
	}
	return w.emit(wk, out, from)
}

// emit appends −old +new for the positions from from on whose row or
// outputs differ. Both partitions list their rows in arrangement order, so
// a merge by key pairs a row's copies in the old partition with its copies
// in the new.
func (w *Window) emit(wk *work, out zset.Batch, from int) (zset.Batch, error) {
	o, n := &w.old, &w.new
	i, j := from, from
	add := func(p *windowPartition, i int, weight int64) error {
		row, err := w.output(p, i)
		if err == nil {
			out = append(out, zset.Entry{Row: row, Weight: weight})
		}
		return err
	}
	for i < o.n || j < n.n {
		if err := wk.tick(); err != nil {
			return nil, err
		}
		var c int
		switch {
		case i >= o.n:
			c = 1
		case j >= n.n:
			c = -1
		default:
			c = bytes.Compare(o.key(i), n.key(j))
		}
		var err error
		switch {
		case c < 0:
			err = add(o, i, -1)
			i++
		case c > 0:
			err = add(n, j, 1)
			j++
		default:
			if !o.sameOutputs(i, n, j) {
				if err = add(o, i, -1); err == nil {
					err = add(n, j, 1)
				}
			}
			i, j = i+1, j+1
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// output returns position i's input row followed by its function values.
func (w *Window) output(p *windowPartition, i int) (zset.Row, error) {
	in, err := p.row(i)
	if err != nil {
		return nil, err
	}
	row := w.rows.alloc(len(in) + len(w.fns))
	copy(row, in)
	for f := range w.fns {
		row[len(in)+f] = p.vals[f][i]
	}
	return row, nil
}

// windowPartition is one partition, old or new, laid out by position: a
// row with weight w takes w consecutive positions. Rows are decoded when
// first read.
type windowPartition struct {
	list  []listEntry
	n     int
	entry []int      // position → index in list
	rows  []zset.Row // list index → row, once decoded
	// Peer groups: group[i] is position i's group, groupStart[g] the first
	// position of group g; groupStart has one more entry, n.
	group      []int
	groupStart []int
	// rangeS and rangeT are the frame bounds of the RANGE frame rangeFor
	// (a function's frame with offsets), by position.
	rangeFor       *plan.Frame
	rangeS, rangeT []int
	vals           [][]types.Value // function → position → value (from the first affected position)
	decoded        []types.Value   // the decoded rows' values, back to back
}

func (p *windowPartition) key(i int) []byte { return p.list[p.entry[i]].key }

// row returns the row at position i.
func (p *windowPartition) row(i int) (zset.Row, error) {
	idx := p.entry[i]
	if r := p.rows[idx]; r != nil {
		return r, nil
	}
	e := p.list[idx]
	start := len(p.decoded)
	var err error
	// Earlier rows keep pointing into the array they were decoded into if
	// this append moves decoded.
	if p.decoded, err = zset.DecodeRowAppend(p.decoded, e.layout.row(e.key)); err != nil {
		return nil, err
	}
	r := zset.Row(p.decoded[start:len(p.decoded):len(p.decoded)])
	p.rows[idx] = r
	return r, nil
}

// positionOf returns the number of positions whose key sorts before key.
func (p *windowPartition) positionOf(key []byte) int {
	return sort.Search(p.n, func(i int) bool { return bytes.Compare(p.key(i), key) >= 0 })
}

// load lays out list's rows by position and finds the peer groups,
// counting its work on wk.
func (p *windowPartition) load(wk *work, list []listEntry) error {
	p.list = list
	p.entry, p.group, p.groupStart, p.decoded = p.entry[:0], p.group[:0], p.groupStart[:0], p.decoded[:0]
	p.rows = resize(p.rows, len(list))
	clear(p.rows)
	var prevSort []byte
	for idx, e := range list {
		if err := wk.tick(); err != nil {
			return err
		}
		if e.weight < 0 {
			return negativeCount("arranged row")
		}
		if e.weight == 0 {
			continue
		}
		if int64(len(p.entry))+e.weight > 1<<31 {
			return errs.New(errs.ProgramLimitExceeded, "window partition has too many rows")
		}
		sortKey := e.key[e.layout.partLen:e.layout.sortEnd]
		if len(p.groupStart) == 0 || !bytes.Equal(sortKey, prevSort) {
			p.groupStart = append(p.groupStart, len(p.entry))
		}
		prevSort = sortKey
		for k := int64(0); k < e.weight; k++ {
			p.entry = append(p.entry, idx)
			p.group = append(p.group, len(p.groupStart)-1)
		}
	}
	p.n = len(p.entry)
	p.groupStart = append(p.groupStart, p.n)
	return nil
}

// sameOutputs reports whether position i of p and position j of q have
// identical function values.
func (p *windowPartition) sameOutputs(i int, q *windowPartition, j int) bool {
	for f := range p.vals {
		if !identical(p.vals[f][i], q.vals[f][j]) {
			return false
		}
	}
	return true
}
