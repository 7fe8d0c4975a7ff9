package pgcdc

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// RowReader reads the rows RockStream holds for the source's tables, as of
// the last committed epoch.
type RowReader interface {
	// RowByKey returns the row of table (a position in the source's
	// tables) whose primary key columns equal key's.
	RowByKey(table int, key zset.Row) (zset.Row, bool, error)
}

// Op is one change to apply to a RockStream table, with the semantics of
// runtime.ChangeOp.
type Op struct {
	Table int
	Kind  runtime.ChangeOp
	Row   zset.Row
}

// Resolver turns transactions into the changes RockStream applies:
//
//   - INSERT inserts the row;
//   - DELETE deletes the whole old row when PostgreSQL sent it, else the
//     row with the old key;
//   - UPDATE deletes the old row the same way and inserts the new one;
//   - TRUNCATE empties the table.
//
// A new row with unchanged TOAST columns is completed from the old row:
// the whole old tuple when PostgreSQL sent one, else the row RockStream
// holds for the key (the one an earlier change of the batch left, or the
// committed one). When no row is held for the key the resolver fails:
// writing a guess would be wrong.
type Resolver struct {
	tables []Table
	rows   RowReader
	ops    []Op
	// written holds, per keyed table, the rows the batch has written by
	// encoded key; a nil row is a row the batch deleted.
	written map[int]map[string]zset.Row
	// truncated marks tables the batch truncated: their committed rows
	// are gone.
	truncated map[int]bool
}

// NewResolver returns a resolver for tables reading committed rows from
// rows.
func NewResolver(tables []Table, rows RowReader) *Resolver {
	return &Resolver{tables: tables, rows: rows, written: map[int]map[string]zset.Row{}, truncated: map[int]bool{}}
}

// Ops returns the changes of the transactions added so far, in order.
func (r *Resolver) Ops() []Op { return r.ops }

// Add resolves one transaction. When it fails the resolver must be
// discarded: the batch is not applied.
func (r *Resolver) Add(txn *Txn) error {
	for i := range txn.Changes {
		if err := r.change(&txn.Changes[i]); err != nil {
			return fmt.Errorf("transaction %d (commit %s): %w", txn.Xid, txn.CommitLSN, err)
		}
	}
	return nil
}

func (r *Resolver) emit(table int, kind runtime.ChangeOp, row zset.Row) {
	r.ops = append(r.ops, Op{Table: table, Kind: kind, Row: row})
}

func (r *Resolver) change(c *Change) error {
	t := &r.tables[c.Table]
	switch c.Kind {
	case Truncate:
		r.emit(c.Table, runtime.Truncate, nil)
		r.truncated[c.Table] = true
		r.written[c.Table] = map[string]zset.Row{}
		return nil
	case Insert:
		r.emit(c.Table, runtime.Insert, c.New)
		r.remember(c.Table, c.New, c.New)
		return nil
	}
	old, whole := c.Old, c.Old != nil && !c.OldKeyOnly
	keyRow := old
	if keyRow == nil {
		keyRow = c.New
	}
	if !whole && t.Key == nil {
		return fmt.Errorf("%s of %s: PostgreSQL sent no whole old row and the table has no primary key; set REPLICA IDENTITY FULL on it", c.Kind, t.QualifiedName())
	}
	if !whole && c.Unchanged != nil {
		held, ok, err := r.lookup(c.Table, keyRow)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s of %s: the row with key %s is not held, so the value of its unchanged TOASTed columns is unknown", c.Kind, t.QualifiedName(), formatKey(t, keyRow))
		}
		old, whole = held, true
	}
	if whole {
		r.emit(c.Table, runtime.Delete, old)
	} else {
		r.emit(c.Table, runtime.DeleteKey, keyRow)
	}
	r.remember(c.Table, keyRow, nil)
	if c.Kind == Delete {
		return nil
	}
	row := c.New
	if c.Unchanged != nil {
		row = append(zset.Row(nil), c.New...)
		for j, u := range c.Unchanged {
			if u {
				row[j] = old[j]
			}
		}
	}
	r.emit(c.Table, runtime.Insert, row)
	r.remember(c.Table, row, row)
	return nil
}

// remember records that the row with keyRow's key is now row (nil: none).
func (r *Resolver) remember(table int, keyRow, row zset.Row) {
	t := &r.tables[table]
	if t.Key == nil {
		return
	}
	m := r.written[table]
	if m == nil {
		m = map[string]zset.Row{}
		r.written[table] = m
	}
	m[string(encodeKey(t, keyRow))] = row
}

// lookup finds the row holding keyRow's key: the batch's own, else the
// committed one unless the batch truncated the table.
func (r *Resolver) lookup(table int, keyRow zset.Row) (zset.Row, bool, error) {
	t := &r.tables[table]
	if row, ok := r.written[table][string(encodeKey(t, keyRow))]; ok {
		return row, row != nil, nil
	}
	if r.truncated[table] {
		return nil, false, nil
	}
	key := make(zset.Row, len(t.Columns))
	for _, k := range t.Key {
		key[k] = keyRow[k]
	}
	return r.rows.RowByKey(table, key)
}

func encodeKey(t *Table, row zset.Row) []byte {
	vals := make([]types.Value, len(t.Key))
	for i, k := range t.Key {
		vals[i] = row[k]
	}
	return zset.EncodeKey(nil, vals...)
}

func formatKey(t *Table, row zset.Row) string {
	parts := make([]string, len(t.Key))
	for i, k := range t.Key {
		parts[i] = t.Columns[k].Name + "=" + types.Format(row[k], t.Columns[k].Type)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
