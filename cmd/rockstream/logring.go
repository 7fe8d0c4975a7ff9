package main

import (
	"bytes"
	"sync"

	"github.com/rockstream/rockstream/internal/runtime"
)

// logRing keeps the last bytes of the server's log, whole lines, for the
// support bundle (GET /admin/logs). Secrets are redacted as lines come in.
type logRing struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	part []byte // the current line, until its newline
}

// logRingBytes is how much of the log the server keeps.
const logRingBytes = 4 << 20

func newLogRing(max int) *logRing { return &logRing{max: max} }

func (r *logRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.part = append(r.part, p...)
	for {
		i := bytes.IndexByte(r.part, '\n')
		if i < 0 {
			break
		}
		r.buf = append(r.buf, runtime.RedactSecrets(string(r.part[:i+1]))...)
		r.part = r.part[i+1:]
	}
	if len(r.part) > r.max {
		r.part = r.part[len(r.part)-r.max:]
	}
	if over := len(r.buf) - r.max; over > 0 {
		cut := over
		if j := bytes.IndexByte(r.buf[over:], '\n'); j >= 0 {
			cut = over + j + 1
		}
		r.buf = append(r.buf[:0], r.buf[cut:]...)
	}
	return len(p), nil
}

// Bytes returns the lines kept.
func (r *logRing) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.buf...)
}
