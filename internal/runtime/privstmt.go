package runtime

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/privilege"
	"github.com/rockstream/rockstream/internal/state"
)

// The statements that change privileges and ownership: GRANT and REVOKE
// of privileges and of roles, ALTER DEFAULT PRIVILEGES, ALTER ... OWNER
// TO, REASSIGN OWNED and DROP OWNED. Each is written in its statement's
// epoch, as a role statement is.

// execPrivilegeStmt runs n when it is one of those statements; handled is
// false otherwise.
func (s *Session) execPrivilegeStmt(ctx context.Context, n *pg.Node) (res *Result, handled bool, err error) {
	switch {
	case n.GetGrantStmt() != nil:
		res, err = s.execGrant(ctx, n.GetGrantStmt())
	case n.GetGrantRoleStmt() != nil:
		res, err = s.execGrantRole(ctx, n.GetGrantRoleStmt())
	case n.GetAlterDefaultPrivilegesStmt() != nil:
		res, err = s.execDefaultPrivileges(ctx, n.GetAlterDefaultPrivilegesStmt())
	case n.GetAlterTableStmt() != nil && isOwnerChange(n.GetAlterTableStmt()):
		res, err = s.execOwnerTo(ctx, n.GetAlterTableStmt())
	case n.GetReassignOwnedStmt() != nil:
		res, err = s.execReassignOwned(ctx, n.GetReassignOwnedStmt())
	case n.GetDropOwnedStmt() != nil:
		res, err = s.execDropOwned(ctx, n.GetDropOwnedStmt())
	default:
		return nil, false, nil
	}
	return res, true, err
}

// grantees returns the role names of a GRANT's or REVOKE's grantees (""
// for PUBLIC), each checked to exist in g.
func granteeNames(g *privilege.Graph, specs []*pg.Node, current string) ([]string, error) {
	var out []string
	for _, n := range specs {
		rs := n.GetRoleSpec()
		var name string
		switch rs.GetRoletype() {
		case pg.RoleSpecType_ROLESPEC_PUBLIC:
			name = ""
		case pg.RoleSpecType_ROLESPEC_CSTRING:
			name = rs.Rolename
		case pg.RoleSpecType_ROLESPEC_CURRENT_USER, pg.RoleSpecType_ROLESPEC_CURRENT_ROLE:
			name = current
		default:
			return nil, errs.New(errs.FeatureNotSupported, "only role names, CURRENT_USER and PUBLIC are supported here")
		}
		if name != "" {
			if _, ok := g.Role(name); !ok {
				return nil, errs.Newf(errs.UndefinedObject, "role %q does not exist", name)
			}
		}
		out = append(out, name)
	}
	return out, nil
}

// privilegeChange reads the privileges of a GRANT or REVOKE on objects
// of kind k.
func privilegeChange(gs *pg.GrantStmt, k privilege.Kind, kindWord string) (privilege.Change, error) {
	ch := privilege.Change{Revoke: !gs.IsGrant, GrantOption: gs.GrantOption, Cascade: gs.Behavior == pg.DropBehavior_DROP_CASCADE}
	if len(gs.Privileges) == 0 {
		ch.Privs, ch.AllPrivs = privilege.All(k), true
		return ch, nil
	}
	for _, p := range gs.Privileges {
		ap := p.GetAccessPriv()
		if len(ap.GetCols()) > 0 {
			return ch, errs.New(errs.FeatureNotSupported, "column privileges are not supported")
		}
		x, ok := privilege.ParseName(ap.GetPrivName())
		if !ok || x&privilege.All(k) == 0 {
			return ch, errs.Newf(errs.InvalidGrantOperation, "invalid privilege type %s for %s", strings.ToUpper(ap.GetPrivName()), kindWord)
		}
		ch.Privs |= x
	}
	return ch, nil
}

// grantTarget is one object of a GRANT or REVOKE: its privilege record's
// name and the object as the model sees it.
type grantTarget struct {
	name string
	obj  privilege.Object
	// schema is set for the schema public, whose default ACL is not its
	// kind's.
	schema bool
}

