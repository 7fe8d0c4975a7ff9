package storage

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
)

// pebbleLogger routes Pebble's log lines to slog. inst is the Pebble
// instance it logs for, nil for the short-lived opens that check a
// directory.
type pebbleLogger struct {
	l    *slog.Logger
	inst *pebbleInstance
}

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Info(fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...))
}

// Fatalf is called by Pebble for errors it cannot continue after: a failed
// write-ahead-log write or sync inside a commit, a failed MANIFEST write
// in a flush or compaction. Pebble's own code must not continue past it
// (after a failed commit, DB.Apply would otherwise report success).
//
// Called under a method of this package (a commit, a flush, an open), it
// panics with a fatalError, which that method recovers and turns into an
// error that stops the DB. Called in one of Pebble's background goroutines
// (a flush or compaction whose MANIFEST write failed), it stops the DB,
// fences the instance (none of its files can be written any more) and
// ends the goroutine with runtime.Goexit: the deferred unlocks of Pebble's
// background work run, so that nothing waits on its mutex, and the process
// goes on. The wedged instance is never used or closed again; recovery
// opens a new one (see DB.Recover).
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "fatal", true)
	if p.inst == nil || calledFromStorage() {
		panic(fatalError{msg: msg})
	}
	p.inst.wedge(msg)
	runtime.Goexit()
}

// storagePkg prefixes the names of this package's functions.
const storagePkg = "github.com/rockstream/rockstream/internal/storage."

// calledFromStorage reports whether a method of this package is on the
// calling goroutine's stack, below Pebble: the goroutine is one of the
// DB's callers, not one of Pebble's own.
func calledFromStorage() bool {
	pcs := make([]uintptr, 256)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, storagePkg) && !strings.Contains(f.Function, "pebbleLogger") {
			return true
		}
		if !more {
			return false
		}
	}
}

// fatalError is the panic value of pebbleLogger.Fatalf.
type fatalError struct{ msg string }

func (f fatalError) Error() string { return f.msg }
