package runtime

import (
	"encoding/binary"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A table may declare an event-time column and a lateness bound:
//
//	CREATE TABLE bids (...) WITH (event_time = 'ts', lateness = '5 minutes')
//
// Its watermark is the greatest event time among the rows written to it so
// far, minus the bound; it only moves forward and is kept in the state
// store with the table's rows, so it commits, rolls back and survives a
// restart with them. Rows behind the watermark are final:
//
//   - An INSERT drops (and counts) the rows whose event time is before the
//     watermark as it stood when the statement began; the others are
//     inserted. The command tag and RETURNING show the inserted rows only.
//   - Any other change that would insert or delete a row whose event time
//     is before the watermark (UPDATE, DELETE, INSERT ... ON CONFLICT DO
//     UPDATE) fails.
//   - After each statement the watermark advances, and the windowed
//     aggregates over the table release the state of windows that ended at
//     or before it (diff.Circuit.ReleaseClosedWindows).
//
// A NULL event time is never late and does not move the watermark. The
// count of dropped rows and the watermark are visible in the system
// relation rockstream_catalog.lateness (system.go).

// lateness is a table's event-time declaration.
type lateness struct {
	col   int         // the event-time column
	bound types.Value // the lateness bound, an interval
	// minus computes max event time − bound in the column's type.
	minus *types.Operator
}

// tableOptions reads a CREATE TABLE's storage parameters: event_time and
// lateness, which go together. Anything else is not supported.
func tableOptions(o *object, opts []*pg.Node) (_ *lateness, err error) {
	var col, bound string
	var seen []string
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			return nil, errs.New(errs.FeatureNotSupported, "this table option is not supported")
		}
		name := d.Defname
		if d.Defnamespace != "" {
			name = d.Defnamespace + "." + name
		}
		for _, s := range seen {
			if s == name {
				return nil, errs.Newf(errs.InvalidParameterValue, "parameter %q specified more than once", name)
			}
		}
		seen = append(seen, name)
		val, ok := optionText(d.Arg)
		switch {
		case name == "append_only":
			if o.appendOnly, err = boolOption(name, d.Arg); err != nil {
				return nil, err
			}
			continue
		case name == "materialized":
			var m bool
			if m, err = boolOption(name, d.Arg); err != nil {
				return nil, err
			}
			o.unstored = !m
			continue
		case name != "event_time" && name != "lateness":
			return nil, errs.Newf(errs.FeatureNotSupported,
				"table parameter %q is not supported (RockStream knows append_only, materialized, event_time and lateness)", name)
		case !ok:
			return nil, errs.Newf(errs.InvalidParameterValue, "parameter %q needs a value, as in %s = '...'", name, name)
		case name == "event_time":
			col = val
		default:
			bound = val
		}
	}
	if col == "" && bound == "" {
		return nil, nil
	}
	if col == "" || bound == "" {
		return nil, errs.New(errs.InvalidParameterValue,
			"event_time and lateness go together: WITH (event_time = 'column', lateness = 'interval')")
	}
	l := &lateness{col: -1}
	for i, c := range o.cols {
		if c.Name == col {
			l.col = i
		}
	}
	if l.col < 0 {
		return nil, errs.Newf(errs.UndefinedColumn, "event_time column %q does not exist in table %q", col, o.name)
	}
	t := o.cols[l.col].Type
	if t.ID != types.Timestamp && t.ID != types.TimestampTZ {
		return nil, errs.Newf(errs.DatatypeMismatch,
			"event_time column %q must be of type timestamp or timestamp with time zone, not %s", col, t)
	}
	iv, err := types.ParseInterval(bound)
	if err != nil {
		return nil, err
	}
	if iv.Months < 0 || iv.Days < 0 || iv.Micros < 0 {
		return nil, errs.Newf(errs.InvalidParameterValue, "lateness %q must not be negative", bound)
	}
	l.bound = types.MakeInterval(iv)
	if l.minus, err = types.ResolveBinary("-", types.Of(t.ID), types.Of(types.Interval)); err != nil {
		return nil, err
	}
	return l, nil
}

// boolOption returns a boolean storage parameter's value; a parameter
// without one is true, as in PostgreSQL.
func boolOption(name string, arg *pg.Node) (bool, error) {
	if arg == nil {
		return true, nil
	}
	val, _ := optionText(arg)
	switch strings.ToLower(val) {
	case "true", "on", "yes", "1":
		return true, nil
	case "false", "off", "no", "0":
		return false, nil
	}
	return false, errs.Newf(errs.InvalidParameterValue, "invalid value for boolean option %q: %s", name, val)
}

// optionText returns a storage parameter's value as text: a string, a
// bare word or a number.
func optionText(arg *pg.Node) (string, bool) {
	switch {
	case arg == nil:
		return "", false
	case arg.GetString_() != nil:
		return arg.GetString_().Sval, true
	case arg.GetTypeName() != nil:
		var parts []string
		for _, n := range arg.GetTypeName().Names {
			parts = append(parts, n.GetString_().GetSval())
		}
		return strings.Join(parts, "."), true
	case arg.GetInteger() != nil:
		return types.Format(types.MakeInt(types.Int4, int64(arg.GetInteger().Ival)), types.Of(types.Int4)), true
	case arg.GetFloat() != nil:
		return arg.GetFloat().Fval, true
	}
	return "", false
}

