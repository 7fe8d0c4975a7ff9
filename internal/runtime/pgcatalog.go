package runtime

import (
	"context"
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/internal/errs"
	"hash/fnv"
	"sort"
	"strings"
	"sync"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// PostgreSQL's system catalogs (schema pg_catalog) and information_schema
// are system relations computed from RockStream's catalog when a query
// reads them, so that clients (psql, pgcli, JDBC, drivers loading types)
// find the tables, views and columns they look for. The relations have
// PostgreSQL 15's columns (pgcatalog_columns.go); those RockStream has
// nothing for are empty. docs/catalog.md lists what each holds.
//
// OIDs are stable: built-in objects have PostgreSQL's OIDs, and a user
// relation's OIDs derive from its durable catalog id (userOID), so they
// survive restarts.
//
// Unqualified names find pg_catalog's relations first, as PostgreSQL's
// search_path ("pg_catalog, public") does; information_schema's need the
// schema name.

// Namespace, role and database OIDs.
const (
	pgCatalogNamespace      = 11
	publicNamespace         = 2200
	infoSchemaNamespace     = 13207
	rockstreamNamespace     = 16383
	bootstrapRoleOID        = 10
	databaseOwnerRoleOID    = 6171 // pg_database_owner, which owns public
	databaseOID             = 16384
	defaultCollationOID     = 100
	cCollationOID           = 950
	heapAccessMethodOID     = 2
	btreeAccessMethodOID    = 403
	firstUserOID            = 16384
	userOIDsPerObject       = 4096
	bootstrapRole           = "rockstream"
	defaultDatabase         = "rockstream"
	pgCatalogSchema         = "pg_catalog"
	informationSchema       = "information_schema"
	rockstreamCatalogSchema = "rockstream_catalog"
)

// Offsets of a user relation's objects from its OID (userOID).
const (
	pkIndexOffset      = 1  // the primary key's index (pg_class, pg_index)
	pkConstraintOffset = 2  // the primary key's pg_constraint row
	attrDefOffset      = 16 // + column number - 1: the column's pg_attrdef row
)

// userOID is the OID of the user relation with catalog id id: each object
// owns a block of userOIDsPerObject OIDs from firstUserOID, for itself
// and its index, constraint and column defaults.
func userOID(id uint64) uint32 { return uint32(firstUserOID + id*userOIDsPerObject) }

// sessionInfo is what the system catalog shows of the session reading
// it: its role and database (the session settings session_authorization
// and current_database, which the wire gateway sets from the startup
// message).
type sessionInfo struct {
	user, database string
	setting        func(name string) string
	pid            int32 // pg_backend_pid()
}

// sessionInfo returns s's identity.
func (s *Session) sessionInfo() *sessionInfo {
	return &sessionInfo{
		user:     s.Setting("session_authorization"),
		database: s.Setting("current_database"),
		setting:  s.Setting,
		pid:      backendPID(s),
	}
}

// withSession returns a copy of c that answers catalog queries for
// session s reading r: system functions, OID alias casts and per-row
// subqueries are bound against it. The copy shares c's objects.
func (c *catalog) withSession(ctx context.Context, s *sessionInfo, r state.Reader) *catalog {
	cp := *c
	cp.ctx = ctx
	cp.session = s
	cp.pg = &pgSnapshot{}
	cp.reader = r
	return &cp
}

// InSession implements sql.SystemCatalog: the copy made by withSession
// binds a session's query.
func (c *catalog) InSession() bool { return c.session != nil && c.reader != nil }

// RunSubquery implements sql.SubqueryRunner: it runs a subquery of a
// session's query over the relations that query reads.
func (c *catalog) RunSubquery(p plan.Node) ([]zset.Row, error) {
	if c.reader == nil {
		return nil, errs.New(errs.Internal, "internal error: a per-row subquery outside a session's query")
	}
	return runQuery(c.ctx, c.reader, c, p)
}

// role is one row of pg_roles.
type role struct {
	oid   uint32
	name  string
	super bool
	login bool
}

// roles returns the roles pg_roles lists: the bootstrap superuser,
// pg_database_owner (as in PostgreSQL 15, the owner of schema public), the
// roles created with CREATE ROLE (roles.go), and the session's role when
// it is neither (a connection the gateway trusts without a role).
func (c *catalog) roles() []role {
	out := []role{{oid: bootstrapRoleOID, name: bootstrapRole, super: true, login: true},
		{oid: databaseOwnerRoleOID, name: "pg_database_owner"}}
	seen := map[string]bool{bootstrapRole: true, "pg_database_owner": true}
	if c.reader != nil {
		_ = c.reader.Scan(rolePrefix, state.PrefixEnd(rolePrefix), func(k, _ []byte) bool {
			r, err := readRole(c.reader, string(k[len(rolePrefix):]))
			if err != nil || r == nil || seen[r.Name] {
				return err == nil
			}
			seen[r.Name] = true
			out = append(out, role{oid: roleOID(r.Name), name: r.Name, super: r.Superuser, login: r.CanLogin})
			return true
		})
	}
	if c.session != nil && c.session.user != "" && !seen[c.session.user] {
		out = append(out, role{oid: roleOID(c.session.user), name: c.session.user, super: true, login: true})
	}
	return out
}

// roleOID gives a role a stable OID from its name (roles are stored by
// name, without an id), above the OIDs of relations.
func roleOID(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return 1<<31 | h.Sum32()>>1
}

// namespace is one row of pg_namespace.
type namespace struct {
	oid  uint32
	name string
}

var namespaces = []namespace{
	{pgCatalogNamespace, pgCatalogSchema},
	{publicNamespace, "public"},
	{infoSchemaNamespace, informationSchema},
	{rockstreamNamespace, rockstreamCatalogSchema},
}

func namespaceOID(schema string) uint32 {
	for _, n := range namespaces {
		if n.name == schema {
			return n.oid
		}
	}
	return 0
}

// pgRelation is a relation as the system catalog shows it: a user object
// or a system relation.
type pgRelation struct {
	oid       uint32
	schema    string
	name      string
	relkind   byte
	cols      []plan.Column
	obj       *object         // user objects
	spec      *pgRelationSpec // system relations
	notNull   []bool
	defaults  []string // pg_get_expr text of column defaults; "" when none
	pk        []int
	viewQuery string
}

// pgSnapshot is the catalog's relations indexed for one query, computed
// the first time the query needs them.
type pgSnapshot struct {
	once  sync.Once
	rels  []*pgRelation // by schema, name
	byOID map[uint32]*pgRelation
}

// snapshot returns c's relations as the system catalog shows them.
func (c *catalog) snapshot() *pgSnapshot {
	p := c.pg
	if p == nil {
		p = &pgSnapshot{}
	}
	p.once.Do(func() { p.build(c) })
	return p
}

func (p *pgSnapshot) build(c *catalog) {
	p.byOID = map[uint32]*pgRelation{}
	for _, o := range c.byName {
		r := &pgRelation{oid: userOID(o.id), schema: "public", name: o.name, cols: o.cols, obj: o,
			notNull: make([]bool, len(o.cols)), defaults: make([]string, len(o.cols)), pk: o.pk}
		switch o.kind {
		case sql.Table:
			r.relkind = 'r'
			copy(r.notNull, o.notNull)
			for _, i := range o.pk {
				r.notNull[i] = true
			}
			for i, d := range o.defaults {
				if d != nil {
					r.defaults[i] = defaultText(d)
				}
			}
		case sql.MaterializedView:
			r.relkind = 'm'
			r.viewQuery = viewQueryText(o)
		default:
			r.relkind = 'v'
			r.viewQuery = viewQueryText(o)
		}
		p.rels = append(p.rels, r)
	}
	for i := range pgRelationSpecs {
		s := &pgRelationSpecs[i]
		schema, name, _ := strings.Cut(s.name, ".")
		p.rels = append(p.rels, &pgRelation{oid: s.oid, schema: schema, name: name, relkind: s.relkind,
			cols: pgColumns[s.name], spec: s, notNull: make([]bool, len(pgColumns[s.name])),
			defaults: make([]string, len(pgColumns[s.name]))})
	}
	sort.Slice(p.rels, func(i, j int) bool {
		a, b := p.rels[i], p.rels[j]
		if a.schema != b.schema {
			return a.schema < b.schema
		}
		return a.name < b.name
	})
	for _, r := range p.rels {
		p.byOID[r.oid] = r
	}
}

// viewQueryText is a view's defining SELECT as pg_get_viewdef shows it:
// the parsed query printed back (PostgreSQL's deparser), which may differ
// in layout from PostgreSQL's own rendering.
func viewQueryText(o *object) string {
	if o.query == nil {
		return o.sqlText
	}
	text, err := pg.Deparse(&pg.ParseResult{Version: parseTreeVersion, Stmts: []*pg.RawStmt{{Stmt: o.query}}})
	if err != nil {
		return o.sqlText
	}
	return text
}

// parseTreeVersion is the version of pg_query's parse trees, which
// Deparse requires.
var parseTreeVersion = func() int32 {
	r, err := pg.Parse("SELECT")
	if err != nil {
		panic(err)
	}
	return r.Version
}()

// relation returns the relation with the given OID, or nil.
func (p *pgSnapshot) relation(oid uint32) *pgRelation { return p.byOID[oid] }

// find returns the relation named name ("[schema.]relation"), resolving
// an unqualified name as search_path does, or nil.
func (p *pgSnapshot) find(name string) *pgRelation {
	schema, rel, qualified := strings.Cut(name, ".")
	if !qualified {
		rel = schema
		for _, s := range []string{pgCatalogSchema, "public"} {
			if r := p.find(s + "." + rel); r != nil {
				return r
			}
		}
		return nil
	}
	for _, r := range p.rels {
		if r.schema == schema && r.name == rel {
			return r
		}
	}
	return nil
}

// visible reports whether the relation is found by its unqualified name
// (pg_table_is_visible).
func (p *pgSnapshot) visible(r *pgRelation) bool {
	if r.schema != pgCatalogSchema && r.schema != "public" {
		return false
	}
	return p.find(r.name) == r
}

// pgColumns are the system relations' columns, parsed from
// pgRelationSpecs.
var pgColumns = map[string][]plan.Column{}

func init() {
	for _, s := range pgRelationSpecs {
		cols, err := parseColumnSpec(s.cols)
		if err != nil {
			panic(fmt.Sprintf("runtime: columns of %s: %v", s.name, err))
		}
		pgColumns[s.name] = cols
	}
}

// parseColumnSpec reads "name type, ..." (types as CREATE TABLE writes
// them; "char" quoted).
func parseColumnSpec(spec string) ([]plan.Column, error) {
	var cols []plan.Column
	for _, part := range strings.Split(spec, ", ") {
		name, typ, ok := strings.Cut(strings.TrimSpace(part), " ")
		if !ok {
			return nil, fmt.Errorf("bad column %q", part)
		}
		t, err := specType(typ)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", name, err)
		}
		cols = append(cols, plan.Column{Name: name, Type: t})
	}
	return cols, nil
}

