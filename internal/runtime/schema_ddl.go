package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/privilege"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/storage"
)

// The statements on schemas (CREATE, DROP, ALTER and COMMENT ON SCHEMA),
// DROP OWNED's and REASSIGN OWNED's part of them, and their catalog
// records; names and search_path are schemas.go's.

// createSchema runs CREATE SCHEMA; owner is the role that will own it.
func (s *Session) createSchema(st state.Store, cat *catalog, cs *pg.CreateSchemaStmt) (*catalog, *Result, error) {
	name := cs.Schemaname
	owner := s.currentRole()
	if cs.Authrole != nil {
		owner = schemaRoleName(s, cs.Authrole)
		if !s.knownRole(st, owner) {
			return nil, nil, errs.Newf(errs.UndefinedObject, "role %q does not exist", owner)
		}
		if name == "" {
			name = owner
		}
	}
	if a, err := s.accessOf(st, cat, s.currentRole()); err != nil {
		return nil, nil, err
	} else if a != nil {
		db, err := a.databaseObject(s.Setting("current_database"))
		if err != nil {
			return nil, nil, err
		}
		if err := a.g.Check(db, a.role, privilege.Create); err != nil {
			return nil, nil, err
		}
		if owner != a.role && !a.g.IsMemberOf(a.role, owner) {
			return nil, nil, errs.Newf(errs.InsufficientPrivilege, "must be member of role %q", owner)
		}
	}
	if len(cs.SchemaElts) > 0 {
		return nil, nil, errs.New(errs.FeatureNotSupported, "CREATE SCHEMA with schema elements is not supported; create the objects after the schema")
	}
	if strings.HasPrefix(name, "pg_") {
		return nil, nil, reservedSchemaName(name)
	}
	if cat.schemaExists(name) || name == "pg_catalog" || name == "information_schema" || name == "rockstream_catalog" {
		if cs.IfNotExists {
			return nil, &Result{Tag: "CREATE SCHEMA", skipped: fmt.Sprintf("schema %q already exists, skipping", name), skippedCode: errs.DuplicateSchema}, nil
		}
		return nil, nil, errs.Newf(errs.DuplicateSchema, "schema %q already exists", name)
	}
	if err := cat.checkSchemaNameFree(name); err != nil {
		return nil, nil, err
	}
	nc := cat.clone()
	sc := &schema{id: nc.nextID, name: name}
	nc.nextID++
	nc.schemas[name] = sc
	if err := writePriv(st, schemaPrivName(name), owner, nil); err != nil {
		return nil, nil, err
	}
	return nc, &Result{Tag: "CREATE SCHEMA"}, nil
}

// schemaRoleName is the role a RoleSpec names for session s.
func schemaRoleName(s *Session, r *pg.RoleSpec) string {
	switch r.Roletype {
	case pg.RoleSpecType_ROLESPEC_CURRENT_USER, pg.RoleSpecType_ROLESPEC_CURRENT_ROLE:
		return s.currentRole()
	case pg.RoleSpecType_ROLESPEC_SESSION_USER:
		return s.sessionUser()
	}
	return r.Rolename
}

