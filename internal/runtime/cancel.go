package runtime

import (
	"context"
	"errors"

	"github.com/rockstream/rockstream/internal/errs"
)

// Why a statement stopped before its end, in PostgreSQL's words. A caller
// that cancels a statement's context passes one of these as the cause
// (context.WithCancelCause, context.WithDeadlineCause), and the statement
// fails with it; any other *errs.Error given as the cause is reported as
// it is (the gateway's "terminating connection due to administrator
// command" at shutdown, say).
var (
	// ErrCanceledByUser is the cause for a client's cancel request, and
	// what a statement reports when its context was canceled without an
	// *errs.Error cause.
	ErrCanceledByUser = errs.New(errs.QueryCanceled, "canceling statement due to user request")
	// ErrStatementTimeout is the cause for statement_timeout, and what a
	// statement reports when its context's deadline passed without an
	// *errs.Error cause.
	ErrStatementTimeout = errs.New(errs.QueryCanceled, "canceling statement due to statement timeout")
)

// canceledError is a statement stopped because its context ended. It
// reads as its cause, which carries the SQLSTATE, and still matches the
// context's own error (context.Canceled or context.DeadlineExceeded)
// under errors.Is, so that a caller recognises its own cancellation.
type canceledError struct {
	cause  error
	ctxErr error
}

func (e *canceledError) Error() string   { return e.cause.Error() }
func (e *canceledError) Unwrap() []error { return []error{e.cause, e.ctxErr} }

// canceled returns the error of a statement whose context ctx has ended.
func canceled(ctx context.Context) error {
	cause := context.Cause(ctx)
	var e *errs.Error
	switch {
	case errors.As(cause, &e):
	case errors.Is(cause, context.DeadlineExceeded):
		cause = ErrStatementTimeout
	default:
		cause = ErrCanceledByUser
	}
	return &canceledError{cause: cause, ctxErr: ctx.Err()}
}

// statementError returns err, except that the error of ctx ending (which
// evaluation returns unwrapped, and which layers may have wrapped) becomes
// the cancellation's error.
func statementError(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	var ce *canceledError
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return canceled(ctx)
	}
	return err
}
