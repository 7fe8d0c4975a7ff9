package gateway

import (
	"encoding/binary"
	"io"
	"strings"
)

// frameReader sits between a connection and its protocol backend and hands
// the backend one message at a time: what the client sent beyond the
// message being handled stays here, where the gateway can see it. That is
// how an Execute followed at once by Sync is told from a pipeline of
// several statements, which PostgreSQL runs as one transaction
// (extended.go).
//
// The byte stream reaches the backend unchanged; only the size of each
// read is bounded by the end of the current message. Until the startup
// message, messages have no type byte (SSLRequest, GSSENCRequest,
// CancelRequest, StartupMessage); after it, every message has one.
type frameReader struct {
	r io.Reader
	// buf holds bytes read from r and not yet handed on, in scratch; it
	// begins at a message boundary when left is 0.
	buf []byte
	// left is how much of the current message remains to be handed on.
	left int
	// typed is set once the startup message was handed on.
	typed bool
	// scratch is the buffer reads from r go into, and buf's memory:
	// small until the startup message has passed, so that sockets that
	// never start up (and wait for the authentication timeout) hold
	// little memory.
	scratch []byte
	// capturing is set while the current message is one whose bytes are
	// kept, whole, in captured: messages with strings, which the gateway
	// checks as PostgreSQL does before pgproto3 decodes them leniently
	// (malformed.go). done is set once captured holds all of it.
	capturing, done bool
	captured        []byte
}

// capturedTypes are the message types kept whole for checking: Query,
// Parse, Execute, Describe, Close and the password message.
const capturedTypes = "QPEDCp"

// Startup packet codes (the second word of an untyped message) that do not
// end the startup phase.
const (
	codeCancelRequest = 80877102
	codeSSLRequest    = 80877103
	codeGSSENCRequest = 80877104
)

// Sizes of frameReader.scratch before and after the startup message.
const (
	startupScratch = 1 << 10
	typedScratch   = 64 << 10
)

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: r, scratch: make([]byte, startupScratch)}
}

// Read hands on bytes of the current message, at most up to its end.
func (f *frameReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if f.left == 0 {
		// At a boundary: the header says how long the message is.
		header := 5
		if !f.typed {
			header = 8
		}
		for len(f.buf) < header {
			if err := f.fill(); err != nil {
				if len(f.buf) > 0 && err == io.EOF {
					// A truncated message: hand on what there is, for the
					// backend to report.
					return f.take(p, len(f.buf)), nil
				}
				return 0, err
			}
		}
		if f.typed {
			f.left = 1 + int(binary.BigEndian.Uint32(f.buf[1:5]))
			f.capturing = strings.IndexByte(capturedTypes, f.buf[0]) >= 0
			f.done = false
			if cap(f.captured) > 1<<20 {
				f.captured = nil
			}
			f.captured = f.captured[:0]
			if f.capturing && f.left > cap(f.captured) {
				// At its size at once, as the backend allocates the
				// message's body: grown by appends, a large message
				// (a 60MB literal) would leave as much again behind in
				// garbage while it is received.
				f.captured = make([]byte, 0, f.left)
			}
		} else {
			f.left = int(binary.BigEndian.Uint32(f.buf[0:4]))
			switch binary.BigEndian.Uint32(f.buf[4:8]) {
			case codeCancelRequest, codeSSLRequest, codeGSSENCRequest:
			default:
				f.typed = true
			}
		}
		if f.left < header {
			// A length too small to be valid: hand on the header alone,
			// which the backend rejects.
			f.left = header
		}
	}
	if len(f.buf) == 0 {
		if err := f.fill(); err != nil {
			return 0, err
		}
	}
	return f.take(p, min(len(f.buf), f.left)), nil
}

// take moves up to n buffered bytes into p.
func (f *frameReader) take(p []byte, n int) int {
	n = copy(p, f.buf[:n])
	if f.capturing {
		f.captured = append(f.captured, p[:n]...)
	}
	f.buf = f.buf[n:]
	f.left = max(0, f.left-n)
	if f.capturing && f.left == 0 {
		f.capturing, f.done = false, true
	}
	if len(f.buf) == 0 {
		f.buf = nil
	}
	return n
}

// fill reads what r has into buf, after what buf holds, which it first
// moves to the start of scratch. It is called only when buf holds less
// than a message header, so there is always room.
func (f *frameReader) fill() error {
	if f.typed && len(f.scratch) < typedScratch {
		grown := make([]byte, typedScratch)
		f.buf = grown[:copy(grown, f.buf)]
		f.scratch = grown
	}
	held := copy(f.scratch, f.buf)
	n, err := f.r.Read(f.scratch[held:])
	f.buf = f.scratch[:held+n]
	if n > 0 {
		return nil
	}
	if held == 0 {
		f.buf = nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// lastMessage returns the whole of the message handed on last, type and
// length included, when it is of a captured type and was not returned
// before; nil otherwise. It is valid until the next Read.
func (f *frameReader) lastMessage() []byte {
	if !f.done {
		return nil
	}
	f.done = false
	return f.captured
}

// syncFollows reports whether the message after the one handled last has
// arrived already and is a Sync. False means that it has not arrived yet
// or is something else.
func (f *frameReader) syncFollows() bool {
	return f.typed && f.left == 0 && len(f.buf) >= 5 &&
		f.buf[0] == 'S' && binary.BigEndian.Uint32(f.buf[1:5]) == 4
}