// dropSchemas runs DROP SCHEMA.
func (s *Session) dropSchemas(st state.Store, cat *catalog, ds *pg.DropStmt) (*catalog, *Result, error) {
	nc := cat.clone()
	nc.path = cat.path
	defer func() { nc.path = nil }()
	cascade := ds.Behavior == pg.DropBehavior_DROP_CASCADE
	var dropped []string
	for _, obj := range ds.Objects {
		name := obj.GetString_().GetSval()
		if name == publicSchema {
			return nil, nil, errs.New(errs.FeatureNotSupported, "DROP SCHEMA public is not supported")
		}
		if nc.schemas[name] == nil {
			if name == "pg_catalog" || name == "information_schema" || name == "rockstream_catalog" {
				return nil, nil, errs.Newf(errs.DependentObjects, "cannot drop schema %s because it is required by the database system", name)
			}
			if ds.MissingOk {
				s.noticeState("NOTICE", "00000", fmt.Sprintf("schema %q does not exist, skipping", name))
				continue
			}
			return nil, nil, errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", name)
		}
		if err := s.checkSchemaOwner(st, nc, name); err != nil {
			return nil, nil, err
		}
		objs, fns := nc.inSchema(name), nc.functionsInSchema(name)
		lines := nc.schemaDependents(name, objs)
		for i := len(fns) - 1; i >= 0; i-- {
			lines = append(lines, "function "+fns[i].def.Signature()+" depends on schema "+name)
		}
		if (len(objs) > 0 || len(fns) > 0) && !cascade {
			e := errs.Newf(errs.DependentObjects, "cannot drop schema %s because other objects depend on it", name).(*errs.Error)
			e.Detail = strings.Join(lines, "\n")
			e.Hint = "Use DROP ... CASCADE to drop the dependent objects too."
			return nil, nil, e
		}
		for _, l := range lines {
			dropped = append(dropped, "drop cascades to "+l[:strings.Index(l, " depends on ")])
		}
		// Dependents first: a relation's views, wherever they are, go
		// with it (dropObject), so the newest objects are dropped first.
		for i := len(objs) - 1; i >= 0; i-- {
			o := objs[i]
			if nc.byName[o.name] != o {
				continue
			}
			if err := dropObject(st, nc, o, true); err != nil {
				return nil, nil, err
			}
		}
		for _, f := range fns {
			if nc.functionBySignature(f.def.Signature()) != f {
				continue
			}
			if err := dropFunction(st, nc, f, true); err != nil {
				return nil, nil, err
			}
		}
		if err := st.Delete(commentKey(nc.schemas[name].id)); err != nil {
			return nil, nil, err
		}
		delete(nc.schemas, name)
		if err := st.Delete(privKey(schemaPrivName(name))); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case len(dropped) == 1:
		s.noticeState("NOTICE", "00000", dropped[0])
	case len(dropped) > 1:
		s.noticeState("NOTICE", "00000", fmt.Sprintf("drop cascades to %d other objects", len(dropped)))
	}
	return nc, &Result{Tag: "DROP SCHEMA"}, nil
}

// checkSchemaOwner checks that the current role may drop or alter the
// schema name: its owner or a superuser.
func (s *Session) checkSchemaOwner(r state.Reader, cat *catalog, name string) error {
	a, err := s.accessOf(r, cat, s.currentRole())
	if err != nil || a == nil {
		return err
	}
	obj, err := a.namedSchemaObject(name)
	if err != nil {
		return err
	}
	return a.g.CheckOwner(obj, a.role)
}

