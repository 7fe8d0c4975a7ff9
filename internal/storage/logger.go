package storage

import (
	"fmt"
	"log/slog"
)

// pebbleLogger routes Pebble's log lines to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Info(fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...))
}

// Fatalf is called by Pebble for errors it cannot continue after: a failed
// write-ahead-log write or sync inside a commit, a failed MANIFEST write.
// Pebble's own code must not continue past it (after a failed commit,
// DB.Apply would otherwise report success), so it panics with a
// fatalError. Commit recovers that panic and turns it into an error that
// stops the DB; in Pebble's background goroutines it ends the process, as
// Pebble's default logger would, and restarting recovers the durable state.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "fatal", true)
	panic(fatalError{msg: msg})
}

// fatalError is the panic value of pebbleLogger.Fatalf.
type fatalError struct{ msg string }

func (f fatalError) Error() string { return f.msg }
