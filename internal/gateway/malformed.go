package gateway

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/errs"
)

// The gateway checks the messages that carry strings (Query, Parse,
// Execute, Describe, Close) as PostgreSQL reads them, before pgproto3,
// which is lenient, decodes them: a string must end with its NUL and be
// valid UTF-8, integers must be there, and nothing may follow the last
// field. A message that fails is answered as PostgreSQL answers it: an
// ERROR (08P01 or 22021), after which the session goes on (a Query gets
// ReadyForQuery, an extended-protocol message makes the server skip to
// Sync). The framing itself (the type and length) is intact, so the next
// message is read normally.

// malformedMessage stands for a client message that failed the check:
// handle answers it with err.
type malformedMessage struct {
	typ byte
	err error
}

func (*malformedMessage) Frontend()                         {}
func (*malformedMessage) Decode([]byte) error               { return nil }
func (m *malformedMessage) Encode(b []byte) ([]byte, error) { return b, m.err }

// msgReader reads a message's fields as PostgreSQL's pq_getmsg*
// functions do, keeping the first error.
type msgReader struct {
	b   []byte
	err error
}

func (r *msgReader) fail(code errs.Code, msg string) {
	if r.err == nil {
		r.err = errs.New(code, msg)
	}
	r.b = nil
}

// str reads a NUL-terminated string, which must be valid UTF-8.
func (r *msgReader) str() {
	if r.err != nil {
		return
	}
	i := bytes.IndexByte(r.b, 0)
	if i < 0 {
		r.fail(errs.ProtocolViolation, "invalid string in message")
		return
	}
	if err := checkUTF8(r.b[:i]); err != nil {
		r.err = err
		return
	}
	r.b = r.b[i+1:]
}

func (r *msgReader) skip(n int) {
	if r.err != nil {
		return
	}
	if len(r.b) < n {
		r.fail(errs.ProtocolViolation, "insufficient data left in message")
		return
	}
	r.b = r.b[n:]
}

func (r *msgReader) byte1() {
	if r.err == nil && len(r.b) == 0 {
		r.fail(errs.ProtocolViolation, "no data left in message")
		return
	}
	r.skip(1)
}

func (r *msgReader) end() error {
	if r.err == nil && len(r.b) > 0 {
		r.fail(errs.ProtocolViolation, "invalid message format")
	}
	return r.err
}

// checkMessage checks a whole message (type, length, body) of one of the
// captured types; nil means it is well formed.
func checkMessage(msg []byte) error {
	if len(msg) < 5 {
		return nil
	}
	r := &msgReader{b: msg[5:]}
	switch msg[0] {
	case 'Q':
		r.str()
	case 'P':
		r.str()
		r.str()
		if r.err == nil && len(r.b) >= 2 {
			n := int(binary.BigEndian.Uint16(r.b))
			r.skip(2)
			r.skip(4 * n)
		} else {
			r.skip(2)
		}
	case 'E':
		r.str()
		r.skip(4)
	case 'D', 'C':
		r.byte1()
		r.str()
	default:
		return nil
	}
	return r.end()
}

// checkPasswordMessage checks a cleartext password message as
// PostgreSQL does: one NUL-terminated string and nothing else.
func checkPasswordMessage(msg []byte) error {
	if len(msg) < 5 || msg[0] != 'p' {
		return nil
	}
	body := msg[5:]
	if i := bytes.IndexByte(body, 0); i < 0 || i != len(body)-1 {
		return protocolErrorf("invalid password packet size")
	}
	return nil
}

// checkUTF8 fails with PostgreSQL's 22021 error, naming the bytes of the
// first invalid sequence as PostgreSQL does (as many as the lead byte
// announces, at most those left).
func checkUTF8(b []byte) error {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		n := utf8SeqLen(b[i])
		n = min(n, len(b)-i, 8)
		hex := make([]string, n)
		for j := range n {
			hex[j] = fmt.Sprintf("0x%02x", b[i+j])
		}
		return errs.Newf(errs.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", strings.Join(hex, " "))
	}
	return nil
}

// utf8SeqLen is the length a UTF-8 lead byte announces, as PostgreSQL's
// pg_utf_mblen computes it.
func utf8SeqLen(c byte) int {
	switch {
	case c&0x80 == 0:
		return 1
	case c&0xe0 == 0xc0:
		return 2
	case c&0xf0 == 0xe0:
		return 3
	case c&0xf8 == 0xf0:
		return 4
	}
	return 1
}

// framingFailed reports whether err says a message's framing failed,
// so that the message was not read.
func framingFailed(err error) bool {
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	return errors.As(err, &tooBig) || strings.HasPrefix(err.Error(), "invalid message length")
}

// receiveMessage reads the next client message; a message that fails
// checkMessage comes back as a *malformedMessage, whatever pgproto3 made
// of it.
func (c *conn) receiveMessage() (pgproto3.FrontendMessage, error) {
	m, err := c.be.Receive()
	raw := c.frames.lastMessage()
	if err != nil && framingFailed(err) {
		// The framing failed: the message was not read.
		return m, err
	}
	// Otherwise raw is set only when the message was read whole, and an
	// error is pgproto3's decoding of it (io.EOF for a missing NUL).
	if raw != nil {
		if bad := checkMessage(raw); bad != nil {
			return &malformedMessage{typ: raw[0], err: bad}, nil
		}
	}
	return m, err
}

// answerMalformed answers a malformed message: a Query with an error and
// ReadyForQuery, the extended protocol's messages with an error after
// which the server skips to Sync.
func (c *conn) answerMalformed(m *malformedMessage) error {
	if m.typ != 'Q' {
		return c.extendedError(m.err)
	}
	c.pipelined = false
	c.sess.FailTransaction()
	c.be.Send(errorResponse(m.err, "ERROR", 0))
	return c.readyForQuery()
}
