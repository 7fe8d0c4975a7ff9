package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Watching the client while a statement runs.
//
// PostgreSQL reads nothing from a client while a statement runs, and a
// client that disconnects meanwhile is noticed only when the result is
// written. Here a statement that computes for long is stopped when its
// client goes away: while it runs, a goroutine reads the client's next
// messages, so that end of file or a reset connection cancels the
// statement's context with errClientGone.
//
// The reader is the connection's own protocol backend, not a peek at the
// socket: what it reads are whole messages, kept in order in c.pending
// for after the statement, so that nothing of a pipeline that follows is
// lost or reordered. The connection's goroutine does not read while the
// watch lasts (it runs the statement), so there is one reader at a time.
// To end the watch, the read is interrupted with a read deadline in the
// past; a message half read stays in the backend's buffer and the next
// read completes it, and a TLS connection survives a timed-out read.
// Peeking at the socket instead would need the raw descriptor (not there
// under TLS) and would still have to tell data from end of file, and TCP
// keepalive notices a vanished peer only after many seconds.
//
// Messages received are copied (the backend reuses its message structs)
// and handled by the connection's goroutine only after the statement; the
// watch reads as far as maxQueued messages and then leaves the rest in
// the socket. Reading starts only once the statement has run for
// watchStatement.after, so that short statements, the most, pay for
// little more than an atomic load: the connection keeps one timer
// (conn.watchTimer), which starts the watch it finds in conn.mu.watch.
// The timer is armed by a statement that finds it unarmed and is never
// stopped by one: a statement that finds it armed (conn.watchArmed) is
// sure of a fire at most watchStatement.after after its start, which
// starts its watch if it still runs. A fire after its statement's watch
// stopped finds no watch or a later statement's, whose reading it starts
// early, which does no harm; a busy connection thus pays for a timer
// reset and an early watch about once per watchStatement.after instead
// of a reset and a stop per statement.
//
// A Terminate counts as the client going away: PostgreSQL would finish
// the statement first, but a client closing its connection (drivers send
// Terminate before they close) must not leave behind a statement that
// computes for hours. A message that breaks the protocol ends the watch
// without touching the statement; receive reports it next.

// watchMode says how a watch treats what the client sends.
type watchMode struct {
	// after delays the start of the reading, so that a short statement
	// costs no goroutine and no deadline changes.
	after time.Duration
	// stream is set for a result whose pieces are flushed as they come
	// (SUBSCRIBE, COPY TO): Flush messages, moot then, are dropped.
	stream bool
}

var (
	// watchStatement watches the client of a running statement once it
	// has run for a few milliseconds: a disconnect stops it well under a
	// second after the statement began or the client went, whichever is
	// later.
	watchStatement = watchMode{after: 20 * time.Millisecond}
	// watchStream watches a streamed result from its start.
	watchStream = watchMode{stream: true}
)

// maxQueued bounds the messages a client may pipeline while a statement
// runs or a result streams; past it they wait in the socket.
const maxQueued = 1024

// clientWatch is one watch (watchClient).
type clientWatch struct {
	c      *conn
	mode   watchMode
	cancel context.CancelCauseFunc
	own    bool // cancel is of a context the watch derived
	// stopFunc is stop, bound once: watchClient returns it.
	stopFunc func() error

	mu struct {
		sync.Mutex
		started, stopped bool
	}
	// done is closed when the reading goroutine has returned; made when
	// it starts.
	done chan struct{}

	// Written by the reading goroutine, read after done.
	queue []pgproto3.FrontendMessage
	gone  bool  // the client went away or sent Terminate
	err   error // a read error that is not the client going away
}

