package runtime

import (
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rockstream/rockstream/internal/connectors/spec"
	"github.com/rockstream/rockstream/internal/errs"
)

// The session registry: every Session an engine hands out is registered
// from NewSession until Close, with what its client is and what it is
// doing, for rockstream_catalog.sessions and the server's metrics.
//
// Lock order: Engine.mu, then sessionRegistry.mu, then activity.mu.
// Nothing here takes Engine.mu, so a system relation read under it may
// list the sessions.

// ClientInfo describes the client behind a session. The gateway sets it
// after the client has authenticated; an embedded session has none.
type ClientInfo struct {
	User            string
	Database        string
	ApplicationName string
	// Addr is the client's network address; nil for an embedded session.
	Addr net.Addr
}

// SessionState says what a session is doing, as PostgreSQL's
// pg_stat_activity.state does.
type SessionState string

const (
	StateIdle          SessionState = "idle"
	StateActive        SessionState = "active"
	StateIdleInTxn     SessionState = "idle in transaction"
	StateIdleInFailTxn SessionState = "idle in transaction (aborted)"
)

// SessionInfo is a snapshot of one registered session.
type SessionInfo struct {
	ID           uint64
	Client       ClientInfo
	State        SessionState
	Query        string    // the running statement, or the last one when idle, secrets redacted (spec.RedactSQL)
	QueryStart   time.Time // zero before the first statement
	BackendStart time.Time
}

// activity is a session's entry in the registry. The session's own
// goroutine writes it; readers of the registry read it under mu.
type activity struct {
	id    uint64
	start time.Time

	mu struct {
		sync.Mutex
		client     ClientInfo
		appName    string // SET application_name, when set
		state      SessionState
		query      string
		queryStart time.Time
	}
}

// sessionRegistry holds the open sessions of an engine.
type sessionRegistry struct {
	mu struct {
		sync.Mutex
		nextID uint64
		open   map[uint64]*activity
	}
}

// register adds a new session's activity and returns it.
func (r *sessionRegistry) register() *activity {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.nextID++
	a := &activity{id: r.mu.nextID, start: time.Now()}
	a.mu.state = StateIdle
	if r.mu.open == nil {
		r.mu.open = map[uint64]*activity{}
	}
	r.mu.open[a.id] = a
	return a
}

func (r *sessionRegistry) unregister(a *activity) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.mu.open, a.id)
}

// count returns the number of open sessions.
func (r *sessionRegistry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.mu.open)
}

// snapshot returns every open session, by id.
func (r *sessionRegistry) snapshot() []SessionInfo {
	r.mu.Lock()
	acts := make([]*activity, 0, len(r.mu.open))
	for _, a := range r.mu.open {
		acts = append(acts, a)
	}
	r.mu.Unlock()
	sort.Slice(acts, func(i, j int) bool { return acts[i].id < acts[j].id })
	out := make([]SessionInfo, len(acts))
	for i, a := range acts {
		a.mu.Lock()
		out[i] = SessionInfo{
			ID: a.id, Client: a.mu.client, State: a.mu.state,
			Query: spec.RedactSQL(a.mu.query), QueryStart: a.mu.queryStart, BackendStart: a.start,
		}
		if a.mu.appName != "" {
			out[i].Client.ApplicationName = a.mu.appName
		}
		a.mu.Unlock()
	}
	return out
}

// Sessions returns the engine's open sessions, by id.
func (e *Engine) Sessions() []SessionInfo { return e.obs.sessions.snapshot() }

// ID returns the session's number, unique among the engine's sessions
// since it opened; rockstream_catalog.sessions shows it.
func (s *Session) ID() uint64 { return s.act.id }

// SetClient records who the session's client is.
func (s *Session) SetClient(c ClientInfo) {
	s.act.mu.Lock()
	s.act.mu.client = c
	s.act.mu.Unlock()
}

// beginStatement marks the session active running query and returns the
// function that records the statement's end in the engine's counters and
// the session's state. A statement that returns a stream stays active until
// the stream ends: CopyFrom or CopyFail for COPY FROM STDIN, the Close of
// its CopyOut or Subscription otherwise.
func (s *Session) beginStatement(query string) func(res *Result, err error) {
	now := time.Now()
	s.act.mu.Lock()
	s.act.mu.state = StateActive
	s.act.mu.query = query
	s.act.mu.queryStart = now
	s.act.mu.Unlock()
	return func(res *Result, err error) {
		tag := ""
		if res != nil {
			tag = res.Tag
		}
		s.eng.obs.statementDone(query, tag, err)
		s.auditStatement(query, err)
		if err == nil && res != nil {
			switch {
			case res.CopyIn != nil:
				return
			case res.CopyOut != nil:
				res.CopyOut.Close = s.endsStatement(res.CopyOut.Close)
				return
			case res.Subscription != nil:
				res.Subscription.Close = s.endsStatement(res.Subscription.Close)
				return
			}
		}
		s.statementEnded()
	}
}

// endsStatement returns close followed by the end of the session's
// statement.
func (s *Session) endsStatement(close func()) func() {
	return func() {
		if close != nil {
			close()
		}
		s.statementEnded()
	}
}

// copyDone records the end of a COPY FROM STDIN's data: the rows it
// inserted, or its error.
func (s *Session) copyDone(res *Result, err error) {
	tag := ""
	if res != nil {
		tag = res.Tag
	}
	s.eng.obs.copyDone(tag, err)
	s.statementEnded()
}

// statementEnded records that the session's statement has ended: the
// session is idle, in a transaction block or not.
func (s *Session) statementEnded() {
	state := StateIdle
	switch {
	case s.txn.explicit() && s.txn.Failed():
		state = StateIdleInFailTxn
	case s.txn.explicit():
		state = StateIdleInTxn
	}
	app, _ := s.settings.Lookup("application_name")
	s.act.mu.Lock()
	s.act.mu.state = state
	s.act.mu.appName = app
	s.act.mu.Unlock()
}

// statementKind classifies a statement for the statement counters by its
// first keyword, or by its command tag when it starts with WITH and
// succeeded. The set of kinds is fixed, so that a metric labelled by kind
// stays small.
func statementKind(query, tag string) string {
	word := firstWord(strings.TrimLeft(query, " \t\r\n("))
	if strings.EqualFold(word, "WITH") && tag != "" {
		word = firstWord(tag)
	}
	switch strings.ToUpper(word) {
	case "SELECT", "VALUES", "TABLE", "WITH":
		return "select"
	case "INSERT":
		return "insert"
	case "UPDATE":
		return "update"
	case "DELETE":
		return "delete"
	case "CREATE", "DROP", "ALTER":
		return "ddl"
	case "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT":
		return "transaction"
	case "SET", "RESET", "SHOW":
		return "setting"
	case "EXPLAIN":
		return "explain"
	case "COPY":
		return "copy"
	case "SUBSCRIBE", "DECLARE", "FETCH", "CLOSE":
		return "subscribe"
	}
	return "other"
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t\r\n(;"); i >= 0 {
		return s[:i]
	}
	return s
}

// sqlstateClass returns the class (first two characters) of err's
// SQLSTATE.
func sqlstateClass(err error) string {
	st := errs.SQLState(err)
	if len(st) < 2 {
		return "XX"
	}
	return st[:2]
}