func (s *Session) execGrant(ctx context.Context, gs *pg.GrantStmt) (*Result, error) {
	tag := "GRANT"
	if !gs.IsGrant {
		tag = "REVOKE"
	}
	var warns []privilege.Warning
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		warns = nil
		g, err := loadGraph(st)
		if err != nil {
			return nil, err
		}
		a := &access{g: g, role: s.currentRole(), r: st, cat: w.cat}
		if !s.knownRole(st, a.role) {
			// A session user outside the catalog acts as the bootstrap
			// superuser.
			a.role = pgcatalog.BootstrapRole
		}
		targets, k, kindWord, err := s.grantTargets(a, gs)
		if err != nil {
			return nil, err
		}
		ch, err := privilegeChange(gs, k, kindWord)
		if err != nil {
			return nil, err
		}
		if ch.Grantees, err = granteeNames(g, gs.Grantees, a.role); err != nil {
			return nil, err
		}
		for _, t := range targets {
			acl, ws, err := g.Apply(t.obj, a.role, ch)
			if err != nil {
				return nil, err
			}
			warns = append(warns, ws...)
			def := privilege.Default(t.obj.Kind, t.obj.Owner)
			if t.schema {
				def = publicSchemaDefault(t.obj.Owner)
			}
			if t.obj.ACL == nil && acl.Equal(def) {
				acl = nil
			}
			if err := writePriv(st, t.name, t.obj.Owner, acl); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}, false)
	if err != nil {
		return nil, err
	}
	for _, wn := range warns {
		s.noticeState("WARNING", wn.SQLState, wn.Message)
	}
	return &Result{Tag: tag}, nil
}

// knownRole reports whether name is a role of the catalog.
func (s *Session) knownRole(r state.Reader, name string) bool {
	ro, err := readRole(r, name)
	return err == nil && ro != nil || name == pgcatalog.BootstrapRole
}

// grantTargets resolves the objects a GRANT or REVOKE names.
func (s *Session) grantTargets(a *access, gs *pg.GrantStmt) ([]grantTarget, privilege.Kind, string, error) {
	var out []grantTarget
	switch gs.Objtype {
	case pg.ObjectType_OBJECT_TABLE:
		if gs.Targtype == pg.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA {
			in := map[string]bool{}
			for _, n := range gs.Objects {
				sch := n.GetString_().GetSval()
				if !a.cat.schemaExists(sch) {
					return nil, 0, "", errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", sch)
				}
				in[sch] = true
			}
			names := make([]string, 0, len(a.cat.byName))
			for name, o := range a.cat.byName {
				if sch, _ := a.cat.splitKey(name); o.system == nil && in[sch] {
					names = append(names, name)
				}
			}
			sort.Strings(names)
			for _, name := range names {
				o := a.cat.byName[name]
				obj, err := a.relObject(o)
				if err != nil {
					return nil, 0, "", err
				}
				out = append(out, grantTarget{name: relPrivName(o.id), obj: obj})
			}
			return out, privilege.Relation, "relation", nil
		}
		for _, n := range gs.Objects {
			rv := n.GetRangeVar()
			o := a.cat.userObject(rv.Schemaname, rv.Relname)
			if o == nil {
				return nil, 0, "", errs.Newf(errs.UndefinedTable, "relation %q does not exist", normalizeName(rv.Schemaname, rv.Relname))
			}
			obj, err := a.relObject(o)
			if err != nil {
				return nil, 0, "", err
			}
			out = append(out, grantTarget{name: relPrivName(o.id), obj: obj})
		}
		return out, privilege.Relation, "relation", nil
	case pg.ObjectType_OBJECT_SCHEMA:
		for _, n := range gs.Objects {
			sch := n.GetString_().GetSval()
			if !a.cat.schemaExists(sch) {
				return nil, 0, "", errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", sch)
			}
			obj, err := a.namedSchemaObject(sch)
			if err != nil {
				return nil, 0, "", err
			}
			out = append(out, grantTarget{name: schemaPrivName(sch), obj: obj, schema: sch == publicSchema})
		}
		return out, privilege.Schema, "schema", nil
	case pg.ObjectType_OBJECT_DATABASE:
		for _, n := range gs.Objects {
			db := n.GetString_().GetSval()
			if db != s.Setting("current_database") {
				return nil, 0, "", errs.Newf(errs.UndefinedObject, "database %q does not exist", db)
			}
			obj, err := a.databaseObject(db)
			if err != nil {
				return nil, 0, "", err
			}
			out = append(out, grantTarget{name: privDatabase, obj: obj})
		}
		return out, privilege.Database, "database", nil
	}
	return nil, 0, "", errs.Newf(errs.FeatureNotSupported, "GRANT and REVOKE on %s are not supported", strings.ToLower(strings.TrimPrefix(gs.Objtype.String(), "OBJECT_")))
}

// noticeState sends a notice with a SQLSTATE the error codes do not name
// (the warnings of GRANT and REVOKE).
func (s *Session) noticeState(severity, sqlstate, msg string) {
	if s.onNotice != nil {
		s.onNotice(Notice{Severity: severity, SQLState: sqlstate, Message: msg})
	}
}

