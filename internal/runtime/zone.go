package runtime

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
)

// The session time zone: the TimeZone setting, which the session keeps
// in the spelling SHOW TimeZone shows (session.Canonical). Every
// statement is bound in it (statementParams.zone, sql.Binder.Zone); a
// materialized view keeps the zone of the session that created it
// (object.zone) and is always bound in that one.

// Zone returns the session time zone.
func (s *Session) Zone() types.Zone { return s.resolved().zone }

// recordZone is the zone a catalog record names (UTC when none).
func recordZone(name string) (types.Zone, error) {
	if name == "" {
		return types.UTCZone, nil
	}
	z, err := types.LoadZone(name)
	if err != nil {
		return types.UTCZone, errs.Newf(errs.DataCorrupted, "a materialized view's time zone %q is not known to this build's zone database", name)
	}
	return z, nil
}

// setZoneInterval runs SET TIME ZONE INTERVAL '...' [fields]: the
// interval is the offset east of UTC, as PostgreSQL takes it.
func (s *Session) setZoneInterval(tc *pg.TypeCast) (*Result, error) {
	c := tc.Arg.GetAConst()
	t, err := sql.TypeOf(tc.TypeName)
	if err != nil {
		return nil, err
	}
	if c == nil || c.GetSval() == nil || t.ID != types.Interval {
		return nil, errs.New(errs.InvalidParameterValue, `invalid value for parameter "TimeZone": SET TIME ZONE takes a string, a number or an INTERVAL literal`)
	}
	iv, err := types.Parse(t, c.GetSval().Sval)
	if err != nil {
		return nil, err
	}
	z, err := types.IntervalZone(iv.Interval())
	if err != nil {
		return nil, err
	}
	s.settings.Put("timezone", z.Name())
	return &Result{Tag: "SET"}, nil
}

// explainedZone is the time zone EXPLAIN INCREMENTAL names for the
// materialized view name: the one it is maintained in, when not UTC.
func explainedZone(cat *catalog, name string) string {
	if name == "" {
		return ""
	}
	if o := cat.lookup(name); o != nil && o.kind == sql.MaterializedView && !o.zone.IsUTC() {
		return o.zone.Name()
	}
	return ""
}
