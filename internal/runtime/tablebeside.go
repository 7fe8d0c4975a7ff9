package runtime

import (
	"context"
	"slices"

	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// A table's rows are written beside its views' steps.
//
// A write to a table that is not split between the workers (smaller than
// --parallel-min-rows) stores the table's rows and then steps the views
// over its delta. For a table with a key (a primary key, or rows stored
// by their value) the write reads the store for every row: the key check
// of an INSERT, the stored weight of a row. The views never read the table's stored rows (they keep
// their own state, fed by the delta) unless one reads the table by key
// (lookupjoin.go), which keeps the write in line; and the table write touches none of
// the views' keys, nor the table's watermark and lateness, which the
// views' side reads and advances. So on more than one worker the two run
// at once, the rows on another goroutine, each in an overlay of its own
// over the statement's, committed into it afterwards (rows first). The
// outcome is the one of writing first and stepping after: an error of the
// write (a duplicate key) is reported before any error of the views, and
// a failure of either leaves nothing of both. An append-only table's
// write is left in line: it reads nothing per row, and storing its rows
// costs about what committing the views' overlay into the statement's
// would add.

// besideMinRows is the smallest table delta, in rows, whose rows are
// written beside its views' steps: below it a goroutine's hand-off and
// the second overlay cost about what the write does. A variable so that
// tests can make every write take the concurrent path.
var besideMinRows = 64

// writeBesideViews stores delta's rows in o with write and takes delta
// through o's views (tableWritten), the two at once when the epoch's
// workers allow it. check, when not nil, runs before the views step and
// fails the statement after an error of the write, before one of the
// views.
func writeBesideViews(ctx context.Context, st state.Store, w *epochWrite, o *object, delta zset.Batch, write func(st state.Store) error, check func(st state.Reader) error) error {
	if w.cat.parallelism().Workers <= 1 || w.deferViews || len(delta) < besideMinRows || !w.cat.readByView(o.name) || w.cat.lookedUpByView(o.name) {
		if err := write(st); err != nil {
			return err
		}
		if check != nil {
			if err := check(st); err != nil {
				return err
			}
		}
		return tableWritten(ctx, st, w, o, delta)
	}
	rows, views := state.NewOverlay(st), state.NewOverlay(st)
	var werr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				werr = panicError(r)
			}
		}()
		werr = write(rows)
	}()
	// However the views' side ends (a panic included), the write has
	// finished reading st before the caller discards it.
	defer func() { <-done }()
	var verr error
	if check != nil {
		verr = check(views)
	}
	if verr == nil {
		verr = tableWritten(ctx, views, w, o, delta)
	}
	<-done
	if werr == nil {
		werr = verr
	}
	if werr != nil {
		rows.Discard()
		views.Discard()
		return werr
	}
	if err := rows.Commit(); err != nil {
		return err
	}
	return views.Commit()
}

// readByView reports whether a materialized view reads the relation.
func (c *catalog) readByView(name string) bool {
	for _, o := range c.byName {
		if o.kind == sql.MaterializedView && slices.Contains(o.deps, name) {
			return true
		}
	}
	return false
}