// execGrantRole runs GRANT role TO role and REVOKE role FROM role.
func (s *Session) execGrantRole(ctx context.Context, gr *pg.GrantRoleStmt) (*Result, error) {
	tag := "GRANT ROLE"
	if !gr.IsGrant {
		tag = "REVOKE ROLE"
	}
	admin := false
	for _, o := range gr.Opt {
		d := o.GetDefElem()
		if d.GetDefname() != "admin" {
			return nil, errs.Newf(errs.FeatureNotSupported, "GRANT role WITH %s OPTION is not supported", strings.ToUpper(d.GetDefname()))
		}
		// GRANT ... WITH ADMIN OPTION carries true; REVOKE ADMIN OPTION
		// FOR carries false, and revokes the option alone.
		admin = gr.IsGrant && d.Arg.GetBoolean().GetBoolval() || !gr.IsGrant
	}
	if gr.Grantor != nil {
		return nil, errs.New(errs.FeatureNotSupported, "GRANTED BY is not supported")
	}
	var notes []Notice
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		notes = nil
		g, err := loadGraph(st)
		if err != nil {
			return nil, err
		}
		current := s.currentRole()
		if !s.knownRole(st, current) {
			current = pgcatalog.BootstrapRole
		}
		members, err := granteeNames(g, gr.GranteeRoles, current)
		if err != nil {
			return nil, err
		}
		old := g.Members()
		for _, p := range gr.GrantedRoles {
			role := p.GetAccessPriv().GetPrivName()
			if _, ok := g.Role(role); !ok {
				return nil, errs.Newf(errs.UndefinedObject, "role %q does not exist", role)
			}
			if err := g.CheckAdmin(current, role); err != nil {
				return nil, err
			}
			for _, m := range members {
				if m == "" {
					return nil, errs.New(errs.FeatureNotSupported, "role membership cannot be granted to PUBLIC")
				}
				var ms []privilege.Membership
				var note string
				if gr.IsGrant {
					if ms, note, err = g.GrantRole(current, role, m, admin); err != nil {
						return nil, err
					}
					if note != "" {
						notes = append(notes, Notice{Severity: "NOTICE", SQLState: "00000", Message: note})
					}
				} else {
					ms, note = g.RevokeRole(role, m, admin)
					if note != "" {
						notes = append(notes, Notice{Severity: "WARNING", SQLState: "01000", Message: note})
					}
				}
				g = g.WithMembers(ms)
			}
		}
		return nil, writeMembers(st, old, g.Members())
	}, false)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		s.noticeState(n.Severity, n.SQLState, n.Message)
	}
	return &Result{Tag: tag}, nil
}

// roleOID is a role's OID, as pg_roles shows it.
func roleOID(name string) uint32 {
	if name == pgcatalog.BootstrapRole {
		return 10
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return 1<<31 | h.Sum32()>>1
}

// execDefaultPrivileges runs ALTER DEFAULT PRIVILEGES [FOR ROLE r, ...]
// [IN SCHEMA public] GRANT|REVOKE ... ON TABLES.
func (s *Session) execDefaultPrivileges(ctx context.Context, ad *pg.AlterDefaultPrivilegesStmt) (*Result, error) {
	gs := ad.Action
	if gs.Objtype != pg.ObjectType_OBJECT_TABLE {
		return nil, errs.New(errs.FeatureNotSupported, "ALTER DEFAULT PRIVILEGES is supported ON TABLES only")
	}
	var forRoles []*pg.Node
	for _, o := range ad.Options {
		d := o.GetDefElem()
		switch d.GetDefname() {
		case "roles":
			forRoles = d.Arg.GetList().GetItems()
		case "schemas":
			return nil, errs.New(errs.FeatureNotSupported, "ALTER DEFAULT PRIVILEGES IN SCHEMA is not supported; leave the schema out")
		}
	}
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		g, err := loadGraph(st)
		if err != nil {
			return nil, err
		}
		current := s.currentRole()
		if !s.knownRole(st, current) {
			current = pgcatalog.BootstrapRole
		}
		targets := []string{current}
		if forRoles != nil {
			if targets, err = granteeNames(g, forRoles, current); err != nil {
				return nil, err
			}
		}
		ch, err := privilegeChange(gs, privilege.Relation, "relation")
		if err != nil {
			return nil, err
		}
		if ch.Grantees, err = granteeNames(g, gs.Grantees, current); err != nil {
			return nil, err
		}
		for _, role := range targets {
			if err := g.CheckDefaultFor(current, role); err != nil {
				return nil, err
			}
			old, err := readDefaultACL(st, role)
			if err != nil {
				return nil, err
			}
			acl := privilege.ApplyDefault(old, role, ch, roleOID)
			if acl == nil {
				err = st.Delete(defACLKey(role))
			} else {
				err = st.Set(defACLKey(role), []byte(strings.Join(acl.Strings(), "\n")))
			}
			if err != nil {
				return nil, err
			}
		}
		return nil, nil
	}, false)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: "ALTER DEFAULT PRIVILEGES"}, nil
}

