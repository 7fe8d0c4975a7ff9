package runtime

import (
	"context"
	"slices"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// An epoch's writes are held in memory until the epoch commits: in the
// epoch's overlay (internal/state) while its statements run, and again in
// the store's write batch while it commits, since the epoch commits as
// one atomic batch (DESIGN.md §6). What a statement adds to them is
// charged to its memory account, beside the rows its query and its
// operators hold (memory.go, internal/ops): the rows it writes to a table
// and the changes its views write (their contents and change logs). A
// write that takes the process past its --memory-limit thus stops the
// statement making it, with 53200, before the overlay grows further, and
// the epoch it would have joined commits without it. The charges are
// returned when the statement ends, which is after its epoch committed
// (a statement returns once its epoch is durable).
//
// The charge is an estimate from the first row's values, as the other
// charges are: per row written, the overlay's entry and the key and value
// bytes, twice (the overlay and the commit batch).

// Writes per changed row: a table row is one write; a view's change is
// its row and its change-log entry.
const (
	tableRowWrites   = 1
	viewChangeWrites = 2
)

// encodedValueBytes is what a value of a fixed-size kind takes encoded,
// with its tag, in a stored key or value.
const encodedValueBytes = 9

// epochRowBytes estimates what writing one row like row takes in memory
// until its epoch commits.
func epochRowBytes(row zset.Row) int64 {
	n := int64(stateEntryBytes)
	for _, v := range row {
		n += 2 * (encodedValueBytes + int64(len(v.Str())))
	}
	return n
}

// chargeEpochWrite charges ctx's account for writing delta's rows,
// writes times each, into the epoch, failing with 53200 when the
// governor has stopped the statement.
func chargeEpochWrite(ctx context.Context, delta zset.Batch, writes int) error {
	if len(delta) == 0 {
		return nil
	}
	return memgov.From(ctx).Grow(int64(len(delta)*writes) * epochRowBytes(delta[0].Row))
}

// chargeEpochRows is chargeEpochWrite for rows inserted as they are.
func chargeEpochRows(ctx context.Context, rows []zset.Row, writes int) error {
	if len(rows) == 0 {
		return nil
	}
	return memgov.From(ctx).Grow(int64(len(rows)*writes) * epochRowBytes(rows[0]))
}

// A large table delta is taken through its views a chunk at a time:
// epochChunkRows rows at a time, each chunk a complete propagation, as
// the statements of one epoch are. The views' circuits are incremental,
// so the chunks stepped in turn leave the same view contents as the
// delta stepped at once, while the operators' working memory (the
// aggregates' groups being evaluated, a join's matches, the exchanges
// between workers) holds one chunk's worth, not the delta's. The chunks
// stay in one epoch: nothing of them is visible before it commits, and
// a failed chunk fails the statement, whose writes are all discarded.
//
// The delta is stepped at once when a view reads the table by key (a
// lookup join): such a circuit reads the table's stored rows, which hold
// the whole delta from the first chunk on.
//
// A view's change log for the epoch then holds the chunks' changes one
// after another, as it holds those of the epoch's several statements.
var epochChunkRows = 16_384

// propagateTableDelta takes delta, just written to o's rows, through o's
// views; routed, when not nil, splits it between the workers
// (splitwrite.go). A delta larger than epochChunkRows goes in chunks, and
// a delta large enough to split between the workers has each of its
// chunks split too (chunkParallelism), each routed chunk split by the
// same key as the delta.
func propagateTableDelta(ctx context.Context, st state.Store, w *epochWrite, o *object, delta zset.Batch, routed map[string]diff.Routed) error {
	par := w.cat.parallelism()
	if len(delta) <= epochChunkRows || w.cat.lookedUpByView(o.name) {
		return propagateRouted(ctx, st, w, map[string]zset.Batch{o.name: delta}, routed, par)
	}
	par = chunkParallelism(par, len(delta))
	r, split := routed[o.name]
	for lo := 0; lo < len(delta); lo += epochChunkRows {
		if ctx.Err() != nil {
			return canceled(ctx)
		}
		chunk := delta[lo:min(lo+epochChunkRows, len(delta))]
		var parts map[string]diff.Routed
		if split {
			parts = map[string]diff.Routed{o.name: {Key: r.Key, Parts: splitDelta(chunk, r.Key, len(r.Parts))}}
		}
		if err := propagateRouted(ctx, st, w, map[string]zset.Batch{o.name: chunk}, parts, par); err != nil {
			return err
		}
	}
	return nil
}

// chunkParallelism is how the chunks of a change of total rows step on
// par's workers: when the whole change is large enough to split
// (par.MinRows), so is every chunk of it, however small. The chunks only
// bound the operators' working memory; stepping them one worker at a
// time would leave the other workers idle for all of a large change.
// A split step's output and writes are the unsplit step's for any number
// of workers (diff.Circuit.StepParallel), so this changes no stored byte.
func chunkParallelism(par diff.Parallelism, total int) diff.Parallelism {
	if par.Workers > 1 && total >= max(par.MinRows, 1) {
		par.MinRows = 1
	}
	return par
}

// SetEpochChunkRows sets the rows of a table delta's chunk and returns
// the function that restores the default: for tests, which need many
// chunks over little data.
func SetEpochChunkRows(n int) (restore func()) {
	old := epochChunkRows
	epochChunkRows = n
	return func() { epochChunkRows = old }
}

// propagatePending takes a transaction block's pending table deltas
// through their views at once when they are small, else one table's
// delta after another, each in chunks (propagateTableDelta).
func propagatePending(ctx context.Context, st state.Store, w *epochWrite, deltas map[string]zset.Batch) error {
	total := 0
	names := make([]string, 0, len(deltas))
	for name, d := range deltas {
		total += len(d)
		names = append(names, name)
		if w.cat.byName[name] == nil || w.cat.lookedUpByView(name) {
			// A view reads this table's stored rows, which hold every
			// table's delta already: they step together.
			total = 0
			break
		}
	}
	if total <= epochChunkRows {
		return propagateRouted(ctx, st, w, deltas, nil, w.cat.parallelism())
	}
	slices.Sort(names) // the same order on every run
	for _, name := range names {
		if err := propagateTableDelta(ctx, st, w, w.cat.byName[name], deltas[name], nil); err != nil {
			return err
		}
	}
	return nil
}
