package pgcatalog

import (
	"sort"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Privileges is what a Source tells of privileges besides each
// relation's owner and ACL (Relation.Owner, Relation.ACL): the schema
// public's and the database's, the role memberships, and the answers of
// has_table_privilege and its kin. A Source without it shows every
// object owned by the bootstrap superuser with its default ACL, no
// memberships, and answers true for every role and object.
type Privileges interface {
	// SchemaACL and DatabaseACL return the owner and the ACL items
	// (nil: the default, shown as NULL).
	SchemaACL() (owner string, acl []string)
	DatabaseACL() (owner string, acl []string)
	Memberships() []Membership
	// HasPrivilege answers has_<kind>_privilege(role, object, privs) for
	// kind "table" (the relation with catalog id id), "schema" and
	// "database"; privs is the function's privilege text.
	HasPrivilege(role, kind string, id uint64, privs string) (bool, error)
	// HasRole answers pg_has_role(member, role, mode).
	HasRole(member, role, mode string) (bool, error)
	// DefaultACLs returns the default privileges of the tables each role
	// creates (ALTER DEFAULT PRIVILEGES), by role; roles without any are
	// left out.
	DefaultACLs() map[string][]string
}

// Membership is one row of pg_auth_members.
type Membership struct {
	Role, Member, Grantor string
	Admin                 bool
}

// RoleOID is the OID pg_roles gives the role name.
func RoleOID(name string) uint32 {
	switch name {
	case bootstrapRole:
		return bootstrapRoleOID
	case "pg_database_owner":
		return databaseOwnerRoleOID
	}
	return roleOID(name)
}

// privileges returns the Source's Privileges, nil when it has none.
func (c *Catalog) privileges() Privileges {
	p, _ := c.src.(Privileges)
	return p
}

// aclValue is an ACL as a text[] column value, NULL for nil.
func aclValue(acl []string) types.Value {
	if acl == nil {
		return types.Null
	}
	items := make([]types.Value, len(acl))
	for i, a := range acl {
		items[i] = types.MakeText(a)
	}
	return types.MakeArray(types.Text, items)
}

// ownerOID is the OID of an owner ("" is the bootstrap superuser).
// ownerName is the name of a relation's owner ("": the bootstrap
// superuser), as pg_tables, pg_views and pg_matviews show it.
func ownerName(owner string) string {
	if owner == "" {
		return bootstrapRole
	}
	return owner
}

func ownerOID(owner string) uint32 {
	if owner == "" {
		return bootstrapRoleOID
	}
	return RoleOID(owner)
}

func pgAuthMembersRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_auth_members")
	if p := c.privileges(); p != nil {
		for _, m := range p.Memberships() {
			b.row().set("roleid", RoleOID(m.Role)).set("member", RoleOID(m.Member)).
				set("grantor", RoleOID(m.Grantor)).set("admin_option", m.Admin)
		}
	}
	return b.rows, nil
}

// privilegeFuncs are the has_<kind>_privilege overloads: ([role,]
// object, privileges), the role by name or OID, the object by name or
// OID. A name that names nothing is an error, an OID that names nothing
// is NULL, as in PostgreSQL. byName and byOID resolve an object to the id
// HasPrivilege takes.
func (c *Catalog) privilegeFuncs(kind string, byName func(string) (uint64, error), byOID func(uint32) (uint64, bool)) []sql.SystemFunc {
	has := func(role string, id uint64, privs string) (types.Value, error) {
		p := c.privileges()
		if p == nil {
			return types.MakeBool(true), nil
		}
		ok, err := p.HasPrivilege(role, kind, id, privs)
		if err != nil {
			return types.Null, err
		}
		return types.MakeBool(ok), nil
	}
	roleByName := func(v types.Value) (string, error) {
		for _, r := range c.roles() {
			if r.name == v.Str() {
				return r.name, nil
			}
		}
		return "", errs.Newf(errs.UndefinedObject, "role %q does not exist", v.Str())
	}
	roleByOID := func(v types.Value) (string, bool) {
		for _, r := range c.roles() {
			if r.oid == v.OID() {
				return r.name, true
			}
		}
		return "", false
	}
	named := func(role string, obj, privs types.Value) (types.Value, error) {
		id, err := byName(obj.Str())
		if err != nil {
			return types.Null, err
		}
		return has(role, id, privs.Str())
	}
	numbered := func(role string, obj, privs types.Value) (types.Value, error) {
		id, ok := byOID(obj.OID())
		if !ok {
			return types.Null, nil
		}
		return has(role, id, privs.Str())
	}
	withName := func(f func(string, types.Value, types.Value) (types.Value, error)) func([]types.Value) (types.Value, error) {
		return func(a []types.Value) (types.Value, error) {
			role, err := roleByName(a[0])
			if err != nil {
				return types.Null, err
			}
			return f(role, a[1], a[2])
		}
	}
	withOID := func(f func(string, types.Value, types.Value) (types.Value, error)) func([]types.Value) (types.Value, error) {
		return func(a []types.Value) (types.Value, error) {
			role, ok := roleByOID(a[0])
			if !ok {
				return types.Null, nil
			}
			return f(role, a[1], a[2])
		}
	}
	current := func(f func(string, types.Value, types.Value) (types.Value, error)) func([]types.Value) (types.Value, error) {
		return func(a []types.Value) (types.Value, error) { return f(c.currentRole(), a[0], a[1]) }
	}
	return []sql.SystemFunc{
		sig(tBool, current(named), tText, tText),
		sig(tBool, current(numbered), tOid, tText),
		sig(tBool, withName(named), tName, tText, tText),
		sig(tBool, withName(numbered), tName, tOid, tText),
		sig(tBool, withOID(named), tOid, tText, tText),
		sig(tBool, withOID(numbered), tOid, tOid, tText),
	}
}