// watchClient reads from the client while a statement runs or a result
// streams, so that a disconnect cancels ctx's statement. ctx is the
// statement's (statementContext): the watch cancels the statement through
// its cancel function, the one a cancel request uses, rather than
// through a context of its own. stop ends the watch and puts the messages
// read meanwhile in c.pending; it returns errClose when the client is
// gone.
func (c *conn) watchClient(ctx context.Context, mode watchMode) (context.Context, func() error) {
	c.mu.Lock()
	cancel := c.mu.cancel
	c.mu.Unlock()
	own := cancel == nil
	if own {
		ctx, cancel = context.WithCancelCause(ctx)
	}
	w := c.idleWatch
	c.idleWatch = nil
	if w == nil {
		w = &clientWatch{c: c}
		w.stopFunc = w.stop
	}
	// A watch used again may still be started by a late fire of the
	// timer that found it in c.mu.watch before its last stop: it is set
	// up under its lock, which start takes, so such a start starts this
	// statement's watch.
	w.mu.Lock()
	w.mode, w.cancel, w.own = mode, cancel, own
	w.done, w.queue, w.gone, w.err = nil, nil, false, nil
	w.mu.started, w.mu.stopped = false, false
	w.mu.Unlock()
	if mode.after > 0 {
		c.mu.Lock()
		c.mu.watch = w
		c.mu.Unlock()
	}
	// c.mu.watch is set before watchArmed is read: a fire that clears
	// watchArmed after the read (the timer seen armed) reads c.mu.watch
	// after it was set.
	switch {
	case mode.after == 0:
		w.start()
	case c.watchArmed.Load():
	case c.watchTimer == nil:
		c.watchArmed.Store(true)
		c.watchTimer = time.AfterFunc(mode.after, c.startWatch)
	default:
		c.watchArmed.Store(true)
		c.watchTimer.Reset(mode.after)
	}
	return ctx, w.stopFunc
}

// startWatch starts the delayed watch waiting, if any (watchTimer).
func (c *conn) startWatch() {
	c.watchArmed.Store(false)
	c.mu.Lock()
	w := c.mu.watch
	c.mu.Unlock()
	if w != nil {
		w.start()
	}
}

// start starts the reading goroutine, unless the watch already stopped
// or started: a late fire of the connection's timer and the fire of its
// reset can both reach the same watch.
func (w *clientWatch) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.stopped || w.mu.started {
		return
	}
	w.mu.started = true
	w.done = make(chan struct{})
	go w.read()
}

// read reads messages until the client goes away, the queue is full or
// the read is interrupted.
func (w *clientWatch) read() {
	c := w.c
	defer close(w.done)
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("gateway: reading the client panicked", "pid", c.pid, "panic", r)
			w.clientGone()
		}
	}()
	for len(w.queue) < maxQueued {
		m, err := c.receiveMessage()
		if err != nil {
			switch {
			case isTimeout(err):
				// Interrupted by stop.
			case isClientGone(err):
				w.clientGone()
			default:
				w.err = err
			}
			return
		}
		switch m.(type) {
		case *pgproto3.Terminate:
			w.clientGone()
			return
		case *pgproto3.Flush:
			if w.mode.stream {
				continue
			}
		}
		if bad, ok := m.(*malformedMessage); ok {
			w.queue = append(w.queue, bad)
			continue
		}
		clone, err := cloneMessage(m)
		if err != nil {
			w.err = err
			return
		}
		w.queue = append(w.queue, clone)
	}
}

func (w *clientWatch) clientGone() {
	w.gone = true
	w.cancel(errClientGone)
}

// stop ends the watch.
func (w *clientWatch) stop() error {
	c := w.c
	if w.mode.after > 0 {
		c.mu.Lock()
		c.mu.watch = nil
		c.mu.Unlock()
	}
	w.mu.Lock()
	w.mu.stopped = true
	started := w.mu.started
	w.mu.Unlock()
	if w.own {
		w.cancel(nil)
	}
	if !started {
		// No goroutine holds the watch: the next statement's may be
		// this one.
		c.idleWatch = w
		return nil
	}
	select {
	case <-w.done:
	default:
		// Interrupt the read; a message half read stays buffered in the
		// backend and is completed by the next read.
		_ = c.nc.SetReadDeadline(time.Now())
		<-w.done
		_ = c.nc.SetReadDeadline(time.Time{})
	}
	c.pending = append(c.pending, w.queue...)
	if w.err != nil && c.pendingErr == nil {
		c.pendingErr = w.err
	}
	if w.gone {
		return errClose
	}
	return nil
}
