package privilege

import (
	"fmt"
	"sort"

	"github.com/rockstream/rockstream/internal/errs"
)

// Role is a role's attributes, as pg_authid's.
type Role struct {
	Name       string
	Superuser  bool
	Inherit    bool
	CreateRole bool
	CreateDB   bool
	Login      bool
}

// Membership says that Member is a member of Role (pg_auth_members): it
// may SET ROLE to it and, when Member has INHERIT, has its privileges.
// Admin is WITH ADMIN OPTION: Member may grant Role to others.
type Membership struct {
	Role, Member, Grantor string
	Admin                 bool
}

// Graph is the roles and their memberships.
type Graph struct {
	roles   map[string]Role
	members []Membership
}

// NewGraph returns the graph of roles and memberships.
func NewGraph(roles []Role, members []Membership) *Graph {
	g := &Graph{roles: make(map[string]Role, len(roles)), members: members}
	for _, r := range roles {
		g.roles[r.Name] = r
	}
	return g
}

// Role returns the named role and whether it exists.
func (g *Graph) Role(name string) (Role, bool) {
	r, ok := g.roles[name]
	return r, ok
}

// Members returns the memberships.
func (g *Graph) Members() []Membership { return g.members }

// IsSuperuser reports whether name is a superuser.
func (g *Graph) IsSuperuser(name string) bool { return g.roles[name].Superuser }

// canCreateRole is PostgreSQL's have_createrole_privilege.
func (g *Graph) canCreateRole(name string) bool {
	r := g.roles[name]
	return r.Superuser || r.CreateRole
}

// reach returns member and every role it reaches through memberships, in
// breadth-first order; with inherit, only through roles that have
// INHERIT (a role without it keeps to its own privileges).
func (g *Graph) reach(member string, inherit bool) []string {
	out := []string{member}
	seen := map[string]bool{member: true}
	for i := 0; i < len(out); i++ {
		if inherit && !g.roles[out[i]].Inherit {
			continue
		}
		for _, m := range g.members {
			if m.Member == out[i] && !seen[m.Role] {
				seen[m.Role] = true
				out = append(out, m.Role)
			}
		}
	}
	return out
}

// HasPrivsOf reports whether member has the privileges of role: it is
// role, a superuser, or reaches role through inheriting memberships.
func (g *Graph) HasPrivsOf(member, role string) bool {
	if member == role || g.IsSuperuser(member) {
		return true
	}
	for _, r := range g.reach(member, true) {
		if r == role {
			return true
		}
	}
	return false
}

// IsMemberOf reports whether member may become role with SET ROLE: it is
// role, a superuser, or a member of role, directly or not, inheriting or
// not.
func (g *Graph) IsMemberOf(member, role string) bool {
	return g.IsSuperuser(member) || g.isMemberNoSuper(member, role)
}

func (g *Graph) isMemberNoSuper(member, role string) bool {
	for _, r := range g.reach(member, false) {
		if r == role {
			return true
		}
	}
	return false
}

// IsAdminOf reports whether member may grant and revoke membership in
// role: a superuser, or member of a role (itself included) that holds
// role WITH ADMIN OPTION. No role holds its own admin option.
func (g *Graph) IsAdminOf(member, role string) bool {
	if g.IsSuperuser(member) {
		return true
	}
	if member == role {
		return false
	}
	for _, r := range g.reach(member, false) {
		for _, m := range g.members {
			if m.Member == r && m.Role == role && m.Admin {
				return true
			}
		}
	}
	return false
}

func denied(format string, args ...any) error {
	return errs.Newf(errs.InsufficientPrivilege, format, args...)
}

// CheckCreateRole says whether current may create a role, a superuser
// one when super.
func (g *Graph) CheckCreateRole(current string, super bool) error {
	switch {
	case super:
		if !g.IsSuperuser(current) {
			return denied("must be superuser to create superusers")
		}
	case !g.canCreateRole(current):
		return denied("permission denied to create role")
	}
	return nil
}

// AlterRole says what an ALTER ROLE changes: the superuser attribute, the
// password, and any other attribute.
type AlterRole struct {
	Superuser, Password, Other bool
}

