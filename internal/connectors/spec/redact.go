package spec

import (
	"regexp"
	"strings"
)

// redacted is what replaces a secret.
const redacted = "********"

// Secrets inside values that are not secret options themselves: the
// password of a URL (scheme://user:password@host), a password-like key of
// a libpq conninfo or a URL query (password=..., sslpassword='...'), and
// PEM private keys.
var (
	urlPassword  = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:([^@\s]*)@`)
	keyedSecret  = regexp.MustCompile(`(?i)\b[a-z0-9_.-]*(?:password|passwd|secret|token|credential|private[_.-]?key)[a-z0-9_.-]*\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&'"]+)`)
	pemKey       = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)
	sqlOptSecret = regexp.MustCompile(`(?i)\b([a-z0-9_]*(?:password|passwd|secret|token|credential|private_key)[a-z0-9_]*)(\s*=?\s*)'(?:[^']|'')*'`)
)

// secretWords are the words that make an option's name a secret one.
var secretWords = []string{"password", "passwd", "secret", "token", "credential", "private_key"}

// embeddedSecrets returns the secrets inside v.
func embeddedSecrets(v string) []string {
	var out []string
	for _, m := range urlPassword.FindAllStringSubmatch(v, -1) {
		if m[1] != "" {
			out = append(out, m[1])
		}
	}
	for _, m := range keyedSecret.FindAllStringSubmatch(v, -1) {
		s := m[1]
		if len(s) >= 2 && s[0] == '\'' {
			if inner := s[1 : len(s)-1]; inner != "" {
				out = append(out, inner)
			}
			continue
		}
		out = append(out, s)
	}
	out = append(out, pemKey.FindAllString(v, -1)...)
	return out
}

// RedactValue returns v with the secrets inside it (a URL's password, a
// conninfo's password=, a PEM private key) replaced by ********.
func RedactValue(v string) string {
	for _, s := range embeddedSecrets(v) {
		v = strings.ReplaceAll(v, s, redacted)
	}
	return v
}

// RedactSQL returns a statement's text with its secrets replaced by
// ********: the string after a password-like option name (PASSWORD 'pw',
// sasl_password = 'pw') and the secrets inside any value (RedactValue).
// It is meant for showing statements (sessions, logs), not for running
// them.
func RedactSQL(sql string) string {
	if !mayHoldSecret(sql) {
		return sql
	}
	sql = sqlOptSecret.ReplaceAllString(sql, "$1$2'"+redacted+"'")
	return RedactValue(sql)
}

// mayHoldSecret is a quick test that lets most statements skip the
// regular expressions.
func mayHoldSecret(s string) bool {
	if strings.Contains(s, "://") || strings.Contains(s, "-----BEGIN") {
		return true
	}
	l := strings.ToLower(s)
	for _, w := range secretWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return strings.Contains(l, "private")
}
