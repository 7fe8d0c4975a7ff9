package pgcatalog

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// PostgreSQL's system catalogs (schema pg_catalog) and information_schema
// are system relations computed from RockStream's catalog when a query
// reads them, so that clients (psql, pgcli, JDBC, drivers loading types)
// find the tables, views and columns they look for. The relations have
// PostgreSQL 15's columns (columns.go); those RockStream has
// nothing for are empty. docs/catalog.md lists what each holds.
//
// OIDs are stable: built-in objects have PostgreSQL's OIDs, and a user
// relation's OIDs derive from its durable catalog id (userOID), so they
// survive restarts.
//
// Unqualified names find pg_catalog's relations first, as PostgreSQL's
// search_path ("pg_catalog, public") does; information_schema's need the
// schema name.

// BootstrapRole is the superuser every catalog has and the owner of its
// objects; DefaultDatabase is the database a session is in when it names
// none.
const (
	BootstrapRole   = "rockstream"
	DefaultDatabase = "rockstream"
)

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
	bootstrapRole           = BootstrapRole
	defaultDatabase         = DefaultDatabase
	pgCatalogSchema         = "pg_catalog"
	informationSchema       = "information_schema"
	rockstreamCatalogSchema = "rockstream_catalog"
)

// Offsets of a user relation's objects from its OID (userOID).
const (
	pkIndexOffset      = 1  // the primary key's index (pg_class, pg_index)
	pkConstraintOffset = 2  // the primary key's pg_constraint row
	ruleOffset         = 3  // a view's _RETURN rule (pg_rewrite)
	attrDefOffset      = 16 // + column number - 1: the column's pg_attrdef row
	// uniqueConstraintOffset is, from a UNIQUE constraint's index OID,
	// the OID of the constraint's pg_constraint row.
	uniqueConstraintOffset = 1
)

// userOID is the OID of the user relation with catalog id id: each object
// owns a block of userOIDsPerObject OIDs from firstUserOID, for itself
// and its index, constraint and column defaults.
func userOID(id uint64) uint32 { return uint32(firstUserOID + id*userOIDsPerObject) }

// Relation is a user relation as the catalog describes it to the
// projection, or one of RockStream's system relations (SystemOID).
type Relation struct {
	// ID is the relation's durable catalog id; its OIDs derive from it.
	ID uint64
	// SystemOID, when not 0, makes the relation a system relation (of
	// rockstream_catalog) with that OID, below the user relations' OIDs:
	// it has no catalog id, comment, owner or privileges of its own, and
	// is read-only.
	SystemOID uint32
	// Schema is the relation's schema, "" for public; Name its name in
	// it.
	Schema string
	Name   string
	Kind   sql.RelationKind
	Cols   []plan.Column

	// Tables.
	NotNull  []bool
	Defaults []plan.Expr // nil entry: DEFAULT NULL
	PK       []int       // primary-key column indexes; empty when none
	// Options are the table's storage parameters as pg_class's reloptions
	// lists them ("name=value").
	Options []string
	// Attnums are the columns' numbers (nil: 1..n) and Dropped the numbers
	// of dropped columns, which pg_attribute lists as attisdropped.
	Attnums, Dropped []int

	// Views and materialized views.
	SQLText string   // the defining SELECT, as written
	Query   *pg.Node // the defining SELECT, parsed; nil when not kept
	// Reads are the catalog ids of the user relations the definition
	// names directly, which pg_depend lists as its rule's dependencies.
	Reads []uint64

	// Owner is the relation's owner ("": the bootstrap superuser); ACL
	// its ACL items as pg_class.relacl shows them, nil for the default.
	Owner string
	ACL   []string
	// Indexes are the relation's secondary indexes (CREATE INDEX), in
	// any order; a primary key's index is not among them.
	Indexes []Index
}

// Index is a secondary index of a relation.
type Index struct {
	// ID is the index's durable catalog id; its OID derives from it.
	ID   uint64
	Name string
	Cols []int // the relation's column indexes, in index key order
	// Unique is set for a UNIQUE index, NullsNotDistinct when its NULLs
	// are equal to each other.
	Unique, NullsNotDistinct bool
	// Constraint is set for the index of a UNIQUE constraint, which
	// pg_constraint shows too.
	Constraint bool
}

