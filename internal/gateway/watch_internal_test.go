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
