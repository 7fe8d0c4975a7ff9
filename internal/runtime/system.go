package runtime

import (
	"sort"
	"strings"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// System relations live in the schema rockstream_catalog. They are read
// like tables, but their rows are computed from the engine's state when a
// query reads them: they cannot be written, dropped, read AS OF an epoch
// or read by a materialized view (nothing maintains them incrementally).
// An ordinary view may read them.

// systemRelation returns the system relation called name in the catalog
// c, or nil.
func (c *catalog) systemRelation(name string) *object {
	switch name {
	case "rockstream_catalog.sources", "rockstream_catalog.sinks":
		return &object{name: name, kind: sql.Table, cols: connectorColumns,
			system: connectorRowsOf(c, name == "rockstream_catalog.sinks")}
	case "rockstream_catalog.lateness":
		return &object{name: name, kind: sql.Table, cols: latenessColumns,
			system: func(r state.Reader) (zset.Batch, error) { return latenessRows(r, c) }}
	}
	return c.observedRelation(name)
}

// systemRelationNames are the system relations, in the order that gives
// their OIDs in pg_class (from systemRelationOID): a new one goes at the
// end, so that each keeps its OID.
var systemRelationNames = []string{
	"rockstream_catalog.sources", "rockstream_catalog.sinks", "rockstream_catalog.lateness",
	"rockstream_catalog.sessions", "rockstream_catalog.views", "rockstream_catalog.frontiers",
	"rockstream_catalog.progress", "rockstream_catalog.workers", "rockstream_catalog.shards",
}

// systemRelationOID is the pg_class OID of the first system relation:
// above the OIDs PostgreSQL's initdb assigns, below the schema
// rockstream_catalog's and the user relations'.
const systemRelationOID = 16300

// systemRelations describes the system relations to the system catalog,
// so that pg_class, pg_attribute and psql's \dS list them.
func (c *catalog) systemRelations() []pgcatalog.Relation {
	var out []pgcatalog.Relation
	for i, name := range systemRelationNames {
		o := c.systemRelation(name)
		if o == nil {
			continue
		}
		schema, rel, _ := strings.Cut(name, ".")
		out = append(out, pgcatalog.Relation{SystemOID: uint32(systemRelationOID + i), Schema: schema, Name: rel,
			Kind: sql.Table, Cols: o.cols})
	}
	return out
}

func systemRelationError(o *object, what string) error {
	return errs.Newf(errs.WrongObjectType, "cannot %s %s: it is a system relation", what, o.name)
}

// systemRows returns a system relation's rows now; system relations keep
// no history.
func systemRows(r state.Reader, o *object, asOf uint64) (zset.Batch, error) {
	if asOf != asOfNow {
		return nil, errs.Newf(errs.FeatureNotSupported, "AS OF EPOCH reads materialized views only; %s keeps no history", o.name)
	}
	return o.system(r)
}

// checkViewInputs fails when a materialized view's circuit reads a system
// relation.
func checkViewInputs(cat *catalog, c *diff.Circuit) error {
	for _, r := range c.Relations() {
		if o, _ := cat.input(r); o != nil && o.system != nil {
			return errs.Newf(errs.FeatureNotSupported,
				"a materialized view cannot read the system relation %s: it is not maintained incrementally", o.name)
		}
	}
	return nil
}

// latenessColumns are the columns of rockstream_catalog.lateness: one row
// per table with an event-time declaration. Times are shown as
// timestamptz (a timestamp column's values read in UTC).
var latenessColumns = []plan.Column{
	{Name: "table_name", Type: types.Of(types.Text)},
	{Name: "event_time_column", Type: types.Of(types.Text)},
	{Name: "lateness", Type: types.Of(types.Interval)},
	{Name: "max_event_time", Type: types.Of(types.TimestampTZ)},
	{Name: "watermark", Type: types.Of(types.TimestampTZ)},
	{Name: "late_rows_dropped", Type: types.Of(types.Int8)},
}

func latenessRows(r state.Reader, c *catalog) (zset.Batch, error) {
	var tables []*object
	for _, o := range c.byName {
		if o.lateness != nil {
			tables = append(tables, o)
		}
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].name < tables[j].name })
	var out zset.Batch
	tz := types.Of(types.TimestampTZ)
	for _, o := range tables {
		l := o.lateness
		s, err := readLateness(r, o.id)
		if err != nil {
			return nil, err
		}
		wm, err := l.watermark(s)
		if err != nil {
			return nil, err
		}
		maxTime, err := types.Cast(s.maxTime, tz, false)
		if err != nil {
			return nil, err
		}
		if wm, err = types.Cast(wm, tz, false); err != nil {
			return nil, err
		}
		out = append(out, zset.Entry{Row: zset.Row{
			types.MakeText(o.name), types.MakeText(o.cols[l.col].Name), l.bound,
			maxTime, wm, types.MakeInt(types.Int8, s.dropped),
		}, Weight: 1})
	}
	return out, nil
}
