package lake

import "sync"

// keyLocks makes a writer wait, as PostgreSQL does, when it inserts a
// primary key that another open transaction has inserted and not yet
// committed: the waiter goes on when that transaction ends, and then
// fails with 23505 if it committed the key, or takes the key if it
// rolled back. A wait that would close a cycle fails at once with
// 40P01 (PostgreSQL finds the same deadlock after deadlock_timeout,
// possibly choosing the other transaction as the victim).
//
// Lock order: keyLocks.mu is never held while waiting, nor together
// with Store.mu.
type keyLocks struct {
	mu struct {
		sync.Mutex
		// held maps a pkKey to the transaction that inserted it.
		held map[string]*txn
	}
}

// lockState is a transaction's part of keyLocks, guarded by keyLocks.mu.
type lockState struct {
	keys []string
	// waitingFor is the transaction this one waits for, if any.
	waitingFor *txn
	// done is closed when the transaction ends.
	done     chan struct{}
	released bool
}

var errDeadlock = &sqlError{code: "40P01", msg: "deadlock detected",
	detail: "Two transactions inserted each other's primary keys; this one was chosen to fail."}

// acquire takes key for x, waiting while another open transaction holds
// it; it returns whether it had to wait (the caller then checks the
// committed state again). A cancel request for x's session ends the
// wait with 57014.
func (l *keyLocks) acquire(x *txn, key string) (waited bool, err error) {
	for {
		l.mu.Lock()
		if l.mu.held == nil {
			l.mu.held = map[string]*txn{}
		}
		h := l.mu.held[key]
		if h == nil || h == x {
			if h == nil {
				l.mu.held[key] = x
				x.locks.keys = append(x.locks.keys, key)
			}
			l.mu.Unlock()
			return waited, nil
		}
		for w := h; w != nil; w = w.locks.waitingFor {
			if w == x {
				l.mu.Unlock()
				return waited, errDeadlock
			}
		}
		x.locks.waitingFor = h
		done := h.locks.done
		l.mu.Unlock()
		var canceled bool
		select {
		case <-done:
		case <-x.intr.done():
			canceled = true
		}
		l.mu.Lock()
		x.locks.waitingFor = nil
		l.mu.Unlock()
		if canceled {
			return waited, errCanceled
		}
		waited = true
	}
}

// release frees every key x holds and wakes its waiters; idempotent.
func (l *keyLocks) release(x *txn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if x.locks.released {
		return
	}
	x.locks.released = true
	for _, k := range x.locks.keys {
		if l.mu.held[k] == x {
			delete(l.mu.held, k)
		}
	}
	x.locks.keys = nil
	close(x.locks.done)
}

// releaseKey frees one key x acquired but will not insert.
func (l *keyLocks) releaseKey(x *txn, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.held[key] != x {
		return
	}
	delete(l.mu.held, key)
	for i, k := range x.locks.keys {
		if k == key {
			x.locks.keys = append(x.locks.keys[:i:i], x.locks.keys[i+1:]...)
			break
		}
	}
}