func specType(s string) (types.Type, error) {
	if elem, ok := strings.CutSuffix(s, "[]"); ok {
		t, err := specType(elem)
		return types.ArrayType(t), err
	}
	switch s {
	case `"char"`:
		return types.Of(types.Char), nil
	case "varchar(3)":
		return types.VarcharType(3), nil
	case "timestamptz(2)":
		t := types.Of(types.TimestampTZ)
		t.Precision = 2
		return t, nil
	}
	return types.TypeByName([]string{s}, nil)
}

// pgRelationObject returns the system relation object for name, or nil
// when name is not one of pg_catalog's or information_schema's.
func (c *catalog) pgRelationObject(name string) *object {
	spec := pgSpecByName[name]
	if spec == nil {
		if strings.Contains(name, ".") {
			return nil
		}
		if spec = pgSpecByName[pgCatalogSchema+"."+name]; spec == nil {
			return nil
		}
	}
	build := pgRowBuilders[spec.name]
	cols := pgColumns[spec.name]
	return &object{name: spec.name, kind: sql.Table, cols: cols,
		system: func(state.Reader) (zset.Batch, error) {
			if build == nil {
				return nil, nil
			}
			rows, err := build(c)
			if err != nil {
				return nil, err
			}
			out := make(zset.Batch, len(rows))
			for i, r := range rows {
				out[i] = zset.Entry{Row: r, Weight: 1}
			}
			return out, nil
		}}
}

