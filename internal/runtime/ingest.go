package runtime

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Ingestion is how sources write: a batch of row changes to one or more
// tables and the source's progress (Kafka offsets, a replication LSN: bytes
// only the source reads) commit together in one epoch, through the group
// committer like any autocommit statement. A source that restarts reads
// its progress back (SourceProgress) and resumes after it, so that every
// upstream record is applied exactly once: either the epoch holding a
// record and the progress past it are durable, or neither is.

// ChangeOp is what a row change does to its table.
type ChangeOp uint8

const (
	// Insert adds the row. On a table with a primary key, a row whose key
	// is present is a unique violation.
	Insert ChangeOp = iota
	// Delete removes one copy of the row, given in full. Deleting a row
	// that is not there is a no-op.
	Delete
	// DeleteKey removes the row with the row's primary-key values (the
	// other columns are ignored); absent keys are a no-op. The table must
	// have a primary key.
	DeleteKey
	// Upsert inserts the row or replaces the row with its primary key.
	// The table must have a primary key.
	Upsert
	// Truncate removes every row of the table, as the batch has left it;
	// Row is ignored.
	Truncate
)

func (op ChangeOp) String() string {
	switch op {
	case Insert:
		return "insert"
	case Delete:
		return "delete"
	case DeleteKey:
		return "delete by key"
	case Truncate:
		return "truncate"
	}
	return "upsert"
}

// RowChange is one change to a table. Row has one value per column of the
// table, in column order; values of another type than the column's are
// converted as an INSERT converts them (text is parsed with the column's
// type), NULL is kept; Ingest may convert the values in place. Origin
// says where the change came from, for the error table.
type RowChange struct {
	Table string
	Op    ChangeOp
	Row   zset.Row
	// Absent, when not nil, marks the columns the record did not give: an
	// Insert or Upsert gives them the column's DEFAULT, as an INSERT that
	// leaves them out does (their Row values are ignored).
	Absent []bool
	Origin Origin
}

// Origin is an upstream record's position, for error reports.
type Origin struct {
	// Partition and Offset locate a Kafka record; Offset < 0 when unknown.
	Partition int32
	Offset    int64
	// Position is a textual position for other sources (an LSN).
	Position string
	// Raw is the record's value as received.
	Raw []byte
}

// IngestError is an upstream record that could not be applied.
type IngestError struct {
	Origin Origin
	Err    string
}

// Ingest is one batch of a source.
type Ingest struct {
	// Source names the source; its progress is kept under this name.
	Source string
	// Changes are applied in order.
	Changes []RowChange
	// Progress, when not nil, replaces the source's progress in the same
	// epoch.
	Progress []byte
	// Errors are records the source could not decode; they are written
	// to ErrorTable (when set) in the same epoch.
	Errors []IngestError
	// ErrorTable decides what a change that violates a constraint does:
	// with a table named, the change is skipped and reported there (and
	// in the result), and the rest of the batch applies; without one,
	// the whole batch fails with the violation and nothing of it, not
	// even the progress, is applied.
	ErrorTable string
}

// IngestResult reports a committed batch.
type IngestResult struct {
	// Applied counts the changes applied.
	Applied int
	// Rejected lists the changes skipped for a constraint violation.
	Rejected []IngestError
}

// ErrorTableColumns is the definition of a source's error table, created by
// CREATE SOURCE when it does not exist.
const ErrorTableColumns = `(source text, partition integer, "offset" bigint, position text, raw text, error text)`

// Ingest applies a batch atomically in one epoch with the source's
// progress and returns once that epoch is durable.
func (e *Engine) Ingest(ctx context.Context, in *Ingest) (IngestResult, error) {
	var res IngestResult
	err := e.submit(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		res = IngestResult{}
		now := e.now()
		if err := applyIngest(ctx, st, w, in, &res, sql.Clock{Transaction: now, Statement: now}); err != nil {
			return nil, err
		}
		return nil, nil
	})
	return res, err
}

