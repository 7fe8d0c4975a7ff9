package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A materialized view's backfill (its first computation, from the whole
// contents of its inputs) is stepped in chunks, one relation after
// another, when its inputs hold more than backfillChunkRows rows: chunks
// of backfillChunkRows input rows at first, which grow as a large table
// change's do (chunkSizer, epochmemory.go) when the view's output for a
// chunk retracts what the chunks before it wrote (an aggregate's groups
// revised chunk after chunk), to at most chunkGrowth times that and, under
// a memory limit, to chunks whose rows take at most 1/chunkMemoryShare of
// it. The sizes follow from the inputs, the view's outputs and the limit
// alone, the same for any number of workers. Several steps of a circuit
// within one epoch are what a transaction block that reads between its
// writes does already, and the sum of the steps' outputs is the output of
// one step over everything. The outputs are consolidated before they are
// stored, so the view's rows and change log are the same as with one step. Between chunks the backfill
// reports its progress: in rockstream_catalog.progress while it runs, and
// as a NOTICE to the client ("backfill of v: 400000 of 1000000 rows") once
// it has run backfillNoticeAfter, then every backfillNoticeEvery.
var (
	backfillChunkRows   = 16_384 // as epochChunkRows: the operators' working memory is a chunk's
	backfillNoticeAfter = time.Second
	backfillNoticeEvery = time.Second
)

// stmtProgressKey carries a statement's progressReporter in its context.
type stmtProgressKey struct{}

// progressReporter is where a statement's long work reports: the
// session's notices and the engine's progress registry.
type progressReporter struct {
	eng     *Engine
	session uint64
	notice  func(msg string)
}

// withProgress returns ctx carrying s's progress reporter.
func (s *Session) withProgress(ctx context.Context) context.Context {
	return context.WithValue(ctx, stmtProgressKey{}, &progressReporter{
		eng:     s.eng,
		session: s.ID(),
		notice: func(msg string) {
			if s.onNotice != nil {
				s.onNotice(Notice{Severity: "NOTICE", SQLState: "00000", Message: msg})
			}
		},
	})
}

// progressEntry is one operation under way.
type progressEntry struct {
	id        uint64
	session   uint64
	kind      string
	object    string
	unit      string       // what done and total count: "rows", "bytes"
	phase     atomic.Value // string
	done      atomic.Int64
	total     atomic.Int64
	started   time.Time
	updatedNs atomic.Int64
}

// progressRegistry holds the operations under way, for
// rockstream_catalog.progress.
type progressRegistry struct {
	mu      sync.Mutex
	next    uint64
	entries map[uint64]*progressEntry
}

func (r *progressRegistry) start(session uint64, kind, object, unit, phase string) *progressEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[uint64]*progressEntry{}
	}
	r.next++
	e := &progressEntry{id: r.next, session: session, kind: kind, object: object, unit: unit, started: time.Now()}
	e.phase.Store(phase)
	e.updatedNs.Store(e.started.UnixNano())
	r.entries[e.id] = e
	return e
}

func (r *progressRegistry) end(e *progressEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, e.id)
}

func (r *progressRegistry) list() []*progressEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*progressEntry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *progressEntry) int { return int(a.id) - int(b.id) })
	return out
}

