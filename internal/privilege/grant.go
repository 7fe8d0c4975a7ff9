package privilege

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// Object is what a privilege check or change is about.
type Object struct {
	Kind Kind
	// KindName and Name name the object in messages ("table", "t").
	KindName, Name string
	Owner          string
	ACL            ACL // nil: the default
}

// Privileges returns the privileges role holds on obj, and the grant
// options: a superuser's are all; otherwise those granted to PUBLIC, to
// role and to the roles whose privileges it has, plus every grant option
// when it has the owner's privileges (PostgreSQL's aclmask).
func (g *Graph) Privileges(obj Object, role string) (privs, grant Privs) {
	all := All(obj.Kind)
	if g.IsSuperuser(role) {
		return all, all
	}
	for _, it := range Resolve(obj.ACL, obj.Kind, obj.Owner) {
		if it.Grantee == "" || it.Grantee == role || g.HasPrivsOf(role, it.Grantee) {
			privs |= it.Privs
			grant |= it.Grant
		}
	}
	if g.HasPrivsOf(role, obj.Owner) {
		grant = all
	}
	return privs, grant
}

// Check returns nil when role holds every privilege of want on obj, else
// PostgreSQL's 42501 "permission denied for <kind> <name>".
func (g *Graph) Check(obj Object, role string, want Privs) error {
	if p, _ := g.Privileges(obj, role); p&want == want {
		return nil
	}
	return Denied(obj)
}

// Denied is the error of a privilege check that fails on obj.
func Denied(obj Object) error {
	return errs.Newf(errs.InsufficientPrivilege, "permission denied for %s %s", obj.KindName, obj.Name)
}

// NotOwner is the error of an owner's action (DROP, ALTER) by another.
func NotOwner(obj Object) error {
	return errs.Newf(errs.InsufficientPrivilege, "must be owner of %s %s", obj.KindName, obj.Name)
}

// CheckOwner returns nil when role has the privileges of obj's owner (a
// superuser has), else NotOwner.
func (g *Graph) CheckOwner(obj Object, role string) error {
	if g.HasPrivsOf(role, obj.Owner) {
		return nil
	}
	return NotOwner(obj)
}

// BestGrantor returns who a GRANT or REVOKE of privs on obj by role is
// recorded as coming from, and the grant options of privs that grantor
// holds: the owner when role has the owner's privileges, else role or the
// role it has the privileges of that holds all of them directly, else
// the one holding most (PostgreSQL's select_best_grantor).
func (g *Graph) BestGrantor(obj Object, role string, privs Privs) (string, Privs) {
	if role == obj.Owner || g.IsSuperuser(role) {
		return obj.Owner, privs
	}
	acl := Resolve(obj.ACL, obj.Kind, obj.Owner)
	best, bestOpts := role, Privs(0)
	for _, r := range g.reach(role, true) {
		var opts Privs
		if r == obj.Owner {
			opts = privs
		} else {
			for _, it := range acl {
				if it.Grantee == r {
					opts |= it.Grant & privs
				}
			}
		}
		if opts == privs {
			return r, opts
		}
		if bits.OnesCount16(uint16(opts)) > bits.OnesCount16(uint16(bestOpts)) {
			best, bestOpts = r, opts
		}
	}
	return best, bestOpts
}

// Change is one GRANT or REVOKE of privileges.
type Change struct {
	Revoke bool
	// Privs are the privileges named; AllPrivs says they were ALL
	// [PRIVILEGES] (which warns only when nothing could be granted).
	Privs    Privs
	AllPrivs bool
	// GrantOption is WITH GRANT OPTION of a GRANT, GRANT OPTION FOR of a
	// REVOKE.
	GrantOption bool
	Grantees    []string // "" is PUBLIC
	Cascade     bool
}

// Warning is a warning a change raises without failing.
type Warning struct {
	SQLState, Message string
}

