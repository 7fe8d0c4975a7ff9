package storage

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeClock advances by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		now = now.Add(step)
		return now
	}
}

func TestLineProgress(t *testing.T) {
	var buf bytes.Buffer
	p := NewLineProgress(&buf)
	p.t.now = fakeClock(600 * time.Millisecond)
	p.Start("upload checkpoint x", 3, 3<<20)
	for range 3 {
		p.Advance(0, 1<<19)
		p.Advance(0, 1<<19)
		p.Advance(1, 0)
	}
	p.Done(nil)
	want := `upload checkpoint x: 3 files, 3.0 MiB to transfer
upload checkpoint x: 2/3 files, 2.0 MiB/3.0 MiB
upload checkpoint x: 3/3 files, 3.0 MiB/3.0 MiB
upload checkpoint x: done, 3/3 files, 3.0 MiB/3.0 MiB in 3s
`
	if buf.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	p.Start("restore checkpoint y", 2, 10)
	p.Done(errors.New("boom"))
	if !strings.HasSuffix(buf.String(), "restore checkpoint y: failed after 0/2 files, 0 B/10 B\n") {
		t.Fatalf("got %q", buf.String())
	}
}

func TestBarProgress(t *testing.T) {
	var buf bytes.Buffer
	p := NewBarProgress(&buf)
	p.t.now = fakeClock(30 * time.Millisecond)
	p.Start("restore", 2, 2048)
	for range 8 {
		p.Advance(0, 256) // redraws throttled to one per 100 ms
	}
	p.Advance(2, 0)
	p.Done(nil)
	out := buf.String()
	if n := strings.Count(out, "\r"); n < 3 || n > 6 {
		t.Fatalf("%d redraws:\n%q", n, out)
	}
	last := out[strings.LastIndex(out, "\r"):]
	if !strings.Contains(last, "[##############################] 100% 2/2 files, 2.0 KiB/2.0 KiB") || !strings.HasSuffix(last, "done in 300ms\n") {
		t.Fatalf("last frame %q", last)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 30: "5.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