// backfill computes a new materialized view's first output from its
// inputs' contents in st.
func backfill(ctx context.Context, st state.Store, cat *catalog, o *object) (zset.Batch, error) {
	rep, _ := ctx.Value(stmtProgressKey{}).(*progressReporter)
	var entry *progressEntry
	if rep != nil {
		entry = rep.eng.progress.start(rep.session, "backfill", o.name, "rows", "reading inputs")
		defer rep.eng.progress.end(entry)
	}
	rels := o.circuit.Relations()
	deltas := make(map[string]zset.Batch, len(rels))
	var total int
	for _, r := range rels {
		if o.circuit.LookedUp(r) {
			// Read by key from its stored rows, which hold all of it.
			continue
		}
		src, pos := cat.input(r)
		if src == nil {
			return nil, errs.Newf(errs.Internal, "internal error: circuit reads unknown relation %q", r)
		}
		rows, err := sourceRows(ctx, st, src, o.name)
		if err != nil {
			return nil, err
		}
		deltas[r] = projectRows(rows, pos)
		total += len(deltas[r])
	}
	par := cat.parallelism()
	if sh := cat.shard(); sh != nil {
		// One step on the mesh, whatever this member's part: chunks would
		// differ between members. The output goes to its buckets' owners.
		out, err := o.circuit.StepParallel(ctx, st, deltas, sh.stepParallelism(par))
		if err == nil {
			out, err = sh.routeViewRows(ctx, o, out)
		}
		if err == nil {
			err = chargeEpochWrite(ctx, out, viewChangeWrites)
		}
		return out, err
	}
	if total <= backfillChunkRows {
		out, err := o.circuit.StepParallel(ctx, st, deltas, par)
		if err == nil {
			err = chargeEpochWrite(ctx, out, viewChangeWrites)
		}
		return out, err
	}
	started := time.Now()
	nextNotice := started.Add(backfillNoticeAfter)
	noticed := false
	report := func(done int) {
		if entry != nil {
			entry.done.Store(int64(done))
			entry.updatedNs.Store(time.Now().UnixNano())
		}
		if rep == nil {
			return
		}
		if now := time.Now(); !now.Before(nextNotice) || (noticed && done == total) {
			rep.notice(fmt.Sprintf("backfill of %s: %d of %d rows", o.name, done, total))
			noticed = true
			nextNotice = now.Add(backfillNoticeEvery)
		}
	}
	if entry != nil {
		entry.total.Store(int64(total))
		entry.phase.Store("computing")
	}
	var out zset.Batch
	done := 0
	par = chunkParallelism(par, total)
	limit := memgov.Process().Limit()
	for _, r := range rels {
		rows := deltas[r]
		if len(rows) == 0 {
			continue
		}
		sizer := newChunkSizer(backfillChunkRows, limit, rows[0].Row)
		for size := sizer.rows; len(rows) > 0; {
			n := min(len(rows), size)
			step, err := o.circuit.StepParallel(ctx, st, map[string]zset.Batch{r: rows[:n]}, par)
			if err == nil {
				// Held until the epoch commits, as the view's rows.
				err = chargeEpochWrite(ctx, step, viewChangeWrites)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, step...)
			size = sizer.next(n, retractions(rows[:n]), []zset.Batch{step})
			rows = rows[n:]
			done += n
			report(done)
		}
	}
	return zset.Consolidate(out)
}

// progressColumns are the columns of rockstream_catalog.progress: one row
// per long operation under way.
var progressColumns = []plan.Column{
	{Name: "id", Type: types.Of(types.Int8)},
	{Name: "session_id", Type: types.Of(types.Int8)},
	{Name: "kind", Type: types.Of(types.Text)},
	{Name: "object", Type: types.Of(types.Text)},
	{Name: "phase", Type: types.Of(types.Text)},
	{Name: "done", Type: types.Of(types.Int8)},
	{Name: "total", Type: types.Of(types.Int8)},
	{Name: "unit", Type: types.Of(types.Text)},
	{Name: "started", Type: types.Of(types.TimestampTZ)},
	{Name: "updated", Type: types.Of(types.TimestampTZ)},
}

func progressRows(e *Engine) zset.Batch {
	var out zset.Batch
	for _, p := range e.progress.list() {
		total := types.Null
		if n := p.total.Load(); n > 0 {
			total = types.MakeInt(types.Int8, n)
		}
		out = append(out, zset.Entry{Row: zset.Row{
			types.MakeInt(types.Int8, int64(p.id)),
			types.MakeInt(types.Int8, int64(p.session)),
			types.MakeText(p.kind), types.MakeText(p.object), types.MakeText(p.phase.Load().(string)),
			types.MakeInt(types.Int8, p.done.Load()), total, types.MakeText(p.unit),
			timeOrNull(p.started), timeOrNull(time.Unix(0, p.updatedNs.Load())),
		}, Weight: 1})
	}
	return out
}

// SetBackfillProgress sets the backfill's first chunk size (input rows a
// step) and how soon and how often it sends its progress notices, and returns
// the function that restores the defaults. It is for tests, which need
// many chunks and notices over little data.
func SetBackfillProgress(chunkRows int, noticeAfter, noticeEvery time.Duration) (restore func()) {
	c, a, e := backfillChunkRows, backfillNoticeAfter, backfillNoticeEvery
	backfillChunkRows, backfillNoticeAfter, backfillNoticeEvery = chunkRows, noticeAfter, noticeEvery
	return func() { backfillChunkRows, backfillNoticeAfter, backfillNoticeEvery = c, a, e }
}
