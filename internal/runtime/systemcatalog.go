package runtime

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The catalog as internal/pgcatalog projects it into pg_catalog and
// information_schema: catalogSource describes the catalog's relations,
// roles and settings to the projection, and the catalog's session copy
// (withSession) answers the system functions and the OID alias types'
// lookups through it.

// sessionInfo returns what the system catalog shows of s. Readers do
// not change it, so the one returned last is returned again while it
// shows the same user, role and database.
func (s *Session) sessionInfo() *pgcatalog.Session {
	user, role, db := s.sessionUser(), s.setRole(), s.resolved().database
	if i := s.info; i != nil && i.User == user && i.Role == role && i.Database == db {
		return i
	}
	s.info = &pgcatalog.Session{
		User:      user,
		Role:      role,
		Database:  db,
		Setting:   s.Setting,
		SetConfig: s.setConfig,
		PID:       backendPID(s),
	}
	return s.info
}

// backendPID gives a session a stable number for pg_backend_pid(),
// computed once per session.
func backendPID(s *Session) int32 {
	if s.pid == 0 {
		h := fnv.New32a()
		fmt.Fprintf(h, "%p", s)
		s.pid = int32(h.Sum32()&0x3fffffff) | 1<<30
	}
	return s.pid &^ (1 << 30)
}

// withSession returns a copy of c that answers catalog queries for
// session s reading r: system functions, OID alias casts and per-row
// subqueries are bound against it. The copy shares c's objects.
func (c *catalog) withSession(ctx context.Context, s *pgcatalog.Session, r state.Reader) *catalog {
	return c.withSessionPath(ctx, s, r, nil)
}

// withSessionPath is withSession with the search path path, as
// sessionPath gives it for a copy reading r; nil: the copy's sessionPath.
func (c *catalog) withSessionPath(ctx context.Context, s *pgcatalog.Session, r state.Reader, path []string) *catalog {
	cp := *c
	cp.ctx = ctx
	cp.reader = r
	if s != nil && s.Setting != nil {
		if path == nil {
			path = cp.sessionPath(s)
		}
		cp.path = path
		cp.database = s.Database
	}
	cp.pg = pgcatalog.New(catalogSource{&cp}, s)
	return &cp
}

// InSession implements sql.SystemCatalog: the copy made by withSession
// binds a session's query.
func (c *catalog) InSession() bool { return c.pg != nil && c.reader != nil }

// RunSubquery implements sql.SubqueryRunner: it runs a subquery of a
// session's query over the relations that query reads.
func (c *catalog) RunSubquery(p plan.Node) ([]zset.Row, error) {
	if c.reader == nil {
		return nil, errs.New(errs.Internal, "internal error: a per-row subquery outside a session's query")
	}
	return runQuery(c.ctx, c.reader, c, p)
}

// systemCatalog returns the system catalog c's queries read: the session
// copy's, or outside a session a new projection of c.
func (c *catalog) systemCatalog() *pgcatalog.Catalog {
	if c.pg != nil {
		return c.pg
	}
	return pgcatalog.New(catalogSource{c}, nil)
}

// SystemFunction implements sql.SystemCatalog.
func (c *catalog) SystemFunction(name string) []sql.SystemFunc {
	if c.pg == nil {
		return nil
	}
	return c.pg.SystemFunction(name)
}

// RegLookup implements types.RegCatalog.
func (c *catalog) RegLookup(id types.TypeID, name string) (uint32, string, error) {
	return c.systemCatalog().RegLookup(id, name)
}

// RegName implements types.RegCatalog.
func (c *catalog) RegName(id types.TypeID, oid uint32) (string, bool) {
	return c.systemCatalog().RegName(id, oid)
}

// pgRelationObject returns the system relation object for name, or nil
// when name is not one of pg_catalog's or information_schema's.
func (c *catalog) pgRelationObject(name string) *object {
	t := c.systemCatalog().Table(name)
	if t == nil {
		return nil
	}
	return &object{name: t.Name, kind: sql.Table, cols: t.Cols, systemCols: t.SystemCols,
		system: func(state.Reader) (zset.Batch, error) {
			rows, err := t.Rows()
			if err != nil || rows == nil {
				return nil, err
			}
			out := make(zset.Batch, len(rows))
			for i, r := range rows {
				out[i] = zset.Entry{Row: r, Weight: 1}
			}
			return out, nil
		}}
}

