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