// Role is a role created with CREATE ROLE.
type Role struct {
	Name       string
	Superuser  bool
	CanLogin   bool
	CreateRole bool
	CreateDB   bool
	NoInherit  bool
}

// Setting is a session setting the engine knows: its name, default and
// description, and whether it takes a boolean.
type Setting struct {
	Name, Default, Description string
	Bool                       bool
}

// Source is the read-only description of a catalog that the projection
// reads: the relations, roles and settings it lists. Its methods are
// called while a query reads the system relations, never before.
type Source interface {
	// Relations returns the user relations, in any order.
	Relations() []Relation
	// Roles returns the roles created with CREATE ROLE.
	Roles() []Role
	// Settings returns the session settings the engine knows.
	Settings() []Setting
	// Comments returns the comments COMMENT ON attached to the relation
	// with catalog id id and its columns (comments.go).
	Comments(id uint64) (Comments, error)
}

// Session is what the system catalog shows of the session reading it:
// its role and database (the session settings session_authorization and
// current_database, which the wire gateway sets from the startup
// message), its settings and its pg_backend_pid().
type Session struct {
	User, Database string
	// Role is the role SET ROLE chose (current_user); "" for none.
	Role    string
	Setting func(name string) string
	// SetConfig, when set, changes a setting as set_config does and
	// returns its new value.
	SetConfig func(name, value string, local bool) (string, error)
	PID       int32
}

// Catalog is the system catalog one query reads: pg_catalog's and
// information_schema's relations, the system information functions and
// the names of the OID alias types, projected from a Source. The
// relations are indexed the first time the query needs them, so a
// Catalog belongs to one query.
type Catalog struct {
	src Source
	// session is the session whose query reads the catalog; nil when the
	// catalog answers none (then it has no system functions).
	session *Session
	pg      pgSnapshot
	// settings are the Source's settings by name, read once.
	settings struct {
		once   sync.Once
		sorted []Setting
		known  map[string]bool
	}
}

// sortedSettings returns the settings the Source knows, by name.
func (c *Catalog) sortedSettings() []Setting {
	s := &c.settings
	s.once.Do(func() {
		s.sorted = append([]Setting(nil), c.src.Settings()...)
		sort.Slice(s.sorted, func(i, j int) bool { return s.sorted[i].Name < s.sorted[j].Name })
		s.known = make(map[string]bool, len(s.sorted))
		for _, st := range s.sorted {
			s.known[st.Name] = true
		}
	})
	return s.sorted
}

// New returns the system catalog of src as session s sees it; s is nil
// outside a session's query.
func New(src Source, s *Session) *Catalog {
	return &Catalog{src: src, session: s}
}

// role is one row of pg_roles.
type role struct {
	oid   uint32
	name  string
	super bool
	login bool
	// createRole, createDB and noInherit are the other attributes.
	createRole, createDB, noInherit bool
}