// alterSchema runs ALTER SCHEMA ... RENAME TO and ALTER SCHEMA ... OWNER
// TO.
func (s *Session) alterSchema(st state.Store, cat *catalog, n *pg.Node) (*catalog, *Result, error) {
	if rs := n.GetRenameStmt(); rs != nil {
		old := rs.Subname
		if old == publicSchema {
			return nil, nil, errs.New(errs.FeatureNotSupported, "ALTER SCHEMA public RENAME is not supported")
		}
		sc := cat.schemas[old]
		if sc == nil {
			return nil, nil, errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", old)
		}
		if err := s.checkSchemaOwner(st, cat, old); err != nil {
			return nil, nil, err
		}
		if cat.schemaExists(rs.Newname) {
			return nil, nil, errs.Newf(errs.DuplicateSchema, "schema %q already exists", rs.Newname)
		}
		if strings.HasPrefix(rs.Newname, "pg_") {
			return nil, nil, reservedSchemaName(rs.Newname)
		}
		if err := cat.checkSchemaNameFree(rs.Newname); err != nil {
			return nil, nil, err
		}
		if len(cat.inSchema(old)) > 0 || cat.schemaHasFunctionsOrIndexes(old) {
			return nil, nil, errs.Newf(errs.FeatureNotSupported, "ALTER SCHEMA RENAME of a schema that holds objects is not supported; schema %q holds objects", old)
		}
		nc := cat.clone()
		delete(nc.schemas, old)
		nc.schemas[rs.Newname] = &schema{id: sc.id, name: rs.Newname}
		v, ok, err := st.Get(privKey(schemaPrivName(old)))
		if err != nil {
			return nil, nil, err
		}
		if ok {
			if err := st.Delete(privKey(schemaPrivName(old))); err != nil {
				return nil, nil, err
			}
			if err := st.Set(privKey(schemaPrivName(rs.Newname)), v); err != nil {
				return nil, nil, err
			}
		}
		return nc, &Result{Tag: "ALTER SCHEMA"}, nil
	}
	ao := n.GetAlterOwnerStmt()
	name := ao.Object.GetString_().GetSval()
	if !cat.schemaExists(name) {
		return nil, nil, errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", name)
	}
	owner := schemaRoleName(s, ao.Newowner)
	if !s.knownRole(st, owner) {
		return nil, nil, errs.Newf(errs.UndefinedObject, "role %q does not exist", owner)
	}
	if err := s.checkSchemaOwner(st, cat, name); err != nil {
		return nil, nil, err
	}
	key := schemaPrivName(name)
	ownerNow := pgcatalog.BootstrapRole
	if name == publicSchema {
		ownerNow = schemaOwner
	}
	_, acl, err := readPrivOwnedBy(st, key, ownerNow)
	if err != nil {
		return nil, nil, err
	}
	if err := writePriv(st, key, owner, acl); err != nil {
		return nil, nil, err
	}
	return cat.clone(), &Result{Tag: "ALTER SCHEMA"}, nil
}

// schemaHasFunctionsOrIndexes reports whether an index is keyed in the
// schema name.
func (c *catalog) schemaHasFunctionsOrIndexes(name string) bool {
	if len(c.functionsInSchema(name)) > 0 {
		return true
	}
	for key := range c.indexes {
		if strings.HasPrefix(key, name+".") {
			return true
		}
	}
	return false
}

// schemaRecord is a schema's catalog record.
func schemaRecord(sc *schema) catalogRecord {
	return catalogRecord{ID: sc.id, Kind: "schema", Name: sc.name, SQL: "CREATE SCHEMA " + quoteIdent(sc.name)}
}

