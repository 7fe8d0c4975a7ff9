package runtime

import (
	"context"
	"slices"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// A transaction block whose statements so far are plain INSERTs does not
// take the engine's write token: its rows wait in the block, and COMMIT
// hands them to the group committer, which applies them in an epoch
// shared with other sessions' statements. Other writers therefore do not
// wait for the block's client between its statements.
//
// Invariants:
//
//   - Deferred statements run as they would in the block's epoch, against
//     the committed state of the moment plus the block's own rows (a
//     private overlay, read under the engine's read lock), so their
//     results and errors (a NOT NULL column, a duplicate key within the
//     block or with a committed row) come at the statement, as in
//     PostgreSQL. What they recorded is each table's delta.
//   - Only statements whose effect is that delta, whatever commits in
//     between, are deferred: INSERT ... VALUES without ON CONFLICT or
//     subqueries, into tables without an event time. Anything else in the
//     block (a read, another write, DDL) first takes the write token and
//     applies the deferred deltas to the block's epoch, and the block then
//     runs as before.
//   - Applying the deltas re-checks what may have changed since: a primary
//     key another session committed in between fails the statement (23505)
//     that applies them, COMMIT or the first statement that took the
//     token; a table dropped or replaced in between fails it with 42P01 or
//     40001. Nothing of the block is then applied.
type deferredWrites struct {
	// w is the epoch the statements ran in: its overlay holds the block's
	// rows over the committed state, and, since it defers views, its
	// pending map the table deltas.
	w *epochWrite
	// tables are the tables written, by name, as the statements saw them.
	tables map[string]*object
}

// deferrable reports whether an INSERT may run deferred in the session's
// block: the block holds no write token, and the statement is a plain
// INSERT ... VALUES (or DEFAULT VALUES) into a table without an event
// time.
func (s *Session) deferrable(o *object, conflict, subqueries bool) bool {
	return s.txn != nil && s.txn.Block() && s.txn.w == nil && !s.txn.readOnlyTxn() &&
		!conflict && !subqueries && o != nil && o.kind == sql.Table && o.lateness == nil && o.system == nil
}

// writeDeferred runs fn, an INSERT's writes into table o, in the block's
// deferred epoch.
func (s *Session) writeDeferred(o *object, fn writeFunc) error {
	if s.eng.shard != nil {
		return errBlockWriteInShard
	}
	s.eng.mu.RLock()
	defer s.eng.mu.RUnlock()
	if s.eng.mu.failed != nil {
		return s.eng.mu.failed
	}
	d := s.txn.deferred
	if d == nil {
		d = &deferredWrites{
			w:      &epochWrite{ov: state.NewOverlay(s.eng.mu.store), logSeq: map[uint64]uint64{}, deferViews: true},
			tables: map[string]*object{},
		}
	}
	// Each statement sees the catalog committed when it runs.
	d.w.cat = s.eng.mu.cat
	if err := d.w.run(fn); err != nil {
		return err
	}
	s.txn.deferred = d
	d.tables[o.name] = o
	return nil
}

// apply applies the deferred deltas to epoch w (whose views are
// maintained as w's are), re-checking primary keys and the tables.
func (d *deferredWrites) apply(ctx context.Context, st state.Store, w *epochWrite) error {
	names := make([]string, 0, len(d.w.pending))
	for name := range d.w.pending {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		was := d.tables[name]
		o := w.cat.lookup(name)
		switch {
		case o == nil:
			return errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
		case o.id != was.id:
			return errs.Newf(errs.SerializationFailure, "could not serialize access: table %q was dropped and created again by another transaction", name)
		}
		delta, err := zset.Consolidate(d.w.pending[name])
		if err != nil {
			return err
		}
		if len(o.pk) > 0 {
			keyOf, prefix := o.keyOf(), o.rowsPrefix()
			var key []byte
			for _, e := range delta {
				key = keyOf(key, prefix, e.Row)
				if _, found, err := st.Get(key); err != nil {
					return err
				} else if found {
					return o.uniqueViolation(e.Row)
				}
			}
		}
		if err := writeTable(ctx, st, w, o, delta); err != nil {
			return err
		}
	}
	return nil
}

// takeWriteToken ends the block's deferred mode: it takes the write token,
// starts the block's epoch and applies the deferred deltas to it. A
// failure leaves the block holding the token with nothing applied, for
// its ROLLBACK to release.
func (s *Session) takeWriteToken(ctx context.Context) error {
	w, err := s.eng.beginBlock(ctx)
	if err != nil {
		return err
	}
	s.txn.w = w
	d := s.txn.deferred
	s.txn.deferred = nil
	if d == nil {
		return nil
	}
	return w.run(func(st state.Store, w *epochWrite) (*catalog, error) {
		return nil, d.apply(ctx, st, w)
	})
}

// commitDeferred commits a block that wrote only deferred rows: the group
// committer applies them in its next epoch, which it returns.
func (s *Session) commitDeferred(ctx context.Context, d *deferredWrites) (uint64, error) {
	return s.eng.submitAt(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		return nil, d.apply(ctx, st, w)
	})
}
