package proccpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100
// on every Linux architecture Go supports.
const clockTicks = 100

// UsedBy returns the CPU time (user + system) process pid has used, read
// from /proc/pid/stat: a PostgreSQL backend's, for a benchmark that runs
// the same work against PostgreSQL and RockStream. Its resolution is
// 10 ms.
func UsedBy(pid int) (time.Duration, error) { return statTicks(pid, 11, 13) }

// UsedByTree returns the CPU time process pid and its children that
// have ended and that it has waited for have used: a PostgreSQL
// postmaster's, whose backends' time it collects as each connection
// ends. Its resolution is 10 ms.
func UsedByTree(pid int) (time.Duration, error) { return statTicks(pid, 11, 15) }

// statTicks sums the fields [from, to) of /proc/pid/stat counted from the
// first after the command name, as CPU time.
func statTicks(pid, from, to int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted from 3 start after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("proccpu: unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// utime, stime, cutime and cstime are fields 14 to 17, so 11 to 14
	// after the name.
	if len(f) < to {
		return 0, fmt.Errorf("proccpu: unexpected /proc/%d/stat", pid)
	}
	var ticks int64
	for _, field := range f[from:to] {
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proccpu: /proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