// persistSchemas writes the records of schemas created or renamed
// between old and next and deletes those of schemas dropped.
func persistSchemas(st state.Store, old, next *catalog) error {
	for name, sc := range next.schemas {
		if old.schemas[name] == sc {
			continue
		}
		payload, err := json.Marshal(schemaRecord(sc))
		if err != nil {
			return err
		}
		if err := st.Set(catalogKey(sc.id), storage.EncodeRecord(catalogRecordKind, catalogRecordVersion, payload)); err != nil {
			return err
		}
	}
	live := map[uint64]bool{}
	for _, sc := range next.schemas {
		live[sc.id] = true
	}
	for _, sc := range old.schemas {
		if !live[sc.id] {
			if err := st.Delete(catalogKey(sc.id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// replaySchema recreates a schema from its record.
func replaySchema(cat *catalog, rec catalogRecord) *catalog {
	nc := cat.clone()
	nc.schemas[rec.Name] = &schema{id: rec.ID, name: rec.Name}
	if rec.ID >= nc.nextID {
		nc.nextID = rec.ID + 1
	}
	return nc
}

// reservedSchemaName is the error for a schema name PostgreSQL keeps for
// system schemas.
func reservedSchemaName(name string) error {
	e := errs.Newf(errs.ReservedName, "unacceptable schema name %q", name).(*errs.Error)
	e.Detail = "The prefix \"pg_\" is reserved for system schemas."
	return e
}

// execSchemaStmt runs n when it is CREATE SCHEMA, DROP SCHEMA or ALTER
// SCHEMA; handled is false otherwise.
func (s *Session) execSchemaStmt(ctx context.Context, n *pg.Node) (res *Result, handled bool, err error) {
	var fn func(st state.Store, w *epochWrite) (*catalog, *Result, error)
	switch {
	case n.GetLockStmt() != nil:
		res, err = s.execLock(ctx, n.GetLockStmt())
		return res, true, err
	case n.GetCreateSchemaStmt() != nil:
		fn = func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return s.createSchema(st, w.cat, n.GetCreateSchemaStmt())
		}
	case n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg.ObjectType_OBJECT_SCHEMA:
		fn = func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return s.dropSchemas(st, w.cat, n.GetDropStmt())
		}
	case n.GetRenameStmt() != nil && n.GetRenameStmt().RenameType == pg.ObjectType_OBJECT_SCHEMA,
		n.GetAlterOwnerStmt() != nil && n.GetAlterOwnerStmt().ObjectType == pg.ObjectType_OBJECT_SCHEMA:
		fn = func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return s.alterSchema(st, w.cat, n)
		}
	default:
		return nil, false, nil
	}
	res, err = s.ddl(ctx, fn)
	return res, true, err
}

// describeName is a relation's name as PostgreSQL's object descriptions
// give it: qualified, each part quoted where it needs it.
func (c *catalog) describeName(o *object) string {
	sch, name := c.splitKey(o.name)
	if c.resolve(name) == o {
		return quoteIdent(name)
	}
	return quoteIdent(sch) + "." + quoteIdent(name)
}

// dependentsError is the error of dropping o without CASCADE while
// other objects depend on it: the DETAIL names each, directly or
// through others, as PostgreSQL does.
func (c *catalog) dependentsError(o *object) error {
	var lines []string
	seen := map[uint64]bool{o.id: true}
	var walk func(x *object)
	walk = func(x *object) {
		for _, d := range c.dependents(x.name) {
			if seen[d.id] {
				continue
			}
			seen[d.id] = true
			lines = append(lines, fmt.Sprintf("%s %s depends on %s %s", d.kindName(), c.describeName(d), x.kindName(), c.describeName(x)))
			walk(d)
		}
	}
	walk(o)
	e := errs.Newf(errs.DependentObjects, "cannot drop %s %s because other objects depend on it", o.kindName(), c.describeName(o)).(*errs.Error)
	e.Detail = strings.Join(lines, "\n")
	e.Hint = "Use DROP ... CASCADE to drop the dependent objects too."
	return e
}

// schemaDependents lists what depends on schema name, whose objects are
// objs (in id order), as PostgreSQL's DETAIL does: each object of the
// schema, each followed by the objects elsewhere that depend on it.
func (c *catalog) schemaDependents(name string, objs []*object) []string {
	var lines []string
	seen := map[uint64]bool{}
	for _, o := range objs {
		seen[o.id] = true
	}
	var walk func(x *object)
	walk = func(x *object) {
		for _, d := range c.dependents(x.name) {
			if seen[d.id] {
				continue
			}
			seen[d.id] = true
			lines = append(lines, fmt.Sprintf("%s %s depends on %s %s", d.kindName(), c.describeName(d), x.kindName(), c.describeName(x)))
			walk(d)
		}
	}
	for _, o := range objs {
		lines = append(lines, fmt.Sprintf("%s %s depends on schema %s", o.kindName(), c.describeName(o), name))
		walk(o)
	}
	return lines
}

// dropOwnedSchemas is DROP OWNED's part of schemas made with CREATE
// SCHEMA: those the roles of drop own are dropped (the objects left in
// them too under CASCADE; without it they fail the statement), and the
// privileges granted to the roles on the others are revoked.
func dropOwnedSchemas(st state.Store, cat *catalog, drop map[string]bool, cascade bool) error {
	names := make([]string, 0, len(cat.schemas))
	for name := range cat.schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		owner, acl, err := readPriv(st, schemaPrivName(name))
		if err != nil {
			return err
		}
		if !drop[owner] {
			if acl != nil {
				if err := writePriv(st, schemaPrivName(name), owner, withoutGrantees(acl, drop)); err != nil {
					return err
				}
			}
			continue
		}
		objs := cat.inSchema(name)
		if len(objs) > 0 && !cascade {
			e := errs.Newf(errs.DependentObjects, "cannot drop schema %s because other objects depend on it", name).(*errs.Error)
			e.Detail = strings.Join(cat.schemaDependents(name, objs), "\n")
			e.Hint = "Use DROP ... CASCADE to drop the dependent objects too."
			return e
		}
		for i := len(objs) - 1; i >= 0; i-- {
			if cat.byName[objs[i].name] != objs[i] {
				continue
			}
			if err := dropObject(st, cat, objs[i], true); err != nil {
				return err
			}
		}
		if err := st.Delete(commentKey(cat.schemas[name].id)); err != nil {
			return err
		}
		delete(cat.schemas, name)
		if err := st.Delete(privKey(schemaPrivName(name))); err != nil {
			return err
		}
	}
	return nil
}

// reassignSchemas is REASSIGN OWNED's part of schemas made with CREATE
// SCHEMA: those owned by a role of olds pass to owner, with their ACLs.
func reassignSchemas(st state.Store, a *access, olds []string, owner string) error {
	for name := range a.cat.schemas {
		obj, err := a.namedSchemaObject(name)
		if err != nil {
			return err
		}
		if contains(olds, obj.Owner) {
			if err := writePriv(st, schemaPrivName(name), owner, privilege.NewOwner(obj.ACL, obj.Owner, owner)); err != nil {
				return err
			}
		}
	}
	return nil
}

// commentSchema runs COMMENT ON SCHEMA: the comment is kept as a
// relation's is, under the schema's catalog id; its owner may set it.
func (s *Session) commentSchema(st state.Store, cat *catalog, cs *pg.CommentStmt) (*catalog, *Result, error) {
	name := cs.Object.GetString_().GetSval()
	if name == publicSchema {
		return nil, nil, errs.New(errs.FeatureNotSupported, "COMMENT ON SCHEMA public is not supported")
	}
	sc := cat.schemas[name]
	if sc == nil {
		return nil, nil, errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", name)
	}
	if err := s.checkSchemaOwner(st, cat, name); err != nil {
		return nil, nil, err
	}
	if err := writeComments(st, sc.id, relationComments{Relation: cs.Comment}); err != nil {
		return nil, nil, err
	}
	return nil, &Result{Tag: "COMMENT"}, nil
}

// checkSchemaNameFree refuses a schema name the catalog's keys cannot
// tell apart from names in public: a key is "schema.name" outside public,
// so a schema name with a dot, or one that begins the name of an object
// in public followed by a dot (public."s.t" beside a schema s), would
// make two objects share a key.
func (c *catalog) checkSchemaNameFree(name string) error {
	if strings.Contains(name, ".") {
		return errs.Newf(errs.FeatureNotSupported, "a schema name containing a dot is not supported: %q", name)
	}
	prefix := name + "."
	for key := range c.byName {
		if strings.HasPrefix(key, prefix) {
			return errs.Newf(errs.FeatureNotSupported, "a schema named %q beside the relation %q of schema public is not supported: rename the relation first", name, key)
		}
	}
	for key := range c.indexes {
		if strings.HasPrefix(key, prefix) {
			return errs.Newf(errs.FeatureNotSupported, "a schema named %q beside the index %q of schema public is not supported: rename the index first", name, key)
		}
	}
	return nil
}
