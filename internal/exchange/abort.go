package exchange

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// Aborts. A member that fails its part of a step, or leaves its mesh,
// tells its peers with an abort frame (kind 4) carrying its error's code
// and message, so that they stop waiting for parts it will never send and
// fail with its SQLSTATE. Parts it sent before the frame still count: a
// member that closes its mesh after a step does not fail a slower peer
// still finishing it with what it sent. A frame that reaches it after it aborted is refused with the
// same payload (codes.Aborted), so its sender learns the same whichever
// reaches it first.

// abortTimeout bounds how long Abort waits for its frames to go out.
const abortTimeout = 5 * time.Second

// Abort fails m with err and tells every peer, opening a stream to it if
// none is open yet: their pending and later calls that wait for a part
// this member has not sent fail with ErrPeerAborted wrapping err's code
// and message, instead of waiting for it; what it sent before still
// counts. It waits at most abortTimeout for
// the frames to go out, and is a no-op once m has aborted or is closed
// (Close tells the peers too); the caller still closes m.
func (m *Mesh) Abort(err error) {
	if err == nil {
		err = errors.New("aborted")
	}
	if m.markAborted(err) {
		m.tell(err, abortTimeout)
	}
	m.fail(err)
}

// markAborted records err as why m aborted, and reports whether it is
// the first abort (Abort or Close), which tells the peers.
func (m *Mesh) markAborted(err error) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.abort != nil {
		return false
	}
	m.mu.abort = abortPayload(err)
	return true
}

// tell sends every peer the abort frame of err, opening a stream where
// none is open, and returns once every frame is sent or after d. A send
// still under way then (its link held by a call's send, its peer holding
// it back) is cancelled.
func (m *Mesh) tell(err error, d time.Duration) {
	frame := [][]byte{appendFrame(nil, m.header(kindAbort, Key{}, 0, true), abortPayload(err))}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for _, l := range m.links {
		if l != nil {
			wg.Go(func() { _ = l.send(ctx, frame) })
		}
	}
	waitOrDone(ctx, &wg)
}

// waitOrDone waits for wg, or until ctx ends.
func waitOrDone(ctx context.Context, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// abortMessageBytes bounds the message an abort frame carries (an
// internal error's may hold a stack).
const abortMessageBytes = 16 << 10

// abortPayload is the payload of the abort frame of err: its code, a
// zero byte, its message (its first abortMessageBytes).
func abortPayload(err error) []byte {
	code := errs.CodeOf(err)
	if code == "" {
		code = errs.Internal
	}
	msg := err.Error()
	if len(msg) > abortMessageBytes {
		msg = strings.ToValidUTF8(msg[:abortMessageBytes], "") + "…"
	}
	return append(append([]byte(code), 0), msg...)
}

// peerAborted is the error of peer p's abort frame's payload.
func (m *Mesh) peerAborted(p int, payload []byte) error {
	return peerAbortedAt(fmt.Sprintf("peer %d (%s)", p, m.a.Peers[p]), payload)
}

func peerAbortedAt(where string, payload []byte) error {
	code, msg, ok := bytes.Cut(payload, []byte{0})
	if !ok {
		return malformed("an abort frame without its code")
	}
	return fmt.Errorf("%s aborted: %w (%w)",
		where, errs.New(errs.Code(code), string(msg)), ErrPeerAborted)
}

// abortRefusal is why an aborted mesh refuses a peer's frame: the
// payload of its abort frame, which the peer reads from the stream's
// status (codes.Aborted), whichever of the two reaches it first.
type abortRefusal struct{ payload []byte }

func (a abortRefusal) Error() string { return string(a.payload) }