var pgSpecByName = map[string]*pgRelationSpec{}

func init() {
	for i := range pgRelationSpecs {
		pgSpecByName[pgRelationSpecs[i].name] = &pgRelationSpecs[i]
	}
}

// rowBuilder fills rows of one system relation by column name; columns
// left unset hold the zero value of their type in pg_catalog (catalog
// columns are NOT NULL there) and NULL in information_schema.
type rowBuilder struct {
	cols  []plan.Column
	index map[string]int
	zero  zset.Row
	rows  []zset.Row
	cur   zset.Row
}

func newRowBuilder(name string) *rowBuilder {
	cols := pgColumns[name]
	b := &rowBuilder{cols: cols, index: make(map[string]int, len(cols)), zero: make(zset.Row, len(cols))}
	nullDefault := strings.HasPrefix(name, informationSchema+".")
	for i, c := range cols {
		b.index[c.Name] = i
		if !nullDefault {
			b.zero[i] = zeroValue(c.Type)
		}
	}
	return b
}

func zeroValue(t types.Type) types.Value {
	switch t.ID {
	case types.Oid:
		return types.MakeOID(0)
	case types.RegProc, types.RegType, types.RegClass, types.RegNamespace, types.RegRole:
		return types.MakeReg(t.ID, 0, "")
	case types.Bool:
		return types.MakeBool(false)
	case types.Int2, types.Int4, types.Int8:
		return types.MakeInt(t.ID, 0)
	case types.Float4:
		return types.MakeFloat4(0)
	case types.Name, types.Char:
		return types.MakeText("")
	}
	return types.Null
}

