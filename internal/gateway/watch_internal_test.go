package gateway

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestWatchStartsOnce: the connection's one timer can reach a watch twice
// (a fire of the previous statement's timer, late, and the fire of its
// reset for this statement); the watch must start one reader only, or
// two readers share the socket and both close the watch's done channel.
func TestWatchStartsOnce(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	c := newConn(&Server{cfg: Config{MaxMessageBytes: 1 << 20}}, server, 1)
	_, stop := c.watchClient(context.Background(), watchMode{after: time.Hour})
	c.mu.Lock()
	w := c.mu.watch
	c.mu.Unlock()
	if w == nil {
		t.Fatal("a delayed watch is not waiting on the connection")
	}
	c.startWatch()
	done := w.done
	c.startWatch()
	if w.done != done {
		t.Fatal("a second start started a second reader")
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestArmedTimerStartsTheNextWatch: a short statement leaves the
// connection's timer armed, not stopped; the statement after it, which
// finds the timer armed and does not reset it, is still watched within
// the delay of its own start, and so is one that starts after the timer
// fired.
func TestArmedTimerStartsTheNextWatch(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	c := newConn(&Server{cfg: Config{MaxMessageBytes: 1 << 20}}, server, 1)
	mode := watchMode{after: 50 * time.Millisecond}
	started := func(w *clientWatch) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.mu.started
	}
	watchOf := func() *clientWatch {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.mu.watch
	}
	// watched runs a statement that lasts until its watch starts, and
	// fails when that takes longer than the delay from its start.
	watched := func(what string) {
		t.Helper()
		begin := time.Now()
		_, stop := c.watchClient(context.Background(), mode)
		w := watchOf()
		for !started(w) {
			if time.Since(begin) > mode.after+time.Second {
				t.Fatalf("%s: not watched %v after it began", what, time.Since(begin))
			}
			time.Sleep(time.Millisecond)
		}
		if err := stop(); err != nil {
			t.Fatalf("%s: stop: %v", what, err)
		}
	}

	_, stop := c.watchClient(context.Background(), mode) // short: stops at once
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !c.watchArmed.Load() {
		t.Fatal("the timer is not armed after a short statement")
	}
	watched("the statement after a short one")
	// The timer fired; the next statement arms it again.
	if c.watchArmed.Load() {
		t.Fatal("the timer is still armed after it fired")
	}
	watched("a statement after the fire")
}

// TestReusedWatchCancelsItsStatement: a watch that stopped before it
// started reading is used again by the next statement; a start of it
// then (the late fire of a timer that found it waiting for the statement
// before) watches the next statement, whose context a disconnect
// cancels, and not the previous one's.
func TestReusedWatchCancelsItsStatement(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	c := newConn(&Server{cfg: Config{MaxMessageBytes: 1 << 20}}, server, 1)
	mode := watchMode{after: time.Hour}
	statement := func() (context.Context, context.CancelCauseFunc) {
		ctx, cancel := context.WithCancelCause(context.Background())
		c.mu.Lock()
		c.mu.cancel = cancel
		c.mu.Unlock()
		return ctx, cancel
	}
	watchOf := func() *clientWatch {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.mu.watch
	}

	first, cancel := statement()
	_, stop := c.watchClient(first, mode)
	w := watchOf()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	cancel(nil)

	second, cancel := statement()
	defer cancel(nil)
	_, stop = c.watchClient(second, mode)
	if watchOf() != w {
		t.Fatal("the watch that never read is not used again")
	}
	w.start() // as the late fire of the timer would
	client.Close()
	select {
	case <-second.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the disconnect did not cancel the statement the watch was used again for")
	}
	if cause := context.Cause(second); cause != errClientGone {
		t.Fatalf("cause %v, want errClientGone", cause)
	}
	if context.Cause(first) == errClientGone {
		t.Fatal("the disconnect canceled the previous statement")
	}
	if err := stop(); err != errClose {
		t.Fatalf("stop: %v, want errClose", err)
	}
}
