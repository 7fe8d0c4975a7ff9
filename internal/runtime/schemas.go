package runtime

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/privilege"
	"github.com/rockstream/rockstream/internal/state"
)

// Schemas and search_path.
//
// The schema public always exists; CREATE SCHEMA adds others. A relation
// is keyed in the catalog (catalog.byName, object.name) by its name alone
// in public, which keeps every store written before schemas existed
// readable unchanged, and by "schema.name" in any other schema. An index
// is keyed the same way in catalog.indexes.
//
// Names a user writes resolve through the session's search path
// (catalog.path, set from the search_path setting on the copy of the
// catalog a session's statement uses): pg_catalog first, then each
// existing schema of the path in order. A qualified name resolves in its
// schema only. Objects are created in the schema their name gives, else
// in the first existing schema of the path. Views and materialized views
// keep what their names resolved to (inputs.go), so a later change of
// search_path does not change them.
//
// ALTER ... SET SCHEMA moves a relation, with its indexes, to another
// schema: its key changes, its id does not (setschema.go).
//
// Invariants: every key "s.name" in byName has s in schemas; a schema
// with objects in it is not dropped without them (DROP SCHEMA ...
// CASCADE drops them first) and is not renamed.

// schema is a schema created with CREATE SCHEMA.
type schema struct {
	id   uint64
	name string
}

const publicSchema = "public"

// defaultPath is the search path of a catalog without a session's.
var defaultPath = []string{publicSchema}

// schemaExists reports whether the schema name exists.
func (c *catalog) schemaExists(name string) bool {
	return name == publicSchema || c.schemas[name] != nil
}

// searchPath returns the existing schemas unqualified names resolve in,
// in order (pg_catalog, always searched first, is not among them).
func (c *catalog) searchPath() []string {
	if c.path == nil {
		return defaultPath
	}
	return c.path
}

// withPath returns a copy of c that resolves names through path. The
// copy shares c's objects.
func (c *catalog) withPath(path []string) *catalog {
	cp := *c
	cp.path = path
	cp.origin = c.identity()
	return &cp
}

// identity is the catalog c is a copy of (withPath), or c.
func (c *catalog) identity() *catalog {
	if c.origin != nil {
		return c.origin
	}
	return c
}

// sameBinding reports whether a statement bound in a binds the same in
// b: the same catalog, through the same search path.
func sameBinding(a, b *catalog) bool {
	return a.identity() == b.identity() && slices.Equal(a.searchPath(), b.searchPath())
}

