package runtime

import (
	"context"
	"sync/atomic"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// An ad-hoc query that aggregates (or filters and projects) one large
// relation is fed its rows a chunk at a time: its circuit is incremental,
// so the chunks stepped in turn as successive deltas leave the same
// result as the relation stepped at once, while memory holds one chunk of
// input and the operators' state (the groups), not the whole relation.
// The chunk is work_mem's worth of rows; a relation that fits in one is
// evaluated in one step, as any query is.

// chunkedSteps counts the chunks stepped (for tests).
var chunkedSteps atomic.Int64

// minChunkRows is the least number of rows a chunk holds.
const minChunkRows = 4096

// chunkable reports whether p, below its top ordering, reads one relation
// through filters, projections, aggregates and DISTINCT alone: operators
// whose result after a sequence of input deltas is their result over the
// deltas' sum.
func chunkable(p plan.Node) bool {
	switch n := p.(type) {
	case *plan.Scan:
		return true
	case *plan.Filter:
		return chunkable(n.Input)
	case *plan.Project:
		return chunkable(n.Input)
	case *plan.Aggregate:
		return chunkable(n.Input)
	case *plan.Distinct:
		return chunkable(n.Input)
	}
	return false
}

// runChunked evaluates circuit c, which reads o alone, over o's current
// rows a chunk at a time (see above). ok is false when it does not apply:
// o is cached, or a filter fixes key ranges of it.
func runChunked(ctx context.Context, r state.Reader, p plan.Node, c *diff.Circuit, o *object, par diff.Parallelism) (out zset.Batch, ok bool, err error) {
	if o.system != nil || o.unstored || o.kind != sql.Table && o.kind != sql.MaterializedView {
		return nil, false, nil
	}
	if _, ranged := scanRanges(o, scanUses(p)[o.name]); ranged {
		return nil, false, nil
	}
	if cr, isCurrent := r.(currentReader); isCurrent {
		if _, cached := cr.eng.cache.lookup(o.id); cached {
			return nil, false, nil
		}
	}
	acct := memgov.From(ctx)
	st := queryState(ctx)
	defer closeState(st)
	var (
		chunk    zset.Batch
		limit    = 0 // rows per chunk, set from the first row
		stepped  = false
		acc      zset.Batch
		consAt   = 0 // acc's length when last consolidated
		scanErr  error
		n        int
		rowBytes int64
	)
	step := func() error {
		d, err := stepChunk(ctx, c, st, map[string]zset.Batch{o.name: chunk}, par)
		if err != nil {
			return err
		}
		stepped = true
		chunkedSteps.Add(1)
		acc = append(acc, d...)
		if len(acc) > 2*consAt+minChunkRows {
			if acc, err = zset.Consolidate(acc); err != nil {
				return err
			}
			consAt = len(acc)
		}
		acct.Charge(-int64(len(chunk)) * rowBytes)
		chunk = chunk[:0]
		return nil
	}
	prefix := o.rowsPrefix()
	err = r.Scan(prefix, state.PrefixEnd(prefix), func(_, v []byte) bool {
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
			limit = max(minChunkRows, int(max(acct.WorkMem(), 1<<20)/rowBytes))
		}
		acct.Charge(rowBytes)
		chunk = append(chunk, e)
		if len(chunk) >= limit {
			if scanErr = step(); scanErr != nil {
				return false
			}
		}
		return true
	})
	if err == nil {
		err = scanErr
	}
	if err != nil {
		return nil, true, err
	}
	if !stepped {
		// One chunk: one step, as any query.
		out, err := c.StepParallel(ctx, st, map[string]zset.Batch{o.name: chunk}, par)
		return out, true, err
	}
	if len(chunk) > 0 {
		if err := step(); err != nil {
			return nil, true, err
		}
	}
	out, err = zset.Consolidate(acc)
	return out, true, err
}

// stripForQuery returns p without the Sorts and Limits at its top, which
// an ad-hoc query's caller applies (diff.Build leaves them out).
func stripForQuery(p plan.Node) plan.Node {
	for {
		switch n := p.(type) {
		case *plan.Sort:
			p = n.Input
		case *plan.Limit:
			p = n.Input
		default:
			return p
		}
	}
}
