package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync/atomic"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/spill"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// An ORDER BY over one relation, through filters and projections, is an
// external merge sort: the relation is read and filtered a chunk at a
// time, the rows go into a spill.Sorter with their sort keys' values,
// which writes a sorted run to disk each time it holds work_mem, and the
// runs are merged. The LIMIT, OFFSET and projections above the sort are
// applied while merging, so that memory holds one chunk, the sorter's
// buffer and the rows kept, not the relation. Rows and keys are written
// in the row encoding and compared after decoding as in memory
// (compareSort), so that a spilled sort orders exactly as an in-memory
// one: collations, NULLS FIRST/LAST, NaN and numerics included. Equal
// rows keep the order they were read in.

// rowIter is a query's rows in order, produced one at a time.
type rowIter struct {
	// next returns the next row; ok is false after the last.
	next func(ctx context.Context) (row zset.Row, ok bool, err error)
	// close releases the rows' temporary files.
	close func() error
}

// spilledSorts counts the sorts that wrote runs (for tests).
var spilledSorts atomic.Int64

// sortItem is a row being sorted and its sort keys' values.
type sortItem struct {
	keys []types.Value
	row  zset.Row
}

// sortCodec is how a spill.Sorter holds the rows of an ORDER BY by keys.
func sortCodec(keys []plan.SortKey) spill.Codec[sortItem] {
	cmp := func(a, b sortItem) int {
		for j, k := range keys {
			if c := compareSort(a.keys[j], b.keys[j], k); c != 0 {
				return c
			}
		}
		return 0
	}
	return spill.Codec[sortItem]{
		Compare: cmp,
		Append: func(dst []byte, it sortItem) []byte {
			k := zset.EncodeRow(nil, it.keys)
			dst = binary.AppendUvarint(dst, uint64(len(k)))
			dst = append(dst, k...)
			return zset.EncodeRow(dst, it.row)
		},
		Decode: func(b []byte) (sortItem, error) {
			n, w := binary.Uvarint(b)
			if w <= 0 || uint64(len(b)-w) < n {
				return sortItem{}, errs.New(errs.IOError, "temporary file: a sort run's record is damaged")
			}
			keys, err := zset.DecodeRow(b[w : w+int(n)])
			if err != nil {
				return sortItem{}, err
			}
			row, err := zset.DecodeRow(b[w+int(n):])
			return sortItem{keys: keys, row: row}, err
		},
		Size: func(it sortItem) int64 {
			n := entryBytes + int64(len(it.keys)+len(it.row))*valueBytes
			for _, v := range it.row {
				n += int64(len(v.Str()))
			}
			for _, v := range it.keys {
				n += int64(len(v.Str()))
			}
			return n
		},
		Sort: func(ctx context.Context, items []sortItem) error {
			idx := make([]int, len(items))
			for i := range idx {
				idx[i] = i
			}
			if err := sortStable(ctx, idx, func(a, b int) int { return cmp(items[a], items[b]) }); err != nil {
				return err
			}
			sorted := make([]sortItem, len(items))
			for i, j := range idx {
				sorted[i] = items[j]
			}
			copy(items, sorted)
			return nil
		},
	}
}

