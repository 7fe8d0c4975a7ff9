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
	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/state"
)

// Per-role and per-database defaults of session settings, as PostgreSQL's
// pg_db_role_setting keeps them: ALTER ROLE name [IN DATABASE db] SET
// and ALTER DATABASE db SET store "name=value" entries for a (database,
// role) pair, where an empty database or role stands for all of them
// (ALTER ROLE ALL applies to every role). A session starting up takes
// them in PostgreSQL's order of precedence, each overriding the one
// before: all roles in all databases, the database, the role, the role
// in the database; its startup parameters come last and override them
// all. A value is checked when it is stored; one that a later version
// refuses at login is skipped with a WARNING, as PostgreSQL does.

// RoleSetting is the setting defaults stored for a role in a database.
type RoleSetting struct {
	// Database and Role are "" for every database or every role.
	Database, Role string
	// Config are the settings as "name=value", in the order first set.
	Config []string
}

var roleSettingPrefix = []byte{nsMeta, 'd', 'b', 'r', 'o', 'l', 'e', '/'}

// roleSettingKey is the key of the settings of role in database.
func roleSettingKey(database, role string) []byte {
	k := append(append([]byte(nil), roleSettingPrefix...), database...)
	return append(append(k, 0), role...)
}

func readRoleSetting(r state.Reader, database, role string) ([]string, error) {
	v, ok, err := r.Get(roleSettingKey(database, role))
	if err != nil || !ok {
		return nil, err
	}
	var config []string
	if err := json.Unmarshal(v, &config); err != nil {
		return nil, errs.Newf(errs.DataCorrupted, "settings of role %q in database %q: stored record is damaged: %v", role, database, err)
	}
	return config, nil
}

func writeRoleSetting(st state.Store, database, role string, config []string) error {
	if len(config) == 0 {
		return st.Delete(roleSettingKey(database, role))
	}
	v, err := json.Marshal(config)
	if err != nil {
		return err
	}
	return st.Set(roleSettingKey(database, role), v)
}

// scanRoleSettings returns every stored entry, by database and role.
func scanRoleSettings(r state.Reader) ([]RoleSetting, error) {
	var out []RoleSetting
	var derr error
	err := r.Scan(roleSettingPrefix, state.PrefixEnd(roleSettingPrefix), func(k, _ []byte) bool {
		db, role, _ := strings.Cut(string(k[len(roleSettingPrefix):]), "\x00")
		config, err := readRoleSetting(r, db, role)
		if err != nil {
			derr = err
			return false
		}
		out = append(out, RoleSetting{Database: db, Role: role, Config: config})
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// dropRoleSettings removes the settings stored for role, in every
// database (DROP ROLE).
func dropRoleSettings(st state.Store, role string) error {
	all, err := scanRoleSettings(st)
	if err != nil {
		return err
	}
	for _, rs := range all {
		if rs.Role == role {
			if err := st.Delete(roleSettingKey(rs.Database, role)); err != nil {
				return err
			}
		}
	}
	return nil
}

// changeConfig applies SET or RESET v to config as PostgreSQL's
// GUCArrayAdd and GUCArrayDelete do: a new value replaces the setting's
// entry in place, else is appended; RESET removes it; RESET ALL empties
// the list.
func changeConfig(config []string, v *pg.VariableSetStmt) ([]string, error) {
	if v.Kind == pg.VariableSetKind_VAR_RESET_ALL {
		return nil, nil
	}
	name := strings.ToLower(v.Name)
	if !session.Known(name) || name == "role" || name == "session_authorization" || name == "current_database" {
		return nil, errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", v.Name)
	}
	display := session.DisplayName(name)
	out := make([]string, 0, len(config)+1)
	for _, c := range config {
		if n, _, _ := strings.Cut(c, "="); !strings.EqualFold(n, name) {
			out = append(out, c)
		}
	}
	switch v.Kind {
	case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
		return out, nil
	case pg.VariableSetKind_VAR_SET_VALUE:
	default:
		return nil, errs.New(errs.FeatureNotSupported, "SET ... FROM CURRENT is not supported in ALTER ROLE or ALTER DATABASE")
	}
	val, err := setValueText(name, v.Args, false)
	if err != nil {
		return nil, err
	}
	if err := session.Check(name, val); err != nil {
		return nil, err
	}
	entry := display + "=" + val
	for i, c := range config {
		if n, _, _ := strings.Cut(c, "="); strings.EqualFold(n, name) {
			// In place, as PostgreSQL keeps the entry's position.
			out = append(out[:i:i], append([]string{entry}, out[i:]...)...)
			return out, nil
		}
	}
	return append(out, entry), nil
}

// execRoleSetting runs ALTER ROLE ... SET/RESET and ALTER DATABASE ...
// SET/RESET.
func (s *Session) execRoleSetting(ctx context.Context, n *pg.Node) (*Result, error) {
	var tag, database, role string
	var set *pg.VariableSetStmt
	all := false
	if ar := n.GetAlterRoleSetStmt(); ar != nil {
		tag, database, set = "ALTER ROLE", ar.Database, ar.Setstmt
		if ar.Role == nil {
			all = true
		} else {
			name, err := roleSpecName(ar.Role)
			if err != nil {
				return nil, err
			}
			role = name
		}
	} else {
		ad := n.GetAlterDatabaseSetStmt()
		tag, database, set = "ALTER DATABASE", ad.Dbname, ad.Setstmt
	}
	if database != "" && database != s.Setting("current_database") {
		// The one database there is is the one the session names
		// (pg_database lists only it).
		return nil, errs.Newf(errs.InvalidCatalogName, "database %q does not exist", database)
	}
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		if err := s.checkRoleSetting(st, w.cat, tag, database, role, all); err != nil {
			return nil, err
		}
		config, err := readRoleSetting(st, database, role)
		if err != nil {
			return nil, err
		}
		if config, err = changeConfig(config, set); err != nil {
			return nil, err
		}
		return nil, writeRoleSetting(st, database, role, config)
	}, false)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: tag}, nil
}

