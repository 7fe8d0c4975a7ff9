package memgov

import (
	"context"
	"fmt"
	"math"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

const (
	// CheckBytes is how much an account grows between its looks at the
	// limit.
	CheckBytes = 1 << 20
	// PressureFraction of the limit is the resident set past which the
	// largest account is stopped: the rest is headroom for the growth
	// between two looks.
	PressureFraction = 0.9
	// SoftFraction of the limit, less what the process holds outside the
	// Go heap, is the Go runtime's soft memory limit, under which it
	// collects garbage as often as it must. It is close to
	// PressureFraction: between the two the collector works hard, and a
	// statement that keeps growing there is better stopped soon.
	SoftFraction = 0.85
	// SampleInterval is how often the sampler reads the resident set.
	SampleInterval = 5 * time.Millisecond
)

// Governor holds the process's memory limit and the open accounts.
type Governor struct {
	limit atomic.Int64 // bytes; 0: no limit
	// reserved is the sum of the open accounts' charges.
	reserved atomic.Int64
	// stopped counts the accounts stopped for memory.
	stopped atomic.Int64
	// rss reads the resident set in bytes (0: unknown).
	rss func() int64
	// relieved is when memory was last returned to the system
	// (UnixNano), so that a stream of charges under pressure collects
	// garbage at most once per reliefInterval.
	relieved atomic.Int64

	mu struct {
		sync.Mutex
		// accounts lists the open accounts, linked through their
		// prev and next (an account opens and closes with every
		// statement: no hashing, no allocation).
		accounts *Account
		// sampling is true while the sampler goroutine runs.
		sampling bool
	}
}

// New returns a governor with no limit, reading the resident set with
// rss (nil: the process's, from /proc).
func New(rss func() int64) *Governor {
	if rss == nil {
		rss = ProcessRSS
	}
	return &Governor{rss: rss}
}

var process = New(nil)

// Process returns the process's governor.
func Process() *Governor { return process }

// SetLimit sets the memory limit in bytes (0: none) and the Go runtime's
// soft limit to SoftFraction of it, and starts the sampler.
func (g *Governor) SetLimit(n int64) {
	g.limit.Store(n)
	if n > 0 {
		// The resident set holds more than the Go runtime's memory
		// (the program's text, the parser's and the storage's C
		// allocations): the soft limit leaves room for what it holds now.
		soft := int64(float64(n)*SoftFraction) - max(0, g.rss()-goMemory())
		debug.SetMemoryLimit(max(soft, n/4))
	} else {
		debug.SetMemoryLimit(math.MaxInt64)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if n > 0 && !g.mu.sampling {
		g.mu.sampling = true
		go g.sample()
	}
}

type cancelKey struct{}

// WithCancel marks ctx as canceled by cancel, the function that cancels
// ctx itself with a cause: a statement's context, which its caller
// cancels when the statement ends. Accounts opened under it stop their
// statement through cancel, so that opening one derives no context (a
// cancelable context costs a registration with its parent and a
// channel), and closing one leaves ctx alone. A statement that opens
// several accounts (one per piece of a streamed result) is stopped whole
// by any of them.
func WithCancel(ctx context.Context, cancel context.CancelCauseFunc) context.Context {
	return context.WithValue(ctx, cancelKey{}, cancel)
}

// Limit returns the memory limit in bytes (0: none).
func (g *Governor) Limit() int64 { return g.limit.Load() }

// Reserved returns the sum of the open accounts' charges.
func (g *Governor) Reserved() int64 { return g.reserved.Load() }

// Stopped returns how many statements were stopped for memory.
func (g *Governor) Stopped() int64 { return g.stopped.Load() }

// Open opens an account for a statement running under ctx with a budget
// of workMem bytes for each of its operators that spill (0: none). The
// statement runs under the returned context, which the governor cancels
// when it stops the statement; Close the account when the statement ends.
// Under a context marked by WithCancel the governor stops the statement
// through the mark's function and Open derives no cancelable context.
func (g *Governor) Open(ctx context.Context, workMem int64) (context.Context, *Account) {
	ac := &accountContext{}
	a := &ac.acct
	a.gov, a.workMem = g, workMem
	if cancel, ok := ctx.Value(cancelKey{}).(context.CancelCauseFunc); ok {
		a.cancel = cancel
	} else {
		ctx, a.cancel = context.WithCancelCause(ctx)
		a.own = true
	}
	ac.Context = ctx
	ctx = ac
	g.mu.Lock()
	if a.next = g.mu.accounts; a.next != nil {
		a.next.prev = a
	}
	g.mu.accounts = a
	g.mu.Unlock()
	return ctx, a
}

// check looks at the limit after a's growth: a past the limit is
// stopped; the process past PressureFraction of it stops its largest
// account.
func (g *Governor) check(a *Account) {
	limit := g.limit.Load()
	if limit <= 0 {
		return
	}
	// What the statements hold past the line is past it whatever the
	// resident set shows yet: the set lags behind a fast-growing
	// statement when the sampler and the collector are starved of CPU.
	if g.reserved.Load() > int64(float64(limit)*PressureFraction) || g.pressed(limit) {
		if v := g.largest(); v != nil {
			g.stop(v)
		}
	}
}

// reliefInterval is the least time between two garbage collections the
// governor forces.
const reliefInterval = 100 * time.Millisecond

// pressed reports whether the resident set is past PressureFraction of
// limit even after the garbage is collected and returned to the system
// (which it does at most once per reliefInterval).
func (g *Governor) pressed(limit int64) bool { return !g.fits(0, limit) }

// fits reports whether n more bytes keep the resident set within
// PressureFraction of limit, collecting the garbage first (at most once
// per reliefInterval) when they do not at once.
func (g *Governor) fits(n, limit int64) bool {
	line := int64(float64(limit) * PressureFraction)
	if g.rss()+n <= line {
		return true
	}
	now := time.Now().UnixNano()
	if last := g.relieved.Load(); now-last < int64(reliefInterval) || !g.relieved.CompareAndSwap(last, now) {
		return false
	}
	debug.FreeOSMemory()
	return g.rss()+n <= line
}

// minVictimShare of the limit is the least an account must hold to be
// stopped: the memory of a process whose statements hold less is not
// theirs to give back.
const minVictimShare = 32

// largest returns the open account that holds the most memory, nil when
// none holds at least 1/minVictimShare of the limit.
func (g *Governor) largest() *Account {
	g.mu.Lock()
	defer g.mu.Unlock()
	var best *Account
	most := g.limit.Load()/minVictimShare - 1
	for a := g.mu.accounts; a != nil; a = a.next {
		if a.stopped.Load() {
			continue
		}
		if u := a.used.Load(); u > most {
			best, most = a, u
		}
	}
	return best
}

// stop stops a's statement with the out-of-memory error.
func (g *Governor) stop(a *Account) {
	if a.stopped.Swap(true) {
		return
	}
	g.stopped.Add(1)
	a.cancel(OutOfMemory(a.used.Load(), g.limit.Load()))
}

// sample watches the resident set while a limit is set.
func (g *Governor) sample() {
	t := time.NewTicker(SampleInterval)
	defer t.Stop()
	for range t.C {
		limit := g.limit.Load()
		if limit <= 0 {
			g.mu.Lock()
			g.mu.sampling = false
			g.mu.Unlock()
			return
		}
		// Memory already released is not the statements' doing: pressed
		// collects it first.
		if g.reserved.Load() == 0 || !g.pressed(limit) {
			continue
		}
		if v := g.largest(); v != nil {
			g.stop(v)
		}
	}
}

// OutOfMemory is the error of a statement stopped holding used bytes
// under a process limit of limit bytes.
func OutOfMemory(used, limit int64) error {
	return &errs.Error{Code: errs.OutOfMemory, SQLState: "53200", Message: "out of memory",
		Detail: fmt.Sprintf("The statement held about %s when the server reached its memory limit of %s (--memory-limit).",
			FormatBytes(used), FormatBytes(limit)),
		Hint: "Raise the server's --memory-limit, or make the query need less memory."}
}

// goMemory returns what the Go runtime holds from the system and has not
// returned.
func goMemory() int64 {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return int64(ms.Sys - ms.HeapReleased)
}

// ProcessRSS returns the process's resident set in bytes, from
// /proc/self/statm (0 where it cannot be read).
func ProcessRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// ParseBytesPerByte is what parsing a statement takes per byte of its
// text, measured: PostgreSQL's parser copies a literal several times
// over, and the parse tree is handed over as a serialized copy.
const ParseBytesPerByte = 8

// AdmitParse fails with the out-of-memory error when parsing a statement
// of n bytes would take the process past PressureFraction of its limit.
// The parser's memory is outside the Go heap, where no charge can stop
// it, so the statement is refused before it is parsed.
func (g *Governor) AdmitParse(n int64) error {
	limit := g.limit.Load()
	if limit <= 0 || n < CheckBytes {
		return nil
	}
	need := n * ParseBytesPerByte
	if g.fits(need, limit) {
		return nil
	}
	e := OutOfMemory(need, limit).(*errs.Error)
	e.Detail = fmt.Sprintf("Parsing a statement of %s needs about %s, more than the server's memory limit of %s (--memory-limit) leaves.",
		FormatBytes(n), FormatBytes(need), FormatBytes(limit))
	return e
}
