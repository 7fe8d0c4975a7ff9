package memgov

import (
	"os"
	"runtime/debug"
)

// ServerGCPercent is the garbage collector's GOGC a server runs with
// unless told otherwise: a collection starts when the heap has grown to
// five times what the last one left live, instead of Go's twice. The
// collector's marking is a fifth of the CPU of an ingest-bound epoch at
// Go's default (docs/BENCHMARKS.md, "The garbage collector's setting");
// the memory limit (SetLimit) still bounds the heap, since the runtime
// collects earlier as it nears the soft limit.
const ServerGCPercent = 400

// SetGCPercent sets the collector's GOGC to n (negative: collection off,
// which only the soft limit then triggers), unless the environment's
// GOGC already chose one, and returns the value in force.
func SetGCPercent(n int) int {
	if os.Getenv("GOGC") != "" {
		v := debug.SetGCPercent(100)
		debug.SetGCPercent(v)
		return v
	}
	debug.SetGCPercent(n)
	return n
}
