package connectors

import (
	"context"
	"log/slog"

	"github.com/rockstream/rockstream/internal/connectors/spec"
)

// logChange logs the connector's state when it changed, as one structured
// line (component=connector, the connector's name, kind (source or sink)
// and type (kafka, postgres-cdc), the new state
// and the one before). A connector that keeps failing is restarted in a
// loop (starting, failed, starting, ...): the loop is logged once, at the
// first failure, and again only when the error changes or the connector
// runs again, so that a connector failing every few seconds does not
// flood the log.
func (s *Status) logChange() {
	s.mu.Lock()
	defer s.mu.Unlock()
	state, prev := s.mu.state, s.mu.logged
	switch {
	case state == prev && (state != "failed" || s.mu.lastError == s.mu.loggedErr):
		return
	case state == "starting" && prev == "failed":
		// The retry of a failed connector.
		return
	}
	attrs := []any{"component", "connector", "name", s.spec.Name, "kind", s.spec.What(),
		"type", s.spec.Connector, "state", state}
	if prev != "" {
		attrs = append(attrs, "previous", prev)
	}
	level := slog.LevelInfo
	msg := "connector state changed"
	switch {
	case state == "failed":
		level, msg = slog.LevelWarn, "connector failed"
		attrs = append(attrs, "error", s.mu.lastError, "failures", s.mu.failures)
		s.mu.loggedErr = s.mu.lastError
	case prev == "failed":
		msg = "connector recovered"
		attrs = append(attrs, "failures", s.mu.failures)
	}
	s.mu.logged = state
	if s.mu.log != nil {
		s.mu.log.Log(context.Background(), level, msg, attrs...)
	}
}

// setLogger sets where logChange logs.
func (s *Status) setLogger(l *slog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.log = l
}

// failed counts a failure of the runner, which fail recorded, and logs
// it.
func (s *Status) failed() {
	s.mu.Lock()
	s.mu.failures++
	s.mu.Unlock()
	s.logChange()
}

// logDropped logs that a connector's definition is gone (DROP SOURCE,
// DROP SINK) and its runner stopped.
func (m *Manager) logDropped(s *spec.Spec) {
	m.opts.Logger.Info("connector dropped", "component", "connector", "name", s.Name, "kind", s.What(),
		"type", s.Connector, "state", "dropped")
}
