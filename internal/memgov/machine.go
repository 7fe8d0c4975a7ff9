package memgov

import (
	"os"
	"strconv"
	"strings"
)

// DefaultFraction of the machine's memory is the default limit. The rest
// is left to the operating system's page cache, which the storage reads
// through, to the storage's own cache and memtables outside the Go heap,
// and to the garbage collector's headroom: a limit near all of the
// machine's memory would let the kernel's OOM killer act first.
const DefaultFraction = 0.5

// DefaultLimit returns DefaultFraction of the memory the process may use:
// the machine's (/proc/meminfo), or its cgroup's limit when that is
// lower (cgroup v2 memory.max, v1 memory.limit_in_bytes). 0 when neither
// can be read.
func DefaultLimit() int64 {
	avail := machineMemory()
	if c := cgroupLimit(); c > 0 && (avail == 0 || c < avail) {
		avail = c
	}
	return int64(float64(avail) * DefaultFraction)
}

// machineMemory reads MemTotal from /proc/meminfo (0: unknown).
func machineMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupLimit reads the process's cgroup memory limit (0: none).
func cgroupLimit() int64 {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// "max", or v1's "unlimited" page-rounded maximum.
		if err != nil || n <= 0 || n >= 1<<62 {
			continue
		}
		return n
	}
	return 0
}