// readDefaultACL returns the default privileges of the tables role
// creates; nil when they are the built-in ones.
func readDefaultACL(r state.Reader, role string) (privilege.ACL, error) {
	v, ok, err := r.Get(defACLKey(role))
	if err != nil || !ok {
		return nil, err
	}
	return parseACL(strings.Split(string(v), "\n"))
}

// defaultACLs returns every role's default privileges, by role.
func defaultACLs(r state.Reader) (map[string]privilege.ACL, error) {
	out := map[string]privilege.ACL{}
	var derr error
	err := r.Scan(defACLPrefix, state.PrefixEnd(defACLPrefix), func(k, v []byte) bool {
		acl, err := parseACL(strings.Split(string(v), "\n"))
		if err != nil {
			derr = err
			return false
		}
		out[string(k[len(defACLPrefix):])] = acl
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// isOwnerChange reports whether an ALTER TABLE only changes the owner.
func isOwnerChange(at *pg.AlterTableStmt) bool {
	if len(at.Cmds) == 0 {
		return false
	}
	for _, c := range at.Cmds {
		if c.GetAlterTableCmd().GetSubtype() != pg.AlterTableType_AT_ChangeOwner {
			return false
		}
	}
	return true
}

// execOwnerTo runs ALTER TABLE | VIEW | MATERIALIZED VIEW name OWNER TO
// role. As in PostgreSQL, the current role must own the object, be a
// member of the new owner and (outside superusers) hold CREATE on the
// schema; the owner's ACL items pass to the new owner.
func (s *Session) execOwnerTo(ctx context.Context, at *pg.AlterTableStmt) (*Result, error) {
	tag := map[pg.ObjectType]string{pg.ObjectType_OBJECT_TABLE: "ALTER TABLE", pg.ObjectType_OBJECT_VIEW: "ALTER VIEW",
		pg.ObjectType_OBJECT_MATVIEW: "ALTER MATERIALIZED VIEW"}[at.Objtype]
	if tag == "" {
		return nil, errs.Newf(errs.FeatureNotSupported, "ALTER %s OWNER TO is not supported", strings.TrimPrefix(at.Objtype.String(), "OBJECT_"))
	}
	rs := at.Cmds[len(at.Cmds)-1].GetAlterTableCmd().GetNewowner()
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		g, err := loadGraph(st)
		if err != nil {
			return nil, err
		}
		current := s.currentRole()
		if !s.knownRole(st, current) {
			current = pgcatalog.BootstrapRole
		}
		names, err := granteeNames(g, []*pg.Node{{Node: &pg.Node_RoleSpec{RoleSpec: rs}}}, current)
		if err != nil || names[0] == "" {
			if err == nil {
				err = errs.New(errs.FeatureNotSupported, "an object cannot be owned by PUBLIC")
			}
			return nil, err
		}
		newOwner := names[0]
		rv := at.Relation
		o := w.cat.userObject(rv.Schemaname, rv.Relname)
		if o == nil {
			if at.MissingOk {
				s.notice("NOTICE", errs.UndefinedTable, fmt.Sprintf("relation %q does not exist, skipping", rv.Relname))
				return nil, nil
			}
			return nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", normalizeName(rv.Schemaname, rv.Relname))
		}
		a := &access{g: g, role: current, r: st, cat: w.cat}
		obj, err := a.relObject(o)
		if err != nil {
			return nil, err
		}
		if obj.Owner == newOwner {
			return nil, nil
		}
		if !g.IsSuperuser(current) {
			if err := g.CheckOwner(obj, current); err != nil {
				return nil, err
			}
			if !g.IsMemberOf(current, newOwner) {
				return nil, errs.Newf(errs.InsufficientPrivilege, "must be member of role %q", newOwner)
			}
			schName, _ := w.cat.splitKey(o.name)
			sch, err := a.namedSchemaObject(schName)
			if err != nil {
				return nil, err
			}
			if p, _ := g.Privileges(sch, newOwner); p&privilege.Create == 0 {
				return nil, privilege.Denied(sch)
			}
		}
		return nil, writePriv(st, relPrivName(o.id), newOwner, privilege.NewOwner(obj.ACL, obj.Owner, newOwner))
	}, false)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: tag}, nil
}

