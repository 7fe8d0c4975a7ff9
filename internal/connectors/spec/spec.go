// Package spec holds what the catalog knows about sources and sinks: their
// durable definition (Spec) and the registry through which each kind of
// connector validates its options and names its secrets.
//
// It is a leaf package so that the runtime, which stores and validates
// definitions, and the connectors, which run them, both depend on it
// without depending on each other.
//
// Invariant: a secret option's value (Kind.Secrets, or an option whose
// name says it is one), and a secret inside any option's value (a URL's
// password, a conninfo's password=, a PEM private key: RedactValue), is
// never shown back: Redacted lists replace it, and RedactText removes it
// from any message before the message is stored or shown.
package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Spec is a source's or sink's definition, as the catalog stores it.
type Spec struct {
	Name string `json:"name"`
	// Sink is set for sinks, clear for sources.
	Sink bool `json:"sink,omitempty"`
	// Connector is the kind of connector ("kafka", "postgres").
	Connector string   `json:"connector"`
	Options   []Option `json:"options"`
	// Target is a source's table or a sink's view; empty for a source
	// that names its tables otherwise.
	Target     string   `json:"target,omitempty"`
	IntoSchema string   `json:"into_schema,omitempty"`
	Tables     []string `json:"tables,omitempty"`
	AllTables  bool     `json:"all_tables,omitempty"`
	// Paused is set by ALTER ... PAUSE and cleared by RESUME.
	Paused bool `json:"paused,omitempty"`
	// Created is the epoch in which the definition was created.
	Created uint64 `json:"created"`
}

// Option is one option of a definition, its key lower-cased.
type Option struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Option returns the value of option key and whether it is set.
func (s *Spec) Option(key string) (string, bool) {
	for _, o := range s.Options {
		if o.Key == key {
			return o.Value, true
		}
	}
	return "", false
}

// OptionDefault returns option key's value, or def when it is not set.
func (s *Spec) OptionDefault(key, def string) string {
	if v, ok := s.Option(key); ok {
		return v
	}
	return def
}

// Bool returns a boolean option's value, def when absent.
func (s *Spec) Bool(key string, def bool) (bool, error) {
	v, ok := s.Option(key)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true", "on", "yes", "1":
		return true, nil
	case "false", "off", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("option %s must be true or false, not %q", key, v)
}

// Int returns an integer option's value, def when absent.
func (s *Spec) Int(key string, def int) (int, error) {
	v, ok := s.Option(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("option %s must be an integer, not %q", key, v)
	}
	return n, nil
}

// What names the definition's kind for messages: "source" or "sink".
func (s *Spec) What() string {
	if s.Sink {
		return "sink"
	}
	return "source"
}

// Kind is one kind of connector.
type Kind struct {
	// Name is the name used after FROM or INTO ("kafka").
	Name string
	// Source and Sink say which directions the kind supports.
	Source, Sink bool
	// Secrets are the options whose values are never shown back.
	Secrets []string
	// Validate checks a definition's options (and whatever else of the
	// definition the kind constrains) when it is created; it must not do
	// I/O. Nil accepts anything.
	Validate func(s *Spec) error
}

var registry struct {
	sync.RWMutex
	kinds map[string]Kind
}

// Register adds a kind of connector; a later registration of the same
// name replaces the earlier one.
func Register(k Kind) {
	registry.Lock()
	defer registry.Unlock()
	if registry.kinds == nil {
		registry.kinds = map[string]Kind{}
	}
	registry.kinds[k.Name] = k
}

// Lookup returns the kind called name.
func Lookup(name string) (Kind, bool) {
	registry.RLock()
	defer registry.RUnlock()
	k, ok := registry.kinds[name]
	return k, ok
}

// Kinds returns the registered kinds' names, sorted.
func Kinds() []string {
	registry.RLock()
	defer registry.RUnlock()
	var out []string
	for n := range registry.kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// secret reports whether option key of this definition is a secret: one
// its kind declares, or any option whose name says it is one (so that an
// unregistered kind still hides passwords).
func (s *Spec) secret(key string) bool {
	if k, ok := Lookup(s.Connector); ok {
		for _, n := range k.Secrets {
			if n == key {
				return true
			}
		}
	}
	for _, w := range secretWords {
		if strings.Contains(key, w) {
			return true
		}
	}
	return false
}

// Redacted renders the options as "key = 'value', ..." with secrets
// replaced by '********'.
func (s *Spec) Redacted() string {
	var b strings.Builder
	for i, o := range s.Options {
		if i > 0 {
			b.WriteString(", ")
		}
		v := RedactValue(o.Value)
		if s.secret(o.Key) {
			v = redacted
		}
		fmt.Fprintf(&b, "%s = '%s'", o.Key, strings.ReplaceAll(v, "'", "''"))
	}
	return b.String()
}

// RedactText removes from msg every secret option's value and every
// secret inside another option's value (RedactValue), and whatever
// RedactValue finds in msg itself.
func (s *Spec) RedactText(msg string) string {
	for _, o := range s.Options {
		if o.Value != "" && s.secret(o.Key) {
			msg = strings.ReplaceAll(msg, o.Value, redacted)
			continue
		}
		for _, e := range embeddedSecrets(o.Value) {
			msg = strings.ReplaceAll(msg, e, redacted)
		}
	}
	return RedactValue(msg)
}

// CheckOptions fails when an option is not among allowed or a required
// one is missing.
func (s *Spec) CheckOptions(allowed, required []string) error {
	for _, o := range s.Options {
		ok := false
		for _, a := range allowed {
			ok = ok || a == o.Key
		}
		if !ok {
			return fmt.Errorf("%s %s: unknown option %q; the options are %s", s.Connector, s.What(), o.Key, strings.Join(allowed, ", "))
		}
	}
	for _, r := range required {
		if _, ok := s.Option(r); !ok {
			return fmt.Errorf("%s %s: option %q is required", s.Connector, s.What(), r)
		}
	}
	return nil
}
