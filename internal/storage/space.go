package storage

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// Disk space. A write that fails for lack of space inside Pebble's commit
// pipeline breaks the pipeline (the DB stops, reads included), and one in
// a background flush or compaction can end the process. So Commit checks
// the free space first and refuses a batch, applying nothing, while less
// than a reserve is left: writes fail fast with errs.DiskFull, reads go on,
// and the reserve leaves Pebble room to flush and compact what is already
// committed. Writes are accepted again as soon as space is freed.
const (
	// minReserve and maxReserve bound the default reserve, a twentieth of
	// the file system.
	minReserve = 16 << 20
	maxReserve = 256 << 20
	// spaceRecheck is how long a measurement of free space is trusted
	// while it is well above the reserve.
	spaceRecheck = 250 * time.Millisecond
)

// diskFullMessage is PostgreSQL's message for the condition.
const diskFullMessage = "could not extend file: no space left on device"

// spaceGuard decides whether a commit may go to Pebble.
type spaceGuard struct {
	fs      vfs.FS
	dir     string
	reserve int64 // 0: a twentieth of the file system, bounded
	log     *slog.Logger

	mu struct {
		sync.Mutex
		checked time.Time
		avail   uint64
		full    bool
		// fullSince is when the disk was first found full, while it is.
		fullSince time.Time
	}
}

// check returns errs.DiskFull when committing need more bytes would leave
// less than the reserve free. A file system that cannot report its usage
// is not checked.
func (g *spaceGuard) check(need int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	reserve := uint64(g.reserve)
	if !g.mu.full && now.Sub(g.mu.checked) < spaceRecheck && g.mu.avail > 4*(uint64(need)+max(reserve, minReserve)) {
		g.mu.avail -= uint64(need)
		return nil
	}
	u, err := g.fs.GetDiskUsage(g.dir)
	if err != nil {
		return nil
	}
	if reserve == 0 {
		reserve = min(max(u.TotalBytes/20, minReserve), maxReserve)
	}
	g.mu.checked, g.mu.avail = now, u.AvailBytes
	full := u.AvailBytes < reserve+uint64(need)
	switch {
	case full && !g.mu.full:
		g.mu.fullSince = now
		g.log.Warn("storage disk is full: refusing writes until space is freed; reads go on",
			"avail_bytes", u.AvailBytes, "reserve_bytes", reserve)
	case !full && g.mu.full:
		g.log.Info("storage disk has space again: accepting writes", "avail_bytes", u.AvailBytes)
	}
	g.mu.full = full
	if full {
		return diskFull(nil, "storage: %s has %d bytes free, below the %d kept in reserve; the write was refused and nothing of it applied: free space on the disk, and writes are accepted again",
			g.dir, u.AvailBytes, reserve)
	}
	return nil
}

// Full reports whether the last check found the disk full.
func (g *spaceGuard) Full() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.full
}

// FullSince returns when the disk was found full, while the last check
// found it so.
func (g *spaceGuard) FullSince() (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.fullSince, g.mu.full
}

// noteENOSPC records that a write failed for lack of space, so that the
// next commit measures again instead of trusting an old measurement.
func (g *spaceGuard) noteENOSPC() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.checked = time.Time{}
}

// isNoSpace reports whether err is a lack of space. Pebble's fatal
// errors reach Commit as text only.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), syscall.ENOSPC.Error())
}

// diskFull returns an errs.DiskFull error: PostgreSQL's message, then
// the details.
func diskFull(cause error, format string, args ...any) error {
	e := wrapf(errs.DiskFull, cause, format, args...).(*codedError)
	e.err.Message = diskFullMessage + ": " + e.err.Message
	return e
}

// logLimiter lets one line of a kind through per interval, counting the
// rest, so that an error repeated by retries does not flood the log.
type logLimiter struct {
	every time.Duration

	mu struct {
		sync.Mutex
		last       time.Time
		suppressed int
	}
}

// allow reports whether to log now, and how many lines were suppressed
// since the last one logged.
func (l *logLimiter) allow() (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if !l.mu.last.IsZero() && now.Sub(l.mu.last) < l.every {
		l.mu.suppressed++
		return false, 0
	}
	n := l.mu.suppressed
	l.mu.last, l.mu.suppressed = now, 0
	return true, n
}
