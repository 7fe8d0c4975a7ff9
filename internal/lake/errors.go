package lake

import (
	"errors"
	"fmt"

	"github.com/rockstream/rockstream/internal/errs"
)

// sqlError is an error the client sees as an ErrorResponse: a SQLSTATE,
// PostgreSQL's message and, where PostgreSQL gives one, a detail.
type sqlError struct {
	code   string
	msg    string
	detail string
}

func (e *sqlError) Error() string { return e.msg }

func errorf(code, format string, args ...any) *sqlError {
	return &sqlError{code: code, msg: fmt.Sprintf(format, args...)}
}

// SQLSTATEs RockLake answers with.
const (
	codeUnsupported       = "0A000" // a statement outside the recognized set
	codeSyntax            = "42601"
	codeUndefinedTable    = "42P01"
	codeUndefinedColumn   = "42703"
	codeDuplicateTable    = "42P07"
	codeDatatypeMismatch  = "42804"
	codeUniqueViolation   = "23505"
	codeNotNullViolation  = "23502"
	codeInFailedTxn       = "25P02"
	codeSerialization     = "40001"
	codeProtocolViolation = "08P01"
	codeBadCopyFormat     = "22P04"
	codeInternal          = "XX000"
	codeDataCorrupted     = "XX001"
)

// errUnsupported is the refusal of a statement RockLake does not
// recognize; what names the statement.
func errUnsupported(what string) *sqlError {
	return errorf(codeUnsupported, "%s%s", unsupportedPrefix, what)
}

const unsupportedPrefix = "RockLake does not support this statement: "

// asSQLError turns any error into the one the client sees; errors that
// are not already a sqlError are internal (XX000).
func asSQLError(err error) *sqlError {
	var se *sqlError
	if errors.As(err, &se) {
		return se
	}
	if errors.Is(err, ErrCorrupted) {
		return &sqlError{code: codeDataCorrupted, msg: err.Error()}
	}
	// Storage errors carry their SQLSTATE (damaged files are XX001).
	return &sqlError{code: errs.SQLState(err), msg: err.Error()}
}

// ErrCorrupted marks a stored record that failed its checks: the store
// refuses to use it (fail closed).
var ErrCorrupted = errors.New("lake: stored record failed its check")
