package memgov

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// Account is one statement's memory: what it has charged, and the
// context the governor cancels to stop it. Its methods may be called
// from any goroutine, and on a nil *Account (a context without one),
// where they do nothing.
type Account struct {
	gov    *Governor
	cancel context.CancelCauseFunc
	// own is set when cancel is of a context Open derived, which Close
	// ends; else it is the statement's own (WithCancel).
	own     bool
	workMem int64
	used    atomic.Int64
	// sinceCheck is the growth since the last look at the limit.
	sinceCheck atomic.Int64
	stopped    atomic.Bool
	closed     atomic.Bool
	// prev and next link the governor's open accounts (gov.mu).
	prev, next *Account
}

type accountKey struct{}

// accountContext is the context Open returns: its parent's, with the
// account as the value of accountKey (From), in one allocation with the
// account.
type accountContext struct {
	context.Context
	acct Account
}

// Value implements context.Context.
func (c *accountContext) Value(key any) any {
	if key == (accountKey{}) {
		return &c.acct
	}
	return c.Context.Value(key)
}

// From returns the account ctx's statement charges (nil: none).
func From(ctx context.Context) *Account {
	a, _ := ctx.Value(accountKey{}).(*Account)
	return a
}

// Charge charges n bytes (n < 0 returns them) to ctx's account.
func Charge(ctx context.Context, n int64) { From(ctx).Charge(n) }

// Charge charges n bytes to the account (n < 0 returns them). When that
// takes the account or the process past the limit, a statement is
// stopped (the package doc says which); Charge itself goes on, and the
// statement stops where it next looks at its context.
func (a *Account) Charge(n int64) {
	if a == nil || n == 0 || a.closed.Load() {
		return
	}
	a.used.Add(n)
	a.gov.reserved.Add(n)
	if n > 0 && a.sinceCheck.Add(n) >= CheckBytes {
		a.sinceCheck.Store(0)
		a.gov.check(a)
	}
}

// Grow is Charge that also returns the out-of-memory error when the
// statement has been stopped, for a caller that can fail at once.
func (a *Account) Grow(n int64) error {
	if a == nil {
		return nil
	}
	a.Charge(n)
	if a.stopped.Load() {
		return OutOfMemory(a.used.Load(), a.gov.limit.Load())
	}
	return nil
}

// Used returns the bytes charged and not returned.
func (a *Account) Used() int64 {
	if a == nil {
		return 0
	}
	return a.used.Load()
}

// WorkMem returns the statement's budget per spilling operator in bytes
// (0: none, nor for a nil account).
func (a *Account) WorkMem() int64 {
	if a == nil {
		return 0
	}
	return a.workMem
}

// Close returns the account's charges and forgets it. Closing twice does
// nothing.
func (a *Account) Close() {
	if a == nil || a.closed.Swap(true) {
		return
	}
	a.gov.reserved.Add(-a.used.Load())
	a.gov.mu.Lock()
	if a.prev != nil {
		a.prev.next = a.next
	} else {
		a.gov.mu.accounts = a.next
	}
	if a.next != nil {
		a.next.prev = a.prev
	}
	a.prev, a.next = nil, nil
	a.gov.mu.Unlock()
	if a.own {
		a.cancel(nil)
	}
	if a.stopped.Load() {
		// What the stopped statement held is garbage now: return it to
		// the system before its statement reports the error, so that
		// the next statement is not blamed for it.
		debug.FreeOSMemory()
		a.gov.relieved.Store(time.Now().UnixNano())
	}
}

// Reserve charges n bytes that the statement is about to allocate at
// once, failing with the out-of-memory error (and charging nothing)
// when they would take the process past PressureFraction of its limit.
// Unlike Charge, it stops only its own statement: it is for one large
// allocation whose size is known before it is made (a huge field, the
// copies a wide row's write makes).
func (a *Account) Reserve(n int64) error {
	if a == nil {
		return nil
	}
	if err := a.Fits(n); err != nil {
		return err
	}
	return a.Grow(n)
}

// Fits fails with the out-of-memory error when n more bytes would take
// the process past PressureFraction of its limit, and charges nothing:
// for a caller that knows what a growing structure will need in all.
func (a *Account) Fits(n int64) error {
	if a == nil {
		return nil
	}
	if limit := a.gov.limit.Load(); limit > 0 && n >= CheckBytes && !a.gov.fits(n, limit) {
		e := OutOfMemory(a.used.Load(), limit).(*errs.Error)
		e.Detail = fmt.Sprintf("The statement needed about %s more than the server's memory limit of %s (--memory-limit) leaves.",
			FormatBytes(n), FormatBytes(limit))
		return e
	}
	return nil
}