// row starts a new row.
func (b *rowBuilder) row() *rowBuilder {
	b.cur = append(zset.Row(nil), b.zero...)
	b.rows = append(b.rows, b.cur)
	return b
}

// set sets column name of the current row; a Go value is converted to
// the column's type (string, bool, int, uint32, nil for NULL).
func (b *rowBuilder) set(name string, v any) *rowBuilder {
	i, ok := b.index[name]
	if !ok {
		panic("runtime: no column " + name)
	}
	t := b.cols[i].Type
	var val types.Value
	switch x := v.(type) {
	case nil:
		val = types.Null
	case types.Value:
		val = x
	case string:
		val = types.MakeText(x)
		if t.ID == types.Char {
			val = types.MakeText(x[:min(len(x), 1)])
		}
	case byte:
		val = types.MakeText(string([]byte{x}))
	case bool:
		val = types.MakeBool(x)
	case int:
		switch t.ID {
		case types.Oid:
			val = types.MakeOID(uint32(x))
		case types.Float4:
			val = types.MakeFloat4(float32(x))
		default:
			val = types.MakeInt(t.ID, int64(x))
		}
	case uint32:
		if types.IsReg(t.ID) {
			val = types.MakeReg(t.ID, x, "")
		} else {
			val = types.MakeOID(x)
		}
	default:
		panic(fmt.Sprintf("runtime: cannot set %s to %T", name, v))
	}
	b.cur[i] = val
	return b
}
