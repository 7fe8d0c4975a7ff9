package runtime

import (
	"context"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/zset"
)

// Sinks read a materialized view's change log: its contents once
// (ViewSnapshot), then its changes epoch range by epoch range
// (ChangesBetween), waiting for commits (CommitWait).

// ViewColumns returns a materialized view's columns.
func (e *Engine) ViewColumns(name string) ([]Column, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	o, err := e.matviewLocked(name)
	if err != nil {
		return nil, err
	}
	return outColumns(o.cols), nil
}

func (e *Engine) matviewLocked(name string) (*object, error) {
	o := e.mu.cat.lookup(name)
	if o == nil || o.kind != sql.MaterializedView {
		return nil, errs.Newf(errs.UndefinedTable, "materialized view %q does not exist", name)
	}
	return o, nil
}

// ViewSnapshot returns a materialized view's rows at the last committed
// epoch, and that epoch.
func (e *Engine) ViewSnapshot(name string) (zset.Batch, uint64, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	o, err := e.matviewLocked(name)
	if err != nil {
		return nil, 0, err
	}
	rows, err := readRelation(context.Background(), e.mu.store, o)
	return rows, e.mu.epoch, err
}

// ChangesBetween returns the changes of materialized view name committed
// in epochs (after, upTo], upTo being capped at the last committed epoch,
// and the capped upTo. It fails when after is older than the change-log
// horizon and than what the view's sinks hold (SinkDelivered).
func (e *Engine) ChangesBetween(name string, after, upTo uint64) ([]Change, uint64, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	o, err := e.matviewLocked(name)
	if err != nil {
		return nil, 0, err
	}
	frontier := e.mu.epoch
	if upTo > frontier {
		upTo = frontier
	}
	if after >= upTo {
		return nil, upTo, nil
	}
	if err := e.checkAsOf(after, frontier); err != nil {
		// Past the retention horizon, the changes a sink holds are kept.
		held, ok, herr := changeLogHold(e.mu.store, e.mu.cat, o.name)
		if herr != nil {
			return nil, 0, herr
		}
		if !ok || after < held {
			return nil, 0, err
		}
	}
	ch, err := readChanges(currentReader{e.mu.store, e}, o.id, after, upTo)
	return ch, upTo, err
}

// CommitWait returns the last committed epoch and a channel closed when
// the next epoch commits.
func (e *Engine) CommitWait() (uint64, <-chan struct{}) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mu.epoch, e.mu.committed
}
