package storage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// ErrFailed is wrapped by every error a DB returns after a commit failed.
var ErrFailed = errors.New("storage: the database stopped after a failed commit")

// ErrClosed is returned by a DB or Snapshot used after Close.
var ErrClosed = errs.New(errs.Internal, "storage: the database is closed")

// adviceCorrupted ends every DataCorrupted message.
const adviceCorrupted = "restore the shard from a checkpoint (`rockstream checkpoint restore`), or run `rockstream doctor` to see what else is damaged"

// codedError is an errs.Error that also wraps the error that caused it, so
// that errors.Is sees both the RS code and the cause (an injected fault, a
// Pebble corruption marker).
type codedError struct {
	err   *errs.Error
	cause error
	extra error // ErrFailed, when the error stopped the DB
}

func (e *codedError) Error() string { return e.err.Message }

func (e *codedError) Unwrap() []error {
	out := []error{e.err}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	if e.extra != nil {
		out = append(out, e.extra)
	}
	return out
}

// wrapf returns an error of the given code whose message is the formatted
// text followed by the cause.
func wrapf(code errs.Code, cause error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + causeText(cause)
	}
	return &codedError{err: errs.New(code, msg).(*errs.Error), cause: cause}
}

// causeText is the message of a cause on one line, without the
// placeholder lines Pebble's error library adds to marked errors.
func causeText(err error) string {
	var parts []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || (strings.HasPrefix(line, "<") && strings.HasSuffix(line, ">")) {
			continue
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, " ")
}

// corrupted returns a DataCorrupted error about what, caused by cause,
// ending with what to do.
func corrupted(cause error, format string, args ...any) error {
	err := wrapf(errs.DataCorrupted, cause, format, args...).(*codedError)
	err.err.Message += "; " + adviceCorrupted
	return err
}
