package session

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// ParseDuration parses a time setting as PostgreSQL does for
// statement_timeout and friends: a number of milliseconds, or a number
// with one of the units us, ms, s, min, h, d (spaces allowed between). 0
// means no timeout.
func ParseDuration(v string) (time.Duration, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || (i == 0 && (s[i] == '-' || s[i] == '+'))) {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, &invalidSetting{}
	}
	u := durationUnit(strings.TrimSpace(s[i:]))
	if u == 0 {
		return 0, &invalidSetting{hint: `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`}
	}
	d := num * float64(u)
	if d < 0 || d > math.MaxInt32*float64(time.Millisecond) {
		return 0, &invalidSetting{outOfRange: true, ms: int64(math.Round(d / float64(time.Millisecond)))}
	}
	return time.Duration(math.Round(d/float64(time.Millisecond))) * time.Millisecond, nil
}

// durationUnit returns the length of a duration setting's unit (none:
// milliseconds), 0 for an unknown unit. Every statement reads
// statement_timeout, so this builds nothing.
func durationUnit(unit string) time.Duration {
	switch unit {
	case "", "ms":
		return time.Millisecond
	case "us":
		return time.Microsecond
	case "s":
		return time.Second
	case "min":
		return time.Minute
	case "h":
		return time.Hour
	case "d":
		return 24 * time.Hour
	}
	return 0
}

// invalidSetting is a setting value its check refuses, reported as
// PostgreSQL reports it (settingError).
type invalidSetting struct {
	hint       string
	outOfRange bool
	ms         int64 // the value out of range, in milliseconds
	// rangeMsg, when set, is the out-of-range message, with a %q for
	// the setting's name (settings in other units than milliseconds).
	rangeMsg string
}

func (e *invalidSetting) Error() string { return "invalid value" }

// settingError is the error for SET name = value refused by the
// setting's check (err).
func settingError(name, value string, err error) error {
	var inv *invalidSetting
	if !errors.As(err, &inv) {
		return errs.Newf(errs.InvalidParameterValue, "invalid value for parameter %q: %q: %v", name, value, err)
	}
	msg := fmt.Sprintf("invalid value for parameter %q: %q", name, value)
	if inv.outOfRange && inv.rangeMsg != "" {
		msg = fmt.Sprintf(inv.rangeMsg, name)
	} else if inv.outOfRange {
		msg = fmt.Sprintf("%d ms is outside the valid range for parameter %q (0 .. 2147483647)", inv.ms, name)
	}
	return &errs.Error{Code: errs.InvalidParameterValue, SQLState: errs.SQLState(errs.New(errs.InvalidParameterValue, "")), Message: msg, Hint: inv.hint}
}

func checkDurationSetting(v string) error {
	_, err := ParseDuration(v)
	return err
}
