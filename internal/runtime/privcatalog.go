package runtime

import (
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/privilege"
)

// The system catalog's view of privileges (pgcatalog.Privileges):
// pg_class.relacl and relowner, pg_namespace.nspacl, pg_database.datacl,
// pg_auth_members and the has_*_privilege functions, read from the
// reader of the session's query.

// relationACL returns o's owner and ACL items (nil: the default).
func (s catalogSource) relationACL(o *object) (string, []string) {
	owner, acl, err := readPriv(s.c.reader, relPrivName(o.id))
	if err != nil || acl == nil {
		return owner, nil
	}
	return owner, acl.Strings()
}

// SchemaACL implements pgcatalog.Privileges.
func (s catalogSource) SchemaACL() (string, []string) {
	if s.c.reader == nil {
		return schemaOwner, nil
	}
	a := &access{r: s.c.reader}
	obj, err := a.schemaObject()
	if err != nil {
		return schemaOwner, nil
	}
	return obj.Owner, obj.ACL.Strings()
}

// DatabaseACL implements pgcatalog.Privileges.
func (s catalogSource) DatabaseACL() (string, []string) {
	if s.c.reader == nil {
		return pgcatalog.BootstrapRole, nil
	}
	owner, acl, err := readPriv(s.c.reader, privDatabase)
	if err != nil || acl == nil {
		return owner, nil
	}
	return owner, acl.Strings()
}

// Memberships implements pgcatalog.Privileges.
func (s catalogSource) Memberships() []pgcatalog.Membership {
	if s.c.reader == nil {
		return nil
	}
	ms, err := readMembers(s.c.reader)
	if err != nil {
		return nil
	}
	out := make([]pgcatalog.Membership, len(ms))
	for i, m := range ms {
		out[i] = pgcatalog.Membership{Role: m.Role, Member: m.Member, Grantor: m.Grantor, Admin: m.Admin}
	}
	return out
}

// HasPrivilege implements pgcatalog.Privileges. A role the catalog does
// not have (the session user of a superuser session) holds everything.
func (s catalogSource) HasPrivilege(role, kind string, id uint64, privs string) (bool, error) {
	k := map[string]privilege.Kind{"table": privilege.Relation, "schema": privilege.Schema, "database": privilege.Database}[kind]
	want, grant, err := privilege.ParseCheck(k, privs)
	if err != nil || s.c.reader == nil {
		return err == nil, err
	}
	g, err := loadGraph(s.c.reader)
	if err != nil {
		return false, err
	}
	if _, ok := g.Role(role); !ok {
		return true, nil
	}
	a := &access{g: g, role: role, r: s.c.reader, cat: s.c}
	var obj privilege.Object
	switch k {
	case privilege.Schema:
		if obj, err = a.schemaObject(); err != nil {
			return false, err
		}
		if sc := s.c.schemaByOID(uint32(id)); sc != nil {
			if obj, err = a.namedSchemaObject(sc.name); err != nil {
				return false, err
			}
		} else if id != publicNamespaceOID {
			// pg_catalog and information_schema: USAGE for everyone.
			return want&^privilege.Usage == 0 && grant == 0 || g.IsSuperuser(role), nil
		}
	case privilege.Database:
		if obj, err = a.databaseObject(pgcatalog.DefaultDatabase); err != nil {
			return false, err
		}
	default:
		var o *object
		for _, x := range s.c.byName {
			if x.id == id && id != 0 {
				o = x
			}
		}
		if o == nil {
			// A system relation: everyone may read it.
			return want&privilege.Select != 0 || g.IsSuperuser(role), nil
		}
		if obj, err = a.relObject(o); err != nil {
			return false, err
		}
	}
	return g.HasAny(obj, role, want, grant), nil
}

// HasRole implements pgcatalog.Privileges.
func (s catalogSource) HasRole(member, role, mode string) (bool, error) {
	m, u, adm, err := pgcatalog.ParseRoleMode(mode)
	if err != nil || s.c.reader == nil {
		return err == nil, err
	}
	g, err := loadGraph(s.c.reader)
	if err != nil {
		return false, err
	}
	if _, ok := g.Role(member); !ok {
		return true, nil
	}
	return m && g.IsMemberOf(member, role) || u && g.HasPrivsOf(member, role) || adm && g.IsAdminOf(member, role), nil
}

// schemaOwner owns the schema public, as in PostgreSQL 15: the database
// owner is a member of it.
const schemaOwner = "pg_database_owner"

// publicNamespaceOID is the OID of the schema public.
const publicNamespaceOID = 2200

// DefaultACLs implements pgcatalog.Privileges.
func (s catalogSource) DefaultACLs() map[string][]string {
	if s.c.reader == nil {
		return nil
	}
	defs, err := defaultACLs(s.c.reader)
	if err != nil {
		return nil
	}
	out := make(map[string][]string, len(defs))
	for role, acl := range defs {
		out[role] = acl.Strings()
	}
	return out
}
