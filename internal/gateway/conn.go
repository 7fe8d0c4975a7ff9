package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/runtime"
)

// Why a statement's context was canceled, as the client is told.
var (
	errUserCancel       = runtime.ErrCanceledByUser
	errStatementTimeout = runtime.ErrStatementTimeout
	errAdminShutdown    = errs.New(errs.AdminShutdown, "terminating connection due to administrator command")
	errIdleTimeout      = errs.New(errs.IdleInTxnTimeout, "terminating connection due to idle-in-transaction timeout")
)

// errClose ends a connection without anything more to say to the client
// (Terminate, a closed socket, or a FATAL error already sent).
var errClose = errors.New("gateway: connection closed")

// conn is one client connection.
type conn struct {
	srv *Server
	// raw is the accepted connection; nc is raw or, after an SSLRequest,
	// the TLS connection over it.
	raw net.Conn
	nc  net.Conn
	be  *pgproto3.Backend
	// frames hands the backend one message at a time (frames.go).
	frames *frameReader
	// enc encodes an Execute's rows (portalEncoder) and complete is the
	// CommandComplete message sent after them (commandComplete), both
	// kept from one statement to the next.
	enc      *rowEncoder
	complete pgproto3.CommandComplete
	pid      uint32
	secret   []byte

	// authDeadline is when the startup and authentication must be done
	// (Config.AuthenticationTimeout).
	authDeadline time.Time
	// Set by startup and authentication.
	user      string
	superuser bool
	sess      *runtime.Session
	// reported holds the ParameterStatus values the client has.
	reported map[string]string
	// reportedAt is the version of the session's settings the reported
	// values were computed at, valid once reportedOK; every reported
	// value that can change is a setting's.
	reportedAt uint64
	reportedOK bool
	// reportedEpoch is the rockstream_commit_epoch the client has; 0
	// before the session's first commit (startup.go).
	reportedEpoch uint64

	// The extended protocol's objects (extended.go).
	stmts   map[string]*statement
	portals map[string]*portal
	// copying is set while a COPY FROM STDIN runs: the session belongs
	// to the goroutine reading the data, so receive must not touch it.
	copying bool
	// skipToSync is set after an error in the extended protocol: messages
	// are discarded until Sync.
	skipToSync bool
	// pipelined is set while the statements of an extended-protocol
	// pipeline run in one implicit transaction block, until Sync
	// (extended.go).
	pipelined bool
	// pending are messages received while a result streamed, to be
	// handled next, in order (stream.go).
	pending []pgproto3.FrontendMessage
	// pendingErr is a read error met while watching the client, after
	// the pending messages (watch.go).
	pendingErr error
	// watchTimer starts the reading of a delayed watch (watch.go); one
	// per connection, reset by a statement that finds it unarmed.
	watchTimer *time.Timer
	// watchArmed is set while watchTimer is due to fire.
	watchArmed atomic.Bool
	// idleWatch is a watch that stopped before it started reading, for
	// the next statement to use again (watchClient).
	idleWatch *clientWatch

	mu struct {
		sync.Mutex
		// idle is set while the connection waits for a message.
		idle bool
		// slot is set once the connection holds one of the
		// MaxConnections slots (Server.takeSlot).
		slot bool
		// cancel cancels the running statement; nil when none runs.
		cancel context.CancelCauseFunc
		// watch is the delayed watch of the running statement that
		// watchTimer starts; nil when none waits.
		watch *clientWatch
		// shutdown is set by Server.Shutdown: the connection ends at its
		// next idle point.
		shutdown bool
		// closed is set when Shutdown closed the socket of an idle
		// connection.
		closed bool
		// killed is set when Shutdown's grace period ended: statements
		// are canceled as they start.
		killed bool
		// started is set once the startup (and authentication) is done.
		started bool
	}
}

func newConn(s *Server, nc net.Conn, pid uint32) *conn {
	secret := make([]byte, 4)
	_, _ = rand.Read(secret)
	c := &conn{srv: s, raw: nc, nc: nc, pid: pid, secret: secret,
		stmts: map[string]*statement{}, portals: map[string]*portal{}}
	c.frames = newFrameReader(nc)
	c.be = pgproto3.NewBackend(c.frames, nc)
	c.be.SetMaxBodyLen(s.cfg.MaxMessageBytes)
	return c
}

func (c *conn) hasSlot() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.slot
}

