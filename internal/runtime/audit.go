package runtime

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// The audit log records who changed what: DDL, role and privilege
// changes, connector state changes and checkpoints, one JSON object a line
// (docs/operations.md#audit-log), appended and synced before the event's
// caller goes on. It is a plain file beside the store (AuditFileName under
// the storage directory's auxiliary/), not in it: it survives a restore
// of the store, and reading it needs no engine.
//
// Invariants: a line once written is never rewritten; seq increases by
// one from line to line, across restarts (a new log starts at 1); no
// secret (a password, a secret connector option, the password of a
// connection string) is written: statements and details are redacted
// first.

// AuditFileName is the audit log's path relative to the storage
// directory.
const AuditFileName = "auxiliary/audit.jsonl"

// The kinds of audit events.
const (
	AuditDDL        = "ddl"
	AuditRole       = "role"
	AuditConnector  = "connector"
	AuditCheckpoint = "checkpoint"
)

// AuditEvent is one line of the audit log.
type AuditEvent struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Role is who acted: the session's user, "embedded" for a session
	// without a client, "http <address>" for an HTTP action, "server"
	// for what the server does by itself (connector state changes).
	Role string `json:"role"`
	Kind string `json:"kind"`
	// Object names what the event is about: a connector, a checkpoint
	// location.
	Object string `json:"object,omitempty"`
	// Statement is the SQL statement, redacted.
	Statement string `json:"statement,omitempty"`
	// Outcome is "ok" or "error"; SQLState is the error's code.
	Outcome  string `json:"outcome"`
	SQLState string `json:"sqlstate,omitempty"`
	// Detail says more: the error's message, a connector's old and new
	// state, a checkpoint's id and epoch.
	Detail string `json:"detail,omitempty"`
}

// AuditLog appends events to a file. Its methods are safe for concurrent
// use.
type AuditLog struct {
	mu   sync.Mutex
	f    *os.File
	seq  uint64
	path string
	err  error // the first write error; later events are dropped
}

// OpenAuditLog opens the audit log of the store in dir for appending,
// creating it when missing, and continues its numbering.
func OpenAuditLog(dir string) (*AuditLog, error) {
	path := filepath.Join(dir, AuditFileName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, errs.Newf(errs.IOError, "audit log: %v", err)
	}
	events, err := ReadAuditLog(path, 0)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, errs.Newf(errs.IOError, "audit log: %v", err)
	}
	l := &AuditLog{f: f, path: path}
	if n := len(events); n > 0 {
		l.seq = events[n-1].Seq
	}
	return l, nil
}

// Path returns the log's file.
func (l *AuditLog) Path() string { return l.path }

// Append writes ev (its time and seq filled in when zero) and syncs it.
func (l *AuditLog) Append(ev AuditEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	l.seq++
	ev.Seq = l.seq
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	ev.Statement = RedactSecrets(ev.Statement)
	ev.Detail = RedactSecrets(ev.Detail)
	line, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		l.err = errs.Newf(errs.IOError, "audit log %s: %v", l.path, err)
		return l.err
	}
	if err := l.f.Sync(); err != nil {
		l.err = errs.Newf(errs.IOError, "audit log %s: %v", l.path, err)
		return l.err
	}
	return nil
}

// Close closes the file.
func (l *AuditLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// ReadAuditLog returns the events of the log at path with seq > after. A
// last line without its newline (a write a crash cut short) is skipped; a
// damaged line elsewhere is an error naming it.
func ReadAuditLog(path string, after uint64) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAudit(f, path, after)
}

func readAudit(r io.Reader, path string, after uint64) ([]AuditEvent, error) {
	var out []AuditEvent
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return out, nil // a line without its newline is incomplete
		}
		if err != nil {
			return out, errs.Newf(errs.IOError, "audit log %s: %v", path, err)
		}
		var ev AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return out, errs.Newf(errs.DataCorrupted, "audit log %s: line %d is damaged: %v", path, n, err)
		}
		if ev.Seq > after {
			out = append(out, ev)
		}
	}
}

