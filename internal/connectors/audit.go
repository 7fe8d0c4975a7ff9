package connectors

import "github.com/rockstream/rockstream/internal/runtime"

// audit records a connector's change to state (with err for "failed") in
// the engine's audit log. Only settled states are recorded: "running",
// "paused", and "failed" when the error is not the one last recorded, so
// that a connector retrying the same failure does not fill the log with a
// line per retry ("starting" between them is not recorded).
func (s *Status) audit(state, err string) {
	if s.eng == nil || state == "starting" {
		return
	}
	s.audited.Lock()
	if s.audited.state == state && s.audited.err == err {
		s.audited.Unlock()
		return
	}
	from := s.audited.state
	s.audited.state, s.audited.err = state, err
	s.audited.Unlock()
	ev := runtime.AuditEvent{Role: "server", Kind: runtime.AuditConnector, Object: s.spec.Name, Outcome: "ok",
		Detail: s.spec.What() + " " + state}
	if from != "" {
		ev.Detail += " (was " + from + ")"
	}
	if state == "failed" {
		ev.Outcome = "error"
		ev.Detail += ": " + s.spec.RedactText(err)
	}
	_ = s.eng.Audit(ev)
}
