package session

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
)

// Cursor is an open cursor as the session keeps it: what it reads is the
// engine's; the session only closes it.
type Cursor interface {
	// Close releases what the cursor holds.
	Close()
}

// Cursors are a session's open cursors, by name. Cursors live in a
// transaction block and are closed when it ends, as PostgreSQL's cursors
// WITHOUT HOLD are, and those declared after a savepoint when the block
// rolls back to it. The zero value has none.
type Cursors[C Cursor] struct {
	open map[string]C
}

// Cursor option bits of DeclareCursorStmt.Options (PostgreSQL's
// CURSOR_OPT_*).
const (
	cursorBinary = 0x01
	cursorScroll = 0x02
	cursorHold   = 0x20
)

// CheckDeclare checks a DECLARE's name and options; inBlock says whether
// a transaction block is open.
func (c *Cursors[C]) CheckDeclare(d *pg.DeclareCursorStmt, inBlock bool) error {
	_, exists := c.open[d.Portalname]
	switch {
	case !inBlock:
		return errs.New(errs.NoActiveTransaction, "DECLARE CURSOR can only be used in transaction blocks")
	case d.Options&cursorHold != 0:
		return errs.New(errs.FeatureNotSupported, "DECLARE CURSOR WITH HOLD is not supported; cursors are closed at the end of their transaction block")
	case d.Options&cursorScroll != 0:
		return errs.New(errs.FeatureNotSupported, "SCROLL cursors are not supported; cursors scan forward only")
	case d.Options&cursorBinary != 0:
		return errs.New(errs.FeatureNotSupported, "DECLARE BINARY CURSOR is not supported")
	case exists:
		return errs.Newf(errs.DuplicateCursor, "cursor %q already exists", d.Portalname)
	}
	return nil
}

// Add opens cursor cur as name.
func (c *Cursors[C]) Add(name string, cur C) {
	if c.open == nil {
		c.open = map[string]C{}
	}
	c.open[name] = cur
}

// Lookup returns the cursor called name; ok is false when none is open.
func (c *Cursors[C]) Lookup(name string) (cur C, ok bool) {
	cur, ok = c.open[name]
	return cur, ok
}

// Get returns the cursor called name, or PostgreSQL's error (34000) when
// none is open.
func (c *Cursors[C]) Get(name string) (C, error) {
	cur, ok := c.open[name]
	if !ok {
		return cur, errs.Newf(errs.InvalidCursorName, "cursor %q does not exist", name)
	}
	return cur, nil
}

// Close closes the cursor called name, or fails with 34000 when none is
// open.
func (c *Cursors[C]) Close(name string) error {
	cur, err := c.Get(name)
	if err != nil {
		return err
	}
	cur.Close()
	delete(c.open, name)
	return nil
}

// CloseAll closes every cursor.
func (c *Cursors[C]) CloseAll() {
	for name, cur := range c.open {
		cur.Close()
		delete(c.open, name)
	}
}

// Names returns the names of the open cursors.
func (c *Cursors[C]) Names() map[string]bool {
	names := make(map[string]bool, len(c.open))
	for name := range c.open {
		names[name] = true
	}
	return names
}

// CloseExcept closes every cursor whose name keep does not hold: those
// declared since keep was taken (Names).
func (c *Cursors[C]) CloseExcept(keep map[string]bool) {
	for name, cur := range c.open {
		if !keep[name] {
			cur.Close()
			delete(c.open, name)
		}
	}
}
