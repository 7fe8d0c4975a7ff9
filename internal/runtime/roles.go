package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/privilege"
	"github.com/rockstream/rockstream/internal/scram"
	"github.com/rockstream/rockstream/internal/state"
)

// Role is a role created with CREATE ROLE: who may connect, how they
// prove it, and what the role may do (privileges.go).
type Role struct {
	Name       string
	CanLogin   bool
	Superuser  bool
	CreateRole bool
	CreateDB   bool
	// NoInherit is NOINHERIT: the role does not have the privileges of
	// the roles it is a member of.
	NoInherit bool
	// Verifier is the role's password as a SCRAM-SHA-256 verifier
	// (scram.Verifier's stored form); empty when the role has none.
	Verifier string
}

// roleRecord is a role's durable form, under roleKey(name).
type roleRecord struct {
	CanLogin   bool   `json:"login"`
	Superuser  bool   `json:"superuser"`
	CreateRole bool   `json:"createrole,omitempty"`
	CreateDB   bool   `json:"createdb,omitempty"`
	NoInherit  bool   `json:"noinherit,omitempty"`
	Verifier   string `json:"verifier,omitempty"`
}

var rolePrefix = []byte{nsMeta, 'r', 'o', 'l', 'e', '/'}

func roleKey(name string) []byte { return append(append([]byte(nil), rolePrefix...), name...) }

func readRole(r state.Reader, name string) (*Role, error) {
	v, ok, err := r.Get(roleKey(name))
	if err != nil || !ok {
		return nil, err
	}
	return decodeRole(name, v)
}

// scanRoles calls fn with each stored role, by name, until fn fails.
func scanRoles(r state.Reader, fn func(*Role) error) error {
	var ferr error
	err := r.Scan(rolePrefix, state.PrefixEnd(rolePrefix), func(k, v []byte) bool {
		ro, err := decodeRole(string(k[len(rolePrefix):]), v)
		if err == nil {
			err = fn(ro)
		}
		ferr = err
		return err == nil
	})
	if err != nil {
		return err
	}
	return ferr
}

// decodeRole decodes role name's stored record v.
func decodeRole(name string, v []byte) (*Role, error) {
	var rec roleRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, errs.Newf(errs.DataCorrupted, "role %q: stored record is damaged: %v", name, err)
	}
	return &Role{Name: name, CanLogin: rec.CanLogin, Superuser: rec.Superuser, CreateRole: rec.CreateRole,
		CreateDB: rec.CreateDB, NoInherit: rec.NoInherit, Verifier: rec.Verifier}, nil
}

func writeRole(st state.Store, r *Role) error {
	v, err := json.Marshal(roleRecord{CanLogin: r.CanLogin, Superuser: r.Superuser, CreateRole: r.CreateRole,
		CreateDB: r.CreateDB, NoInherit: r.NoInherit, Verifier: r.Verifier})
	if err != nil {
		return err
	}
	return st.Set(roleKey(r.Name), v)
}

