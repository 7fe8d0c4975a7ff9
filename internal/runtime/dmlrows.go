package runtime

import (
	"context"
	"sync"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/zset"
)

// An UPDATE or DELETE that scans (its WHERE has no subquery) reads its
// candidate rows in key order, on the engine's workers when there are
// many (readStored), and evaluates its WHERE over them, and an UPDATE
// its SET over the rows kept, split into contiguous runs of the
// candidates in key order, one per worker. Its changes are then made in
// key order, as on one worker.
//
// Invariants:
//   - The rows kept and the new rows are those of the serial evaluation,
//     in the same order, for any number of workers: a run's results are
//     placed at its rows' positions.
//   - The error is that of the serial evaluation: each run stops at its
//     first error, and the error of the first run that failed is the one
//     of the first row in key order that fails. (Expressions are
//     deterministic, plan package, so evaluating rows past the first
//     failure changes nothing.) When ctx ended, its error is returned.

// inRuns calls fn(lo, hi) for contiguous runs [lo, hi) covering [0, n),
// one per worker of par when n is at least par.MinRows, else once, and
// returns the error of the first run that failed, or ctx's error when
// ctx ended.
func inRuns(ctx context.Context, n int, par diff.Parallelism, fn func(lo, hi int) error) error {
	w := min(par.Workers, n)
	if w <= 1 || n < par.MinRows {
		return fn(0, n)
	}
	failed := make([]error, w)
	var wg sync.WaitGroup
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failed[i] = fn(i*n/w, (i+1)*n/w)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	return nil
}

// keptRows returns the rows of candidates that where keeps, in order.
func keptRows(ctx context.Context, candidates zset.Batch, where plan.Expr, par diff.Parallelism) (zset.Batch, error) {
	keep := make([]bool, len(candidates))
	err := inRuns(ctx, len(candidates), par, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := ops.Interrupted(ctx, i); err != nil {
				return err
			}
			v, err := where.Eval(candidates[i].Row)
			if err != nil {
				return err
			}
			keep[i] = !v.IsNull() && v.Bool()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out zset.Batch
	for i, e := range candidates {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out, nil
}

// updatedRows returns the new row of each of matched, in order: sets
// applied to it (applySets).
func updatedRows(ctx context.Context, o *object, sets setList, matched zset.Batch, par diff.Parallelism) ([]zset.Row, error) {
	out := make([]zset.Row, len(matched))
	err := inRuns(ctx, len(matched), par, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := ops.Interrupted(ctx, i); err != nil {
				return err
			}
			nr, err := applySets(o, sets, matched[i].Row)
			if err != nil {
				return err
			}
			out[i] = nr
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
