package rockstream

import (
	"fmt"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// RowWriter adds rows of one table to a Batch from typed Go values, one
// call per column in column order, then Insert, Delete or Upsert to end
// the row:
//
//	w, err := batch.Writer("bid")
//	...
//	for _, b := range bids {
//		w.Int64(b.Auction).Int64(b.Price).Time(b.At).String(b.Extra)
//		if err := w.Insert(); err != nil { ... }
//	}
//
// It is Batch.Insert without the []any: no value is boxed, and adding a
// row allocates nothing once the batch's storage has grown (a text value
// refers to the string given, which must not change afterwards). Each
// method converts its value to the column's type exactly as Batch.Insert
// converts a Go value of that type, so the rows, the errors and their
// SQLSTATEs are Batch.Insert's. The first value that does not convert, or
// a row with another number of values than the table has columns, makes
// the call that ends the row return the error; the row is then left out
// and the writer is ready for the next one. A RowWriter belongs to its
// batch and, like it, is not safe for concurrent use; rows of writers of
// different tables may be interleaved freely, each row being added when
// it ends.
type RowWriter struct {
	b     *Batch
	table string
	cols  []runtime.Column
	// row holds the values of the row being written; n counts the values
	// given, which may exceed len(cols) (an error when the row ends).
	row []types.Value
	n   int
	err error
}

// Writer returns a writer of rows of table into the batch. An unknown
// table is an error (42P01), as Batch.Insert's first row into it is.
func (b *Batch) Writer(table string) (*RowWriter, error) {
	cols, err := b.columns(table)
	if err != nil {
		return nil, publicError(err)
	}
	return &RowWriter{b: b, table: table, cols: cols, row: make([]types.Value, len(cols))}, nil
}

// columns returns table's columns, looked up once per batch.
func (b *Batch) columns(table string) ([]runtime.Column, error) {
	if cols, ok := b.tables[table]; ok {
		return cols, nil
	}
	cols, _, err := b.db.eng.TableColumns(table)
	if err != nil {
		return nil, err
	}
	b.tables[table] = cols
	return cols, nil
}

// next returns the index of the column the next value goes to, or -1 when
// the value is only to be counted (a previous error, or too many values).
func (w *RowWriter) next() int {
	i := w.n
	w.n++
	if w.err != nil || i >= len(w.cols) {
		return -1
	}
	return i
}

// fail records err for column i's value.
func (w *RowWriter) fail(i int, err error) *RowWriter {
	w.err = fmt.Errorf("column %q of %q: %w", w.cols[i].Name, w.table, err)
	return w
}

// set stores column i's converted value, or records its error.
func (w *RowWriter) set(i int, v types.Value, err error) *RowWriter {
	if err != nil {
		return w.fail(i, err)
	}
	w.row[i] = v
	return w
}

// Null gives the next column NULL.
func (w *RowWriter) Null() *RowWriter {
	if i := w.next(); i >= 0 {
		w.row[i] = types.Null
	}
	return w
}

// Bool gives the next column a bool, as Batch.Insert converts a Go bool.
func (w *RowWriter) Bool(x bool) *RowWriter {
	if i := w.next(); i >= 0 {
		w.row[i] = types.MakeBool(x)
	}
	return w
}

// Int64 gives the next column an integer, as Batch.Insert converts a Go
// int64: into an integer column with its range check, or into a numeric
// or float column.
func (w *RowWriter) Int64(x int64) *RowWriter {
	if i := w.next(); i >= 0 {
		v, err := types.FromGoInt(x, w.cols[i].Type.ID)
		return w.set(i, v, err)
	}
	return w
}

// Uint64 gives the next column an unsigned integer, as Batch.Insert
// converts a Go uint64: it must fit a bigint.
func (w *RowWriter) Uint64(x uint64) *RowWriter {
	if i := w.next(); i >= 0 {
		v, err := fromUint(x, w.cols[i].Type)
		return w.set(i, v, err)
	}
	return w
}

// Float64 gives the next column a float8 value, as Batch.Insert converts
// a Go float64.
func (w *RowWriter) Float64(x float64) *RowWriter {
	if i := w.next(); i >= 0 {
		w.row[i] = types.MakeFloat8(x)
	}
	return w
}

// String gives the next column a string, as Batch.Insert converts a Go
// string: kept for a text column, parsed as the column's type otherwise.
func (w *RowWriter) String(x string) *RowWriter {
	if i := w.next(); i >= 0 {
		v, err := stringValue(x, w.cols[i].Type)
		return w.set(i, v, err)
	}
	return w
}

// Bytes gives the next column a bytea value (a copy of x), as Batch.Insert
// converts a Go []byte.
func (w *RowWriter) Bytes(x []byte) *RowWriter {
	if i := w.next(); i >= 0 {
		w.row[i] = types.MakeBytea(x)
	}
	return w
}

// Time gives the next column a time, as Batch.Insert converts a Go
// time.Time: its instant for timestamptz, its wall-clock reading for
// timestamp and date.
func (w *RowWriter) Time(x time.Time) *RowWriter {
	if i := w.next(); i >= 0 {
		v, err := types.FromGoTime(x, w.cols[i].Type.ID)
		return w.set(i, v, err)
	}
	return w
}

// Duration gives the next column an interval, as Batch.Insert converts a
// Go time.Duration.
func (w *RowWriter) Duration(x time.Duration) *RowWriter {
	if i := w.next(); i >= 0 {
		w.row[i] = durationValue(x)
	}
	return w
}

// Value gives the next column any value Batch.Insert takes, boxed: for
// columns whose Go type has no method of its own (int32, float32, ...).
func (w *RowWriter) Value(x any) *RowWriter {
	if i := w.next(); i >= 0 {
		v, err := goValue(x, w.cols[i].Type)
		return w.set(i, v, err)
	}
	return w
}

// Insert ends the row and adds its insertion to the batch.
func (w *RowWriter) Insert() error { return w.end(runtime.Insert) }

// Delete ends the row and adds the removal of one copy of it.
func (w *RowWriter) Delete() error { return w.end(runtime.Delete) }

// Upsert ends the row and adds it as an upsert (Batch.Upsert).
func (w *RowWriter) Upsert() error { return w.end(runtime.Upsert) }

// end adds the row written so far to the batch, or returns why it cannot
// be, and readies the writer for the next row.
func (w *RowWriter) end(op runtime.ChangeOp) error {
	n, err := w.n, w.err
	w.n, w.err = 0, nil
	if n != len(w.cols) {
		return publicError(errs.Newf(errs.InvalidParameterValue, "row has %d values, table %q has %d columns", n, w.table, len(w.cols)))
	}
	if err != nil {
		return publicError(err)
	}
	b := w.b
	b.room(len(w.cols))
	start := len(b.slab)
	b.slab = append(b.slab, w.row...)
	row := zset.Row(b.slab[start:len(b.slab):len(b.slab)])
	b.changes = append(b.changes, runtime.RowChange{Table: w.table, Op: op, Row: row})
	return nil
}
