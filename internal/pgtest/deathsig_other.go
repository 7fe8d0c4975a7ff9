//go:build !linux

package pgtest

import "os/exec"

// setParentDeathSignal does nothing where the kernel offers no parent-death
// signal; Main's orderly stop is then the only cleanup.
func setParentDeathSignal(cmd *exec.Cmd) {}

// processAlive reports true: without a way to ask, assume the owner lives.
func processAlive(pid int) bool { return true }
