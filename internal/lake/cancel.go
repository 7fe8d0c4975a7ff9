package lake

import (
	"crypto/subtle"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Cancel requests, as PostgreSQL serves them: a client opens a new
// connection and sends CancelRequest with the process id and secret key
// its session got in BackendKeyData. When both match a session that is
// running a message, that message stops with 57014 "canceling statement
// due to user request" at its next interruption point (a wait for
// another transaction's key, every scanRowsPerCheck rows of a scan, a
// COPY FROM STDIN message); the session stays usable, and a transaction
// block it was in is aborted like by any error. A request with a wrong
// secret or for an idle session does nothing, and the cancelling
// connection is closed without an answer either way.

// scanRowsPerCheck is how many rows a scan reads between two looks at
// its session's cancel state.
const scanRowsPerCheck = 1024

var errCanceled = &sqlError{code: "57014", msg: "canceling statement due to user request"}

// interrupt is a session's cancel state: armed while the session runs a
// client message, fired by a matching CancelRequest.
type interrupt struct {
	mu sync.Mutex
	// ch is non-nil while a message runs; a cancel closes it.
	ch    chan struct{}
	fired bool
}

// arm marks the start of a message's processing.
func (i *interrupt) arm() {
	i.mu.Lock()
	i.ch, i.fired = make(chan struct{}), false
	i.mu.Unlock()
}

// disarm marks its end: a cancel arriving now is dropped.
func (i *interrupt) disarm() {
	i.mu.Lock()
	i.ch, i.fired = nil, false
	i.mu.Unlock()
}

// fire cancels the running message, if any.
func (i *interrupt) fire() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.ch != nil && !i.fired {
		close(i.ch)
		i.fired = true
	}
}

// done is closed once the running message is cancelled; nil (never
// ready) when i is nil or idle.
func (i *interrupt) done() <-chan struct{} {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.ch
}

// check returns errCanceled once the running message is cancelled.
func (i *interrupt) check() error {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.fired {
		return errCanceled
	}
	return nil
}

// scanCheckHook, when set (tests), runs at every cancel check of a
// scan with the session's cancel channel, so that a test can hold a
// scan until its cancel arrives.
var scanCheckHook func(done <-chan struct{})

// scanCheck is a scan's interruption point: it looks at the cancel
// state every scanRowsPerCheck rows, starting with the first.
func (x *txn) scanCheck(n int) error {
	if n%scanRowsPerCheck != 0 {
		return nil
	}
	if scanCheckHook != nil {
		scanCheckHook(x.intr.done())
	}
	return x.intr.check()
}

// register makes s reachable by CancelRequest under its key.
func (srv *Server) register(s *session) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.mu.sessions[s.pid] = s
}

func (srv *Server) unregister(s *session) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.mu.sessions[s.pid] == s {
		delete(srv.mu.sessions, s.pid)
	}
}

// cancel serves a CancelRequest: the session whose process id and
// secret both match has its running message cancelled.
func (srv *Server) cancel(m *pgproto3.CancelRequest) {
	srv.mu.Lock()
	s := srv.mu.sessions[m.ProcessID]
	srv.mu.Unlock()
	if s == nil || subtle.ConstantTimeCompare(s.secret, m.SecretKey) != 1 {
		srv.log.Debug("lake: cancel request for no session", "pid", m.ProcessID)
		return
	}
	s.intr.fire()
}