// execReassignOwned runs REASSIGN OWNED BY old, ... TO new: every
// relation the old roles own passes to new. The current role must have
// the privileges of every old role and of new.
func (s *Session) execReassignOwned(ctx context.Context, ro *pg.ReassignOwnedStmt) (*Result, error) {
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		g, err := loadGraph(st)
		if err != nil {
			return nil, err
		}
		current := s.currentRole()
		if !s.knownRole(st, current) {
			current = pgcatalog.BootstrapRole
		}
		olds, err := granteeNames(g, ro.Roles, current)
		if err != nil {
			return nil, err
		}
		news, err := granteeNames(g, []*pg.Node{{Node: &pg.Node_RoleSpec{RoleSpec: ro.Newrole}}}, current)
		if err != nil {
			return nil, err
		}
		for _, r := range append(olds, news...) {
			if !g.HasPrivsOf(current, r) {
				return nil, errs.New(errs.InsufficientPrivilege, "permission denied to reassign objects")
			}
		}
		a := &access{g: g, role: current, r: st, cat: w.cat}
		for _, o := range w.cat.byName {
			if o.system != nil {
				continue
			}
			obj, err := a.relObject(o)
			if err != nil {
				return nil, err
			}
			for _, old := range olds {
				if obj.Owner == old {
					if err := writePriv(st, relPrivName(o.id), news[0], privilege.NewOwner(obj.ACL, old, news[0])); err != nil {
						return nil, err
					}
				}
			}
		}
		return nil, reassignSchemas(st, a, olds, news[0])
	}, false)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: "REASSIGN OWNED"}, nil
}

// execDropOwned runs DROP OWNED BY role, ... [CASCADE | RESTRICT]: the
// relations the roles own are dropped (with what depends on them under
// CASCADE), the privileges granted to them revoked, and their default
// privileges removed. The current role must have the privileges of each.
func (s *Session) execDropOwned(ctx context.Context, do *pg.DropOwnedStmt) (*Result, error) {
	cascade := do.Behavior == pg.DropBehavior_DROP_CASCADE
	return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
		g, err := loadGraph(st)
		if err != nil {
			return nil, nil, err
		}
		current := s.currentRole()
		if !s.knownRole(st, current) {
			current = pgcatalog.BootstrapRole
		}
		roles, err := granteeNames(g, do.Roles, current)
		if err != nil {
			return nil, nil, err
		}
		drop := map[string]bool{}
		for _, r := range roles {
			if !g.HasPrivsOf(current, r) {
				return nil, nil, errs.New(errs.InsufficientPrivilege, "permission denied to drop objects")
			}
			drop[r] = true
		}
		nc := w.cat.clone()
		a := &access{g: g, role: current, r: st, cat: nc}
		var owned []*object
		for _, o := range nc.byName {
			if o.system != nil {
				continue
			}
			obj, err := a.relObject(o)
			if err != nil {
				return nil, nil, err
			}
			if drop[obj.Owner] {
				owned = append(owned, o)
			} else if obj.ACL != nil {
				if err := writePriv(st, relPrivName(o.id), obj.Owner, withoutGrantees(obj.ACL, drop)); err != nil {
					return nil, nil, err
				}
			}
		}
		sort.Slice(owned, func(i, j int) bool { return owned[i].id > owned[j].id })
		for _, o := range owned {
			if nc.byName[o.name] == nil {
				continue // dropped with another
			}
			if err := dropObject(st, nc, o, cascade); err != nil {
				return nil, nil, err
			}
		}
		if err := dropOwnedSchemas(st, nc, drop, cascade); err != nil {
			return nil, nil, err
		}
		for name, byDefault := range map[string]string{privSchemaPublic: schemaOwner, privDatabase: pgcatalog.BootstrapRole} {
			owner, acl, err := readPrivOwnedBy(st, name, byDefault)
			if err != nil {
				return nil, nil, err
			}
			if acl != nil {
				if err := writePriv(st, name, owner, withoutGrantees(acl, drop)); err != nil {
					return nil, nil, err
				}
			}
		}
		for r := range drop {
			if err := st.Delete(defACLKey(r)); err != nil {
				return nil, nil, err
			}
		}
		return nc, &Result{Tag: "DROP OWNED"}, nil
	})
}

// withoutGrantees returns acl without the items granted to the roles of
// drop.
func withoutGrantees(acl privilege.ACL, drop map[string]bool) privilege.ACL {
	out := privilege.ACL{}
	for _, it := range acl {
		if !drop[it.Grantee] {
			out = append(out, it)
		}
	}
	return out
}