// checkRoleSetting checks PostgreSQL's rules: ALTER DATABASE takes the
// database's owner; ALTER ROLE ALL a superuser; ALTER ROLE a superuser
// for a superuser role, else CREATEROLE or being the role.
func (s *Session) checkRoleSetting(st state.Store, cat *catalog, tag, database, role string, all bool) error {
	if tag == "ALTER DATABASE" {
		return s.checkRoleChange(st, func(g *privilege.Graph, current string) error {
			a := &access{g: g, role: current, r: st, cat: cat}
			db, err := a.databaseObject(database)
			if err != nil {
				return err
			}
			return g.CheckOwner(db, current)
		})
	}
	var target *privilege.Role
	if !all {
		r, err := readRole(st, role)
		if err != nil {
			return err
		}
		switch {
		case r != nil:
			attrs := r.attrs()
			target = &attrs
		case role == pgcatalog.BootstrapRole:
			target = &privilege.Role{Name: role, Superuser: true}
		default:
			return errs.Newf(errs.UndefinedObject, "role %q does not exist", role)
		}
	}
	return s.checkRoleChange(st, func(g *privilege.Graph, current string) error {
		return g.CheckAlterRoleSettings(current, target)
	})
}

// loginSettings returns the stored defaults for user in database, in
// order of precedence (the package comment above), the last winning.
func loginSettings(r state.Reader, user, database string) ([]string, error) {
	var out []string
	for _, key := range [][2]string{{"", ""}, {database, ""}, {"", user}, {database, user}} {
		config, err := readRoleSetting(r, key[0], key[1])
		if err != nil {
			return nil, err
		}
		out = append(out, config...)
	}
	return out, nil
}

// ApplyRoleSettings sets the session settings ALTER ROLE and ALTER
// DATABASE stored for user in database, as a session starting up does
// before its startup parameters.
func (s *Session) ApplyRoleSettings(user, database string) error {
	s.eng.mu.RLock()
	config, err := loginSettings(s.eng.mu.store, user, database)
	s.eng.mu.RUnlock()
	if err != nil {
		return err
	}
	for _, c := range config {
		name, value, _ := strings.Cut(c, "=")
		if err := s.Set(name, value); err != nil {
			s.notice("WARNING", errs.InvalidParameterValue, fmt.Sprintf("invalid setting %s ignored: %v", c, err))
		}
	}
	return nil
}

// RoleSettings returns the stored setting defaults, by database and
// role.
func (e *Engine) RoleSettings() ([]RoleSetting, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out, err := scanRoleSettings(e.mu.store)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Database != out[j].Database {
			return out[i].Database < out[j].Database
		}
		return out[i].Role < out[j].Role
	})
	return out, err
}
