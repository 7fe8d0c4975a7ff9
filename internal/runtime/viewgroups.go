package runtime

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Views that read none of each other's outputs step at the same time.
//
// A propagation visits the materialized views in creation order, which is
// a dependency order. It cuts that order into groups: a group ends just
// before the first view that reads a view of the group. The views of one
// group read only the relations' deltas and the views' outputs of earlier
// groups, which are final when the group starts, and each writes only its
// own keys (its operators' state, its rows, its row count, its change
// log), so on more than one worker they step concurrently, each in an
// overlay of its own over the statement's. Their overlays are then
// committed into the statement's, and their change logs written, in
// creation order; a failure is the first failing view's in creation
// order, as when they step one after another, and leaves nothing of the
// group behind. The store written is the same for any number of workers.

// viewsMinRows is the smallest input, in delta rows, on which the views
// of a group step concurrently (when the engine's --parallel-min-rows is
// lower still, that): below it, handing a view to another goroutine and
// committing its overlay cost about what the view's step does. A
// variable so that tests can make every group take the concurrent path.
var viewsMinRows = 64

// testHookStepView, when set by a test, is called with a view's name
// before the view steps.
var testHookStepView func(view string)

// propagateViews is propagateRouted's loop over the views: it steps the
// touched views, group by group, and stores and logs their deltas.
func propagateViews(ctx context.Context, st state.Store, w *epochWrite, deltas map[string]zset.Batch, routed map[string]diff.Routed, par diff.Parallelism) error {
	views := w.cat.matviewsInOrder()
	due, err := dueTemporalViews(st, w, views, deltas)
	if err != nil {
		return err
	}
	for i := 0; i < len(views); {
		group, rows, next := viewGroup(views, i, deltas, due, w.stepAll)
		i = next
		if par.Workers > 1 && len(group) > 1 && rows >= min(viewsMinRows, max(par.MinRows, 1)) {
			if err := stepViewsConcurrently(ctx, st, w, group, deltas, routed, par); err != nil {
				return err
			}
			continue
		}
		for _, v := range group {
			out, enc, err := stepView(ctx, st, w.cat, v, deltas, routed, par)
			if err != nil {
				return err
			}
			if err := logViewDelta(ctx, st, w, v, out, enc, deltas, par); err != nil {
				return err
			}
		}
	}
	return releaseClosedWindows(st, w, deltas)
}

// viewGroup returns the group of views starting at views[from]: those of
// them that the deltas touch, up to (not including) the first view that
// reads a view of the group; the input rows the group's views read; and
// the index of the view after the group. A view in due (a temporal view
// with a scheduled change due, temporal.go) is touched whatever the deltas,
// and with all (shard mode's every view stepping in every epoch) so is
// every view.
func viewGroup(views []*object, from int, deltas map[string]zset.Batch, due map[*object]bool, all bool) ([]*object, int, int) {
	var group []*object
	rows := 0
	i := from
	for ; i < len(views); i++ {
		v := views[i]
		touched, reads, in := all || due[v], false, 0
		for _, r := range v.circuit.Relations() {
			for _, g := range group {
				reads = reads || g.name == r
			}
			if n := len(deltas[baseRelation(r)]); n > 0 {
				touched = true
				in += n
			}
		}
		if reads {
			break
		}
		if touched {
			group = append(group, v)
			rows += in
		}
	}
	return group, rows, i
}

