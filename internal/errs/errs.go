// Package errs defines RockStream's error values: every error a user can see
// carries an RS code, a PostgreSQL SQLSTATE and a message that says what
// happened and, where it helps, what to do next.
//
// Errors are created with New or Newf from a Code; the gateway and the CLI
// read the SQLSTATE with SQLState and print the message unchanged. Wrapping
// with fmt.Errorf("...: %w") keeps the code reachable through errors.As.
package errs

import (
	"errors"
	"fmt"
)

// Code names one kind of failure. Its SQLSTATE is fixed by the table in
// codes.go, which is the single source of truth for both.
type Code string

// Error is an error with an RS code and SQLSTATE.
type Error struct {
	Code     Code
	SQLState string
	Message  string
	// Position is the 1-based character offset into the statement text the
	// error refers to, or 0 when unknown.
	Position int
	// Detail and Hint, when set, add a secondary message and a suggestion
	// (PostgreSQL's DETAIL and HINT fields).
	Detail, Hint string
	// Where says where in the work the error arose, as PostgreSQL's
	// CONTEXT line does (`COPY t, line 3, column b: "x"`); empty when
	// the message says it all. The gateway sends it as the ErrorResponse's
	// Where field.
	Where string
}

func (e *Error) Error() string { return e.Message }

// New returns an error of the given code with a fixed message.
func New(code Code, msg string) error {
	return &Error{Code: code, SQLState: sqlstateOf(code), Message: msg}
}

// Newf returns an error of the given code with a formatted message.
func Newf(code Code, format string, args ...any) error {
	return New(code, fmt.Sprintf(format, args...))
}

// WithPosition returns err with its statement position set, when err is an
// *Error without one.
func WithPosition(err error, pos int) error {
	var e *Error
	if errors.As(err, &e) && e.Position == 0 && pos > 0 {
		c := *e
		c.Position = pos
		return &c
	}
	return err
}

// WithWhere returns err with its context line set, when err is an *Error
// without one; other errors are returned unchanged.
func WithWhere(err error, where string) error {
	var e *Error
	if errors.As(err, &e) && e.Where == "" && where != "" {
		c := *e
		c.Where = where
		return &c
	}
	return err
}

// SQLState returns the SQLSTATE of err, or XX000 (internal error) when err
// carries none.
func SQLState(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.SQLState
	}
	return "XX000"
}

// CodeOf returns the RS code of err, or the empty code.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