// tableByName resolves has_table_privilege's table name.
func (c *Catalog) tableByName(name string) (uint64, error) {
	oid, _, err := c.RegLookup(types.RegClass, name)
	if err != nil {
		return 0, err
	}
	return c.relationID(oid), nil
}

// relationID is the catalog id of the relation with OID oid; 0 for a
// system relation (which every role may read).
func (c *Catalog) relationID(oid uint32) uint64 {
	if r := c.snapshot().relation(oid); r != nil && r.user {
		return r.id
	}
	return 0
}

// pgHasRoleFuncs are pg_has_role's overloads.
func (c *Catalog) pgHasRoleFuncs() []sql.SystemFunc {
	has := func(member, role, mode string) (types.Value, error) {
		p := c.privileges()
		if p == nil {
			return types.MakeBool(true), nil
		}
		ok, err := p.HasRole(member, role, mode)
		if err != nil {
			return types.Null, err
		}
		return types.MakeBool(ok), nil
	}
	name := func(v types.Value) (string, error) {
		for _, r := range c.roles() {
			if r.name == v.Str() {
				return r.name, nil
			}
		}
		return "", errs.Newf(errs.UndefinedObject, "role %q does not exist", v.Str())
	}
	byOID := func(v types.Value) (string, bool) {
		for _, r := range c.roles() {
			if r.oid == v.OID() {
				return r.name, true
			}
		}
		return "", false
	}
	return []sql.SystemFunc{
		sig(tBool, func(a []types.Value) (types.Value, error) {
			role, err := name(a[0])
			if err != nil {
				return types.Null, err
			}
			return has(c.currentRole(), role, a[1].Str())
		}, tName, tText),
		sig(tBool, func(a []types.Value) (types.Value, error) {
			role, ok := byOID(a[0])
			if !ok {
				return types.Null, nil
			}
			return has(c.currentRole(), role, a[1].Str())
		}, tOid, tText),
		sig(tBool, func(a []types.Value) (types.Value, error) {
			member, err := name(a[0])
			if err != nil {
				return types.Null, err
			}
			role, err := name(a[1])
			if err != nil {
				return types.Null, err
			}
			return has(member, role, a[2].Str())
		}, tName, tName, tText),
	}
}

// currentRole is current_user: the role SET ROLE chose, else the session
// user.
func (c *Catalog) currentRole() string {
	if c.session != nil && c.session.Role != "" {
		return c.session.Role
	}
	return c.currentUser()
}

// ParseRoleMode parses pg_has_role's mode: MEMBER, USAGE, SET (PostgreSQL
// 16's, as MEMBER here), each optionally WITH ADMIN OPTION (or WITH GRANT
// OPTION); several separated by commas. It returns which were asked.
func ParseRoleMode(mode string) (member, usage, admin bool, err error) {
	for _, part := range strings.Split(mode, ",") {
		p := strings.ToUpper(strings.Join(strings.Fields(part), " "))
		switch p {
		case "MEMBER", "SET":
			member = true
		case "USAGE":
			usage = true
		case "MEMBER WITH ADMIN OPTION", "MEMBER WITH GRANT OPTION", "USAGE WITH ADMIN OPTION", "USAGE WITH GRANT OPTION",
			"SET WITH ADMIN OPTION", "SET WITH GRANT OPTION":
			admin = true
		default:
			return false, false, false, errs.Newf(errs.InvalidParameterValue, "unrecognized privilege type: %q", strings.TrimSpace(part))
		}
	}
	return member, usage, admin, nil
}

func pgDefaultACLRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_default_acl")
	p := c.privileges()
	if p == nil {
		return nil, nil
	}
	defs := p.DefaultACLs()
	roles := make([]string, 0, len(defs))
	for r := range defs {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	for _, r := range roles {
		// An OID of its own for the row, derived from the role's.
		b.row().set("oid", RoleOID(r)^0x40000000).set("defaclrole", RoleOID(r)).set("defaclnamespace", uint32(0)).
			set("defaclobjtype", "r").set("defaclacl", aclValue(defs[r]))
	}
	return b.rows, nil
}