// tableChanges is the net effect of a batch on one table, built change by
// change so that each sees the ones before it.
type tableChanges struct {
	o *object
	// clock is the ingest's time, for defaults that read it.
	clock sql.Clock
	keyOf func(dst, prefix []byte, row zset.Row) []byte
	// current maps a storage key to the row stored under it now (nil when
	// absent) and, for a table without a primary key, its count.
	current map[string]keyedRow
	delta   zset.Batch
	// truncated is set once the batch truncated the table: stored rows are
	// then gone for the rest of the batch.
	truncated bool
}

type keyedRow struct {
	row   zset.Row
	count int64
}

func applyIngest(ctx context.Context, st state.Store, w *epochWrite, in *Ingest, res *IngestResult, clock sql.Clock) error {
	if in.ErrorTable == "" && len(in.Errors) == 0 && plainInserts(in.Changes) {
		if err := ingestInserts(ctx, st, w, in.Changes); err != nil {
			return err
		}
		res.Applied = len(in.Changes)
		return writeProgress(st, in)
	}
	if w.cat.shard() != nil {
		return unsupportedInShard("an ingest of changes other than inserts")
	}
	tables := map[string]*tableChanges{}
	var order []*tableChanges
	rejected := append([]IngestError(nil), in.Errors...)
	for i := range in.Changes {
		c := &in.Changes[i]
		tc := tables[c.Table]
		if tc == nil {
			o := w.cat.lookup(c.Table)
			if err := ingestTarget(o, c.Table); err != nil {
				return err
			}
			tc = &tableChanges{o: o, clock: clock, keyOf: o.keyOf(), current: map[string]keyedRow{}}
			tables[c.Table] = tc
			order = append(order, tc)
		}
		err := tc.apply(ctx, st, c)
		if err == nil {
			res.Applied++
			continue
		}
		if in.ErrorTable == "" {
			return fmt.Errorf("%s of a row into %s: %w", c.Op, c.Table, err)
		}
		ie := IngestError{Origin: c.Origin, Err: err.Error()}
		rejected = append(rejected, ie)
		res.Rejected = append(res.Rejected, ie)
	}
	for _, tc := range order {
		if err := writeTable(ctx, st, w, tc.o, tc.delta); err != nil {
			return err
		}
	}
	if in.ErrorTable != "" && len(rejected) > 0 {
		if err := writeErrors(ctx, st, w, in.Source, in.ErrorTable, rejected); err != nil {
			return err
		}
	}
	return writeProgress(st, in)
}

func writeProgress(st state.Store, in *Ingest) error {
	if in.Progress == nil {
		return nil
	}
	return st.Set(progressKey(in.Source), in.Progress)
}

// plainInserts reports whether every change inserts a whole row.
func plainInserts(changes []RowChange) bool {
	for i := range changes {
		if changes[i].Op != Insert || changes[i].Absent != nil {
			return false
		}
	}
	return true
}

// ingestInserts applies a batch of whole-row inserts the way a multi-row
// INSERT is applied: per table, all rows at once. The outcome is the one
// applying them change by change has, without keeping the batch's running
// state per row.
func ingestInserts(ctx context.Context, st state.Store, w *epochWrite, changes []RowChange) error {
	type target struct {
		o    *object
		rows []zset.Row
	}
	var order []*target
	byName := map[string]*target{}
	for i := range changes {
		c := &changes[i]
		t := byName[c.Table]
		if t == nil {
			o := w.cat.lookup(c.Table)
			if err := ingestTarget(o, c.Table); err != nil {
				return err
			}
			t = &target{o: o}
			byName[c.Table] = t
			order = append(order, t)
		}
		if err := t.o.coerceInPlace(c.Row); err != nil {
			return fmt.Errorf("%s of a row into %s: %w", c.Op, c.Table, err)
		}
		if err := t.o.checkRow(c.Row); err != nil {
			return fmt.Errorf("%s of a row into %s: %w", c.Op, c.Table, err)
		}
		t.rows = append(t.rows, c.Row)
	}
	for _, t := range order {
		if _, err := insertFullRows(ctx, st, w, t.o, t.rows, nil, nil, 0); err != nil {
			return fmt.Errorf("%s of a row into %s: %w", Insert, t.o.name, err)
		}
	}
	return nil
}

func ingestTarget(o *object, name string) error {
	switch {
	case o == nil:
		return errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
	case o.system != nil:
		return systemRelationError(o, "change")
	case o.kind != sql.Table:
		return errs.Newf(errs.WrongObjectType, "cannot write into %s %q: a source writes into tables", o.kindName(), name)
	}
	return nil
}

