package runtime

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/privilege"
	"github.com/rockstream/rockstream/internal/state"
)

// Privileges, as PostgreSQL's (internal/privilege is the model): every
// relation, the schema public, the database and every source and sink
// has an owner and an ACL, stored as one metadata record (privKey) written
// in the epoch of the statement that changes it, so that GRANT, REVOKE
// and ownership commit and roll back with the transaction around them
// and checkpoints (copies of the store) keep them.
//
// An object without a record is owned by the bootstrap superuser and has
// its kind's default ACL: that is every object of a store written before
// privileges existed, and every object a session created whose user is
// not a role of the catalog (such sessions are superusers, below), so
// such stores need no migration and read as they did.
//
// Who a session is: its session user is session_authorization (the
// authenticated user, which the gateway sets; the bootstrap superuser for
// an embedded session) and its current role is the role SET ROLE chose,
// else the session user. A session user that is not a role of the
// catalog is a superuser, as before roles had privileges (trust and
// configured users); only a current role stored without SUPERUSER is
// ever refused anything.

// privRecord is an object's owner and ACL; ACL nil is the default.
type privRecord struct {
	Owner string    `json:"owner"`
	ACL   *[]string `json:"acl,omitempty"`
}

var (
	privPrefix   = []byte{nsMeta, 'p', 'r', 'i', 'v', '/'}
	memberPrefix = []byte{nsMeta, 'm', 'e', 'm', 'b', 'e', 'r', '/'}
	defACLPrefix = []byte{nsMeta, 'd', 'e', 'f', 'a', 'c', 'l', '/'}
)

// The privilege records' names after privPrefix.
const (
	privSchemaPublic = "schema/public"
	privDatabase     = "database"
)

func privKey(name string) []byte { return append(append([]byte(nil), privPrefix...), name...) }

func relPrivName(id uint64) string { return "rel/" + strconv.FormatUint(id, 10) }

func connPrivName(name string) string { return "conn/" + name }

func memberKey(role, member string) []byte {
	k := append(append([]byte(nil), memberPrefix...), role...)
	return append(append(k, 0), member...)
}

func defACLKey(role string) []byte { return append(append([]byte(nil), defACLPrefix...), role...) }

// readPriv returns the owner and ACL stored under name; the bootstrap
// superuser and nil (the default) when none is.
func readPriv(r state.Reader, name string) (string, privilege.ACL, error) {
	return readPrivOwnedBy(r, name, pgcatalog.BootstrapRole)
}

// readPrivOwnedBy is readPriv for an object whose owner, while it has no
// record, is owner.
func readPrivOwnedBy(r state.Reader, name, owner string) (string, privilege.ACL, error) {
	v, ok, err := r.Get(privKey(name))
	if err != nil || !ok {
		return owner, nil, err
	}
	var rec privRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return "", nil, errs.Newf(errs.DataCorrupted, "privileges of %s: stored record is damaged: %v", name, err)
	}
	if rec.ACL == nil {
		return rec.Owner, nil, nil
	}
	acl, err := parseACL(*rec.ACL)
	return rec.Owner, acl, err
}

func parseACL(items []string) (privilege.ACL, error) {
	acl := privilege.ACL{}
	for _, s := range items {
		it, err := privilege.ParseItem(s)
		if err != nil {
			return nil, errs.Newf(errs.DataCorrupted, "stored ACL item %q is damaged", s)
		}
		acl = append(acl, it)
	}
	return acl, nil
}

// writePriv stores name's owner and ACL; the bootstrap owner with the
// default ACL is stored as no record.
func writePriv(st state.Store, name, owner string, acl privilege.ACL) error {
	if owner == pgcatalog.BootstrapRole && acl == nil {
		return st.Delete(privKey(name))
	}
	rec := privRecord{Owner: owner}
	if acl != nil {
		items := acl.Strings()
		rec.ACL = &items
	}
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return st.Set(privKey(name), v)
}

// loadGraph reads the roles and memberships. The bootstrap superuser is
// always one of them.
func loadGraph(r state.Reader) (*privilege.Graph, error) {
	var roles []privilege.Role
	err := scanRoles(r, func(ro *Role) error {
		roles = append(roles, ro.attrs())
		return nil
	})
	if err != nil {
		return nil, err
	}
	boot := false
	for _, ro := range roles {
		boot = boot || ro.Name == pgcatalog.BootstrapRole
	}
	if !boot {
		roles = append(roles, privilege.Role{Name: pgcatalog.BootstrapRole, Superuser: true, Inherit: true, CreateRole: true, CreateDB: true, Login: true})
	}
	// pg_database_owner owns the schema public; the database's owner,
	// the bootstrap superuser, is its one member.
	roles = append(roles, privilege.Role{Name: schemaOwner, Inherit: true})
	members, err := readMembers(r)
	if err != nil {
		return nil, err
	}
	members = append(members, databaseOwnership)
	return privilege.NewGraph(roles, members), nil
}