// Roles returns the committed roles, by name.
func (e *Engine) Roles() ([]Role, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []Role
	err := scanRoles(e.mu.store, func(r *Role) error {
		out = append(out, *r)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// LookupRole returns the committed role name, or nil when there is none.
func (e *Engine) LookupRole(name string) (*Role, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return readRole(e.mu.store, name)
}

// execRole runs CREATE ROLE/USER, ALTER ROLE/USER and DROP ROLE/USER. Role
// changes are written like table changes: in the block's epoch inside
// BEGIN ... COMMIT, else in their own.
func (s *Session) execRole(ctx context.Context, n *pg.Node) (*Result, error) {
	var tag string
	var change func(st state.Store) error
	var cat *catalog // the catalog the change sees
	switch {
	case n.GetCreateRoleStmt() != nil:
		cr := n.GetCreateRoleStmt()
		tag = "CREATE ROLE"
		// CREATE USER is CREATE ROLE with LOGIN.
		r := &Role{Name: cr.Role, CanLogin: cr.StmtType == pg.RoleStmtType_ROLESTMT_USER}
		if err := applyRoleOptions(r, cr.Options); err != nil {
			return nil, err
		}
		change = func(st state.Store) error {
			if err := s.checkRoleChange(st, func(g *privilege.Graph, current string) error {
				return g.CheckCreateRole(current, r.Superuser)
			}); err != nil {
				return err
			}
			old, err := readRole(st, r.Name)
			if err != nil {
				return err
			}
			if old != nil {
				return errs.Newf(errs.DuplicateObject, "role %q already exists", r.Name)
			}
			return writeRole(st, r)
		}
	case n.GetAlterRoleStmt() != nil:
		ar := n.GetAlterRoleStmt()
		tag = "ALTER ROLE"
		name, err := roleSpecName(ar.Role)
		if err != nil {
			return nil, err
		}
		change = func(st state.Store) error {
			r, err := readRole(st, name)
			if err != nil {
				return err
			}
			if r == nil {
				return errs.Newf(errs.UndefinedObject, "role %q does not exist", name)
			}
			if err := s.checkRoleChange(st, func(g *privilege.Graph, current string) error {
				return g.CheckAlterRole(current, r.attrs(), alterOf(ar.Options))
			}); err != nil {
				return err
			}
			if err := applyRoleOptions(r, ar.Options); err != nil {
				return err
			}
			return writeRole(st, r)
		}
	default:
		dr := n.GetDropRoleStmt()
		tag = "DROP ROLE"
		var names []string
		for _, rn := range dr.Roles {
			name, err := roleSpecName(rn.GetRoleSpec())
			if err != nil {
				return nil, err
			}
			names = append(names, name)
		}
		change = func(st state.Store) error {
			if err := s.checkRoleChange(st, func(g *privilege.Graph, current string) error {
				return g.CheckDropRoles(current)
			}); err != nil {
				return err
			}
			for _, name := range names {
				r, err := readRole(st, name)
				if err != nil {
					return err
				}
				if r == nil {
					if dr.MissingOk {
						s.notice("NOTICE", errs.UndefinedObject, fmt.Sprintf("role %q does not exist, skipping", name))
						continue
					}
					return errs.Newf(errs.UndefinedObject, "role %q does not exist", name)
				}
				if err := s.checkRoleChange(st, func(g *privilege.Graph, current string) error {
					return g.CheckDropRole(current, s.sessionUser(), r.attrs())
				}); err != nil {
					return err
				}
				if err := dropRoleRecords(st, cat, name); err != nil {
					return err
				}
				if err := dropRoleSettings(st, name); err != nil {
					return err
				}
				if err := st.Delete(roleKey(name)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		cat = w.cat
		return nil, change(st)
	}, false)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: tag}, nil
}

// roleSpecName returns the name a RoleSpec gives; CURRENT_USER and the
// like are not supported.
func roleSpecName(rs *pg.RoleSpec) (string, error) {
	if rs == nil || rs.Roletype != pg.RoleSpecType_ROLESPEC_CSTRING {
		return "", errs.New(errs.FeatureNotSupported, "only role names are supported here (not CURRENT_USER, SESSION_USER or PUBLIC)")
	}
	return rs.Rolename, nil
}

// applyRoleOptions applies CREATE/ALTER ROLE options to r. A password is
// stored as its SCRAM-SHA-256 verifier (a verifier given as the password
// is stored as given, as PostgreSQL does).
func applyRoleOptions(r *Role, opts []*pg.Node) error {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			return errs.New(errs.FeatureNotSupported, "unsupported role option")
		}
		switch d.Defname {
		case "canlogin":
			r.CanLogin = d.Arg.GetBoolean().GetBoolval()
		case "superuser":
			r.Superuser = d.Arg.GetBoolean().GetBoolval()
		case "createrole":
			r.CreateRole = d.Arg.GetBoolean().GetBoolval()
		case "createdb":
			r.CreateDB = d.Arg.GetBoolean().GetBoolval()
		case "inherit":
			r.NoInherit = !d.Arg.GetBoolean().GetBoolval()
		case "password":
			if d.Arg == nil || d.Arg.GetString_() == nil {
				r.Verifier = ""
				continue
			}
			pw := d.Arg.GetString_().Sval
			if scram.IsVerifier(pw) {
				r.Verifier = pw
				continue
			}
			if pw == "" {
				// PostgreSQL refuses empty passwords and stores none.
				r.Verifier = ""
				continue
			}
			v, err := scram.NewVerifier(pw)
			if err != nil {
				return err
			}
			r.Verifier = v.String()
		default:
			return errs.Newf(errs.FeatureNotSupported, "role option %s is not supported; RockStream roles have LOGIN, SUPERUSER, CREATEROLE, CREATEDB, INHERIT and PASSWORD", d.Defname)
		}
	}
	return nil
}

// attrs returns the role as the privilege model sees it.
func (r *Role) attrs() privilege.Role {
	return privilege.Role{Name: r.Name, Superuser: r.Superuser, Inherit: !r.NoInherit, CreateRole: r.CreateRole,
		CreateDB: r.CreateDB, Login: r.CanLogin}
}
