package runtime

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Temporal filters: a materialized view whose WHERE (or JOIN ON, or
// HAVING) compares now() with its rows follows the clock (diff's
// temporal.go, ops.TemporalFilter). The runtime passes the clock in:
//
//   - Every epoch has a time, the engine's clock (Options.Clock) when the
//     epoch begins. Before a temporal view steps, the epoch's time is
//     written under ops.ClockKey (never backwards), in the epoch's own
//     writes, so the view's result is its query with now() fixed to that
//     time, and a restart resumes from the same clock.
//   - A view whose temporal filter has a change scheduled at or before
//     the epoch's time steps in that epoch even when none of its inputs
//     changed.
//   - The engine keeps a timer for the earliest scheduled change of all
//     views (runClockTimer) and runs an epoch of no statement (Tick) when
//     it is due. An engine given a clock of its own (Options.Clock) keeps
//     none: the program or test that moves the clock calls Tick.

// clockMicros is t as a timestamptz's microseconds since 1970 UTC.
func clockMicros(t time.Time) int64 { return t.UnixMicro() }

// checkTemporalNows refuses a view whose query reads now() anywhere but
// in the temporal filters of its circuit.
func checkTemporalNows(b *sql.Binder, c *diff.Circuit) error {
	read := map[any]bool{}
	for _, n := range c.TemporalNows() {
		read[n] = true
	}
	for _, u := range b.Nows {
		if !read[u.Now] {
			name := u.Name
			if name != "current_timestamp" {
				name += "()"
			}
			return errs.WithPosition(errs.Newf(errs.FeatureNotSupported,
				"%s is supported in a materialized view only in a temporal filter: a condition of WHERE, JOIN ON or HAVING that compares it (plus or minus constant intervals) with an expression of the rows by <, <=, > or >=, joined to the others by AND; elsewhere (the select list, a join's condition on both sides, an aggregate) its value would change as time passes", name), u.Now.Pos)
		}
	}
	return nil
}

// epochTime is the epoch's time, read from the engine's clock once; zero
// when the epoch has none.
func (w *epochWrite) epochTime() time.Time {
	if w.clock.IsZero() && w.now != nil {
		w.clock = w.now()
	}
	return w.clock
}

// setEpochClock writes the epoch's time under ops.ClockKey, unless the
// stored clock is already at or past it.
func setEpochClock(st state.Store, w *epochWrite) error {
	at := w.epochTime()
	if at.IsZero() {
		return nil
	}
	now := clockMicros(at)
	stored, ok, err := ops.ReadClock(st)
	if err != nil || ok && stored >= now {
		return err
	}
	return st.Set(ops.ClockKey, binary.BigEndian.AppendUint64(nil, uint64(now)))
}

// epochClock is the time temporal filters step at in w: the epoch's, or
// the stored clock when it is ahead.
func epochClock(st state.Reader, w *epochWrite) (int64, error) {
	stored, ok, err := ops.ReadClock(st)
	if err != nil {
		return 0, err
	}
	at := w.epochTime()
	if at.IsZero() {
		return stored, nil
	}
	now := clockMicros(at)
	if ok && stored > now {
		return stored, nil
	}
	return now, nil
}

// dueTemporalViews returns the temporal views of views with a change
// scheduled at or before the epoch's time, and writes the clock when
// there is any temporal view to step.
func dueTemporalViews(st state.Store, w *epochWrite, views []*object, deltas map[string]zset.Batch) (map[*object]bool, error) {
	var due map[*object]bool
	var now int64
	clocked := false
	for _, v := range views {
		if !v.circuit.Temporal() {
			continue
		}
		if !clocked {
			var err error
			if now, err = epochClock(st, w); err != nil {
				return nil, err
			}
			clocked = true
		}
		at, ok, err := v.circuit.NextDue(st)
		if err != nil {
			return nil, err
		}
		touched := ok && at <= now
		for _, r := range v.circuit.Relations() {
			touched = touched || len(deltas[baseRelation(r)]) > 0
		}
		if touched {
			if due == nil {
				due = map[*object]bool{}
				if err := setEpochClock(st, w); err != nil {
					return nil, err
				}
			}
			if ok && at <= now {
				due[v] = true
			}
		}
	}
	return due, nil
}

// nextTemporalDue returns the earliest change scheduled by the temporal
// filters of the committed views.
func (e *Engine) nextTemporalDue() (time.Time, bool, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.mu.closed {
		return time.Time{}, false, nil
	}
	var at int64
	found := false
	for _, v := range e.mu.cat.matviewsInOrder() {
		if !v.circuit.Temporal() {
			continue
		}
		d, ok, err := v.circuit.NextDue(e.mu.store)
		if err != nil {
			return time.Time{}, false, err
		}
		if ok && (!found || d < at) {
			at, found = d, true
		}
	}
	return time.UnixMicro(at), found, nil
}

// Tick runs an epoch of no statement at the engine's current time: the
// changes the temporal filters of the views scheduled up to that time
// reach the views (and the views that read them). An epoch with nothing
// due changes nothing and is not committed.
func (e *Engine) Tick(ctx context.Context) error {
	return e.submit(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		return nil, stepDueViews(ctx, st, w)
	})
}

// stepDueViews steps the temporal views of w's catalog that have changes
// due by the epoch's time, and the views that read them.
func stepDueViews(ctx context.Context, st state.Store, w *epochWrite) error {
	return propagate(ctx, st, w, map[string]zset.Batch{})
}

// clockTimerMax bounds how long the clock timer sleeps, so that a clock
// that jumps forward is noticed.
const clockTimerMax = time.Minute

// runClockTimer runs Tick when the earliest scheduled change of the
// views' temporal filters is due, until the engine stops. It wakes when
// an epoch commits (which may schedule an earlier change) and when its
// timer fires; it never polls while nothing is scheduled.
func (e *Engine) runClockTimer() {
	timer := time.NewTimer(clockTimerMax)
	defer timer.Stop()
	for {
		e.mu.RLock()
		committed := e.mu.committed
		e.mu.RUnlock()
		at, ok, err := e.nextTemporalDue()
		wait := clockTimerMax
		if err == nil && ok {
			if d := at.Sub(e.now()); d <= 0 {
				err := e.Tick(context.Background())
				if err == nil {
					continue
				}
				if errs.CodeOf(err) == errs.AdminShutdown {
					return
				}
				// A view failed to take its due changes (the epoch
				// changed nothing): try again a little later.
				wait = time.Second
			} else if d < wait {
				wait = d
			}
		}
		if err == nil && !ok {
			// Nothing is scheduled: wait for a commit, not a time.
			wait = 24 * time.Hour
		}
		timer.Reset(wait)
		select {
		case <-e.stop:
			return
		case <-committed:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}
