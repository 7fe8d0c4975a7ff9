package runtime

import (
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
)

// guard runs f, one statement's work, and turns a panic inside it into
// that statement's error: SQLSTATE XX000, "internal error: ..." with the
// panic's value, and as its detail the function that panicked. A fault in
// binding, planning or evaluating one statement then fails the statement
// (and, like any error, its transaction block), not the process that
// embeds the engine or serves its clients. The caller's usual error path
// rolls back what the statement wrote; locks are released by the defers
// that hold them. The engine's panic observer, if any, sees the panic
// with its stack.
func guard[T any](e *Engine, f func() (T, error)) (res T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			res, err = zero, panicError(r)
			if fn := e.onPanic.Load(); fn != nil {
				(*fn)(r, debug.Stack())
			}
		}
	}()
	return f()
}

// guarded is fn under guard, for the group committer, which runs the
// writes of autocommit statements on its own goroutine: a panic fails that
// statement alone, and the others of the group commit.
func (e *Engine) guarded(fn writeFunc) writeFunc {
	return func(st state.Store, w *epochWrite) (*catalog, error) {
		return guard(e, func() (*catalog, error) { return fn(st, w) })
	}
}

// OnPanic sets the function that sees every panic the engine recovers
// from in a statement (which then fails with XX000), with the stack where
// it happened: the server logs them. The last function set is called;
// nil removes it. fn must not block.
func (e *Engine) OnPanic(fn func(recovered any, stack []byte)) {
	if fn == nil {
		e.onPanic.Store(nil)
		return
	}
	e.onPanic.Store(&fn)
}

// panicError is the internal error of a recovered panic, called in the
// deferred function that recovered it.
func panicError(r any) error {
	e := errs.Newf(errs.Internal, "internal error: %v", r).(*errs.Error)
	if site := panicSite(); site != "" {
		e.Detail = "panic in " + site
	}
	return e
}

// panicSite names the function that panicked, with its file and line:
// the first frame below the runtime's panic machinery on the stack of the
// deferred function that recovered.
func panicSite() string {
	pcs := make([]uintptr, 64)
	frames := goruntime.CallersFrames(pcs[:goruntime.Callers(1, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return fmt.Sprintf("%s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}