// orderedRows returns the rows of p, whose top (through projections and
// a LIMIT) is a Sort, as an external sort produces them (above); ok is
// false when p is not such a plan over one stored relation, or the
// statement has no temporary files.
func orderedRows(ctx context.Context, r state.Reader, cat *catalog, p plan.Node, asOf uint64) (it *rowIter, ok bool, err error) {
	if asOf != asOfNow || spill.From(ctx) == nil || memgov.From(ctx) == nil {
		return nil, false, nil
	}
	switch n := p.(type) {
	case *plan.Limit:
		in, ok, err := orderedRows(ctx, r, cat, n.Input, asOf)
		if !ok || err != nil {
			return nil, ok, err
		}
		skip, left := n.Offset, n.Count
		next := in.next
		in.next = func(ctx context.Context) (zset.Row, bool, error) {
			for ; skip > 0; skip-- {
				if _, ok, err := next(ctx); !ok || err != nil {
					return nil, false, err
				}
			}
			if left == 0 {
				return nil, false, nil
			}
			if left > 0 {
				left--
			}
			return next(ctx)
		}
		return in, true, nil
	case *plan.Project:
		if !hasOrder(n.Input) {
			return nil, false, nil
		}
		in, ok, err := orderedRows(ctx, r, cat, n.Input, asOf)
		if !ok || err != nil {
			return nil, ok, err
		}
		next := in.next
		in.next = func(ctx context.Context) (zset.Row, bool, error) {
			row, ok, err := next(ctx)
			if !ok || err != nil {
				return nil, ok, err
			}
			out := make(zset.Row, len(n.Exprs))
			for j, e := range n.Exprs {
				if out[j], err = e.Eval(row); err != nil {
					return nil, false, err
				}
			}
			return out, true, nil
		}
		return in, true, nil
	case *plan.Sort:
		return sortRelation(ctx, r, cat, n)
	}
	return nil, false, nil
}

// sortRelation sorts the rows of n's input, filters and projections over
// one stored relation, read a chunk at a time.
func sortRelation(ctx context.Context, r state.Reader, cat *catalog, n *plan.Sort) (*rowIter, bool, error) {
	if limit, linear := linearScan(n.Input); !linear || limit != nil {
		return nil, false, nil
	}
	c, err := diff.Build(n.Input, []byte{nsQuery}, true)
	if err != nil {
		return nil, false, err
	}
	rels := c.Relations()
	if len(rels) != 1 {
		return nil, false, nil
	}
	o := cat.lookup(rels[0])
	if o == nil || o.system != nil || o.unstored || o.kind != sql.Table && o.kind != sql.MaterializedView {
		return nil, false, nil
	}
	acct := memgov.From(ctx)
	sorter := spill.NewSorter(spill.From(ctx), acct, acct.WorkMem(), sortCodec(n.Keys))
	par := cat.parallelism()
	emit := func(chunk zset.Batch) error {
		out, err := stepChunk(ctx, c, state.NewOverlay(state.NewMemory()), map[string]zset.Batch{o.name: chunk}, par)
		if err != nil {
			return err
		}
		for _, e := range out {
			if e.Weight < 0 {
				return errs.New(errs.Internal, "internal error: query result has a negative weight")
			}
			keys := make([]types.Value, len(n.Keys))
			for j, k := range n.Keys {
				if keys[j], err = k.Expr.Eval(e.Row); err != nil {
					return err
				}
			}
			for range e.Weight {
				if err := sorter.Add(ctx, sortItem{keys: keys, row: e.Row}); err != nil {
					return err
				}
			}
		}
		acct.Charge(-batchBytes(out)) // in the sorter now, which charges it
		return nil
	}
	if err := relationChunks(ctx, r, o, scanUses(n.Input)[o.name], par, emit); err != nil {
		return nil, true, errors.Join(err, sorter.Close())
	}
	merged, err := sorter.Finish(ctx)
	if err != nil {
		return nil, true, errors.Join(err, sorter.Close())
	}
	if sorter.Runs() > 0 {
		spilledSorts.Add(1)
	}
	return &rowIter{
		next: func(ctx context.Context) (zset.Row, bool, error) {
			it, ok, err := merged.Next(ctx)
			return it.row, ok, err
		},
		close: sorter.Close,
	}, true, nil
}

// collectRows returns the rows of it, and releases it.
func collectRows(ctx context.Context, it *rowIter) (rows []zset.Row, err error) {
	defer func() { err = errors.Join(err, it.close()) }()
	acct := memgov.From(ctx)
	for {
		row, ok, err := it.next(ctx)
		if err != nil || !ok {
			return rows, err
		}
		acct.Charge(entryBytes)
		rows = append(rows, row)
		if err := ops.Interrupted(ctx, len(rows)); err != nil {
			return nil, err
		}
	}
}

