package rockstream

import (
	"context"
	"errors"
	"io"

	"github.com/rockstream/rockstream/internal/errs"
)

// Error is how a statement fails: the fields PostgreSQL's ErrorResponse
// carries, so that a program can act on the SQLSTATE as a driver's user
// would. Every error that Exec, Query, ExecEach, CopyFrom, CopyTo,
// Subscribe, Apply and a Batch's Insert, Delete and Upsert return is an
// *Error; read it with errors.As:
//
//	var e *rockstream.Error
//	if errors.As(err, &e) && e.SQLState == "23505" {
//		// the key is already there
//	}
//
// docs/errors.md lists the SQLSTATEs and RS codes. An error that did not
// come from the engine (one that ExecEach's fn or CopyTo's writer
// returned) has SQLSTATE XX000 and its own text, and stays reachable with
// errors.Is and errors.As through Unwrap; so does context.Canceled or
// context.DeadlineExceeded behind a canceled statement's 57014.
type Error struct {
	// SQLState is the PostgreSQL error code: 23505 for a unique
	// violation, 42601 for a syntax error, ...
	SQLState string
	// Code is RockStream's RS code for the SQLSTATE (RS23505, ...).
	Code string
	// Message is the primary message, as PostgreSQL words it.
	Message string
	// Detail and Hint, when set, are PostgreSQL's DETAIL and HINT.
	Detail, Hint string
	// Position is the 1-based character offset of the error in the SQL
	// text passed to the method, or 0 when the error has no place in it.
	Position int
	// Where is PostgreSQL's CONTEXT line (`COPY t, line 3, column b:
	// "x"`), or empty.
	Where string

	cause error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the error the statement failed with inside the engine.
func (e *Error) Unwrap() error { return e.cause }

// publicError returns err as an *Error, or nil for nil.
func publicError(err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	out := &Error{Message: err.Error(), cause: err}
	var e *errs.Error
	switch {
	case errors.As(err, &e):
		out.SQLState, out.Code = e.SQLState, string(e.Code)
		out.Detail, out.Hint, out.Position, out.Where = e.Detail, e.Hint, e.Position, e.Where
	case errors.Is(err, context.DeadlineExceeded):
		out.SQLState, out.Code = "57014", string(errs.QueryCanceled)
		out.Message = "canceling statement due to statement timeout"
	case errors.Is(err, context.Canceled):
		out.SQLState, out.Code = "57014", string(errs.QueryCanceled)
		out.Message = "canceling statement due to user request"
	default:
		out.SQLState, out.Code = "XX000", string(errs.Internal)
	}
	return out
}

// streamError is publicError for Subscription.Next, whose end (io.EOF)
// and whose ctx ending are not failures and come back as they are.
func streamError(ctx context.Context, err error) error {
	if err == io.EOF || (ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return err
	}
	return publicError(err)
}