// latenessState is a table's watermark state, kept in the metadata
// namespace under "lateness/" followed by the table's id (uvarint):
// varint(late rows dropped) | EncodeRow(greatest event time written, or
// NULL).
type latenessState struct {
	dropped int64
	maxTime types.Value
}

func latenessKey(id uint64) []byte {
	return binary.AppendUvarint(append([]byte{nsMeta}, "lateness/"...), id)
}

func readLateness(r state.Reader, id uint64) (latenessState, error) {
	v, ok, err := r.Get(latenessKey(id))
	if err != nil || !ok {
		return latenessState{}, err
	}
	n, k := binary.Varint(v)
	if k <= 0 {
		return latenessState{}, errs.New(errs.DataCorrupted, "corrupt watermark state: bad count")
	}
	row, err := zset.DecodeRow(v[k:])
	if err != nil || len(row) != 1 {
		return latenessState{}, errs.New(errs.DataCorrupted, "corrupt watermark state: bad time")
	}
	return latenessState{dropped: n, maxTime: row[0]}, nil
}

func writeLateness(st state.Store, id uint64, s latenessState) error {
	v := binary.AppendVarint(nil, s.dropped)
	return st.Set(latenessKey(id), zset.EncodeRow(v, zset.Row{s.maxTime}))
}

// watermark returns the table's watermark for a state, or NULL before any
// event time was written.
func (l *lateness) watermark(s latenessState) (types.Value, error) {
	if s.maxTime.IsNull() {
		return types.Null, nil
	}
	if isInfinite(s.maxTime) {
		return s.maxTime, nil
	}
	return l.minus.Eval(s.maxTime, l.bound)
}

func isInfinite(v types.Value) bool {
	return v.Micros() == types.TimestampPosInfinity || v.Micros() == types.TimestampNegInfinity
}

// late reports whether row's event time is before the watermark wm.
func (l *lateness) late(row zset.Row, wm types.Value) bool {
	t := row[l.col]
	return !wm.IsNull() && !t.IsNull() && types.Compare(t, wm) < 0
}

// admitRows drops the rows of an INSERT whose event time is before the
// table's watermark, counting them, and returns the others.
func admitRows(st state.Store, o *object, rows []zset.Row) ([]zset.Row, error) {
	l := o.lateness
	if l == nil {
		return rows, nil
	}
	s, err := readLateness(st, o.id)
	if err != nil {
		return nil, err
	}
	wm, err := l.watermark(s)
	if err != nil || wm.IsNull() {
		return rows, err
	}
	kept := rows[:0:0]
	for _, r := range rows {
		if l.late(r, wm) {
			s.dropped++
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) == len(rows) {
		return rows, nil
	}
	return kept, writeLateness(st, o.id, s)
}

// checkFinal fails when a table delta would insert or delete a row behind
// the table's watermark.
func checkFinal(st state.Reader, o *object, delta zset.Batch) error {
	l := o.lateness
	if l == nil {
		return nil
	}
	s, err := readLateness(st, o.id)
	if err != nil {
		return err
	}
	wm, err := l.watermark(s)
	if err != nil || wm.IsNull() {
		return err
	}
	for _, e := range delta {
		if l.late(e.Row, wm) {
			col := o.cols[l.col]
			return errs.Newf(errs.PrerequisiteState,
				"cannot change a row of table %q whose %s (%s) is before the table's watermark (%s): rows behind the watermark are final",
				o.name, col.Name, types.Format(e.Row[l.col], col.Type), types.Format(wm, col.Type))
		}
	}
	return nil
}

// advanceWatermark moves the table's watermark past the rows a statement
// wrote.
func advanceWatermark(st state.Store, o *object, delta zset.Batch) error {
	l := o.lateness
	if l == nil {
		return nil
	}
	s, err := readLateness(st, o.id)
	if err != nil {
		return err
	}
	before := s.maxTime
	for _, e := range delta {
		t := e.Row[l.col]
		if e.Weight > 0 && !t.IsNull() && (s.maxTime.IsNull() || types.Compare(t, s.maxTime) > 0) {
			s.maxTime = t
		}
	}
	if s.maxTime == before {
		return nil
	}
	return writeLateness(st, o.id, s)
}

// releaseClosedWindows lets every materialized view release the state of
// the windows closed by the watermarks of the tables in deltas. It runs
// after the views have taken the deltas in: a window's state goes only
// once every admitted row has reached it (in a transaction block the
// views take the block's changes at COMMIT, after its statements have
// moved the watermark).
func releaseClosedWindows(st state.Store, w *epochWrite, deltas map[string]zset.Batch) error {
	for name := range deltas {
		o := w.cat.lookup(name)
		if o == nil || o.lateness == nil {
			continue
		}
		s, err := readLateness(st, o.id)
		if err != nil {
			return err
		}
		wm, err := o.lateness.watermark(s)
		if err != nil || wm.IsNull() {
			return err
		}
		for _, v := range w.cat.matviewsInOrder() {
			if err := v.circuit.ReleaseClosedWindows(st, o.name, o.lateness.col, wm); err != nil {
				return err
			}
		}
	}
	return nil
}
