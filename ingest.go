package rockstream

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Batch is a set of row changes that Apply commits as one transaction,
// with no SQL text in between: the embedded API's native path for
// programs that produce rows (a generator, a decoder, a queue consumer).
// Values are Go values converted straight to each column's type when the
// row is added; a Batch is not safe for concurrent use.
//
// The changes apply in the order they were added, as the statements of a
// transaction do: an Insert into a table with a primary key whose key is
// present fails the whole batch with a unique violation (23505), and
// nothing of the batch is applied.
type Batch struct {
	db      *DB
	changes []runtime.RowChange
	// slab holds the batch's values; rows are slices of it, so adding a
	// row allocates only when the slab grows.
	slab   []types.Value
	tables map[string][]runtime.Column
}

// NewBatch returns an empty batch for db.
func (db *DB) NewBatch() *Batch { return &Batch{db: db, tables: map[string][]runtime.Column{}} }

// Grow reserves room for rows more changes holding values values in
// all (the sum of their tables' column counts), so that adding them
// allocates nothing more; the batch otherwise grows as rows come.
// Negative counts are taken as zero.
func (b *Batch) Grow(rows, values int) {
	if rows > 0 {
		b.changes = slices.Grow(b.changes, rows)
	}
	// The rows added so far refer to the current slab, so a larger one is
	// a new allocation for the rows to come, not a copy.
	if values > 0 && cap(b.slab)-len(b.slab) < values {
		b.slab = make([]types.Value, 0, values)
	}
}

// room makes sure the slab has room for n more values. The rows added so
// far refer to the current slab, so a new one is not a copy: it doubles
// only to keep allocations few, up to maxSlab values.
func (b *Batch) room(n int) {
	if cap(b.slab)-len(b.slab) < n {
		b.slab = make([]types.Value, 0, max(1024, min(2*cap(b.slab), maxSlab), n))
	}
}

// maxSlab bounds the size of a slab that room allocates (in values).
const maxSlab = 16384

// Len returns the number of changes in the batch.
func (b *Batch) Len() int { return len(b.changes) }

// Insert adds a row to the batch: one value per column of table, in
// column order. A value is nil (NULL), a bool, an integer type, a float32
// or float64, a string, a []byte, a time.Time or a time.Duration. It is
// converted to the column's type as an INSERT converts a value of that
// type: an integer into an integer, numeric or float column, with a range
// check; a string is kept for text columns and parsed as the column's type
// for others; a time.Time becomes a timestamptz at its instant, or for a
// timestamp or date column its wall-clock reading. A value that does not
// convert is an error here, and the batch is left as it was.
func (b *Batch) Insert(table string, values ...any) error {
	return b.add(table, runtime.Insert, values)
}

// Delete adds the removal of one copy of a row, given in full, to the
// batch; a row that is not there is left alone.
func (b *Batch) Delete(table string, values ...any) error {
	return b.add(table, runtime.Delete, values)
}

// Upsert adds a row that replaces the row with its primary key, or is
// inserted when there is none; the table must have a primary key.
func (b *Batch) Upsert(table string, values ...any) error {
	return b.add(table, runtime.Upsert, values)
}

func (b *Batch) add(table string, op runtime.ChangeOp, values []any) error {
	return publicError(b.addRow(table, op, values))
}

func (b *Batch) addRow(table string, op runtime.ChangeOp, values []any) error {
	cols, err := b.columns(table)
	if err != nil {
		return err
	}
	if len(values) != len(cols) {
		return errs.Newf(errs.InvalidParameterValue, "row has %d values, table %q has %d columns", len(values), table, len(cols))
	}
	b.room(len(cols))
	start := len(b.slab)
	for i, v := range values {
		x, err := goValue(v, cols[i].Type)
		if err != nil {
			b.slab = b.slab[:start]
			return fmt.Errorf("column %q of %q: %w", cols[i].Name, table, err)
		}
		b.slab = append(b.slab, x)
	}
	row := zset.Row(b.slab[start:len(b.slab):len(b.slab)])
	b.changes = append(b.changes, runtime.RowChange{Table: table, Op: op, Row: row})
	return nil
}

// Apply commits the batch's changes in one epoch, as one transaction that
// every view sees at once, and returns once that epoch is durable. The
// batch is empty afterwards, applied or not, and can be refilled.
func (db *DB) Apply(ctx context.Context, b *Batch) error {
	if b.db != db {
		return publicError(errs.New(errs.InvalidParameterValue, "the batch belongs to another instance"))
	}
	changes := b.changes
	b.changes, b.slab = nil, nil
	if len(changes) == 0 {
		return nil
	}
	_, err := db.eng.Ingest(ctx, &runtime.Ingest{Changes: changes})
	return publicError(err)
}

// goValue converts a Go value to a value of type t, or to a value that
// the table's own conversion (the one INSERT uses) turns into one.
func goValue(v any, t types.Type) (types.Value, error) {
	switch x := v.(type) {
	case nil:
		return types.Null, nil
	case bool:
		return types.MakeBool(x), nil
	case int:
		return types.FromGoInt(int64(x), t.ID)
	case int8:
		return types.FromGoInt(int64(x), t.ID)
	case int16:
		return types.FromGoInt(int64(x), t.ID)
	case int32:
		return types.FromGoInt(int64(x), t.ID)
	case int64:
		return types.FromGoInt(x, t.ID)
	case uint8:
		return types.FromGoInt(int64(x), t.ID)
	case uint16:
		return types.FromGoInt(int64(x), t.ID)
	case uint32:
		return types.FromGoInt(int64(x), t.ID)
	case uint:
		return fromUint(uint64(x), t)
	case uint64:
		return fromUint(x, t)
	case float32:
		return types.MakeFloat4(x), nil
	case float64:
		return types.MakeFloat8(x), nil
	case string:
		return stringValue(x, t)
	case []byte:
		return types.MakeBytea(x), nil
	case time.Time:
		return types.FromGoTime(x, t.ID)
	case time.Duration:
		return durationValue(x), nil
	}
	return types.Null, errs.Newf(errs.DatatypeMismatch, "a Go %T cannot be a value of type %s", v, t)
}

// stringValue converts a Go string: kept for a text column, parsed as
// the column's type for others.
func stringValue(x string, t types.Type) (types.Value, error) {
	switch t.ID {
	case types.Text, types.Varchar:
		return types.MakeText(x), nil
	}
	return types.Parse(t, x)
}

// durationValue converts a Go duration to an interval of its
// microseconds.
func durationValue(x time.Duration) types.Value {
	return types.MakeInterval(types.IntervalValue{Micros: x.Microseconds()})
}

// fromUint converts an unsigned Go integer, which must fit a bigint.
func fromUint(x uint64, t types.Type) (types.Value, error) {
	if x > math.MaxInt64 {
		return types.Null, errs.Newf(errs.NumericOutOfRange, "%d is out of range for type bigint", x)
	}
	return types.FromGoInt(int64(x), t.ID)
}
