package gateway

import (
	"net"
	"sync"
	"time"
)

// LoginThrottle configures how failed logins slow down the next ones.
//
// After n consecutive failures of one user from one address (the IP, not
// the port), the next password from that pair is checked no sooner than
// Base·2^(n-1), at most Max, after the previous check: concurrent
// attempts queue behind each other, so the pair's rate of checked
// passwords is bounded however many connections it opens. A success
// clears the pair; a pair unseen for Forget is forgotten. Other pairs,
// including the same user from another address, are not delayed.
type LoginThrottle struct {
	Base, Max, Forget time.Duration
}

// Defaults of LoginThrottle.
const (
	defaultThrottleBase   = 100 * time.Millisecond
	defaultThrottleMax    = 5 * time.Second
	defaultThrottleForget = 10 * time.Minute
)

// loginThrottle holds the failures of each (address, user) pair.
type loginThrottle struct {
	cfg LoginThrottle
	mu  sync.Mutex
	// pairs is keyed by address and user.
	pairs map[throttleKey]*throttlePair
	// sweepAt is the size of pairs at which forgotten pairs are removed.
	sweepAt int
}

type throttleKey struct{ addr, user string }

type throttlePair struct {
	failures int
	// next is the earliest time the pair's next password is checked.
	next time.Time
	// seen is the last time the pair was checked.
	seen time.Time
}

func newLoginThrottle(cfg LoginThrottle) *loginThrottle {
	if cfg.Base <= 0 {
		cfg.Base = defaultThrottleBase
	}
	if cfg.Max <= 0 {
		cfg.Max = defaultThrottleMax
	}
	if cfg.Max < cfg.Base {
		cfg.Max = cfg.Base
	}
	if cfg.Forget <= 0 {
		cfg.Forget = defaultThrottleForget
	}
	return &loginThrottle{cfg: cfg, pairs: map[throttleKey]*throttlePair{}, sweepAt: 1024}
}

// delay is the spacing of checks after n consecutive failures.
func (t *loginThrottle) delay(n int) time.Duration {
	d := t.cfg.Base
	for i := 1; i < n && d < t.cfg.Max; i++ {
		d *= 2
	}
	return min(d, t.cfg.Max)
}

func throttleKeyOf(addr net.Addr, user string) throttleKey {
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return throttleKey{addr: host, user: user}
}

// reserve returns when the pair's next password may be checked, and books
// that time, so that the attempt after it waits one delay more.
func (t *loginThrottle) reserve(k throttleKey, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pairs[k]
	if p == nil || p.failures == 0 {
		return now
	}
	at := now
	if p.next.After(at) {
		at = p.next
	}
	p.next = at.Add(t.delay(p.failures))
	p.seen = at
	return at
}

// failed records a failed check of the pair at now.
func (t *loginThrottle) failed(k throttleKey, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pairs[k]
	if p == nil {
		if len(t.pairs) >= t.sweepAt {
			t.sweepLocked(now)
		}
		p = &throttlePair{}
		t.pairs[k] = p
	}
	p.failures++
	if next := now.Add(t.delay(p.failures)); next.After(p.next) {
		p.next = next
	}
	p.seen = now
}

// succeeded clears the pair's failures.
func (t *loginThrottle) succeeded(k throttleKey) {
	t.mu.Lock()
	delete(t.pairs, k)
	t.mu.Unlock()
}

// sweepLocked forgets the pairs unseen for Forget, and makes the next
// sweep wait until the map has doubled.
func (t *loginThrottle) sweepLocked(now time.Time) {
	for k, p := range t.pairs {
		if now.Sub(p.seen) > t.cfg.Forget && now.After(p.next) {
			delete(t.pairs, k)
		}
	}
	t.sweepAt = max(1024, 2*len(t.pairs))
}