// apply adds one change to the table's delta.
func (tc *tableChanges) apply(ctx context.Context, st state.Store, c *RowChange) error {
	o := tc.o
	if c.Op != Insert && o.appendOnly {
		what := map[ChangeOp]string{Delete: "delete from", DeleteKey: "delete from", Upsert: "upsert into", Truncate: "truncate"}[c.Op]
		return appendOnlyError(o, what)
	}
	if c.Op == Truncate {
		return tc.truncate(ctx, st)
	}
	if len(c.Row) != len(o.cols) {
		return errs.Newf(errs.InvalidParameterValue, "row has %d values, table %q has %d columns", len(c.Row), o.name, len(o.cols))
	}
	if (c.Op == DeleteKey || c.Op == Upsert) && len(o.pk) == 0 {
		return errs.Newf(errs.InvalidObjectDef, "%s into table %q needs a primary key, and it has none", c.Op, o.name)
	}
	row, err := o.coerceRow(c.Row, c.Op == DeleteKey)
	if err != nil {
		return err
	}
	if c.Absent != nil && (c.Op == Insert || c.Op == Upsert) {
		for i, absent := range c.Absent {
			if absent && i < len(row) {
				if row[i], err = o.defaultValue(i, tc.clock); err != nil {
					return fmt.Errorf("column %q: %w", o.cols[i].Name, err)
				}
			}
		}
	}
	prefix := o.rowsPrefix()
	key := string(tc.keyOf(nil, prefix, row))
	cur, err := tc.lookup(st, key)
	if err != nil {
		return err
	}
	switch c.Op {
	case Insert, Upsert:
		if err := o.checkRow(row); err != nil {
			return err
		}
		if rows, err := admitRows(st, o, []zset.Row{row}); err != nil || len(rows) == 0 {
			return err
		}
		if len(o.pk) == 0 {
			tc.delta = append(tc.delta, zset.Entry{Row: row, Weight: 1})
			tc.current[key] = keyedRow{row: row, count: cur.count + 1}
			return nil
		}
		if cur.row != nil {
			if c.Op == Insert {
				return o.uniqueViolation(row)
			}
			tc.delta = append(tc.delta, zset.Entry{Row: cur.row, Weight: -1})
		}
		tc.delta = append(tc.delta, zset.Entry{Row: row, Weight: 1})
		tc.current[key] = keyedRow{row: row, count: 1}
	case Delete, DeleteKey:
		if cur.row == nil || cur.count == 0 {
			return nil
		}
		if c.Op == Delete && len(o.pk) > 0 && !rowsEqual(cur.row, row) {
			return nil
		}
		tc.delta = append(tc.delta, zset.Entry{Row: cur.row, Weight: -1})
		if cur.count == 1 {
			tc.current[key] = keyedRow{}
		} else {
			tc.current[key] = keyedRow{row: cur.row, count: cur.count - 1}
		}
	}
	return nil
}

// truncate replaces the batch's changes so far by the removal of every
// stored row.
func (tc *tableChanges) truncate(ctx context.Context, st state.Reader) error {
	stored, err := readRelation(ctx, st, tc.o)
	if err != nil {
		return err
	}
	tc.delta = tc.delta[:0]
	for _, e := range stored {
		tc.delta = append(tc.delta, zset.Entry{Row: e.Row, Weight: -e.Weight})
	}
	tc.current, tc.truncated = map[string]keyedRow{}, true
	return nil
}

// lookup returns the row stored under key as the batch has left it.
func (tc *tableChanges) lookup(st state.Reader, key string) (keyedRow, error) {
	if cur, ok := tc.current[key]; ok || tc.truncated {
		return cur, nil
	}
	v, found, err := st.Get([]byte(key))
	if err != nil || !found {
		return keyedRow{}, err
	}
	e, err := decodeStored(v)
	if err != nil {
		return keyedRow{}, err
	}
	return keyedRow{row: e.Row, count: e.Weight}, nil
}

