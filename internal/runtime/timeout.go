package runtime

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// ParseDurationSetting parses a time setting as PostgreSQL does for
// statement_timeout and friends: a number of milliseconds, or a number
// with one of the units us, ms, s, min, h, d (spaces allowed between). 0
// means no timeout.
func ParseDurationSetting(v string) (time.Duration, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || (i == 0 && (s[i] == '-' || s[i] == '+'))) {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, errs.Newf(errs.InvalidParameterValue, "invalid value for parameter: %q", v)
	}
	unit := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
		"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	u, ok := unit[strings.TrimSpace(s[i:])]
	if !ok {
		return 0, errs.Newf(errs.InvalidParameterValue, "invalid value for parameter: %q (valid units are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\")", v)
	}
	d := num * float64(u)
	if d < 0 || d > math.MaxInt32*float64(time.Millisecond) {
		return 0, errs.Newf(errs.InvalidParameterValue, "%s is outside the valid range for parameter (0 .. 2147483647 ms)", v)
	}
	return time.Duration(math.Round(d/float64(time.Millisecond))) * time.Millisecond, nil
}

func checkDurationSetting(v string) error {
	_, err := ParseDurationSetting(v)
	return err
}

// SettingDuration returns a time setting's value in the session (0 when
// unset or none).
func (s *Session) SettingDuration(name string) time.Duration {
	d, _ := ParseDurationSetting(s.Setting(name))
	return d
}

// Set sets a session setting as SET name = value does (the gateway applies
// startup parameters and server defaults with it).
func (s *Session) Set(name, value string) error {
	name = strings.ToLower(name)
	def, ok := settings[name]
	if !ok {
		return errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if err := def.check(value); err != nil {
		return errs.Newf(errs.InvalidParameterValue, "invalid value for parameter %q: %q", name, value)
	}
	if s.settings == nil {
		s.settings = map[string]string{}
	}
	s.settings[name] = value
	return nil
}

// settingDisplayName is a setting's name as PostgreSQL spells it in SHOW's
// column and ParameterStatus (TimeZone, DateStyle, IntervalStyle).
func settingDisplayName(name string) string {
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
