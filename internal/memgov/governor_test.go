package memgov

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// fakeGovernor returns a governor with a limit of limit bytes whose
// resident set is rss's value, without the sampler.
func fakeGovernor(limit int64, rss *atomic.Int64) *Governor {
	g := New(func() int64 { return rss.Load() })
	g.limit.Store(limit)
	return g
}

func oomCause(ctx context.Context) bool {
	var e *errs.Error
	return ctx.Err() != nil && errors.As(context.Cause(ctx), &e) && e.SQLState == "53200"
}

func TestPressureStopsLargestAccount(t *testing.T) {
	var rss atomic.Int64
	rss.Store(10 << 20)
	g := fakeGovernor(100<<20, &rss)
	bigCtx, big := g.Open(context.Background(), 0)
	smallCtx, small := g.Open(context.Background(), 0)
	defer big.Close()
	defer small.Close()
	big.Charge(20 << 20)
	small.Charge(2 << 20)
	if bigCtx.Err() != nil || smallCtx.Err() != nil {
		t.Fatal("a statement was stopped below the limit")
	}
	if got := g.Reserved(); got != 22<<20 {
		t.Fatalf("reserved %d, want %d", got, 22<<20)
	}
	// Past PressureFraction of the limit, the small account's next
	// charge stops the big one, not itself.
	rss.Store(95 << 20)
	small.Charge(CheckBytes)
	if !oomCause(bigCtx) {
		t.Fatalf("the largest statement was not stopped with 53200: %v", context.Cause(bigCtx))
	}
	if smallCtx.Err() != nil {
		t.Fatal("the small statement was stopped too")
	}
	if err := big.Grow(1); errs.SQLState(err) != "53200" {
		t.Fatalf("Grow on a stopped account: %v", err)
	}
	if g.Stopped() != 1 {
		t.Fatalf("stopped %d, want 1", g.Stopped())
	}
}

func TestChargesBelowCheckBytesDoNotLook(t *testing.T) {
	var rss atomic.Int64
	rss.Store(15 << 20)
	g := fakeGovernor(16<<20, &rss)
	ctx, a := g.Open(context.Background(), 0)
	defer a.Close()
	a.Charge(CheckBytes / 2)
	if ctx.Err() != nil {
		t.Fatal("a charge below CheckBytes looked at the limit")
	}
	a.Charge(CheckBytes / 2)
	if !oomCause(ctx) {
		t.Fatal("the charge that reached CheckBytes did not stop the statement under pressure")
	}
}

func TestSmallAccountsAreNotBlamed(t *testing.T) {
	var rss atomic.Int64
	rss.Store(99 << 20)
	g := fakeGovernor(100<<20, &rss)
	ctx, a := g.Open(context.Background(), 0)
	defer a.Close()
	a.Charge(2 * CheckBytes) // less than 1/32 of the limit
	if ctx.Err() != nil {
		t.Fatal("a statement holding 2MB of a 100MB limit was stopped")
	}
	a.Charge(2 * CheckBytes)
	if !oomCause(ctx) {
		t.Fatal("a statement holding 4MB of a 100MB limit under pressure was not stopped")
	}
}

func TestNoLimitNeverStops(t *testing.T) {
	var rss atomic.Int64
	rss.Store(1 << 40)
	g := fakeGovernor(0, &rss)
	ctx, a := g.Open(context.Background(), 0)
	defer a.Close()
	a.Charge(1 << 30)
	if err := a.Reserve(1 << 30); err != nil || ctx.Err() != nil {
		t.Fatalf("stopped without a limit: %v %v", err, ctx.Err())
	}
	if err := g.AdmitParse(1 << 30); err != nil {
		t.Fatal(err)
	}
}

func TestReserveRefusesOnlyItself(t *testing.T) {
	var rss atomic.Int64
	rss.Store(50 << 20)
	g := fakeGovernor(100<<20, &rss)
	otherCtx, other := g.Open(context.Background(), 0)
	defer other.Close()
	other.Charge(30 << 20)
	ctx, a := g.Open(context.Background(), 0)
	defer a.Close()
	if err := a.Reserve(30 << 20); err != nil {
		t.Fatalf("a reservation within the limit failed: %v", err)
	}
	rss.Store(80 << 20) // the first reservation's memory, allocated
	err := a.Reserve(20 << 20)
	if errs.SQLState(err) != "53200" {
		t.Fatalf("a reservation past the limit: %v", err)
	}
	if otherCtx.Err() != nil || ctx.Err() != nil {
		t.Fatal("a refused reservation stopped a statement")
	}
	if a.Used() != 30<<20 {
		t.Fatalf("a refused reservation was charged: used %d", a.Used())
	}
}