// catalogSource describes a catalog to the system catalog projection.
type catalogSource struct{ c *catalog }

// Relations implements pgcatalog.Source.
func (s catalogSource) Relations() []pgcatalog.Relation {
	out := make([]pgcatalog.Relation, 0, len(s.c.byName))
	for _, o := range s.c.byName {
		sch, name := s.c.splitKey(o.name)
		if sch == publicSchema {
			sch = ""
		}
		rel := pgcatalog.Relation{ID: o.id, Schema: sch, Name: name, Kind: o.kind, Cols: o.cols,
			NotNull: o.notNull, Defaults: o.defaults, PK: o.pk, Options: relOptions(o),
			SQLText: o.sqlText, Query: s.c.displayQuery(o), Attnums: o.attnums, Dropped: o.dropped, Indexes: s.c.pgIndexes(o), Reads: s.c.readIDs(o)}
		if s.c.reader != nil {
			rel.Owner, rel.ACL = s.relationACL(o)
		}
		out = append(out, rel)
	}
	return append(out, s.c.systemRelations()...)
}

// readIDs returns the ids of the relations view o's definition names
// directly, in increasing order; nil for a table.
func (c *catalog) readIDs(o *object) []uint64 {
	var ids []uint64
	if o.inputs != nil {
		for _, img := range o.inputs {
			ids = append(ids, img.ID)
		}
	} else {
		for _, d := range o.deps {
			if t := c.byName[d]; t != nil {
				ids = append(ids, t.id)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Roles implements pgcatalog.Source: the roles stored in the reader of
// a session's query (roles.go); none outside one.
func (s catalogSource) Roles() []pgcatalog.Role {
	r := s.c.reader
	if r == nil {
		return nil
	}
	var out []pgcatalog.Role
	_ = scanRoles(r, func(role *Role) error {
		out = append(out, pgcatalog.Role{Name: role.Name, Superuser: role.Superuser, CanLogin: role.CanLogin,
			CreateRole: role.CreateRole, CreateDB: role.CreateDB, NoInherit: role.NoInherit})
		return nil
	})
	return out
}

// RoleSettings implements pgcatalog.RoleSettingsSource: the setting
// defaults stored in the reader of a session's query (role_settings.go);
// none outside one.
func (s catalogSource) RoleSettings() []pgcatalog.RoleSetting {
	if s.c.reader == nil {
		return nil
	}
	all, err := scanRoleSettings(s.c.reader)
	if err != nil {
		return nil
	}
	out := make([]pgcatalog.RoleSetting, len(all))
	for i, rs := range all {
		out[i] = pgcatalog.RoleSetting{Database: rs.Database, Role: rs.Role, Config: rs.Config}
	}
	return out
}

// Settings implements pgcatalog.Source: the session settings
// (internal/session).
func (catalogSource) Settings() []pgcatalog.Setting {
	defs := session.Definitions()
	out := make([]pgcatalog.Setting, len(defs))
	for i, d := range defs {
		out[i] = pgcatalog.Setting{Name: d.Name, Default: d.Default, Description: d.Description, Bool: d.Bool}
	}
	return out
}

// relOptions returns a table's storage parameters as pg_class's
// reloptions lists them ("name=value"), which psql's \d+ shows as its
// Options; nil for other objects and tables without any.
func relOptions(o *object) []string {
	if o.kind != sql.Table {
		return nil
	}
	var opts []string
	if o.appendOnly {
		opts = append(opts, "append_only=true")
	}
	if o.unstored {
		opts = append(opts, "materialized=false")
	}
	if l := o.lateness; l != nil {
		opts = append(opts, "event_time="+o.cols[l.col].Name,
			"lateness="+types.Format(l.bound, types.Of(types.Interval)))
	}
	return opts
}

// quoteIdent is quote_ident (types.QuoteIdent).
func quoteIdent(s string) string { return types.QuoteIdent(s) }