// CheckAlterRole says whether current may make the change a to target:
// a superuser role, or the superuser attribute, only by a superuser;
// the rest by a role with CREATEROLE; a role's own password by itself.
func (g *Graph) CheckAlterRole(current string, target Role, a AlterRole) error {
	switch {
	case target.Superuser || a.Superuser:
		if !g.IsSuperuser(current) {
			return denied("must be superuser to alter superuser roles or change superuser attribute")
		}
	case !g.canCreateRole(current):
		if a.Other || !a.Password || target.Name != current {
			return denied("permission denied")
		}
	}
	return nil
}

// CheckAlterRoleSettings says whether current may change the setting
// defaults of target (ALTER ROLE ... SET); target nil is ALTER ROLE ALL,
// for superusers only. As in PostgreSQL 15, a superuser's take a
// superuser; another role's CREATEROLE or being that role.
func (g *Graph) CheckAlterRoleSettings(current string, target *Role) error {
	switch {
	case target == nil:
		if !g.IsSuperuser(current) {
			return denied("must be superuser to alter settings globally")
		}
	case target.Superuser:
		if !g.IsSuperuser(current) {
			return denied("must be superuser to alter superusers")
		}
	case !g.canCreateRole(current) && target.Name != current:
		return denied("permission denied")
	}
	return nil
}

// CheckDropRoles says whether current may drop roles at all, before
// the roles named are looked at.
func (g *Graph) CheckDropRoles(current string) error {
	if !g.canCreateRole(current) {
		return denied("permission denied to drop role")
	}
	return nil
}

// CheckDropRole says whether current, in a session of sessionUser, may
// drop target.
func (g *Graph) CheckDropRole(current, sessionUser string, target Role) error {
	switch {
	case !g.canCreateRole(current):
		return denied("permission denied to drop role")
	case target.Name == current:
		return errs.New(errs.ObjectInUse, "current user cannot be dropped")
	case target.Name == sessionUser:
		return errs.New(errs.ObjectInUse, "session user cannot be dropped")
	case target.Superuser && !g.IsSuperuser(current):
		return denied("must be superuser to drop superusers")
	}
	return nil
}

// CheckAdmin says whether current may grant or revoke membership in role:
// in a superuser role only a superuser; in another a role with
// CREATEROLE or the admin option on it.
func (g *Graph) CheckAdmin(current, role string) error {
	if g.IsSuperuser(role) {
		if !g.IsSuperuser(current) {
			return denied("must be superuser to alter superusers")
		}
		return nil
	}
	if !g.canCreateRole(current) && !g.IsAdminOf(current, role) {
		return denied("must have admin option on role %q", role)
	}
	return nil
}

// GrantRole returns the memberships after current grants role to member
// (with admin option when admin), and a notice when member already is
// one. The caller has checked CheckAdmin.
func (g *Graph) GrantRole(current, role, member string, admin bool) ([]Membership, string, error) {
	if g.isMemberNoSuper(role, member) {
		return nil, "", errs.Newf(errs.InvalidGrantOperation, "role %q is a member of role %q", role, member)
	}
	out := append([]Membership(nil), g.members...)
	for i, m := range out {
		if m.Role == role && m.Member == member {
			if !admin || m.Admin {
				return out, fmt.Sprintf("role %q is already a member of role %q", member, role), nil
			}
			out[i].Admin = true
			return out, "", nil
		}
	}
	return append(out, Membership{Role: role, Member: member, Grantor: current, Admin: admin}), "", nil
}

// RevokeRole returns the memberships after role is revoked from member,
// or only its admin option when adminOnly, and a warning when member is
// not a member.
func (g *Graph) RevokeRole(role, member string, adminOnly bool) ([]Membership, string) {
	out := append([]Membership(nil), g.members...)
	for i, m := range out {
		if m.Role == role && m.Member == member {
			if adminOnly {
				out[i].Admin = false
			} else {
				out = append(out[:i], out[i+1:]...)
			}
			return out, ""
		}
	}
	return out, fmt.Sprintf("role %q is not a member of role %q", member, role)
}

// CheckSetRole says whether a session of sessionUser may SET ROLE to
// role.
func (g *Graph) CheckSetRole(sessionUser, role string) error {
	if !g.IsMemberOf(sessionUser, role) {
		return denied("permission denied to set role %q", role)
	}
	return nil
}

// WithMembers returns the graph of g's roles with memberships ms.
func (g *Graph) WithMembers(ms []Membership) *Graph { return &Graph{roles: g.roles, members: ms} }

// RoleNames returns the roles' names, sorted.
func (g *Graph) RoleNames() []string {
	out := make([]string, 0, len(g.roles))
	for n := range g.roles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
