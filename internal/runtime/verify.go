package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/zset"
)

// VerifyViews checks that every materialized view's stored contents equal
// its query evaluated from scratch over the committed state, and that
// every index holds exactly its relation's rows (VerifyIndexes). It
// returns an error naming the first view or index that differs. A view
// over an unmaterialized table cannot be recomputed (its input keeps no
// rows) and is not checked.
func (e *Engine) VerifyViews() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.verifyViewsLocked()
}

func (e *Engine) verifyViewsLocked() error {
	if e.shard != nil {
		// A view's query over this shard's rows is not its part of the
		// view.
		return unsupportedInShard("verifying views")
	}
	// A view with a temporal filter is its query at the time its filters
	// last stepped: the stored clock (temporal.go).
	clock, clocked, err := ops.ReadClock(e.mu.store)
	if err != nil {
		return err
	}
	for _, v := range e.mu.cat.matviewsInOrder() {
		if readsUnstored(e.mu.cat, v) {
			continue
		}
		// Through the view's images: its names mean what they meant
		// when it was created, whatever the search path was then.
		bc := viewCatalog(e.mu.cat, v, v.inputs)
		bc.record = false
		b := sql.Binder{Cat: bc, Zone: v.zone}
		if clocked && v.circuit.Temporal() {
			at := time.UnixMicro(clock)
			b.Clock = sql.Clock{Transaction: at, Statement: at, Zone: v.zone}
		}
		p, err := b.Query(v.query)
		if err == nil {
			limitRecursion(p, v.maxIterations)
		}
		if err != nil {
			return fmt.Errorf("view %s: rebinding: %w", v.name, err)
		}
		rows, err := runQuery(context.Background(), e.mu.store, e.mu.cat, p)
		if err != nil {
			return fmt.Errorf("view %s: recomputing: %w", v.name, err)
		}
		want := make(zset.Batch, len(rows))
		for i, r := range rows {
			want[i] = zset.Entry{Row: r, Weight: 1}
		}
		if want, err = zset.Consolidate(want); err != nil {
			return err
		}
		got, err := readRelation(context.Background(), e.mu.store, v)
		if err != nil {
			return err
		}
		// The difference must be empty.
		diff := append(append(zset.Batch(nil), got...), negate(want)...)
		if diff, err = zset.Consolidate(diff); err != nil {
			return err
		}
		if len(diff) > 0 {
			return errs.Newf(errs.Internal, "view %s differs from its recomputation in %d rows (first: %v with weight %d)",
				v.name, len(diff), diff[0].Row, diff[0].Weight)
		}
	}
	return verifyIndexes(context.Background(), e.mu.store, e.mu.cat)
}

func negate(b zset.Batch) zset.Batch {
	out := make(zset.Batch, len(b))
	for i, e := range b {
		out[i] = zset.Entry{Row: e.Row, Weight: -e.Weight}
	}
	return out
}
