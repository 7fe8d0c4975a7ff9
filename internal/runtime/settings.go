package runtime

import (
	"maps"
	"sort"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// setting is a session setting: its default, whether a value is
// acceptable, and the description SHOW ALL and pg_settings give (for
// PostgreSQL's settings, PostgreSQL's own).
type setting struct {
	def   string
	check func(v string) error
	desc  string
	// hidden settings are left out of SHOW ALL: PostgreSQL leaves out
	// session_authorization, and current_database is not a PostgreSQL
	// setting but the session's database (current_database()).
	hidden bool
}

// booleanSettings take a boolean, in any of PostgreSQL's spellings, and
// show as on or off.
var booleanSettings = map[string]bool{"default_transaction_read_only": true, "transaction_read_only": true}

func only(allowed ...string) func(string) error {
	return func(v string) error {
		for _, a := range allowed {
			if strings.EqualFold(v, a) {
				return nil
			}
		}
		return errs.Newf(errs.FeatureNotSupported, "only %s is supported", strings.Join(allowed, ", "))
	}
}

func anyValue(string) error { return nil }

// settings are the session settings RockStream knows. PostgreSQL's
// settings that clients set on connect are accepted with the values
// RockStream implements; rockstream.* are RockStream's own.
var settings = map[string]setting{
	"client_encoding": {def: "UTF8", check: only("UTF8", "UTF-8", "unicode"),
		desc: "Sets the client's character set encoding."},
	"datestyle": {def: "ISO, MDY", check: only("ISO, MDY", "ISO", "ISO,MDY"),
		desc: "Sets the display format for date and time values."},
	"timezone": {def: "UTC", check: only("UTC", "Etc/UTC", "GMT", "Z"),
		desc: "Sets the time zone for displaying and interpreting time stamps."},
	"intervalstyle": {def: "postgres", check: only("postgres"),
		desc: "Sets the display format for interval values."},
	"extra_float_digits": {def: "1", check: anyValue,
		desc: "Sets the number of digits displayed for floating-point values."},
	"application_name": {def: "", check: anyValue,
		desc: "Sets the application name to be reported in statistics and logs."},
	"search_path": {def: `"$user", public`, check: anyValue,
		desc: "Sets the schema search order for names that are not schema-qualified."},
	"standard_conforming_strings": {def: "on", check: only("on"),
		desc: "Causes '...' strings to treat backslashes literally."},
	"client_min_messages": {def: "notice", check: anyValue,
		desc: "Sets the message levels that are sent to the client."},
	"statement_timeout": {def: "0", check: checkDurationSetting,
		desc: "Sets the maximum allowed duration of any statement."},
	"lock_timeout": {def: "0", check: anyValue,
		desc: "Sets the maximum allowed duration of any wait for a lock."},
	"idle_in_transaction_session_timeout": {def: "0", check: checkDurationSetting,
		desc: "Sets the maximum allowed idle time between queries, when in a transaction."},
	"default_transaction_isolation": {def: "serializable", check: anyValue,
		desc: "Sets the transaction isolation level of each new transaction."},
	"transaction_isolation": {def: "serializable", check: anyValue,
		desc: "Sets the current transaction's isolation level."},
	"default_transaction_read_only": {def: "off", check: anyValue,
		desc: "Sets the default read-only status of new transactions."},
	// The open transaction's access mode (readonly.go), not stored with
	// the others.
	"transaction_read_only": {def: "off", check: anyValue,
		desc: "Sets the current transaction's read-only status."},
	"rockstream.operation_id": {def: "", check: anyValue,
		desc: "Names the next DDL statement so that a retry with the same name answers with the first run's tag instead of running again."},
	// The session's role and database, as the system catalog reports
	// them (current_user, current_database()); the wire gateway sets
	// them from the startup message.
	"session_authorization": {def: bootstrapRole, check: anyValue, hidden: true,
		desc: "Sets the session user name."},
	"current_database": {def: defaultDatabase, check: anyValue, hidden: true,
		desc: "The database the session is connected to."},
	"rockstream.max_recursion_iterations": {def: "10000", check: checkRecursionLimit,
		desc: "Sets the maximum number of iterations of a WITH RECURSIVE query per transaction."},
}

// execSet runs SET, RESET and SET ... TO DEFAULT. As in PostgreSQL, a
// transaction block's changes to settings are undone when it rolls back,
// and SET LOCAL lasts until the block ends; outside a block SET LOCAL
// only warns.
func (s *Session) execSet(v *pg.VariableSetStmt) (*Result, error) {
	t := s.txn
	if t == nil || !t.block {
		if !v.IsLocal {
			return s.applySet(v)
		}
		s.notice("WARNING", errs.NoActiveTransaction, "SET LOCAL can only be used in transaction blocks")
		saved := maps.Clone(s.settings)
		res, err := s.applySet(v)
		s.settings = saved
		return res, err
	}
	if !t.settingsSaved {
		t.settings, t.settingsSaved = maps.Clone(s.settings), true
	}
	res, err := s.applySet(v)
	if err == nil && v.Name != "" {
		name := strings.ToLower(v.Name)
		if v.IsLocal {
			if t.local == nil {
				t.local = map[string]bool{}
			}
			t.local[name] = true
		} else {
			delete(t.local, name)
		}
	}
	return res, err
}

// endSettings ends the open transaction block's changes to the session's
// settings: a rollback undoes them all, a commit those of SET LOCAL.
func (s *Session) endSettings(committed bool) {
	t := s.txn
	if t == nil || !t.settingsSaved {
		return
	}
	t.settingsSaved = false
	if !committed {
		s.settings = t.settings
		return
	}
	for name := range t.local {
		if v, ok := t.settings[name]; ok {
			if s.settings == nil {
				s.settings = map[string]string{}
			}
			s.settings[name] = v
		} else {
			delete(s.settings, name)
		}
	}
}

func (s *Session) applySet(v *pg.VariableSetStmt) (*Result, error) {
	name := strings.ToLower(v.Name)
	switch v.Kind {
	case pg.VariableSetKind_VAR_RESET_ALL:
		s.settings = nil
		return &Result{Tag: "RESET"}, nil
	case pg.VariableSetKind_VAR_SET_MULTI:
		return s.setMulti(v)
	}
	def, ok := settings[name]
	if !ok {
		return nil, errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", v.Name)
	}
	if v.Kind == pg.VariableSetKind_VAR_RESET || v.Kind == pg.VariableSetKind_VAR_SET_DEFAULT {
		if name == "transaction_read_only" {
			if err := s.setTransactionReadOnly(s.Setting("default_transaction_read_only") == "on"); err != nil {
				return nil, err
			}
		}
		delete(s.settings, name)
		if v.Kind == pg.VariableSetKind_VAR_RESET {
			return &Result{Tag: "RESET"}, nil
		}
		return &Result{Tag: "SET"}, nil
	}
	if v.Kind != pg.VariableSetKind_VAR_SET_VALUE {
		return nil, errs.Newf(errs.FeatureNotSupported, "this form of SET %s is not supported", v.Name)
	}
	var parts []string
	for _, a := range v.Args {
		c := a.GetAConst()
		if c == nil {
			return nil, errs.Newf(errs.InvalidParameterValue, "invalid value for parameter %q", v.Name)
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
			return nil, errs.Newf(errs.InvalidParameterValue, "invalid value for parameter %q", v.Name)
		}
	}
	val := strings.Join(parts, ", ")
	if booleanSettings[name] {
		b, ok := parseBoolSetting(val)
		if !ok || len(parts) != 1 {
			return nil, errs.Newf(errs.InvalidParameterValue, "parameter %q requires a Boolean value", name)
		}
		if name == "transaction_read_only" {
			if err := s.setTransactionReadOnly(b); err != nil {
				return nil, err
			}
			return &Result{Tag: "SET"}, nil
		}
		val = boolSettingText(b)
	}
	if err := def.check(val); err != nil {
		return nil, settingError(v.Name, val, err)
	}
	if s.settings == nil {
		s.settings = map[string]string{}
	}
	s.settings[name] = val
	return &Result{Tag: "SET"}, nil
}

// Setting returns the session's value of a setting.
func (s *Session) Setting(name string) string {
	name = strings.ToLower(name)
	if name == "transaction_read_only" {
		return s.transactionReadOnlySetting()
	}
	if v, ok := s.settings[name]; ok {
		return v
	}
	return settings[name].def
}

func (s *Session) execShow(v *pg.VariableShowStmt) (*Result, error) {
	name := strings.ToLower(v.Name)
	if name == "all" {
		return s.showAll(), nil
	}
	if name == "rockstream.frontier" {
		return s.showFrontier(), nil
	}
	if _, ok := settings[name]; !ok {
		return nil, errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", v.Name)
	}
	return &Result{
		Columns: []Column{{Name: settingDisplayName(name), Type: types.Of(types.Text)}},
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
// them, and the read-only rockstream.frontier among them.
func (s *Session) showAll() *Result {
	names := []string{"rockstream.frontier"}
	for n, st := range settings {
		if !st.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	res := &Result{Columns: showAllColumns, Tag: "SHOW"}
	for _, n := range names {
		val, desc := "", settings[n].desc
		if n == "rockstream.frontier" {
			val = types.Format(s.showFrontier().Rows[0][0], types.Of(types.Text))
			desc = "Shows the last committed epoch."
		} else {
			val = s.Setting(n)
		}
		res.Rows = append(res.Rows, zset.Row{types.MakeText(settingDisplayName(n)), types.MakeText(val), types.MakeText(desc)})
	}
	return res
}
