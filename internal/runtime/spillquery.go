package runtime

import (
	"context"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/zset"

	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/spill"
	"github.com/rockstream/rockstream/internal/state"
)

// An ad-hoc query's operator state (the groups of an aggregate, the rows
// DISTINCT has seen, a join's arrangements) is a spill.Store: past the
// statement's work_mem it moves to disk, into a directory of the
// statement's in the engine's spill area, which is removed when the
// statement ends (internal/spill). A large ORDER BY sorts the same way,
// in runs (spillsort.go).

// openSpillArea returns the engine's spill area: opts.TempDir, emptied
// now, or a directory of its own under opts.TempParent.
func openSpillArea(opts Options) (*spill.Area, error) {
	if opts.TempDir != "" {
		return spill.OpenArea(opts.TempDir)
	}
	return spill.NewTempArea(opts.TempParent), nil
}

// openScratch gives the statement under ctx its temporary files, with
// the session's temp_file_limit.
func (s *Session) openScratch(ctx context.Context) (context.Context, *spill.Statement) {
	return spill.WithStatement(ctx, s.eng.spill, s.resolved().tempFileLimit)
}

// spillingState returns the operator state of an ad-hoc query under ctx
// that spills past work_mem, or nil when the statement may not spill (it
// has no memory account or no temporary files).
func spillingState(ctx context.Context) *spill.Store {
	acct, stmt := memgov.From(ctx), spill.From(ctx)
	if acct == nil || stmt == nil {
		return nil
	}
	return spill.NewStore(stmt, acct, acct.WorkMem())
}

// closeState releases an ad-hoc query's operator state once its circuit
// has stepped for the last time.
func closeState(st state.Store) error {
	if s, ok := st.(*spill.Store); ok {
		return s.Close()
	}
	return nil
}

// stepChunk steps c over one chunk of a query's input. What the step's
// operators charged for the rows they emitted (internal/ops) is garbage
// once the step is over, and a query stepped over millions of rows in
// chunks would otherwise hold the sum of every step's charges: it is
// returned, and only the output kept and the growth of a spilling state
// (charged by the store itself) stay charged. A state that charges its
// writes otherwise (chargedStore) keeps every charge.
func stepChunk(ctx context.Context, c *diff.Circuit, st state.Store, deltas map[string]zset.Batch, par diff.Parallelism) (zset.Batch, error) {
	acct := memgov.From(ctx)
	if _, charged := st.(*chargedStore); charged || acct == nil {
		return c.StepParallel(ctx, st, deltas, par)
	}
	held := func() int64 {
		if s, ok := st.(*spill.Store); ok {
			return s.MemBytes()
		}
		return 0
	}
	u0, h0 := acct.Used(), held()
	out, err := c.StepParallel(ctx, st, deltas, par)
	if n := acct.Used() - u0 - (held() - h0); n > 0 {
		acct.Charge(-n)
	}
	acct.Charge(batchBytes(out))
	return out, err
}
