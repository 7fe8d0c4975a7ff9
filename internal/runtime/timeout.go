package runtime

import (
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/session"
)

// SettingDuration returns a time setting's value in the session (0 when
// unset or none).
func (s *Session) SettingDuration(name string) time.Duration {
	d, _ := session.ParseDuration(s.Setting(name))
	return d
}

// Set sets a session setting as SET name = value does (the gateway applies
// startup parameters and server defaults with it).
func (s *Session) Set(name, value string) error {
	if strings.EqualFold(name, "role") {
		// Who the session is comes from its authentication, not from
		// its startup parameters (privileges.go).
		return errs.New(errs.FeatureNotSupported, "the parameter role cannot be set at connection start; use SET ROLE")
	}
	return s.settings.Set(strings.ToLower(name), value)
}