// serve runs the connection to its end.
func (c *conn) serve() {
	defer c.srv.unregister(c)
	defer c.nc.Close()
	defer func() {
		if c.watchTimer != nil {
			c.watchTimer.Stop()
		}
	}()
	defer func() {
		if c.sess != nil {
			c.closeSession()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			if testHookPanic != nil {
				testHookPanic(r)
			}
			c.srv.log.Error("gateway: session panicked", "pid", c.pid, "panic", r, "stack", string(debug.Stack()))
			c.sendFatal(errs.Newf(errs.Internal, "internal error: %v", r))
		}
	}()
	if err := c.startup(); err != nil {
		c.finish(err)
		return
	}
	c.finish(c.loop())
}

// closeSession closes the session, rolling back an open block; a panic
// there is logged, not propagated, so that the engine's write token held
// by a broken session is not what takes the server down.
func (c *conn) closeSession() {
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("gateway: closing session panicked", "pid", c.pid, "panic", r)
		}
	}()
	c.sess.Close()
}

// finish reports how the connection ended: an *errs.Error is sent as a
// FATAL ErrorResponse, other errors are logged.
func (c *conn) finish(err error) {
	if err == nil || errors.Is(err, errClose) {
		return
	}
	var pe *protocolError
	var fe *fatalError
	var e *errs.Error
	switch {
	case errors.As(err, &fe):
		c.sendFatal(fe.err)
	case errors.As(err, &pe):
		c.srv.log.Info("gateway: protocol violation", "pid", c.pid, "remote", c.nc.RemoteAddr().String(), "err", pe.msg)
		c.sendFatal(errs.New(errs.ProtocolViolation, pe.msg))
	case errors.As(err, &e):
		c.sendFatal(e)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		// The client went away.
	default:
		c.srv.log.Info("gateway: connection ended", "pid", c.pid, "err", err)
	}
}

// fatalError ends the connection with FATAL err: a fault that leaves the
// session in doubt.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// protocolError is a client message that breaks the protocol: the
// connection ends with FATAL 08P01.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

func protocolErrorf(format string, args ...any) error {
	return &protocolError{msg: fmt.Sprintf(format, args...)}
}

// sendFatal sends a FATAL ErrorResponse and flushes, ignoring write
// errors (the connection is ending).
func (c *conn) sendFatal(err error) {
	c.be.Send(errorResponse(err, "FATAL", 0))
	_ = c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = c.be.Flush()
}

// receive returns the next client message. It marks the connection idle
// while it waits (so that Shutdown may end it), and applies the
// idle-in-transaction timeout while a transaction block is open.
func (c *conn) receive() (pgproto3.FrontendMessage, error) {
	if len(c.pending) > 0 {
		m := c.pending[0]
		c.pending = c.pending[1:]
		return m, nil
	}
	if err := c.pendingErr; err != nil {
		c.pendingErr = nil
		return nil, receiveError(err)
	}
	c.mu.Lock()
	if c.mu.shutdown {
		c.mu.Unlock()
		return nil, errAdminShutdown
	}
	c.mu.idle = true
	c.mu.Unlock()

	var idleTimeout time.Duration
	if c.sess != nil && !c.copying && c.sess.TxnStatus() != 'I' {
		idleTimeout = c.sess.SettingDuration("idle_in_transaction_session_timeout")
	}
	if idleTimeout > 0 {
		_ = c.nc.SetReadDeadline(time.Now().Add(idleTimeout))
	}
	m, err := c.receiveMessage()
	if idleTimeout > 0 {
		_ = c.nc.SetReadDeadline(time.Time{})
	}

	c.mu.Lock()
	c.mu.idle = false
	closed := c.mu.closed
	c.mu.Unlock()
	if closed {
		return nil, errClose
	}
	if err != nil {
		if idleTimeout > 0 && isTimeout(err) {
			return nil, errIdleTimeout
		}
		return nil, receiveError(err)
	}
	return m, nil
}

// receiveError is the error a failed read of a client message ends the
// connection with.
func receiveError(err error) error {
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	switch {
	case errors.As(err, &tooBig):
		return protocolErrorf("message of %d bytes exceeds the maximum message size of %d bytes", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen)
	case isClientGone(err):
		return errClose
	}
	if t, ok := strings.CutPrefix(err.Error(), "unknown message type: "); ok && len(t) == 1 {
		return protocolErrorf("invalid frontend message type %d", t[0])
	}
	return protocolErrorf("invalid frontend message: %v", err)
}

// isClientGone reports whether a read error means the client went away:
// end of file, a reset or closed connection.
func isClientGone(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	_, ok := err.(net.Error)
	return ok
}

