package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rockstream/rockstream/internal/grpcraw"
)

// link is a mesh's stream of frames to one peer, opened on first use and
// kept for the mesh's life. Sends on it are one message at a time.
type link struct {
	m    *Mesh
	peer int
	addr string

	mu struct {
		sync.Mutex
		stream grpc.ClientStream
		cancel context.CancelFunc // ends the stream
		ended  chan struct{}      // closed when the stream's status is in
		err    error              // why the link failed; set once
	}
	// endErr is why the stream ended: written by watch before it closes
	// ended, read only after ended is closed.
	endErr error
}

// send sends frames, in order, on the link's stream. A ctx that ends
// before they are sent ends the stream: a peer holding it back has made
// the exchange fail.
func (l *link) send(ctx context.Context, frames [][]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.err != nil {
		return l.mu.err
	}
	if l.mu.stream == nil {
		if err := l.openLocked(ctx); err != nil {
			l.mu.err = err
			return err
		}
	}
	s, cancel, ended := l.mu.stream, l.mu.cancel, l.mu.ended
	select {
	case <-ended:
		l.mu.err = l.endErr
		return l.mu.err
	default:
	}
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	for _, f := range frames {
		if err := s.SendMsg(&grpcraw.Message{B: f}); err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("%w: sending to peer %d (%s): %w", ErrPeerLost, l.peer, l.addr, ctx.Err())
				l.mu.err = err
				return err
			}
			// The stream ended; its status says why.
			<-ended
			l.mu.err = l.endErr
			return l.mu.err
		}
	}
	return nil
}

// openLocked opens the stream and starts watching for its status.
func (l *link) openLocked(ctx context.Context) error {
	conn, err := l.m.node.conn(l.addr)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(l.m.ctx)
	stop := context.AfterFunc(ctx, cancel) // opening waits for the connection
	s, err := conn.NewStream(sctx, &streamDesc, methodName)
	stop()
	if err != nil {
		cancel()
		return l.failure(err)
	}
	l.mu.stream, l.mu.cancel, l.mu.ended = s, cancel, make(chan struct{})
	go l.watch(s, l.mu.ended)
	return nil
}

// watch waits for the stream's final status: the receiver sends nothing
// else. A refusal fails the mesh at once, so that its pending call
// returns without waiting for its deadline; the refusal of a peer that
// aborted fails only the calls needing a part it did not send
// (failOrGone).
func (l *link) watch(s grpc.ClientStream, ended chan struct{}) {
	err := s.RecvMsg(&grpcraw.Message{})
	if err == nil {
		err = status.Error(codes.Internal, "exchange: the receiver sent a message")
	}
	l.endErr = l.failure(err)
	close(ended)
	l.m.failOrGone(l.peer, l.endErr)
}

// closeGrace bounds how long closing a mesh waits for its peers to take
// the frames already sent.
const closeGrace = time.Second

// close ends the stream, if it was opened: it half-closes it, so that
// the peer receives every frame sent before its end, and waits until the
// peer ends it or ctx ends, then cancels it. (Cancelled at once, a
// stream may drop frames gRPC had not written yet, even its first, and a
// peer that never saw a frame of it cannot tell that this member left.)
func (l *link) close(ctx context.Context) {
	l.mu.Lock()
	s, cancel, ended := l.mu.stream, l.mu.cancel, l.mu.ended
	l.mu.Unlock()
	if s != nil {
		_ = s.CloseSend()
		select {
		case <-ended:
		case <-ctx.Done():
		}
		cancel()
	}
}

// failure is the error of a stream that ended with err, by the status the
// receiver gave.
func (l *link) failure(err error) error {
	where := fmt.Sprintf("peer %d (%s)", l.peer, l.addr)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %s ended the stream", ErrPeerLost, where)
	}
	st := status.Convert(err)
	switch st.Code() {
	case codes.FailedPrecondition:
		return fmt.Errorf("%w: %s refused revision %d: %s", ErrAssignmentMoved, where, l.m.a.Revision, st.Message())
	case codes.InvalidArgument:
		return fmt.Errorf("%w: %s refused a frame: %s", ErrMalformed, where, st.Message())
	case codes.Aborted:
		if err := peerAbortedAt(where, []byte(st.Message())); !errors.Is(err, ErrMalformed) {
			return err
		}
	}
	return fmt.Errorf("%w: %s: %s", ErrPeerLost, where, st.Message())
}
