package pgcdc

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// RowReader reads the rows RockStream holds for the source's tables, as of
// the last committed epoch.
type RowReader interface {
	// RowByKey returns the row of table whose primary key columns equal
	// key's (key has a value only at the table's Key positions).
	RowByKey(table int, key zset.Row) (zset.Row, bool, error)
}

// TableDelta is what a batch of transactions does to one table: when
// Truncate is set the table is emptied first, then Delta is added.
type TableDelta struct {
	Truncate bool
	Delta    zset.Batch
}

// Resolver turns transactions into per-table deltas. It completes old rows
// that PostgreSQL identified by key only, and unchanged TOAST columns,
// from the row RockStream holds for the key: the committed row, or the
// one an earlier change of the same batch left.
type Resolver struct {
	tables []Table
	rows   RowReader
	deltas map[int]*TableDelta
	// current holds, per keyed table, the rows the batch has written so
	// far by encoded key; a nil row is a row the batch deleted.
	current map[int]map[string]zset.Row
}

// NewResolver returns a resolver for tables reading committed rows from
// rows.
func NewResolver(tables []Table, rows RowReader) *Resolver {
	return &Resolver{tables: tables, rows: rows, deltas: map[int]*TableDelta{}, current: map[int]map[string]zset.Row{}}
}

// Deltas returns the deltas of the transactions added so far, by table
// position.
func (r *Resolver) Deltas() map[int]*TableDelta { return r.deltas }

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

func (r *Resolver) delta(table int) *TableDelta {
	d := r.deltas[table]
	if d == nil {
		d = &TableDelta{}
		r.deltas[table] = d
	}
	return d
}

func (r *Resolver) change(c *Change) error {
	t := &r.tables[c.Table]
	d := r.delta(c.Table)
	switch c.Kind {
	case Truncate:
		d.Truncate, d.Delta = true, nil
		if t.Key != nil {
			r.current[c.Table] = map[string]zset.Row{}
		}
		return nil
	case Insert:
		d.Delta = append(d.Delta, zset.Entry{Row: c.New, Weight: 1})
		r.remember(c.Table, c.New, c.New)
		return nil
	}
	old := c.Old
	if old == nil || c.OldKeyOnly {
		keyRow := old
		if keyRow == nil {
			keyRow = c.New
		}
		if t.Key == nil {
			return fmt.Errorf("%s of %s: PostgreSQL sent no whole old row and the table has no primary key; set REPLICA IDENTITY FULL on it", c.Kind, t.QualifiedName())
		}
		held, ok, err := r.lookup(c.Table, keyRow)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s of %s: no row with key %s is held, so the old row is unknown", c.Kind, t.QualifiedName(), formatKey(t, keyRow))
		}
		old = held
	}
	d.Delta = append(d.Delta, zset.Entry{Row: old, Weight: -1})
	if c.Kind == Delete {
		r.remember(c.Table, old, nil)
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
	d.Delta = append(d.Delta, zset.Entry{Row: row, Weight: 1})
	r.remember(c.Table, old, nil)
	r.remember(c.Table, row, row)
	return nil
}

// remember records that the row with keyRow's key is now row (nil: none).
func (r *Resolver) remember(table int, keyRow, row zset.Row) {
	t := &r.tables[table]
	if t.Key == nil {
		return
	}
	m := r.current[table]
	if m == nil {
		m = map[string]zset.Row{}
		r.current[table] = m
	}
	m[string(encodeKey(t, keyRow))] = row
}

// lookup finds the row holding keyRow's key: the batch's own, else the
// committed one unless the batch truncated the table.
func (r *Resolver) lookup(table int, keyRow zset.Row) (zset.Row, bool, error) {
	t := &r.tables[table]
	if m, ok := r.current[table]; ok {
		if row, ok := m[string(encodeKey(t, keyRow))]; ok {
			return row, row != nil, nil
		}
	}
	if d := r.deltas[table]; d != nil && d.Truncate {
		return nil, false, nil
	}
	key := make(zset.Row, len(t.Columns))
	for i := range key {
		key[i] = types.Null
	}
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