// pathFor returns the effective search path of a search_path setting
// for role: "$user" is role's schema when it exists, schemas that do not
// exist are skipped, and pg_catalog is left out (it is searched first
// anyway). The result is never nil.
func (c *catalog) pathFor(setting, role string) []string {
	out := []string{}
	for _, s := range splitSearchPath(setting) {
		if s == "$user" {
			s = role
		}
		if s == "pg_catalog" || !c.schemaExists(s) || contains(out, s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// splitSearchPath splits a search_path value into schema names:
// comma-separated identifiers, double-quoted ones taken as written and
// others folded to lower case.
func splitSearchPath(v string) []string {
	var out []string
	for i := 0; i < len(v); {
		for i < len(v) && (v[i] == ' ' || v[i] == ',' || v[i] == '\t') {
			i++
		}
		if i >= len(v) {
			break
		}
		if v[i] == '"' {
			var b strings.Builder
			i++
			for i < len(v) {
				if v[i] == '"' {
					if i+1 < len(v) && v[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(v[i])
				i++
			}
			out = append(out, b.String())
			continue
		}
		j := i
		for j < len(v) && v[j] != ',' {
			j++
		}
		out = append(out, strings.ToLower(strings.TrimSpace(v[i:j])))
		i = j
	}
	return out
}

// sessionPath returns the effective search path of the session s
// describes, in c.
func (c *catalog) sessionPath(s *pgcatalog.Session) []string {
	if s == nil || s.Setting == nil {
		return nil
	}
	role := s.Role
	if role == "" {
		role = s.User
	}
	return c.usablePath(c.reader, c.pathFor(s.Setting("search_path"), role), role)
}

// usablePath returns path without the schemas on which role, a role of
// the catalog stored in r that is not a superuser, lacks USAGE: as in
// PostgreSQL, names are neither looked up nor created there.
func (c *catalog) usablePath(r state.Reader, path []string, role string) []string {
	if r == nil || len(path) == 0 || len(c.schemas) == 0 {
		// Without schemas of its own the catalog's path is public at
		// most, and what a statement names there is checked as it runs:
		// the common case reads nothing more.
		return path
	}
	if ro, err := readRole(r, role); err != nil || ro == nil || ro.Superuser {
		return path
	}
	g, err := loadGraph(r)
	if err != nil {
		return path
	}
	a := &access{g: g, role: role, r: r, cat: c}
	out := make([]string, 0, len(path))
	for _, sch := range path {
		obj, err := a.namedSchemaObject(sch)
		if err != nil {
			return path
		}
		if p, _ := g.Privileges(obj, role); p&privilege.Usage != 0 {
			out = append(out, sch)
		}
	}
	return out
}

// searchPathOf returns the session's effective search path in c, the
// schemas its role may not use left out when c is read through r.
func (s *Session) searchPathOf(c *catalog) []string {
	return c.pathFor(s.Setting("search_path"), s.currentRole())
}

// withSearchPath wraps a statement's writes so that the catalog they see
// resolves names through the session's search path; the catalog they
// leave behind does not keep it.
func (s *Session) withSearchPath(fn writeFunc) writeFunc {
	setting, role, database := s.Setting("search_path"), s.currentRole(), s.Setting("current_database")
	return func(st state.Store, w *epochWrite) (*catalog, error) {
		base := w.cat
		pathed := base.withPath(base.usablePath(st, base.pathFor(setting, role), role))
		pathed.database = database
		w.cat = pathed
		defer func() {
			// Also when fn panics: the epoch goes on without the path.
			if w.cat == pathed {
				w.cat = base
			}
		}()
		c, err := fn(st, w)
		if c == pathed {
			c = base
		}
		return c, err
	}
}

// creationSchema is the schema an object named without one is created
// in: the first existing schema of the search path.
func (c *catalog) creationSchema() (string, error) {
	p := c.searchPath()
	if len(p) == 0 {
		return "", errs.New(errs.InvalidSchemaName, "no schema has been selected to create in")
	}
	return p[0], nil
}

// newObjectKey returns the catalog key of an object to be created under
// the name rv gives: in rv's schema, else the creation schema.
func (c *catalog) newObjectKey(rv *pg.RangeVar) (string, error) {
	sch := rv.Schemaname
	if err := c.checkDatabase(rv); err != nil {
		return "", err
	}
	if sch == "" {
		var err error
		if sch, err = c.creationSchema(); err != nil {
			return "", err
		}
	}
	switch {
	case sch == "pg_catalog" || sch == "information_schema" || sch == "rockstream_catalog":
		return "", errs.Newf(errs.InsufficientPrivilege, "permission denied to create \"%s.%s\"", sch, rv.Relname)
	case !c.schemaExists(sch):
		return "", errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", sch)
	}
	if sch == publicSchema {
		// A key outside public is "schema.name": a public name that
		// begins with an existing schema's name and a dot would share it.
		if i := strings.IndexByte(rv.Relname, '.'); i > 0 && c.schemas[rv.Relname[:i]] != nil {
			return "", errs.Newf(errs.FeatureNotSupported, "a name in schema public that begins with the name of schema %q and a dot is not supported: %q", rv.Relname[:i], rv.Relname)
		}
	}
	return normalizeName(sch, rv.Relname), nil
}

// qualifiedName is a name as written: "schema.name", or name alone when
// no schema is given.
func qualifiedName(schema, name string) string {
	if schema == "" {
		return name
	}
	return schema + "." + name
}

// resolve returns the object a name as a user wrote it denotes ("name"
// or "schema.name"): an unqualified name is looked up in pg_catalog,
// then through the search path; nil when there is none.
func (c *catalog) resolve(name string) *object {
	if strings.Contains(name, ".") {
		return c.lookup(name)
	}
	if o := c.pgRelationObject(name); o != nil {
		return o
	}
	for _, s := range c.searchPath() {
		if o := c.byName[normalizeName(s, name)]; o != nil {
			return o
		}
	}
	return c.systemRelation(name)
}

// resolveRV is resolve for a RangeVar.
func (c *catalog) resolveRV(rv *pg.RangeVar) *object {
	return c.resolve(qualifiedName(rv.Schemaname, rv.Relname))
}

// splitKey returns the schema and the bare name of a catalog key.
func (c *catalog) splitKey(key string) (string, string) {
	if i := strings.IndexByte(key, '.'); i > 0 && c.schemas[key[:i]] != nil {
		return key[:i], key[i+1:]
	}
	return publicSchema, key
}

// inSchema returns the keys of the relations of schema name, sorted.
func (c *catalog) inSchema(name string) []*object {
	var out []*object
	for key, o := range c.byName {
		if o.system == nil && strings.HasPrefix(key, name+".") && c.schemas[name] != nil {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// schemaPrivName is the name of a schema's privilege record.
func schemaPrivName(name string) string { return "schema/" + name }

// Schemas implements pgcatalog.SchemaSource: the schemas made with
// CREATE SCHEMA, with their owners and ACLs when read in a session.
func (s catalogSource) Schemas() []pgcatalog.Schema {
	out := make([]pgcatalog.Schema, 0, len(s.c.schemas))
	for _, sc := range s.c.schemas {
		ps := pgcatalog.Schema{ID: sc.id, Name: sc.name, Owner: pgcatalog.BootstrapRole}
		if s.c.reader != nil {
			owner, acl, err := readPriv(s.c.reader, schemaPrivName(sc.name))
			if err == nil {
				ps.Owner = owner
				if acl != nil {
					ps.ACL = acl.Strings()
				}
			}
			if cm, err := readComments(s.c.reader, sc.id); err == nil {
				ps.Comment = cm.Relation
			}
		}
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SearchPath implements pgcatalog.SchemaSource.
func (s catalogSource) SearchPath() []string { return s.c.searchPath() }

// SchemaOf implements pgcatalog.SchemaSource: the schema and bare name
// of a relation key.
func (s catalogSource) SchemaOf(key string) (string, string) { return s.c.splitKey(key) }

// namedSchemaObject returns the schema name as the privilege model sees
// it: public as schemaObject says, another schema owned by its creator
// with its kind's default ACL (all privileges for its owner alone).
func (a *access) namedSchemaObject(name string) (privilege.Object, error) {
	if name == publicSchema {
		return a.schemaObject()
	}
	owner, acl, err := readPriv(a.r, schemaPrivName(name))
	return privilege.Object{Kind: privilege.Schema, KindName: "schema", Name: name, Owner: owner, ACL: acl}, err
}

// recordSchema is the schema field of o's catalog record: o's schema,
// "" for public.
func (c *catalog) recordSchema(o *object) string {
	if sch, _ := c.splitKey(o.name); sch != publicSchema {
		return sch
	}
	return ""
}

// recordPath is the search path a catalog record's definition is
// replayed with: the path it keeps, else, for a function (created in
// the first schema of the path), its schema. A relation is created in
// its record's schema whatever the path (replay), and without a path of
// its own every function it calls is in public, which the default path
// finds: whether it was created in another schema or moved since.
func recordPath(rec catalogRecord) []string {
	if rec.Path != nil {
		return rec.Path
	}
	if rec.Schema == "" || rec.Kind != "function" {
		return nil
	}
	return []string{rec.Schema}
}

// existingSchemas returns the schemas of path that exist, in order (nil
// for nil: the default path).
func (c *catalog) existingSchemas(path []string) []string {
	if path == nil {
		return nil
	}
	out := []string{}
	for _, s := range path {
		if c.schemaExists(s) {
			out = append(out, s)
		}
	}
	return out
}

// indexSQL is an index's defining statement as its catalog record keeps
// it: its name and its relation's, the relation qualified when not in
// public (an index is in its relation's schema).
func (c *catalog) indexSQL(ix *index, o *object) string {
	sch, rel := c.splitKey(o.name)
	_, name := c.splitKey(ix.name)
	relText := quoteIdent(rel)
	if sch != publicSchema {
		relText = quoteIdent(sch) + "." + relText
	}
	return fmt.Sprintf("CREATE %sINDEX %s ON %s (%s)%s", ix.uniqueWord(), quoteIdent(name), relText,
		strings.Join(quoteIdents(ix.columnNames(o)), ", "), ix.nullsClause())
}

// resolveIndex returns the index a name as written denotes ("name" or
// "schema.name"), an unqualified one through the search path; nil when
// there is none.
func (c *catalog) resolveIndex(name string) *index {
	if sch, rel, ok := strings.Cut(name, "."); ok {
		if ix := c.indexes[normalizeName(sch, rel)]; ix != nil {
			return ix
		}
		return c.indexes[name]
	}
	for _, s := range c.searchPath() {
		if ix := c.indexes[normalizeName(s, name)]; ix != nil {
			return ix
		}
	}
	return nil
}

// inSchemaNamed is a catalog whose relationNameTaken answers for names
// in schema sch: names are keyed by it.
func (c *catalog) inSchemaNamed(sch string) nameTaker {
	return nameTaker{c: c, schema: sch}
}

// nameTaker answers whether a bare name is taken in one schema.
type nameTaker struct {
	c      *catalog
	schema string
}

func (n nameTaker) relationNameTaken(name string) bool {
	return n.c.relationNameTaken(normalizeName(n.schema, name))
}

// renamedKey is the catalog key of the relation keyed key once renamed
// to name: a relation stays in its schema.
func (c *catalog) renamedKey(key, name string) string {
	sch, _ := c.splitKey(key)
	return normalizeName(sch, name)
}

// resolveIn returns the object a name as the session wrote it denotes
// in cat, through the session's search path.
func (s *Session) resolveIn(cat *catalog, name string) *object {
	return cat.withPath(s.searchPathOf(cat)).resolve(name)
}

// resolveKey returns the catalog key of the user relation a name as the
// session wrote it denotes, or name itself when there is none.
func (s *Session) resolveKey(name string) string {
	if o := s.resolveIn(s.catalog(), name); o != nil && o.system == nil {
		return o.name
	}
	return name
}

// schemaByOID returns the schema made with CREATE SCHEMA whose OID is
// oid, or nil.
func (c *catalog) schemaByOID(oid uint32) *schema {
	for _, sc := range c.schemas {
		if pgcatalog.UserOID(sc.id) == oid {
			return sc
		}
	}
	return nil
}

// DatabaseName implements the binder's check of names with a database
// part: the session's database, "" outside a session.
func (c *catalog) DatabaseName() string { return c.database }

// checkDatabase fails, as PostgreSQL does, for a name whose database
// part is not the session's database.
func (c *catalog) checkDatabase(rv *pg.RangeVar) error {
	if rv == nil || rv.Catalogname == "" || rv.Catalogname == c.database {
		return nil
	}
	return errs.Newf(errs.FeatureNotSupported, "cross-database references are not implemented: \"%s.%s.%s\"", rv.Catalogname, rv.Schemaname, rv.Relname)
}

// checkNameParts checks a dotted name of a DROP (database, schema,
// name): a database part must be the session's, and there are at most
// three parts.
func (c *catalog) checkNameParts(parts []string) error {
	switch {
	case len(parts) > 3:
		return errs.Newf(errs.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(parts, "."))
	case len(parts) == 3:
		return c.checkDatabase(&pg.RangeVar{Catalogname: parts[0], Schemaname: parts[1], Relname: parts[2]})
	}
	return nil
}
