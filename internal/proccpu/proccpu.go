//go:build unix

// Package proccpu reads the CPU time the process has used, which
// benchmarks report next to wall time: on a machine shared with other
// work, CPU time per operation is the steadier measure.
package proccpu

import (
	"syscall"
	"time"
)

// Used returns the CPU time (user + system) the process has used, all its
// threads (and so the garbage collector) included.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("getrusage: " + err.Error())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