// relationChunks passes o's current rows to emit a work_mem chunk at a
// time: read as they are scanned, or, when a filter fixes key ranges of
// o or o is cached, cut from the rows read.
func relationChunks(ctx context.Context, r state.Reader, o *object, uses [][]plan.Expr, par diff.Parallelism, emit func(zset.Batch) error) error {
	workMem := max(memgov.From(ctx).WorkMem(), 1<<20)
	cutting := func(rows zset.Batch, err error) error {
		if err != nil {
			return err
		}
		step := minChunkRows
		if len(rows) > 0 {
			step = max(minChunkRows, int(workMem/(entryBytes+int64(len(rows[0].Row))*valueBytes)))
		}
		for len(rows) > 0 {
			chunk := rows[:min(step, len(rows))]
			rows = rows[len(chunk):]
			if err := emit(chunk); err != nil {
				return err
			}
		}
		return nil
	}
	if ranges, ranged := scanRanges(o, uses); ranged {
		return cutting(relationRangesAt(ctx, r, o, asOfNow, ranges, par))
	}
	if cr, isCurrent := r.(currentReader); isCurrent {
		if rows, cached := cr.eng.cache.lookup(o.id); cached {
			return cutting(rows, nil)
		}
	}
	acct := memgov.From(ctx)
	var (
		chunk    zset.Batch
		limit    int
		rowBytes int64
		scanErr  error
		n        int
	)
	flush := func() error {
		err := emit(chunk)
		acct.Charge(-int64(len(chunk)) * rowBytes)
		clear(chunk)
		chunk = chunk[:0]
		return err
	}
	prefix := o.rowsPrefix()
	err := r.Scan(prefix, state.PrefixEnd(prefix), func(_, v []byte) bool {
		n++
		if scanErr = ops.Interrupted(ctx, n); scanErr != nil {
			return false
		}
		e, err := decodeStored(v)
		if err != nil {
			scanErr = err
			return false
		}
		if limit == 0 {
			rowBytes = entryBytes + int64(len(e.Row))*valueBytes
			for _, x := range e.Row {
				rowBytes += int64(len(x.Str()))
			}
			limit = max(minChunkRows, int(workMem/rowBytes))
		}
		acct.Charge(rowBytes)
		chunk = append(chunk, e)
		if len(chunk) >= limit {
			scanErr = flush()
		}
		return scanErr == nil
	})
	if err == nil {
		err = scanErr
	}
	if err == nil && len(chunk) > 0 {
		err = flush()
	}
	return err
}

// streamOrdered returns the RowStream of query plan p when orderedRows
// applies to it: the relation is read and sorted now, into runs that
// belong to the stream (the statement's own temporary files end with the
// statement, the stream's when it is closed), and the runs are merged as
// the caller asks for rows. ok is false when it does not apply.
func (s *Session) streamOrdered(ctx context.Context, r state.Reader, cat *catalog, p plan.Node) (rs *RowStream, ok bool, err error) {
	if !hasOrder(p) {
		return nil, false, nil
	}
	sctx, own := spill.WithStatement(ctx, s.eng.spill, session.TempFileLimitBytes(s.Setting("temp_file_limit")))
	it, ok, err := orderedRows(sctx, r, cat, p, asOfNow)
	if !ok || err != nil {
		return nil, ok, errors.Join(err, own.Close())
	}
	rs = &RowStream{sess: s, close: func() error { return errors.Join(it.close(), own.Close()) }}
	done := false
	rs.more = func() bool { return !done }
	rs.next = func(ctx context.Context) ([]zset.Row, error) {
		if done {
			return nil, io.EOF
		}
		var rows []zset.Row
		var size int64
		for len(rows) < streamChunk && size < streamChunkBytes {
			row, ok, err := it.next(ctx)
			if err != nil || !ok {
				done = true
				if cerr := rs.Close(); err == nil {
					err = cerr
				}
				if err == nil && len(rows) == 0 {
					err = io.EOF
				}
				if err != nil {
					return nil, err
				}
				break
			}
			rows = append(rows, row)
			size += entryBytes + int64(len(row))*valueBytes
		}
		return rows, nil
	}
	return rs, true, nil
}