func TestCloseReturnsCharges(t *testing.T) {
	var rss atomic.Int64
	g := fakeGovernor(100<<20, &rss)
	ctx, a := g.Open(context.Background(), 4<<20)
	if a.WorkMem() != 4<<20 || From(ctx) != a {
		t.Fatal("the account is not the context's, with its work_mem")
	}
	Charge(ctx, 5<<20)
	a.Close()
	a.Close()
	if g.Reserved() != 0 || g.largest() != nil {
		t.Fatalf("a closed account still holds %d bytes", g.Reserved())
	}
	if ctx.Err() == nil {
		t.Fatal("closing the account did not end its context")
	}
	var none *Account
	none.Charge(1)
	if none.Grow(1) != nil || none.Reserve(1<<30) != nil || none.Used() != 0 {
		t.Fatal("a nil account is not inert")
	}
}

func TestAdmitParse(t *testing.T) {
	var rss atomic.Int64
	rss.Store(40 << 20)
	g := fakeGovernor(256<<20, &rss)
	if err := g.AdmitParse(10 << 20); err != nil {
		t.Fatalf("a 10MB statement under a 256MB limit: %v", err)
	}
	err := g.AdmitParse(60 << 20)
	var e *errs.Error
	if !errors.As(err, &e) || e.SQLState != "53200" || e.Detail == "" || e.Hint == "" {
		t.Fatalf("a 60MB statement under a 256MB limit: %#v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		4 << 20: "4MB", 64 << 10: "64kB", 3 << 30: "3GB", 1536 << 10: "1.5MB", 12342042 << 10: "11.8GB",
		1<<20 + 1: "1.0MB", 100: "100B",
	} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestWithCancelStopsThroughTheStatement checks an account opened under
// a context marked by WithCancel: the governor stops the statement
// through the mark's function (the marked context itself ends, with
// 53200), and closing an account leaves the statement's context alone.
func TestWithCancelStopsThroughTheStatement(t *testing.T) {
	var rss atomic.Int64
	rss.Store(10 << 20)
	g := fakeGovernor(100<<20, &rss)

	stmt, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	marked := WithCancel(stmt, cancel)
	ctx, a := g.Open(marked, 0)
	if From(ctx) != a {
		t.Fatal("the account is not the context's")
	}
	a.Charge(1 << 20)
	a.Close()
	if stmt.Err() != nil {
		t.Fatal("closing an account canceled the statement's context")
	}
	if g.Reserved() != 0 {
		t.Fatalf("reserved %d after Close", g.Reserved())
	}

	// A second account of the same statement, past the limit.
	ctx, a = g.Open(marked, 0)
	defer a.Close()
	rss.Store(95 << 20)
	a.Charge(20 << 20)
	if !oomCause(stmt) || !oomCause(ctx) {
		t.Fatalf("the statement was not stopped with 53200: %v", context.Cause(stmt))
	}

	// Without the mark, Open derives a context of its own, which Close
	// ends and the caller's does not see.
	plain, plainCancel := context.WithCancelCause(context.Background())
	defer plainCancel(nil)
	own, b := g.Open(plain, 0)
	b.Close()
	if own.Err() == nil || plain.Err() != nil {
		t.Fatalf("Close: the account's context err %v, the caller's %v", own.Err(), plain.Err())
	}
}

// TestLargestAmongManyAccounts opens and closes accounts in an order
// that unlinks the first, a middle and the last of the governor's list,
// and checks that the largest open one is still the one stopped.
func TestLargestAmongManyAccounts(t *testing.T) {
	var rss atomic.Int64
	rss.Store(10 << 20)
	g := fakeGovernor(100<<20, &rss)
	var ctxs []context.Context
	var accts []*Account
	for i := range 6 {
		ctx, a := g.Open(context.Background(), 0)
		a.Charge(int64(i+4) << 20)
		ctxs, accts = append(ctxs, ctx), append(accts, a)
	}
	// The newest is the list's head, the oldest its tail.
	for _, i := range []int{5, 2, 0} {
		accts[i].Close()
	}
	if got, want := g.Reserved(), int64(5+7+8)<<20; got != want {
		t.Fatalf("reserved %d, want %d", got, want)
	}
	rss.Store(95 << 20)
	accts[1].Charge(CheckBytes)
	if !oomCause(ctxs[4]) {
		t.Fatalf("the largest open account was not stopped: %v", context.Cause(ctxs[4]))
	}
	for _, i := range []int{1, 3} {
		if ctxs[i].Err() != nil {
			t.Fatalf("account %d was stopped too", i)
		}
	}
	for _, i := range []int{1, 3, 4} {
		accts[i].Close()
	}
	if g.mu.accounts != nil || g.Reserved() != 0 {
		t.Fatal("accounts left open after every Close")
	}
}
