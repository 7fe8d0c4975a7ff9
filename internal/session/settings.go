package session

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/types"
)

// definition is a session setting: its default, whether a value is
// acceptable, and the description SHOW ALL and pg_settings give (for
// PostgreSQL's settings, PostgreSQL's own).
type definition struct {
	def   string
	check func(v string) error
	desc  string
	// hidden settings are left out of SHOW ALL: PostgreSQL leaves out
	// session_authorization, and current_database is not a PostgreSQL
	// setting but the session's database (current_database()).
	hidden bool
	// canon, when set, gives the value as the setting keeps and shows it
	// (a time zone's spelling in the zone database).
	canon func(v string) string
}

// checkTimeZone accepts what PostgreSQL's TimeZone accepts
// (types.LoadZone); its error is PostgreSQL's own.
func checkTimeZone(v string) error {
	_, err := types.LoadZone(v)
	return err
}

// canonicalTimeZone is a zone's name as SHOW TimeZone shows it.
func canonicalTimeZone(v string) string {
	z, err := types.LoadZone(v)
	if err != nil {
		return v
	}
	return z.Name()
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
var settings = map[string]definition{
	"client_encoding": {def: "UTF8", check: only("UTF8", "UTF-8", "unicode"),
		desc: "Sets the client's character set encoding."},
	"datestyle": {def: "ISO, MDY", check: only("ISO, MDY", "ISO", "ISO,MDY"),
		desc: "Sets the display format for date and time values."},
	"timezone": {def: "UTC", check: checkTimeZone, canon: canonicalTimeZone,
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
	"work_mem": {def: DefaultWorkMem, check: checkWorkMem,
		desc: "Sets the maximum memory to be used for query workspaces."},
	// pg_dump sets these two; RockStream has no synchronized scans and no
	// row security, so either value means the same.
	"synchronize_seqscans": {def: "on", check: only("on", "off", "true", "false"),
		desc: "Enable synchronized sequential scans."},
	"row_security": {def: "on", check: only("on", "off", "true", "false"),
		desc: "Enable row security."},
	"temp_file_limit": {def: "-1", check: checkTempFileLimit,
		desc: "Limits the total size of all temporary files used by each process."},
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
	// The open transaction's access mode, which the transaction keeps,
	// not stored with the others.
	"transaction_read_only": {def: "off", check: anyValue,
		desc: "Sets the current transaction's read-only status."},
	"rockstream.operation_id": {def: "", check: anyValue,
		desc: "Names the next DDL statement so that a retry with the same name answers with the first run's tag instead of running again."},
	// The session's role and database, as the system catalog reports
	// them (current_user, current_database()); the wire gateway sets
	// them from the startup message.
	"session_authorization": {def: pgcatalog.BootstrapRole, check: anyValue, hidden: true,
		desc: "Sets the session user name."},
	// The role SET ROLE chose; none: the session user.
	"role": {def: "none", check: anyValue, hidden: true,
		desc: "Sets the current role."},
	"current_database": {def: pgcatalog.DefaultDatabase, check: anyValue, hidden: true,
		desc: "The database the session is connected to."},
	"rockstream.max_recursion_iterations": {def: "10000", check: checkRecursionLimit,
		desc: "Sets the maximum number of iterations of a WITH RECURSIVE query per transaction."},
	"rockstream.min_epoch": {def: "0", check: checkEpoch, canon: canonicalEpoch,
		desc: "Makes the session's statements wait until this epoch is committed before they read."},
}

// ParseEpoch reads an epoch setting's value: a non-negative integer.
func ParseEpoch(v string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("a non-negative integer is required")
	}
	return n, nil
}

func checkEpoch(v string) error {
	if _, err := ParseEpoch(v); err != nil {
		return errs.Newf(errs.InvalidParameterValue, "invalid value for parameter \"rockstream.min_epoch\": %q: %v", v, err)
	}
	return nil
}

// canonicalEpoch is an epoch setting's value as SHOW shows it: the number
// without spaces or leading zeros.
func canonicalEpoch(v string) string {
	n, err := ParseEpoch(v)
	if err != nil {
		return v
	}
	return strconv.FormatUint(n, 10)
}

// MaxRecursionLimit bounds rockstream.max_recursion_iterations.
const MaxRecursionLimit = 100_000_000

func checkRecursionLimit(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxRecursionLimit {
		return fmt.Errorf("an integer from 1 to %d is required", MaxRecursionLimit)
	}
	return nil
}

// Known reports whether name (lower case) is a setting.
func Known(name string) bool {
	_, ok := settings[name]
	return ok
}

// Default returns the default of the setting name (lower case); "" for
// none.
func Default(name string) string { return settings[name].def }

// IsBool reports whether the setting name (lower case) takes a boolean.
func IsBool(name string) bool { return booleanSettings[name] }

// Check checks value for the setting name, with PostgreSQL's error when
// the setting refuses it. name is looked up in lower case and named in
// the error as given.
func Check(name, value string) error {
	def, ok := settings[strings.ToLower(name)]
	if !ok {
		return errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if err := def.check(value); err != nil {
		if def.canon != nil {
			return err // the check words its own error
		}
		return settingError(name, value, err)
	}
	return nil
}

// Canonical returns value as the setting name (lower case) keeps it,
// once Check accepted it.
func Canonical(name, value string) string {
	if def := settings[name]; def.canon != nil {
		return def.canon(value)
	}
	return value
}

// Definition describes one setting.
type Definition struct {
	Name, Default, Description string
	// Bool settings take a boolean and show as on or off.
	Bool bool
	// Hidden settings are left out of SHOW ALL.
	Hidden bool
}

// Definitions returns every setting, by name.
func Definitions() []Definition {
	out := make([]Definition, 0, len(settings))
	for n, d := range settings {
		out = append(out, Definition{Name: n, Default: d.def, Description: d.desc, Bool: booleanSettings[n], Hidden: d.hidden})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// BoolText is how a boolean setting shows.
func BoolText(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// ParseBool reads a boolean setting's value as PostgreSQL's parse_bool
// does: on, off, true, false, yes, no, 1, 0 and their unambiguous
// prefixes, in any case.
func ParseBool(v string) (bool, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return false, false
	}
	for _, w := range []struct {
		word string
		val  bool
		min  int
	}{{"true", true, 1}, {"false", false, 1}, {"yes", true, 1}, {"no", false, 1}, {"on", true, 2}, {"off", false, 2}, {"1", true, 1}, {"0", false, 1}} {
		if len(v) >= w.min && strings.HasPrefix(w.word, v) {
			return w.val, true
		}
	}
	return false, false
}

// DisplayName is a setting's name as PostgreSQL spells it in SHOW's
// column and ParameterStatus (TimeZone, DateStyle, IntervalStyle).
func DisplayName(name string) string {
	switch name {
	case "timezone":
		return "TimeZone"
	case "datestyle":
		return "DateStyle"
	case "intervalstyle":
		return "IntervalStyle"
	}
	return name
}