var secretRes = []struct {
	re   *regexp.Regexp
	repl string
}{
	// CREATE|ALTER ROLE ... PASSWORD 'x'
	{regexp.MustCompile(`(?i)(\bPASSWORD\s+)'(?:[^']|'')*'`), `${1}'********'`},
	// connector options: sasl_password = 'x', secret_key = 'x' ...
	{regexp.MustCompile(`(?i)(\b\w*(?:password|secret|token|credential)\w*\s*=\s*)'(?:[^']|'')*'`), `${1}'********'`},
	// password=x inside a connection string
	{regexp.MustCompile(`(?i)(\bpassword\s*=\s*)[^\s',]+`), `${1}********`},
	// postgres://user:x@host
	{regexp.MustCompile(`(://[^:/@\s']*:)[^@\s'/]+@`), `${1}********@`},
}

// RedactSecrets replaces the secrets text may hold (a role's password,
// a secret connector option, the password of a connection string) with
// ********.
func RedactSecrets(text string) string {
	for _, r := range secretRes {
		text = r.re.ReplaceAllString(text, r.repl)
	}
	return text
}

// SetAuditLog makes the engine record its audit events in l; nil stops
// it. The caller closes l after the engine.
func (e *Engine) SetAuditLog(l *AuditLog) { e.audit.Store(l) }

// Audit records ev in the audit log, when there is one. A write that
// fails is reported once by the log's later errors; the event's action
// is not undone.
func (e *Engine) Audit(ev AuditEvent) error {
	l := e.audit.Load()
	if l == nil {
		return nil
	}
	return l.Append(ev)
}

// auditKind returns the audit kind of a statement, and false when it is
// not audited (reads, writes of rows, settings, transactions).
func auditKind(query string) (string, bool) {
	words := strings.Fields(strings.TrimLeft(query, " \t\r\n("))
	if len(words) == 0 {
		return "", false
	}
	first := strings.ToUpper(words[0])
	second := ""
	if len(words) > 1 {
		second = strings.ToUpper(strings.TrimRight(words[1], ";"))
	}
	switch first {
	case "GRANT", "REVOKE", "REASSIGN":
		return AuditRole, true
	case "CREATE", "ALTER", "DROP":
		if first == "ALTER" && second == "DEFAULT" || first == "DROP" && second == "OWNED" {
			return AuditRole, true
		}
		if second == "ROLE" || second == "USER" || second == "GROUP" {
			return AuditRole, true
		}
		return AuditDDL, true
	case "TRUNCATE", "COMMENT":
		return AuditDDL, true
	}
	return "", false
}

// AuditCheckpoint records a checkpoint to url that role asked for, and
// its result or error.
func (e *Engine) AuditCheckpoint(role, url string, r *CheckpointResult, err error) {
	ev := AuditEvent{Role: role, Kind: AuditCheckpoint, Object: url, Outcome: "ok"}
	if r != nil && r.Manifest != nil {
		ev.Detail = fmt.Sprintf("checkpoint %s of epoch %d: %d files, %d uploaded (%d bytes)",
			r.Manifest.ID, r.Manifest.Epoch, len(r.Manifest.Files), r.Manifest.Uploaded.Files, r.Manifest.Uploaded.Bytes)
		if p := r.Pruned; p != nil {
			ev.Detail += fmt.Sprintf("; kept %d, deleted %d", len(p.Kept), len(p.Deleted))
		}
	}
	if err != nil {
		ev.Outcome, ev.SQLState = "error", errs.SQLState(err)
		ev.Detail = strings.TrimPrefix(ev.Detail+"; ", "; ") + err.Error()
	}
	_ = e.Audit(ev)
}

// auditStatement records a statement that ended, when it is audited.
func (s *Session) auditStatement(query string, err error) {
	if s.eng.audit.Load() == nil {
		return
	}
	kind, ok := auditKind(query)
	if !ok {
		return
	}
	ev := AuditEvent{Role: s.auditRole(), Kind: kind, Statement: strings.TrimSpace(query), Outcome: "ok"}
	if err != nil {
		ev.Outcome, ev.SQLState, ev.Detail = "error", errs.SQLState(err), err.Error()
	}
	_ = s.eng.Audit(ev)
}

// auditRole is who the session acts for.
func (s *Session) auditRole() string {
	s.act.mu.Lock()
	defer s.act.mu.Unlock()
	if u := s.act.mu.client.User; u != "" {
		return u
	}
	return "embedded"
}