// roles returns the roles pg_roles lists: the bootstrap superuser,
// pg_database_owner (as in PostgreSQL 15, the owner of schema public), the
// roles created with CREATE ROLE, and the session's role when
// it is neither (a connection the gateway trusts without a role).
func (c *Catalog) roles() []role {
	out := []role{{oid: bootstrapRoleOID, name: bootstrapRole, super: true, login: true, createRole: true, createDB: true},
		{oid: databaseOwnerRoleOID, name: "pg_database_owner"}}
	seen := map[string]bool{bootstrapRole: true, "pg_database_owner": true}
	for _, r := range c.src.Roles() {
		if seen[r.Name] {
			continue
		}
		seen[r.Name] = true
		out = append(out, role{oid: roleOID(r.Name), name: r.Name, super: r.Superuser, login: r.CanLogin,
			createRole: r.CreateRole, createDB: r.CreateDB, noInherit: r.NoInherit})
	}
	if c.session != nil && c.session.User != "" && !seen[c.session.User] {
		out = append(out, role{oid: roleOID(c.session.User), name: c.session.User, super: true, login: true, createRole: true, createDB: true})
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
	// user is the schema's description when CREATE SCHEMA made it.
	user *Schema
}

var namespaces = []namespace{
	{pgCatalogNamespace, pgCatalogSchema, nil},
	{publicNamespace, "public", nil},
	{infoSchemaNamespace, informationSchema, nil},
	{rockstreamNamespace, rockstreamCatalogSchema, nil},
}

// pgRelation is a relation as the system catalog shows it: a user
// relation or a system relation.
type pgRelation struct {
	id        uint64 // a user relation's catalog id
	oid       uint32
	schema    string
	name      string
	relkind   byte
	cols      []plan.Column
	user      bool            // a user relation
	options   []types.Value   // pg_class.reloptions of a table
	spec      *pgRelationSpec // system relations
	notNull   []bool
	defaults  []string // pg_get_expr text of column defaults; "" when none
	pk        []int
	viewQuery string
	reads     []uint64 // a view's Relation.Reads
	owner     string   // "": the bootstrap superuser
	acl       []string // nil: the default
	// attnums are the columns' numbers (nil: 1..n), dropped the numbers
	// of dropped columns.
	attnums, dropped []int
	// indexes are the relation's indexes: its primary key's first, then
	// the others by name.
	indexes []*pgIndex
}

// attnum is the number of r's column i.
func (r *pgRelation) attnum(i int) int {
	if r.attnums != nil {
		return r.attnums[i]
	}
	return i + 1
}

// pgIndex is an index as pg_class and pg_index show it.
type pgIndex struct {
	oid     uint32
	name    string
	rel     *pgRelation
	cols    []int
	primary bool // a primary key's index (unique)
	// unique and nullsNotDistinct are those of a UNIQUE index,
	// constraint set when a UNIQUE constraint owns it.
	unique, nullsNotDistinct, constraint bool
}

// pgSnapshot is the catalog's relations indexed for one query, computed
// the first time the query needs them.
type pgSnapshot struct {
	once    sync.Once
	rels    []*pgRelation // by schema, name
	byOID   map[uint32]*pgRelation
	indexes map[uint32]*pgIndex // by OID
	// path is the search path unqualified names resolve through,
	// pg_catalog first.
	path []string
}

// snapshot returns c's relations as the system catalog shows them.
func (c *Catalog) snapshot() *pgSnapshot {
	p := &c.pg
	p.once.Do(func() { p.build(c.src) })
	return p
}

func (p *pgSnapshot) build(src Source) {
	p.byOID = map[uint32]*pgRelation{}
	p.path = append([]string{pgCatalogSchema}, searchPathOf(src)...)
	for _, o := range src.Relations() {
		schema := o.Schema
		if schema == "" {
			schema = "public"
		}
		r := &pgRelation{id: o.ID, oid: userOID(o.ID), schema: schema, name: o.Name, cols: o.Cols, user: true,
			notNull: make([]bool, len(o.Cols)), defaults: make([]string, len(o.Cols)), pk: o.PK,
			owner: o.Owner, acl: o.ACL, attnums: o.Attnums, dropped: o.Dropped}
		if o.SystemOID != 0 {
			r.id, r.oid, r.user = 0, o.SystemOID, false
		}
		switch o.Kind {
		case sql.Table:
			r.relkind = 'r'
			copy(r.notNull, o.NotNull)
			for _, i := range o.PK {
				r.notNull[i] = true
			}
			for i, d := range o.Defaults {
				if d != nil {
					r.defaults[i] = defaultText(d)
				}
			}
			for _, opt := range o.Options {
				r.options = append(r.options, types.MakeText(opt))
			}
		case sql.MaterializedView:
			r.relkind = 'm'
			r.viewQuery, r.reads = viewQueryText(o), o.Reads
		default:
			r.relkind = 'v'
			r.viewQuery, r.reads = viewQueryText(o), o.Reads
		}
		if len(o.PK) > 0 {
			r.indexes = append(r.indexes, &pgIndex{oid: r.oid + pkIndexOffset, name: o.Name + "_pkey", rel: r, cols: o.PK, primary: true})
		}
		ixs := slices.Clone(o.Indexes)
		slices.SortFunc(ixs, func(a, b Index) int { return strings.Compare(a.Name, b.Name) })
		for _, ix := range ixs {
			r.indexes = append(r.indexes, &pgIndex{oid: userOID(ix.ID), name: ix.Name, rel: r, cols: ix.Cols,
				unique: ix.Unique, nullsNotDistinct: ix.NullsNotDistinct, constraint: ix.Constraint})
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
	p.indexes = map[uint32]*pgIndex{}
	for _, r := range p.rels {
		p.byOID[r.oid] = r
		for _, ix := range r.indexes {
			p.indexes[ix.oid] = ix
		}
	}
}

// viewQueryText is a view's defining SELECT as pg_get_viewdef shows it:
// the parsed query printed back (PostgreSQL's deparser), which may differ
// in layout from PostgreSQL's own rendering.
func viewQueryText(o Relation) string {
	if o.Query == nil {
		return o.SQLText
	}
	text, err := pg.Deparse(&pg.ParseResult{Version: parseTreeVersion, Stmts: []*pg.RawStmt{{Stmt: o.Query}}})
	if err != nil {
		return o.SQLText
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
		for _, s := range p.path {
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
	return p.find(r.name) == r
}

// pgColumns are the system relations' columns, parsed from
// pgRelationSpecs.
var pgColumns = map[string][]plan.Column{}

func init() {
	for _, s := range pgRelationSpecs {
		cols, err := parseColumnSpec(s.cols)
		if err != nil {
			panic(fmt.Sprintf("pgcatalog: columns of %s: %v", s.name, err))
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
	case "int2vector":
		return types.Int2VectorType(), nil
	case "oidvector":
		return types.OidVectorType(), nil
	case "varchar(3)":
		return types.VarcharType(3), nil
	case "timestamptz(2)":
		t := types.Of(types.TimestampTZ)
		t.Precision = 2
		return t, nil
	}
	return types.TypeByName([]string{s}, nil)
}

// Table is one relation of pg_catalog or information_schema.
type Table struct {
	// Name is the relation's schema-qualified name.
	Name string
	Cols []plan.Column
	// SystemCols is how many of the last columns are system columns
	// (tableoid, which holds oid).
	SystemCols int
	oid        uint32
	c          *Catalog
	// build computes the rows; nil for a relation that is always empty.
	build func(c *Catalog) ([]zset.Row, error)
}

// Rows computes the relation's rows now; nil when it has none.
func (t *Table) Rows() ([]zset.Row, error) {
	if t.build == nil {
		return nil, nil
	}
	rows, err := t.build(t.c)
	if err != nil || t.SystemCols == 0 {
		return rows, err
	}
	out := make([]zset.Row, len(rows))
	for i, r := range rows {
		out[i] = append(slices.Clip(r), types.MakeOID(t.oid))
	}
	return out, nil
}

// Table returns the system relation called name ("[schema.]relation"),
// or nil when name is not one of pg_catalog's or information_schema's.
// An unqualified name finds pg_catalog's relations.
func (c *Catalog) Table(name string) *Table {
	spec := pgSpecByName[name]
	if spec == nil {
		if strings.Contains(name, ".") {
			return nil
		}
		if spec = pgSpecByName[pgCatalogSchema+"."+name]; spec == nil {
			return nil
		}
	}
	t := &Table{Name: spec.name, Cols: pgColumns[spec.name], c: c, build: pgRowBuilders[spec.name]}
	if strings.HasPrefix(spec.name, pgCatalogSchema+".") && spec.oid != 0 && spec.relkind == 'r' {
		// pg_catalog's relations have the system column tableoid.
		t.Cols = append(slices.Clip(t.Cols), plan.Column{Name: "tableoid", Type: types.Of(types.Oid)})
		t.SystemCols, t.oid = 1, spec.oid
	}
	return t
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
		panic("pgcatalog: no column " + name)
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
		panic(fmt.Sprintf("pgcatalog: cannot set %s to %T", name, v))
	}
	b.cur[i] = val
	return b
}
