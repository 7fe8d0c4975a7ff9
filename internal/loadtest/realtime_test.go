package loadtest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

var (
	pgbenchRT = flag.Bool("pgbench.rt", false, "load at the test's own priority, and run only the pgbench runs of TestPgbenchPointReads under SCHED_FIFO (chrt), holding -pgbench.rt.lock")
	rtLock    = flag.String("pgbench.rt.lock", "/tmp/rt.lock", "the lock file the real-time runs hold (flock), so that two never share the cores")
)

// The real-time method. On a machine whose two cores other builds and
// tests share, a benchmark run under SCHED_FIFO (chrt -f 50) has them
// nearly as on an idle machine; a real-time process may not run for
// long, though, and a large view takes minutes to load. With
// -pgbench.rt the test is started at normal priority and loads there;
// only around the pgbench runs does it take the lock, raise every
// thread of its own process (the RockStream server runs in it) and
// every process of PostgreSQL's server to SCHED_FIFO, and start
// pgbench, which inherits the policy (as PostgreSQL's backends do from
// their postmaster); afterwards all return to SCHED_OTHER. Setting a
// real-time policy needs the privilege to (root, or CAP_SYS_NICE); the
// test fails without it.

// realtime is the state of one real-time section.
type realtime struct {
	lock *os.File
	pids []int
}

// enterRealtime takes the lock and raises the test process and the
// process tree of PostgreSQL's postmaster pgPID to SCHED_FIFO 50.
func enterRealtime(t *testing.T, pgPID int) *realtime {
	t.Helper()
	f, err := os.OpenFile(*rtLock, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	rt := &realtime{lock: f, pids: append([]int{os.Getpid()}, processTree(pgPID)...)}
	for _, pid := range rt.pids {
		if err := chrt(pid, "-f", "50"); err != nil {
			rt.leave(t)
			t.Fatal(err)
		}
	}
	return rt
}

// leave returns the processes to SCHED_OTHER and releases the lock.
func (rt *realtime) leave(t *testing.T) {
	t.Helper()
	for _, pid := range rt.pids {
		if err := chrt(pid, "-o", "0"); err != nil {
			t.Error(err)
		}
	}
	rt.lock.Close() // releases the flock
}

// chrt sets the policy of every thread of pid (chrt -a -p).
func chrt(pid int, policy, prio string) error {
	out, err := exec.Command("chrt", "-a", policy, "-p", prio, strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		if _, statErr := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); statErr != nil {
			return nil // the process ended meanwhile
		}
		return fmt.Errorf("chrt %s %s %d: %v: %s", policy, prio, pid, err, out)
	}
	return nil
}

// processTree returns pid and its descendants, from /proc's children
// lists of each of their threads.
func processTree(pid int) []int {
	out := []int{pid}
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(f); err == nil {
				out = append(out, processTree(child)...)
			}
		}
	}
	return out
}