// shutdown ends the connection for Server.Shutdown: at once when it is
// idle, else when its running statement (or pipeline) is done.
func (c *conn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.shutdown = true
	if !c.mu.started {
		// Still starting up: there is no session to end.
		c.mu.closed = true
		c.raw.Close()
		return
	}
	if !c.mu.idle {
		return
	}
	c.mu.closed = true
	// The connection's goroutine is blocked reading and writes nothing
	// until it sees closed: this is the only writer now.
	buf, _ := errorResponse(errAdminShutdown, "FATAL", 0).Encode(nil)
	_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.nc.Write(buf)
	c.nc.Close()
}

// cancelStatement cancels the running statement, if any, with cause.
func (c *conn) cancelStatement(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cause == errAdminShutdown {
		c.mu.killed = true
	}
	if c.mu.cancel != nil {
		c.mu.cancel(cause)
	}
}

// statementContext returns the context a statement runs under and the
// function that ends it. The statement timeout is the session's.
func (c *conn) statementContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx = memgov.WithCancel(ctx, cancel)
	var timer *time.Timer
	if d := c.sess.StatementTimeout(); d > 0 {
		timer = time.AfterFunc(d, func() { cancel(errStatementTimeout) })
	}
	c.mu.Lock()
	c.mu.cancel = cancel
	if c.mu.killed {
		cancel(errAdminShutdown)
	}
	c.mu.Unlock()
	return ctx, func() {
		if timer != nil {
			timer.Stop()
		}
		c.mu.Lock()
		c.mu.cancel = nil
		c.mu.Unlock()
		cancel(nil)
	}
}

// statementError returns the error a client sees for a statement that
// failed under ctx: the cancellation's cause when ctx was canceled. A
// statement the engine stopped already carries its message (the cause,
// which its context inherits, perhaps with a detail of the engine's:
// which epoch a read waited for).
func (c *conn) statementError(ctx context.Context, err error) error {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	c.srv.canceled.Add(1)
	var stopped *errs.Error
	if ctx.Err() != nil && !errors.As(err, &stopped) {
		return context.Cause(ctx)
	}
	return err
}

// loop handles messages until the connection ends.
func (c *conn) loop() error {
	for {
		m, err := c.receive()
		if err != nil {
			return err
		}
		if err := c.handle(m); err != nil {
			return err
		}
	}
}

// testHookPanic, when set (by tests), sees every panic a session
// recovers from: fuzzing fails on them.
var testHookPanic func(r any)

// testHookHandle, when set (by tests), sees every message before it is
// handled: a test makes a session panic with it.
var testHookHandle func(m pgproto3.FrontendMessage)

// handle handles one message of the ready state.
func (c *conn) handle(m pgproto3.FrontendMessage) error {
	if testHookHandle != nil {
		testHookHandle(m)
	}
	if c.skipToSync {
		switch m.(type) {
		case *pgproto3.Sync:
			c.skipToSync = false
			return c.sync()
		case *pgproto3.Terminate:
			return errClose
		}
		return nil
	}
	switch m := m.(type) {
	case *malformedMessage:
		return c.answerMalformed(m)
	case *pgproto3.Query:
		return c.simpleQuery(m.String)
	case *pgproto3.Parse:
		return c.parse(m)
	case *pgproto3.Bind:
		return c.bind(m)
	case *pgproto3.Describe:
		// The backend reuses a message's memory for the next one of its
		// type, which watching the client may receive while this one runs
		// (watch.go): these are handled from copies.
		d := *m
		return c.describe(&d)
	case *pgproto3.Execute:
		e := *m
		return c.execute(&e)
	case *pgproto3.Close:
		return c.closeObject(m)
	case *pgproto3.Sync:
		return c.sync()
	case *pgproto3.Flush:
		return c.flush()
	case *pgproto3.Terminate:
		return errClose
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Left over from a COPY that failed: PostgreSQL ignores them.
		return nil
	case *pgproto3.FunctionCall:
		return c.extendedError(errs.New(errs.FeatureNotSupported, "the function call protocol is not supported"))
	}
	return protocolErrorf("unexpected message type %T", m)
}

// flush writes buffered messages to the client.
func (c *conn) flush() error {
	if err := c.be.Flush(); err != nil {
		return errClose
	}
	return nil
}

// readyForQuery sends ReadyForQuery with the session's transaction status
// and flushes. A connection asked to shut down ends here.
func (c *conn) readyForQuery() error {
	c.reportParameters()
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.sess.TxnStatus()})
	if err := c.flush(); err != nil {
		return err
	}
	c.mu.Lock()
	shutdown := c.mu.shutdown
	c.mu.Unlock()
	if shutdown {
		return errAdminShutdown
	}
	return nil
}
