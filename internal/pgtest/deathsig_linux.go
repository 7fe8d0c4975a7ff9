package pgtest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel send SIGTERM to the server process
// (or to runuser, which passes it on) when the test process dies, so that
// an aborted test run does not leave a server behind.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// processAlive reports whether a process with this ID exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