// Apply returns obj's ACL after role makes the change ch, and the
// warnings it raises (PostgreSQL's ExecGrant_Relation, restrict_and_check_grant
// and merge_acl_with_grant).
func (g *Graph) Apply(obj Object, role string, ch Change) (ACL, []Warning, error) {
	grantor, opts := g.BestGrantor(obj, role, ch.Privs)
	all := All(obj.Kind)
	var warns []Warning
	if opts == 0 {
		if p, o := g.Privileges(obj, role); p|o == 0 {
			return nil, nil, Denied(obj)
		}
	}
	privs := ch.Privs & opts
	switch {
	case !ch.Revoke && privs == 0:
		warns = append(warns, Warning{"01007", fmt.Sprintf("no privileges were granted for %q", obj.Name)})
	case !ch.Revoke && !ch.AllPrivs && privs != ch.Privs:
		warns = append(warns, Warning{"01007", fmt.Sprintf("not all privileges were granted for %q", obj.Name)})
	case ch.Revoke && privs == 0:
		warns = append(warns, Warning{"01006", fmt.Sprintf("no privileges could be revoked for %q", obj.Name)})
	case ch.Revoke && !ch.AllPrivs && privs != ch.Privs:
		warns = append(warns, Warning{"01006", fmt.Sprintf("not all privileges could be revoked for %q", obj.Name)})
	}
	_ = all
	acl := Resolve(obj.ACL, obj.Kind, obj.Owner).clone()
	for _, grantee := range ch.Grantees {
		if !ch.Revoke {
			if ch.GrantOption && grantee == grantor {
				return nil, nil, errs.New(errs.InvalidGrantOperation, "grant options cannot be granted back to your own grantor")
			}
			var opt Privs
			if ch.GrantOption {
				opt = privs
			}
			acl = acl.add(grantee, grantor, privs, opt)
			continue
		}
		var lost Privs
		acl, lost = acl.remove(grantee, grantor, privs, ch.GrantOption)
		if lost != 0 {
			var err error
			if acl, err = g.recursiveRevoke(obj, acl, grantee, lost, ch.Cascade); err != nil {
				return nil, nil, err
			}
		}
	}
	return acl, warns, nil
}

// recursiveRevoke takes from the ACL what grantee granted with grant
// options lost that it no longer holds otherwise: refused without
// cascade, else revoked, and what those grantees granted in turn.
func (g *Graph) recursiveRevoke(obj Object, acl ACL, grantee string, lost Privs, cascade bool) (ACL, error) {
	if grantee == obj.Owner {
		return acl, nil
	}
	o := obj
	o.ACL = acl
	if grantee != "" {
		_, still := g.Privileges(o, grantee)
		lost &^= still
	}
	if lost == 0 {
		return acl, nil
	}
	for i := 0; i < len(acl); i++ {
		it := acl[i]
		if it.Grantor != grantee || it.Privs&lost == 0 {
			continue
		}
		if !cascade {
			return nil, &errs.Error{Code: errs.DependentObjects, SQLState: "2BP01", Message: "dependent privileges exist", Hint: "Use CASCADE to revoke them too."}
		}
		var sub Privs
		acl, sub = acl.remove(it.Grantee, grantee, lost, false)
		if sub != 0 {
			var err error
			if acl, err = g.recursiveRevoke(obj, acl, it.Grantee, sub, cascade); err != nil {
				return nil, err
			}
		}
		i = -1 // the ACL changed: look again from the start
	}
	return acl, nil
}

// ApplyDefault returns the default privileges for tables that role
// creates after ALTER DEFAULT PRIVILEGES FOR ROLE role makes ch, given
// the current ones (nil: none). The result is sorted by key (PostgreSQL
// sorts by role OID) and is nil when it equals the built-in default.
func ApplyDefault(current ACL, role string, ch Change, key func(string) uint32) ACL {
	acl := Resolve(current, Relation, role).clone()
	for _, grantee := range ch.Grantees {
		if ch.Revoke {
			acl, _ = acl.remove(grantee, role, ch.Privs, ch.GrantOption)
			continue
		}
		var opt Privs
		if ch.GrantOption {
			opt = ch.Privs
		}
		acl = acl.add(grantee, role, ch.Privs, opt)
	}
	acl.SortByGrantee(key)
	def := Default(Relation, role)
	if acl.Equal(def) {
		return nil
	}
	return acl
}

// CheckDefaultFor says whether current may change the default privileges
// of role (FOR ROLE role): it must be a member of it.
func (g *Graph) CheckDefaultFor(current, role string) error {
	if !g.IsMemberOf(current, role) {
		return denied("must be member of role %q", role)
	}
	return nil
}

// ParseCheck parses the privilege text of has_table_privilege and its
// kin: privilege names separated by commas, each optionally followed by
// WITH GRANT OPTION (in any case). It returns the privileges asked for
// and those whose grant option is asked for.
func ParseCheck(k Kind, text string) (privs, grant Privs, err error) {
	for _, part := range strings.Split(text, ",") {
		p := strings.ToUpper(strings.Join(strings.Fields(part), " "))
		withGrant := false
		if q, ok := strings.CutSuffix(p, " WITH GRANT OPTION"); ok {
			p, withGrant = q, true
		}
		x, ok := ParseName(p)
		if !ok || x&All(k) == 0 {
			return 0, 0, errs.Newf(errs.InvalidParameterValue, "unrecognized privilege type: %q", strings.TrimSpace(part))
		}
		if withGrant {
			grant |= x
		} else {
			privs |= x
		}
	}
	return privs, grant, nil
}

// HasAny reports whether role holds any of privs, or the grant option
// of any of grant, on obj (has_table_privilege's answer).
func (g *Graph) HasAny(obj Object, role string, privs, grant Privs) bool {
	p, o := g.Privileges(obj, role)
	return p&privs != 0 || o&grant != 0
}
