package runtime

import (
	"context"
	"sync/atomic"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/spill"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// An ad-hoc query that joins stored relations (or combines them with
// UNION, INTERSECT, EXCEPT) is fed its relations a work_mem chunk at a
// time, one relation after another, as successive changes: the circuit is
// incremental, so the result is the same as one step over every relation
// at once, while memory holds one chunk and the operators' state, which
// spills past work_mem (spillquery.go) — a join's arrangements of both
// sides, the build side included, as a grace hash join would. The
// relations are fed in the reverse order of the plan's, so that the
// inner (right) side of an outer, semi or anti join is complete before
// the rows it decides about arrive, and the join's output does not churn.

// joinChunkedSteps counts the chunks stepped this way (for tests).
var joinChunkedSteps atomic.Int64

// multiChunkable reports whether p, below its top ordering, is made of
// scans, filters, projections, joins, aggregates, DISTINCT and set
// operations alone.
func multiChunkable(p plan.Node) bool {
	switch n := p.(type) {
	case *plan.Scan:
		return true
	case *plan.Filter, *plan.Project, *plan.Aggregate, *plan.Distinct, *plan.Join, *plan.Union, *plan.SetOp:
		for _, in := range n.Inputs() {
			if !multiChunkable(in) {
				return false
			}
		}
		return true
	}
	return false
}

// runChunkedRelations evaluates circuit c over its relations' current
// rows a chunk at a time (see above). ok is false when it does not apply:
// the statement cannot spill, a relation is not a stored table or
// materialized view read whole, or a join looks its inner side up by key
// (indexjoin.go), which reads less.
func runChunkedRelations(ctx context.Context, r state.Reader, cat *catalog, p plan.Node, c *diff.Circuit) (out zset.Batch, ok bool, err error) {
	rels := c.Relations()
	if len(rels) < 2 || spill.From(ctx) == nil || !multiChunkable(stripForQuery(p)) {
		return nil, false, nil
	}
	uses := scanUses(p)
	objs := make([]*object, len(rels))
	for i, name := range rels {
		o, pos := cat.input(name)
		if o == nil || pos != nil || o.system != nil || o.unstored || o.kind != sql.Table && o.kind != sql.MaterializedView {
			return nil, false, nil
		}
		if chooseAccess(cat, o, uses[name], true).ix != nil {
			return nil, false, nil // an index reads less
		}
		objs[i] = o
	}
	if !fullScansOnly.Load() && len(findLookupJoins(cat, p, uses)) > 0 {
		return nil, false, nil
	}
	st := queryState(ctx)
	defer closeState(st)
	par := cat.parallelism()
	var acc zset.Batch
	consAt, stepped := 0, false
	for i := len(rels) - 1; i >= 0; i-- {
		name := rels[i]
		err := relationChunks(ctx, r, objs[i], uses[name], par, func(chunk zset.Batch) error {
			d, err := stepChunk(ctx, c, st, map[string]zset.Batch{name: chunk}, par)
			if err != nil {
				return err
			}
			joinChunkedSteps.Add(1)
			stepped = true
			acc = append(acc, d...)
			if len(acc) > 2*consAt+minChunkRows {
				if acc, err = zset.Consolidate(acc); err != nil {
					return err
				}
				consAt = len(acc)
			}
			return nil
		})
		if err != nil {
			return nil, true, err
		}
	}
	if !stepped {
		// Every relation is empty: one step of nothing, which still
		// makes a global aggregate's row (count(*) = 0), as any query.
		out, err := stepChunk(ctx, c, st, map[string]zset.Batch{}, par)
		return out, true, err
	}
	out, err = zset.Consolidate(acc)
	return out, true, err
}