// stepView steps v's circuit over the deltas and applies its output to
// v's rows and row count in st, returning the output and, for logViewDelta,
// its encodings (nil when v has a primary key).
func stepView(ctx context.Context, st state.Store, cat *catalog, v *object, deltas map[string]zset.Batch, routed map[string]diff.Routed, par diff.Parallelism) (zset.Batch, *encodedDelta, error) {
	if testHookStepView != nil {
		testHookStepView(v.name)
	}
	in, _ := circuitDeltas(cat, v.circuit, deltas)
	sh := cat.shard()
	out, err := v.circuit.StepRouted(ctx, st, in, routed, sh.stepParallelism(par))
	if err == nil {
		out, err = sh.routeViewRows(ctx, v, out)
	}
	if err != nil {
		return nil, nil, viewError(v, err)
	}
	if len(out) == 0 {
		return nil, nil, nil
	}
	enc := encodeDelta(v, out)
	if n := viewWriters(par, len(out)); n > 1 || enc == nil {
		err = applyDeltaSplit(st, v.rowsPrefix(), out, v.keyOf(), n)
	} else {
		err = applyEncodedDelta(st, v.rowsPrefix(), out, enc)
	}
	if err == nil {
		err = indexWritten(st, cat, v, out)
	}
	if err == nil {
		err = addViewRows(st, v, out)
	}
	if err != nil {
		enc.release()
		return nil, nil, err
	}
	return out, enc, nil
}

// logViewDelta writes v's output to its change log and passes it on to
// the views that read v. It releases enc, out's encodings from stepView.
func logViewDelta(ctx context.Context, st state.Store, w *epochWrite, v *object, out zset.Batch, enc *encodedDelta, deltas map[string]zset.Batch, par diff.Parallelism) error {
	defer enc.release()
	if len(out) == 0 {
		return nil
	}
	if err := chargeEpochWrite(ctx, out, viewChangeWrites); err != nil {
		return err
	}
	if err := logChangesOn(st, w, v, out, enc, viewWriters(par, len(out))); err != nil {
		return err
	}
	deltas[v.name] = out
	return nil
}

// viewRun is one view's step in a group stepping concurrently.
type viewRun struct {
	ov  *state.Overlay
	out zset.Batch
	enc *encodedDelta
	err error
}

// stepViewsConcurrently steps a group's views on up to par.Workers
// goroutines, the calling one included: each takes the next view not yet
// taken, in creation order, so a goroutine slow to start leaves its share
// to the others. Once a view has failed, the views after it are not
// stepped (their outcome cannot change the error), but those before it
// are, since the error reported is the first in creation order.
func stepViewsConcurrently(ctx context.Context, st state.Store, w *epochWrite, group []*object, deltas map[string]zset.Batch, routed map[string]diff.Routed, par diff.Parallelism) error {
	runs := make([]viewRun, len(group))
	var next atomic.Int64
	var failedAt atomic.Int64
	failedAt.Store(int64(len(group)))
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(group) {
				return
			}
			if int64(i) > failedAt.Load() {
				continue
			}
			r := &runs[i]
			r.ov = state.NewOverlay(st)
			r.out, r.enc, r.err = stepViewGuarded(ctx, r.ov, w.cat, group[i], deltas, routed, par)
			if r.err != nil {
				for {
					f := failedAt.Load()
					if int64(i) >= f || failedAt.CompareAndSwap(f, int64(i)) {
						break
					}
				}
			}
		}
	}
	var wg sync.WaitGroup
	for range min(par.Workers, len(group)) - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	work()
	wg.Wait()
	var err error
	for i := range runs {
		if err == nil && runs[i].err != nil {
			err = runs[i].err
		}
	}
	if err != nil {
		for i := range runs {
			if runs[i].ov != nil {
				runs[i].ov.Discard()
			}
		}
		return err
	}
	for i, v := range group {
		if err := runs[i].ov.Commit(); err != nil {
			return err
		}
		if err := logViewDelta(ctx, st, w, v, runs[i].out, runs[i].enc, deltas, par); err != nil {
			return err
		}
	}
	return nil
}

// stepViewGuarded is stepView turning a panic into the view's internal
// error (SQLSTATE XX000), as guard does for a statement: on a goroutine
// of its own, an unrecovered panic would end the process.
func stepViewGuarded(ctx context.Context, st state.Store, cat *catalog, v *object, deltas map[string]zset.Batch, routed map[string]diff.Routed, par diff.Parallelism) (out zset.Batch, enc *encodedDelta, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, enc, err = nil, nil, panicError(r)
		}
	}()
	return stepView(ctx, st, cat, v, deltas, routed, par)
}
