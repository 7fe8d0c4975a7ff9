package runtime

import (
	"context"
	"maps"
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
//
// Chunks grow where they cost work: a view whose output a later chunk
// revises (an aggregate's group, a DISTINCT row) retracts, in every
// chunk, what the chunks before wrote, so a change of n rows through a
// view of g groups revisits up to g groups per chunk: state read and
// written, the view's row replaced, two change-log entries, where one
// step revisits each group once. A 1M-row COPY under a 10k-group view in
// chunks of 16,384 rows did 61 times the group work of one step (and held
// 1.2M change-log entries in place of 10k). So after each chunk the
// retractions its views emitted beyond the chunk's own (the rows an
// earlier chunk, or the store, gave them) are counted, and when they are
// at least 1/chunkChurnRatio of the chunk's rows the next chunk is large
// enough for as many to be that fraction of it, and at least twice as
// large, up to chunkGrowth times epochChunkRows, and, under a memory
// limit, to chunks whose rows written take at most 1/chunkMemoryShare of
// the limit (epochRowBytes of the delta's first row). A view that only
// adds rows (a projection, a filter, a join's insertions) never grows
// them, and neither does one with few groups. The sizes follow from the
// deltas, the views' outputs and the configured limit alone, which are
// the same for any number of workers, so the chunks and the change logs
// are too.
var epochChunkRows = 16_384

const (
	// chunkChurnRatio: a chunk whose views' excess retractions reach
	// 1/chunkChurnRatio of its rows is followed by a larger one.
	// Revisiting a group costs several times what one input row does,
	// so at that ratio the revisits are still a good part of the work.
	chunkChurnRatio = 64
	// chunkGrowth bounds a grown chunk to chunkGrowth × epochChunkRows
	// rows (1M by default), and so the operators' working memory.
	chunkGrowth = 64
	// chunkMemoryShare: under a memory limit, a grown chunk's rows take
	// at most 1/chunkMemoryShare of it as written (the operators' working
	// memory is a few times that). Under 192MB no chunk grows.
	chunkMemoryShare = 128
)

// chunkSizer chooses the size of each chunk of one table delta, or of
// one input of a backfill (backfill.go), by the rule above.
type chunkSizer struct{ rows, most int }

// newChunkSizer sizes chunks of first rows at first, of rows like row,
// under the memory limit (0: none).
func newChunkSizer(first int, limit int64, row zset.Row) chunkSizer {
	most := chunkGrowth * first
	if limit > 0 {
		most = min(most, max(first, int(limit/chunkMemoryShare/epochRowBytes(row))))
	}
	return chunkSizer{rows: first, most: most}
}

// next returns the rows of the chunk after one of n rows, of which
// retracted had a negative weight, whose views output outs.
func (c *chunkSizer) next(n, retracted int, outs []zset.Batch) int {
	excess := 0
	for _, out := range outs {
		excess += max(0, retractions(out)-retracted)
	}
	if excess*chunkChurnRatio >= n {
		c.rows = min(max(2*c.rows, excess*chunkChurnRatio), c.most)
	}
	return c.rows
}

// retractions counts b's rows of negative weight.
func retractions(b zset.Batch) int {
	n := 0
	for _, e := range b {
		if e.Weight < 0 {
			n++
		}
	}
	return n
}

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
	sizer := newChunkSizer(epochChunkRows, memgov.Process().Limit(), delta[0].Row)
	for lo, size := 0, sizer.rows; lo < len(delta); {
		if ctx.Err() != nil {
			return canceled(ctx)
		}
		chunk := delta[lo:min(lo+size, len(delta))]
		lo += len(chunk)
		var parts map[string]diff.Routed
		if split {
			parts = map[string]diff.Routed{o.name: {Key: r.Key, Parts: splitDelta(chunk, r.Key, len(r.Parts))}}
		}
		deltas := map[string]zset.Batch{o.name: chunk}
		if err := propagateRouted(ctx, st, w, deltas, parts, par); err != nil {
			return err
		}
		if lo < len(delta) {
			// deltas now holds the views' outputs beside the chunk.
			delete(deltas, o.name)
			size = sizer.next(len(chunk), retractions(chunk), slices.Collect(maps.Values(deltas)))
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
	if total <= epochChunkRows || w.stepAll {
		// In shard mode, in one piece: chunks would differ between members.
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
