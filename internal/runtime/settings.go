package runtime

import (
	"sort"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The session settings and their values are internal/session's
// (session.Settings); this file runs SET, RESET and SHOW over them.

// execSet runs SET, RESET and SET ... TO DEFAULT. As in PostgreSQL, a
// transaction block's changes to settings are undone when it rolls back,
// and SET LOCAL lasts until the block ends; outside a block SET LOCAL
// only warns.
func (s *Session) execSet(v *pg.VariableSetStmt) (*Result, error) {
	t := s.txn
	if t == nil || !t.Block() {
		if !v.IsLocal {
			return s.applySet(v)
		}
		s.notice("WARNING", errs.NoActiveTransaction, "SET LOCAL can only be used in transaction blocks")
		saved := s.settings.Mark()
		res, err := s.applySet(v)
		s.settings.Restore(saved)
		return res, err
	}
	s.settings.BlockChange()
	res, err := s.applySet(v)
	if err == nil && v.Name != "" {
		s.settings.ChangedInBlock(strings.ToLower(v.Name), v.IsLocal)
	}
	return res, err
}

// endSettings ends the open transaction block's changes to the session's
// settings: a rollback undoes them all, a commit those of SET LOCAL.
func (s *Session) endSettings(committed bool) { s.settings.EndBlock(committed) }

func (s *Session) applySet(v *pg.VariableSetStmt) (*Result, error) {
	name := strings.ToLower(v.Name)
	switch v.Kind {
	case pg.VariableSetKind_VAR_RESET_ALL:
		// As in PostgreSQL, RESET ALL leaves the session's identity.
		role, hasRole := s.settings.Lookup("role")
		user, hasUser := s.settings.Lookup("session_authorization")
		s.settings.ResetAll()
		if hasRole {
			s.settings.Put("role", role)
		}
		if hasUser {
			s.settings.Put("session_authorization", user)
		}
		return &Result{Tag: "RESET"}, nil
	case pg.VariableSetKind_VAR_SET_MULTI:
		return s.setMulti(v)
	}
	if name == "role" || name == "session_authorization" {
		return s.setIdentity(name, v)
	}
	if !session.Known(name) {
		return nil, errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", v.Name)
	}
	if v.Kind == pg.VariableSetKind_VAR_RESET || v.Kind == pg.VariableSetKind_VAR_SET_DEFAULT {
		if name == "transaction_read_only" {
			if err := s.setTransactionReadOnly(s.Setting("default_transaction_read_only") == "on"); err != nil {
				return nil, err
			}
		}
		s.settings.Reset(name)
		if v.Kind == pg.VariableSetKind_VAR_RESET {
			return &Result{Tag: "RESET"}, nil
		}
		return &Result{Tag: "SET"}, nil
	}
	if v.Kind != pg.VariableSetKind_VAR_SET_VALUE {
		return nil, errs.Newf(errs.FeatureNotSupported, "this form of SET %s is not supported", v.Name)
	}
	if name == "timezone" && len(v.Args) == 1 && v.Args[0].GetTypeCast() != nil {
		return s.setZoneInterval(v.Args[0].GetTypeCast())
	}
	val, err := setValueText(name, v.Args, s.rawSetting)
	if err != nil {
		return nil, err
	}
	if name == "transaction_read_only" {
		if err := s.setTransactionReadOnly(val == "on"); err != nil {
			return nil, err
		}
		return &Result{Tag: "SET"}, nil
	}
	if err := session.Check(v.Name, val); err != nil {
		return nil, err
	}
	s.settings.Put(name, session.Canonical(name, val))
	return &Result{Tag: "SET"}, nil
}

// setValueText flattens the value list of SET name (lower case) into the
// setting's text: the constants joined by ", ", each identifier of
// search_path quoted where it needs it (unless raw, as set_config takes
// its value), and a boolean setting's value as on or off.
func setValueText(name string, args []*pg.Node, raw bool) (string, error) {
	var parts []string
	for _, a := range args {
		c := a.GetAConst()
		if c == nil {
			return "", errs.Newf(errs.InvalidParameterValue, "invalid value for parameter %q", name)
		}
		switch {
		case c.GetSval() != nil:
			parts = append(parts, c.GetSval().Sval)
		case c.GetIval() != nil:
			parts = append(parts, strconv.FormatInt(int64(c.GetIval().Ival), 10))
		case c.GetFval() != nil:
			parts = append(parts, c.GetFval().Fval)
		case c.GetBoolval() != nil:
			parts = append(parts, strconv.FormatBool(c.GetBoolval().Boolval))
		default:
			return "", errs.Newf(errs.InvalidParameterValue, "invalid value for parameter %q", name)
		}
	}
	if name == "search_path" && !raw {
		// A list of identifiers, each kept quoted where it needs it,
		// as PostgreSQL's GUC_LIST_QUOTE settings are.
		for i, p := range parts {
			parts[i] = quoteIdent(p)
		}
	}
	val := strings.Join(parts, ", ")
	if session.IsBool(name) {
		b, ok := session.ParseBool(val)
		if !ok || len(parts) != 1 {
			return "", errs.Newf(errs.InvalidParameterValue, "parameter %q requires a Boolean value", name)
		}
		val = session.BoolText(b)
	}
	return val, nil
}

// Setting returns the session's value of a setting.
func (s *Session) Setting(name string) string {
	name = strings.ToLower(name)
	if name == "transaction_read_only" {
		return s.transactionReadOnlySetting()
	}
	return s.settings.Get(name)
}

func (s *Session) execShow(v *pg.VariableShowStmt) (*Result, error) {
	name := strings.ToLower(v.Name)
	if name == "all" {
		return s.showAll(), nil
	}
	if name == "rockstream.frontier" {
		return s.showFrontier(), nil
	}
	if name == "rockstream.last_commit_epoch" {
		return s.showLastCommitEpoch(), nil
	}
	if !session.Known(name) {
		return nil, errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", v.Name)
	}
	return &Result{
		Columns: []Column{{Name: session.DisplayName(name), Type: types.Of(types.Text)}},
		Rows:    []zset.Row{{types.MakeText(s.Setting(name))}},
		Tag:     "SHOW",
	}, nil
}

// showAllColumns are SHOW ALL's columns, as PostgreSQL's.
var showAllColumns = []Column{
	{Name: "name", Type: types.Of(types.Text)},
	{Name: "setting", Type: types.Of(types.Text)},
	{Name: "description", Type: types.Of(types.Text)},
}

// showAll runs SHOW ALL: every setting but the hidden ones, with the
// session's value, ordered by name ignoring case as PostgreSQL orders
// them, and the read-only rockstream.frontier and
// rockstream.last_commit_epoch among them.
func (s *Session) showAll() *Result {
	names := []string{"rockstream.frontier", "rockstream.last_commit_epoch"}
	descs := map[string]string{}
	for _, d := range session.Definitions() {
		if !d.Hidden {
			names = append(names, d.Name)
			descs[d.Name] = d.Description
		}
	}
	sort.Strings(names)
	res := &Result{Columns: showAllColumns, Tag: "SHOW"}
	for _, n := range names {
		val, desc := "", descs[n]
		switch n {
		case "rockstream.frontier":
			val = types.Format(s.showFrontier().Rows[0][0], types.Of(types.Text))
			desc = "Shows the last committed epoch."
		case "rockstream.last_commit_epoch":
			val = strconv.FormatUint(s.LastCommitEpoch(), 10)
			desc = "Shows the epoch the session's last commit is visible at."
		default:
			val = s.Setting(n)
		}
		res.Rows = append(res.Rows, zset.Row{types.MakeText(session.DisplayName(n)), types.MakeText(val), types.MakeText(desc)})
	}
	return res
}
