package storage

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Progress receives the progress of a long transfer (a checkpoint upload,
// a restore). Calls on one Progress are never concurrent, and come in the
// order Start, any number of Advance, Done.
type Progress interface {
	// Start announces the work: what is being done ("upload checkpoint
	// 2026...") and how many files and bytes will be transferred.
	Start(what string, files int, bytes int64)
	// Advance reports bytes transferred and files finished since the
	// previous call.
	Advance(files int, bytes int64)
	// Done ends the transfer; err is nil when it succeeded.
	Done(err error)
}

// NoProgress discards progress reports.
type NoProgress struct{}

// Start implements Progress.
func (NoProgress) Start(string, int, int64) {}

// Advance implements Progress.
func (NoProgress) Advance(int, int64) {}

// Done implements Progress.
func (NoProgress) Done(error) {}

// NewTerminalProgress returns a progress bar redrawn in place when f is a
// terminal, and plain progress lines otherwise (a log file, a pipe).
func NewTerminalProgress(f *os.File) Progress {
	if term.IsTerminal(int(f.Fd())) {
		return NewBarProgress(f)
	}
	return NewLineProgress(f)
}

// tally is the state both progress printers keep.
type tally struct {
	what             string
	files, filesDone int
	bytes, bytesDone int64
	now              func() time.Time
	last             time.Time
	minInterval      time.Duration
	started          time.Time
}

func (t *tally) start(what string, files int, bytes int64) {
	if t.now == nil {
		t.now = time.Now
	}
	t.what, t.files, t.bytes = what, files, bytes
	t.filesDone, t.bytesDone = 0, 0
	t.started = t.now()
	t.last = time.Time{}
}

func (t *tally) advance(files int, bytes int64) {
	t.filesDone += files
	t.bytesDone += bytes
}

// due reports whether a redraw is due now, and notes it.
func (t *tally) due() bool {
	now := t.now()
	if !t.last.IsZero() && now.Sub(t.last) < t.minInterval && t.filesDone < t.files {
		return false
	}
	t.last = now
	return true
}

func (t *tally) counts() string {
	return fmt.Sprintf("%d/%d files, %s/%s", t.filesDone, t.files, humanBytes(t.bytesDone), humanBytes(t.bytes))
}

func (t *tally) fraction() float64 {
	if t.bytes > 0 {
		return min(1, float64(t.bytesDone)/float64(t.bytes))
	}
	if t.files > 0 {
		return float64(t.filesDone) / float64(t.files)
	}
	return 1
}

// BarProgress draws a one-line progress bar, redrawn in place with a
// carriage return, at most every 100 ms.
type BarProgress struct {
	mu    sync.Mutex
	w     io.Writer
	width int
	t     tally
}

// NewBarProgress returns a BarProgress writing to w (a terminal).
func NewBarProgress(w io.Writer) *BarProgress {
	return &BarProgress{w: w, width: 30, t: tally{minInterval: 100 * time.Millisecond}}
}

// Start implements Progress.
func (p *BarProgress) Start(what string, files int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.start(what, files, bytes)
	p.draw()
}

// Advance implements Progress.
func (p *BarProgress) Advance(files int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.advance(files, bytes)
	if p.t.due() {
		p.draw()
	}
}

// Done implements Progress.
func (p *BarProgress) Done(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
	if err != nil {
		fmt.Fprintf(p.w, " failed\n")
		return
	}
	fmt.Fprintf(p.w, " done in %s\n", p.t.now().Sub(p.t.started).Round(time.Millisecond))
}

func (p *BarProgress) draw() {
	filled := int(p.t.fraction() * float64(p.width))
	bar := strings.Repeat("#", filled) + strings.Repeat(".", p.width-filled)
	// \x1b[K clears what a longer previous line left behind.
	fmt.Fprintf(p.w, "\r%s [%s] %3.0f%% %s\x1b[K", p.t.what, bar, 100*p.t.fraction(), p.t.counts())
}

// LineProgress prints plain lines: one at the start, one as files finish
// (at most one a second), and one at the end. It suits logs and pipes.
type LineProgress struct {
	mu sync.Mutex
	w  io.Writer
	t  tally
}

// NewLineProgress returns a LineProgress writing to w.
func NewLineProgress(w io.Writer) *LineProgress {
	return &LineProgress{w: w, t: tally{minInterval: time.Second}}
}

// Start implements Progress.
func (p *LineProgress) Start(what string, files int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.start(what, files, bytes)
	fmt.Fprintf(p.w, "%s: %d files, %s to transfer\n", what, files, humanBytes(bytes))
	p.t.due()
}

// Advance implements Progress.
func (p *LineProgress) Advance(files int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.advance(files, bytes)
	if files > 0 && p.t.due() {
		fmt.Fprintf(p.w, "%s: %s\n", p.t.what, p.t.counts())
	}
}

// Done implements Progress.
func (p *LineProgress) Done(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		fmt.Fprintf(p.w, "%s: failed after %s\n", p.t.what, p.t.counts())
		return
	}
	fmt.Fprintf(p.w, "%s: done, %s in %s\n", p.t.what, p.t.counts(), p.t.now().Sub(p.t.started).Round(time.Millisecond))
}

// humanBytes formats n with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// serialProgress makes a Progress safe to call from the goroutines of a
// parallel transfer.
type serialProgress struct {
	mu sync.Mutex
	p  Progress
}

func (s *serialProgress) Start(what string, files int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Start(what, files, bytes)
}

func (s *serialProgress) Advance(files int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Advance(files, bytes)
}

func (s *serialProgress) Done(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Done(err)
}
