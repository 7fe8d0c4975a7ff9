package gateway

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// connectFrom connects to dsn from the local address ip.
func connectFrom(dsn, ip string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	cfg.DialFunc = d.DialContext
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return pgx.ConnectConfig(ctx, cfg)
}

// TestLoginThrottle: many wrong passwords of one user from one address,
// sent over parallel connections, are checked no faster than the
// throttle's growing delay allows; the right password from another
// address is accepted at once meanwhile, and a success clears the pair.
func TestLoginThrottle(t *testing.T) {
	throttle := LoginThrottle{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond}
	ts := startServer(t, Config{Auth: AuthConfig{Method: AuthSCRAM, Users: map[string]string{"alice": "right"}},
		LoginThrottle: throttle, MaxConnections: 50})
	const workers, each = 8, 5
	began := time.Now()
	var failed atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := connectFrom(ts.dsn("alice", "wrong"), "127.0.0.1")
				var pe interface{ SQLState() string }
				if errorsAs(err, &pe) && pe.SQLState() == "28P01" {
					failed.Add(1)
				} else {
					t.Errorf("wrong password: %v", err)
				}
			}
		}()
	}
	// While the attempts queue, the right password from another address
	// is not delayed.
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	c, err := connectFrom(ts.dsn("alice", "right"), "127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("a login from another address took %s while the first was throttled", d)
	}
	wg.Wait()
	elapsed := time.Since(began)
	if failed.Load() != workers*each {
		t.Fatalf("%d of %d wrong passwords failed with 28P01", failed.Load(), workers*each)
	}
	// The first attempt of each worker arrives before any failure; from
	// then on checks are spaced by the delay, which has reached its
	// maximum after that many failures.
	least := time.Duration(workers*each-workers-1) * throttle.Max
	if elapsed < least*9/10 {
		t.Errorf("%d wrong passwords took %s, want at least %s", workers*each, elapsed, least)
	}
	// The right password from the throttled address gets in after its
	// turn, and clears the failures: the next login is not delayed.
	key := throttleKey{addr: "127.0.0.1", user: "alice"}
	if now := time.Now(); !ts.srv.throttle.reserve(key, now).After(now) {
		t.Fatal("the failures left no delay")
	}
	c, err = connectFrom(ts.dsn("alice", "right"), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
	if now := time.Now(); !ts.srv.throttle.reserve(key, now).Equal(now) {
		t.Error("a successful login left a delay")
	}
}

func TestLoginThrottleDelays(t *testing.T) {
	th := newLoginThrottle(LoginThrottle{Base: 10 * time.Millisecond, Max: 45 * time.Millisecond})
	k := throttleKey{"10.0.0.1", "u"}
	now := time.Unix(1000, 0)
	if at := th.reserve(k, now); !at.Equal(now) {
		t.Fatalf("first attempt waits until %v", at)
	}
	th.failed(k, now)
	// Three concurrent attempts after one failure queue 10ms apart.
	for i, want := range []time.Duration{10, 20, 30} {
		if at := th.reserve(k, now); at.Sub(now) != want*time.Millisecond {
			t.Errorf("attempt %d at +%s, want +%dms", i, at.Sub(now), want)
		}
	}
	for range 5 {
		th.failed(k, now)
	}
	if d := th.delay(6); d != 45*time.Millisecond {
		t.Errorf("delay after 6 failures = %s, want the maximum", d)
	}
	if at := th.reserve(throttleKey{"10.0.0.2", "u"}, now); !at.Equal(now) {
		t.Errorf("another address waits until %v", at)
	}
	th.succeeded(k)
	if at := th.reserve(k, now); !at.Equal(now) {
		t.Errorf("after a success the attempt waits until %v", at)
	}
}

// TestIdleConnectionsDoNotLockOut: 2,000 TCP connections that never send
// a startup packet hold no connection slot, and are closed at the
// authentication deadline; connections that stall inside authentication
// hold slots until that deadline only.
func TestIdleConnectionsDoNotLockOut(t *testing.T) {
	const timeout = time.Second
	ts := startServer(t, Config{MaxConnections: 5, AuthenticationTimeout: timeout,
		Auth: AuthConfig{Method: AuthSCRAM, Users: map[string]string{"alice": "pw"}}})
	idle := make([]net.Conn, 0, 2000)
	for range 2000 {
		nc, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, nc)
	}
	defer func() {
		for _, nc := range idle {
			nc.Close()
		}
	}()
	t0 := time.Now()
	c, err := connectErr(ts.dsn("alice", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
	if d := time.Since(t0); d > timeout {
		t.Errorf("connecting beside 2,000 idle sockets took %s", d)
	}
	// The idle sockets are closed at the deadline.
	_ = idle[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := idle[0].Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("an idle socket is still open after the deadline: read %d, %v", n, err)
	}

	// Five clients that start up and never answer the SASL challenge
	// take every slot, until the deadline.
	for range 5 {
		r := dialRawNoStartup(t, ts.addr)
		r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice"}})
		if _, ok := r.receive().(*pgproto3.AuthenticationSASL); !ok {
			t.Fatal("no SASL challenge")
		}
	}
	_, err = connectErr(ts.dsn("alice", "pw"))
	wantPgError(t, err, "53300", "sorry, too many clients already")
	t0 = time.Now()
	for {
		c, err := connectErr(ts.dsn("alice", "pw"))
		if err == nil {
			c.Close(context.Background())
			break
		}
		if time.Since(t0) > timeout+2*time.Second {
			t.Fatalf("still locked out %s after the stalled logins: %v", time.Since(t0), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSuperuserReservedConnections: the last slots are kept for
// superusers, with PostgreSQL's error for other roles.
func TestSuperuserReservedConnections(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 3, SuperuserReservedConnections: 1,
		Auth: AuthConfig{Method: AuthSCRAM, Users: map[string]string{"alice": "pw"}}})
	alice, err := connectErr(ts.dsn("alice", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close(context.Background())
	if _, err := alice.Exec(context.Background(), "CREATE ROLE bob LOGIN PASSWORD 'bobpw'"); err != nil {
		t.Fatal(err)
	}
	bob, err := connectErr(ts.dsn("bob", "bobpw"))
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close(context.Background())
	_, err = connectErr(ts.dsn("bob", "bobpw"))
	wantPgError(t, err, "53300", "remaining connection slots are reserved for roles with the SUPERUSER attribute")
	alice2, err := connectErr(ts.dsn("alice", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer alice2.Close(context.Background())
	_, err = connectErr(ts.dsn("alice", "pw"))
	wantPgError(t, err, "53300", "sorry, too many clients already")
}