func rowsEqual(a, b zset.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if types.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// coerceInPlace converts a whole row's values to the table's column
// types, replacing them in row.
func (o *object) coerceInPlace(row zset.Row) error {
	if len(row) != len(o.cols) {
		return errs.Newf(errs.InvalidParameterValue, "row has %d values, table %q has %d columns", len(row), o.name, len(o.cols))
	}
	for i, v := range row {
		c, err := o.coerceValue(i, v)
		if err != nil {
			return err
		}
		row[i] = c
	}
	return nil
}

// coerceRow converts a row's values to the table's column types; with
// keyOnly, only the primary-key columns are converted and the others set
// to NULL.
func (o *object) coerceRow(in zset.Row, keyOnly bool) (zset.Row, error) {
	row := make(zset.Row, len(in))
	for i, v := range in {
		if keyOnly && !o.isKeyColumn(i) {
			row[i] = types.Null
			continue
		}
		c, err := o.coerceValue(i, v)
		if err != nil {
			return nil, err
		}
		row[i] = c
	}
	return row, nil
}

// coerceValue converts v to column i's type, as an INSERT assigns it.
func (o *object) coerceValue(i int, v types.Value) (types.Value, error) {
	t := o.cols[i].Type
	if v.IsNull() || (v.Kind() == t.ID && t.Precision < 0 && t.Scale < 0 && t.Length < 0) {
		return v, nil
	}
	c, err := types.Cast(v, t, false)
	if err != nil {
		return types.Null, fmt.Errorf("column %q: %w", o.cols[i].Name, err)
	}
	return c, nil
}

func (o *object) isKeyColumn(i int) bool {
	for _, k := range o.pk {
		if k == i {
			return true
		}
	}
	return false
}

// writeErrors inserts rejected records into a source's error table.
func writeErrors(ctx context.Context, st state.Store, w *epochWrite, source, table string, errors []IngestError) error {
	o := w.cat.lookup(table)
	if err := ingestTarget(o, table); err != nil {
		return fmt.Errorf("error table: %w", err)
	}
	if len(o.cols) != 6 {
		return errs.Newf(errs.WrongObjectType, "error table %q must have the columns %s", table, ErrorTableColumns)
	}
	var delta zset.Batch
	for _, ie := range errors {
		row := zset.Row{types.MakeText(source), types.Null, types.Null, types.Null, types.MakeText(validText(ie.Origin.Raw)), types.MakeText(ie.Err)}
		if ie.Origin.Offset >= 0 && ie.Origin.Position == "" {
			row[1] = types.MakeInt(types.Int4, int64(ie.Origin.Partition))
			row[2] = types.MakeInt(types.Int8, ie.Origin.Offset)
		}
		if ie.Origin.Position != "" {
			row[3] = types.MakeText(ie.Origin.Position)
		}
		r, err := o.coerceRow(row, false)
		if err != nil {
			return fmt.Errorf("error table %q: %w", table, err)
		}
		delta = append(delta, zset.Entry{Row: r, Weight: 1})
	}
	if len(o.pk) > 0 {
		return errs.Newf(errs.WrongObjectType, "error table %q must not have a primary key", table)
	}
	return writeTable(ctx, st, w, o, delta)
}

// validText returns b as text, its invalid UTF-8 sequences and NUL bytes
// replaced.
func validText(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	if !utf8.ValidString(s) {
		return ""
	}
	return s
}

// progressKey is where a source's progress is kept.
func progressKey(source string) []byte {
	return append([]byte{nsMeta, 'p', 'r', 'o', 'g', 'r', 'e', 's', 's', '/'}, source...)
}

// SourceProgress returns the progress last committed for source, or nil
// when none was.
func (e *Engine) SourceProgress(source string) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.mu.closed {
		return nil, errs.New(errs.AdminShutdown, "the engine is shutting down")
	}
	v, ok, err := e.mu.store.Get(progressKey(source))
	if err != nil || !ok {
		return nil, err
	}
	return append([]byte(nil), v...), nil
}

// TableColumns returns a table's columns and primary-key column indexes,
// for sources that decode records into rows.
func (e *Engine) TableColumns(name string) ([]Column, []int, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	o := e.mu.cat.lookup(name)
	if err := ingestTarget(o, name); err != nil {
		return nil, nil, err
	}
	return outColumns(o.cols), append([]int(nil), o.pk...), nil
}