// databaseOwnership is the implied membership of the database's owner in
// pg_database_owner; it is never stored.
var databaseOwnership = privilege.Membership{Role: schemaOwner, Member: pgcatalog.BootstrapRole, Grantor: pgcatalog.BootstrapRole}

// membershipRecord is a membership's durable form, under memberKey.
type membershipRecord struct {
	Grantor string `json:"grantor"`
	Admin   bool   `json:"admin,omitempty"`
}

func readMembers(r state.Reader) ([]privilege.Membership, error) {
	var out []privilege.Membership
	var derr error
	err := r.Scan(memberPrefix, state.PrefixEnd(memberPrefix), func(k, v []byte) bool {
		name := string(k[len(memberPrefix):])
		i := strings.IndexByte(name, 0)
		var rec membershipRecord
		if i < 0 || json.Unmarshal(v, &rec) != nil {
			derr = errs.Newf(errs.DataCorrupted, "role membership %q: stored record is damaged", name)
			return false
		}
		out = append(out, privilege.Membership{Role: name[:i], Member: name[i+1:], Grantor: rec.Grantor, Admin: rec.Admin})
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// writeMembers replaces the stored memberships with ms.
func writeMembers(st state.Store, old, ms []privilege.Membership) error {
	for _, m := range old {
		if err := st.Delete(memberKey(m.Role, m.Member)); err != nil {
			return err
		}
	}
	for _, m := range ms {
		if m == databaseOwnership {
			continue
		}
		v, err := json.Marshal(membershipRecord{Grantor: m.Grantor, Admin: m.Admin})
		if err != nil {
			return err
		}
		if err := st.Set(memberKey(m.Role, m.Member), v); err != nil {
			return err
		}
	}
	return nil
}

// sessionUser is the session's user: session_authorization.
func (s *Session) sessionUser() string { return s.resolved().user }

// currentRole is the role the session's statements run as.
func (s *Session) currentRole() string {
	r := s.resolved()
	if r.role != "" {
		return r.role
	}
	return r.user
}

// authenticatedUser is who the session's client authenticated as (the
// bootstrap superuser for an embedded session): what SET SESSION
// AUTHORIZATION and its RESET go by.
func (s *Session) authenticatedUser() string {
	s.act.mu.Lock()
	u := s.act.mu.client.User
	s.act.mu.Unlock()
	if u == "" {
		return pgcatalog.BootstrapRole
	}
	return u
}

// privView returns the store and catalog the session's privilege checks
// read: its transaction block's writes when it has any, else the
// committed state; release when done.
func (s *Session) privView() (state.Reader, *catalog, func()) {
	if s.readsOwnWrites() {
		return s.txn.w.ov, s.txn.w.cat, func() {}
	}
	s.eng.mu.RLock()
	return s.eng.mu.store, s.eng.mu.cat, s.eng.readDone
}

// readsOwnWrites reports whether privView is the session's transaction
// block's writes rather than the committed state.
func (s *Session) readsOwnWrites() bool { return s.txn != nil && s.txn.w != nil }

// access is what privilege checks of one statement read.
type access struct {
	g    *privilege.Graph
	role string // the current role
	r    state.Reader
	cat  *catalog
}

// accessOf returns the access of role reading r, or nil when role is a
// superuser (no check can fail). A role that is not in the catalog is a
// superuser when it is the session user (see above); otherwise a role
// SET ROLE chose that was dropped since holds nothing.
func (s *Session) accessOf(r state.Reader, cat *catalog, role string) (*access, error) {
	rec, err := readRole(r, role)
	if err != nil {
		return nil, err
	}
	return s.accessWith(r, cat, role, rec, nil)
}

// accessWith is accessOf for role's record rec read from r; m, when not
// nil, is the committed state's memo r is the store of.
func (s *Session) accessWith(r state.Reader, cat *catalog, role string, rec *Role, m *roleMemo) (*access, error) {
	if rec == nil && role == s.sessionUser() || rec != nil && rec.Superuser {
		return nil, nil
	}
	g, err := m.graphOf(r)
	if err != nil {
		return nil, err
	}
	if cat != nil {
		cat = cat.withPath(cat.usablePath(r, s.searchPathOf(cat), role))
	}
	return &access{g: g, role: role, r: r, cat: cat}, nil
}

// relObject returns o as the privilege model sees it.
func (a *access) relObject(o *object) (privilege.Object, error) {
	owner, acl, err := readPriv(a.r, relPrivName(o.id))
	// Named without its schema, as PostgreSQL's messages name it.
	name := o.name
	if a.cat != nil {
		_, name = a.cat.splitKey(o.name)
	}
	return privilege.Object{Kind: privilege.Relation, KindName: o.kindName(), Name: name, Owner: owner, ACL: acl}, err
}

// schemaObject returns the schema public: owned by the bootstrap
// superuser, with USAGE for PUBLIC by default and, as in PostgreSQL 15,
// no CREATE for PUBLIC.
func (a *access) schemaObject() (privilege.Object, error) {
	owner, acl, err := readPrivOwnedBy(a.r, privSchemaPublic, schemaOwner)
	if acl == nil {
		acl = publicSchemaDefault(owner)
	}
	return privilege.Object{Kind: privilege.Schema, KindName: "schema", Name: "public", Owner: owner, ACL: acl}, err
}

func publicSchemaDefault(owner string) privilege.ACL {
	return privilege.ACL{{Grantee: owner, Grantor: owner, Privs: privilege.All(privilege.Schema)},
		{Grantee: "", Grantor: owner, Privs: privilege.Usage}}
}

// databaseObject returns the database.
func (a *access) databaseObject(name string) (privilege.Object, error) {
	owner, acl, err := readPriv(a.r, privDatabase)
	return privilege.Object{Kind: privilege.Database, KindName: "database", Name: name, Owner: owner, ACL: acl}, err
}

// checkRel checks that role holds want on o.
func (a *access) checkRel(o *object, role string, want privilege.Privs) error {
	obj, err := a.relObject(o)
	if err != nil {
		return err
	}
	return a.g.Check(obj, role, want)
}

// ownerRel checks that role has the rights of o's owner.
func (a *access) ownerRel(o *object, role string) error {
	obj, err := a.relObject(o)
	if err != nil {
		return err
	}
	return a.g.CheckOwner(obj, role)
}

// userObject returns the user relation a statement names, nil for a
// system relation or one that does not exist (binding reports that).
func (c *catalog) userObject(schema, name string) *object {
	if o := c.resolve(qualifiedName(schema, name)); o != nil && o.system == nil {
		return o
	}
	return nil
}

// checkRoleChange runs check, a rule of who may change roles, for the
// session's current role; a current role outside the catalog acts as the
// bootstrap superuser.
func (s *Session) checkRoleChange(r state.Reader, check func(g *privilege.Graph, current string) error) error {
	g, err := loadGraph(r)
	if err != nil {
		return err
	}
	current := s.currentRole()
	if _, ok := g.Role(current); !ok {
		if current != s.sessionUser() {
			return check(g, current) // a dropped role SET ROLE chose: nothing
		}
		current = pgcatalog.BootstrapRole
	}
	return check(g, current)
}

// alterOf says what ALTER ROLE options change.
func alterOf(opts []*pg.Node) privilege.AlterRole {
	var a privilege.AlterRole
	for _, o := range opts {
		switch o.GetDefElem().GetDefname() {
		case "superuser":
			a.Superuser = true
		case "password":
			a.Password = true
		default:
			a.Other = true
		}
	}
	return a
}

// dropRoleRecords refuses to drop role while it owns relations or holds
// privileges on them (2BP01, with what depends on it), and removes its
// memberships and default privileges.
func dropRoleRecords(st state.Store, cat *catalog, role string) error {
	// What depends on the role, in the order the objects were created
	// (relations by id, then the schema and the database).
	type dep struct {
		order uint64
		text  string
	}
	var deps []dep
	var derr error
	err := st.Scan(privPrefix, state.PrefixEnd(privPrefix), func(k, _ []byte) bool {
		name := string(k[len(privPrefix):])
		owner, acl, err := readPriv(st, name)
		if err != nil {
			derr = err
			return false
		}
		what := privObjectName(cat, name)
		order, perr := strconv.ParseUint(strings.TrimPrefix(name, "rel/"), 10, 64)
		if perr != nil {
			order = 1 << 63
		}
		if strings.HasPrefix(name, "schema/") && cat != nil && cat.schemas[name[len("schema/"):]] != nil {
			sc := cat.schemas[name[len("schema/"):]]
			order = sc.id
		}
		if owner == role {
			deps = append(deps, dep{order, "owner of " + what})
		}
		for _, it := range acl {
			if it.Grantee == role || it.Grantor == role && owner != role {
				deps = append(deps, dep{order, "privileges for " + what})
				break
			}
		}
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return err
	}
	defs, err := defaultACLs(st)
	if err != nil {
		return err
	}
	for _, owner := range sortedKeys(defs) {
		if owner == role {
			continue
		}
		for _, it := range defs[owner] {
			if it.Grantee == role {
				deps = append(deps, dep{1<<63 + 1, "privileges for default privileges on new relations belonging to role " + owner})
				break
			}
		}
	}
	if len(deps) > 0 {
		sort.SliceStable(deps, func(i, j int) bool { return deps[i].order < deps[j].order })
		lines := make([]string, len(deps))
		for i, d := range deps {
			lines[i] = d.text
		}
		return &errs.Error{Code: errs.DependentObjects, SQLState: "2BP01",
			Message: fmt.Sprintf("role %q cannot be dropped because some objects depend on it", role), Detail: strings.Join(lines, "\n")}
	}
	members, err := readMembers(st)
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.Role == role || m.Member == role {
			if err := st.Delete(memberKey(m.Role, m.Member)); err != nil {
				return err
			}
		}
	}
	return st.Delete(defACLKey(role))
}

// privObjectName names the object of a privilege record in messages.
func privObjectName(cat *catalog, name string) string {
	switch {
	case name == privSchemaPublic:
		return "schema public"
	case name == privDatabase:
		return "database " + pgcatalog.DefaultDatabase
	case strings.HasPrefix(name, "schema/"):
		return "schema " + strings.TrimPrefix(name, "schema/")
	}
	if id, err := strconv.ParseUint(strings.TrimPrefix(name, "rel/"), 10, 64); err == nil && cat != nil {
		for _, o := range cat.byName {
			if o.id == id {
				return o.kindName() + " " + o.name
			}
		}
	}
	return name
}

// setIdentity runs SET ROLE, RESET ROLE, SET SESSION AUTHORIZATION and
// RESET SESSION AUTHORIZATION. SET ROLE needs the session user to be a
// member of the role; SET SESSION AUTHORIZATION another user needs the
// authenticated user to be a superuser, and resets the role.
func (s *Session) setIdentity(name string, v *pg.VariableSetStmt) (*Result, error) {
	tag := "SET"
	if v.Kind == pg.VariableSetKind_VAR_RESET {
		tag = "RESET"
	}
	value := ""
	switch v.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		if len(v.Args) != 1 || v.Args[0].GetAConst().GetSval() == nil {
			return nil, errs.Newf(errs.InvalidParameterValue, "invalid value for parameter %q", name)
		}
		value = v.Args[0].GetAConst().GetSval().Sval
	case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
	default:
		return nil, errs.Newf(errs.FeatureNotSupported, "this form of SET %s is not supported", name)
	}
	r, _, release := s.privView()
	defer release()
	g, err := loadGraph(r)
	if err != nil {
		return nil, err
	}
	exists := func(role string) error {
		if _, ok := g.Role(role); !ok {
			return errs.Newf(errs.InvalidParameterValue, "role %q does not exist", role)
		}
		return nil
	}
	if name == "role" {
		if value == "" || value == "none" {
			s.settings.Reset("role")
			return &Result{Tag: tag}, nil
		}
		if err := exists(value); err != nil {
			return nil, err
		}
		user := s.sessionUser()
		if _, ok := g.Role(user); ok {
			if err := g.CheckSetRole(user, value); err != nil {
				return nil, err
			}
		}
		s.settings.Put("role", value)
		return &Result{Tag: tag}, nil
	}
	auth := s.authenticatedUser()
	if value == "" {
		value = auth
	} else if value != auth {
		// A superuser may also become a user the catalog does not have,
		// which is then a superuser too (as a configured user is).
		if ro, ok := g.Role(auth); ok && !ro.Superuser {
			if err := exists(value); err != nil {
				return nil, err
			}
			return nil, errs.New(errs.InsufficientPrivilege, "permission denied to set session authorization")
		}
	}
	s.settings.Put("session_authorization", value)
	s.settings.Reset("role")
	return &Result{Tag: tag}, nil
}

// setRole is the role SET ROLE chose, "" for none.
func (s *Session) setRole() string { return s.resolved().role }

// sortedKeys returns m's keys, sorted.
func sortedKeys(m map[string]privilege.ACL) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
