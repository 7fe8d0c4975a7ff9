package runtime

import (
	"context"
	"fmt"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/zset"
)

// VerifyViews checks that every materialized view's stored contents equal
// its query evaluated from scratch over the committed state. It returns
// an error naming the first view that differs.
func (e *Engine) VerifyViews() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.verifyViewsLocked()
}

func (e *Engine) verifyViewsLocked() error {
	for _, v := range e.mu.cat.matviewsInOrder() {
		b := sql.Binder{Cat: e.mu.cat}
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
	return nil
}

func negate(b zset.Batch) zset.Batch {
	out := make(zset.Batch, len(b))
	for i, e := range b {
		out[i] = zset.Entry{Row: e.Row, Weight: -e.Weight}
	}
	return out
}
