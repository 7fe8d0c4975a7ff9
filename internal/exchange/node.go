package exchange

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/rockstream/rockstream/internal/grpcraw"
)

// The gRPC service: one bidirectional stream method. A sender streams
// frames; the receiver answers nothing but the stream's final status,
// which says why it refused a frame.
const (
	serviceName = "rockstream.exchange.v1.Exchange"
	methodName  = "/" + serviceName + "/Frames"
)

// streamDesc is the method's stream, as clients open it.
var streamDesc = grpc.StreamDesc{StreamName: "Frames", ServerStreams: true, ClientStreams: true}

// Options bound a node's memory and messages. Zero fields take defaults.
type Options struct {
	// BufferBytes bounds the frame bytes a mesh holds for exchanges it has
	// not asked for yet (default 64 MiB). Beyond it a sender is held back:
	// the receiver stops reading its stream and gRPC's flow control stops
	// the sender. One frame is always admitted, so it must be at least
	// ChunkBytes.
	BufferBytes int
	// ChunkBytes is the largest Arrow payload of one frame (default 1 MiB);
	// larger batches travel as several frames.
	ChunkBytes int
	// MaxMessageBytes is the gRPC message limit of both directions
	// (default 4 MiB, gRPC's own); it must exceed ChunkBytes plus the
	// frame header.
	MaxMessageBytes int
}

func (o Options) withDefaults() (Options, error) {
	if o.ChunkBytes == 0 {
		o.ChunkBytes = 1 << 20
	}
	if o.BufferBytes == 0 {
		o.BufferBytes = 64 << 20
	}
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = 4 << 20
	}
	if o.ChunkBytes <= 0 || o.BufferBytes < o.ChunkBytes || o.MaxMessageBytes < o.ChunkBytes+headerSize+64 {
		return o, fmt.Errorf("exchange: options need 0 < ChunkBytes <= BufferBytes and ChunkBytes+%d < MaxMessageBytes: %+v", headerSize+64, o)
	}
	return o, nil
}

// Node is one process's end of the exchange: a gRPC server on its
// listener and the client connections to its peers. It serves one
// assignment at a time, as a Mesh (Join).
type Node struct {
	opts   Options
	server *grpc.Server
	lis    net.Listener
	served chan error

	mu struct {
		sync.Mutex
		// revision is the newest assignment joined; mesh serves it until
		// it is closed (nil then). changed is closed and replaced when
		// either moves, waking the streams that wait for a newer one.
		revision uint64
		mesh     *Mesh
		changed  chan struct{}
		conns    map[string]*grpc.ClientConn
		closed   bool
	}
}

// Listen starts a node serving on lis. Close stops it.
func Listen(lis net.Listener, opts Options) (*Node, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	n := &Node{opts: opts, lis: lis, served: make(chan error, 1)}
	n.mu.changed = make(chan struct{})
	n.mu.conns = make(map[string]*grpc.ClientConn)
	n.server = grpc.NewServer(
		grpc.ForceServerCodec(grpcraw.Codec{}),
		grpc.MaxRecvMsgSize(opts.MaxMessageBytes),
		grpc.MaxSendMsgSize(opts.MaxMessageBytes),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	)
	sd := streamDesc
	sd.Handler = func(_ any, s grpc.ServerStream) error { return n.serveStream(s) }
	n.server.RegisterService(&grpc.ServiceDesc{ServiceName: serviceName, HandlerType: (*any)(nil), Streams: []grpc.StreamDesc{sd}}, n)
	go func() { n.served <- n.server.Serve(lis) }()
	return n, nil
}

// Addr is the address the node listens on.
func (n *Node) Addr() string { return n.lis.Addr().String() }

// Close stops the server, closes the current mesh and the connections.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.mu.closed {
		n.mu.Unlock()
		return nil
	}
	n.mu.closed = true
	m := n.mu.mesh
	n.notifyLocked()
	n.mu.Unlock()
	if m != nil {
		m.Close()
	}
	n.server.Stop()
	var errList []error
	if err := <-n.served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		errList = append(errList, err)
	}
	n.mu.Lock()
	for _, c := range n.mu.conns {
		errList = append(errList, c.Close())
	}
	n.mu.Unlock()
	return errors.Join(errList...)
}

func (n *Node) notifyLocked() {
	close(n.mu.changed)
	n.mu.changed = make(chan struct{})
}

// conn returns the client connection to addr, made on first use.
func (n *Node) conn(addr string) (*grpc.ClientConn, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.closed {
		return nil, ErrClosed
	}
	if c := n.mu.conns[addr]; c != nil {
		return c, nil
	}
	c, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(grpcraw.Codec{}),
			grpc.MaxCallRecvMsgSize(n.opts.MaxMessageBytes), grpc.MaxCallSendMsgSize(n.opts.MaxMessageBytes)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: peer %s: %w", ErrPeerLost, addr, err)
	}
	n.mu.conns[addr] = c
	return c, nil
}

// Assignment is what a mesh serves: its revision (the fencing token), this
// process's index and every member's address by index.
type Assignment struct {
	Revision uint64
	Self     int
	Peers    []string
}

// Join makes the node serve assignment a, whose revision must be newer
// than every one joined before. The previous mesh, if still open, fails
// its pending and later calls with ErrAssignmentMoved and is closed.
func (n *Node) Join(a Assignment) (*Mesh, error) {
	if a.Self < 0 || a.Self >= len(a.Peers) {
		return nil, fmt.Errorf("exchange: assignment's own index %d outside its %d peers", a.Self, len(a.Peers))
	}
	m := newMesh(n, a)
	n.mu.Lock()
	if n.mu.closed {
		n.mu.Unlock()
		return nil, ErrClosed
	}
	if a.Revision <= n.mu.revision {
		rev := n.mu.revision
		n.mu.Unlock()
		return nil, fmt.Errorf("exchange: cannot join revision %d: revision %d was joined already", a.Revision, rev)
	}
	old := n.mu.mesh
	n.mu.revision, n.mu.mesh = a.Revision, m
	n.notifyLocked()
	n.mu.Unlock()
	if old != nil {
		old.fail(fmt.Errorf("%w: this process joined revision %d, past this mesh's %d", ErrAssignmentMoved, a.Revision, old.a.Revision))
		old.Close()
	}
	return m, nil
}

// detach forgets m as the current mesh, once it is closed.
func (n *Node) detach(m *Mesh) {
	n.mu.Lock()
	if n.mu.mesh == m {
		n.mu.mesh = nil
		n.notifyLocked()
	}
	n.mu.Unlock()
}

// meshFor returns the mesh that takes frames of revision rev, waiting
// while rev is newer than the node's (the frames are for an assignment it
// has not joined yet; its current mesh fails meanwhile). A frame of an
// older revision, or for a closed mesh, is refused with a status.
func (n *Node) meshFor(ctx context.Context, rev uint64) (*Mesh, error) {
	for {
		n.mu.Lock()
		cur, m, changed, closed := n.mu.revision, n.mu.mesh, n.mu.changed, n.mu.closed
		n.mu.Unlock()
		switch {
		case closed:
			return nil, status.Error(codes.Unavailable, "exchange: the receiving node is closed")
		case rev < cur:
			return nil, status.Errorf(codes.FailedPrecondition,
				"exchange: frame of assignment revision %d refused: the receiver is at revision %d", rev, cur)
		case rev == cur && m == nil:
			// Its peers learn it left, as from its abort frame.
			return nil, status.Error(codes.Aborted, string(abortPayload(fmt.Errorf("%w: the receiver's mesh of revision %d", ErrClosed, rev))))
		case rev == cur:
			return m, nil
		}
		if m != nil {
			m.fail(fmt.Errorf("%w: a peer sent frames of revision %d, past this mesh's %d", ErrAssignmentMoved, rev, m.a.Revision))
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

// serveStream receives one sender's frames until its stream ends or a
// frame is refused; the returned status tells the sender why.
func (n *Node) serveStream(s grpc.ServerStream) error {
	ctx := s.Context()
	var (
		m       *Mesh
		sender  int
		reason  error // why the stream ended
		refused bool  // by this node, for what the stream carried
	)
	defer func() {
		if m != nil {
			m.streamEnded(sender, reason, refused)
		}
	}()
	var f grpcraw.Message
	for {
		if err := s.RecvMsg(&f); err != nil {
			reason = err // the sender closed or went away
			return nil
		}
		h, payload, err := parseFrame(f.B)
		if err != nil {
			reason = err
			return status.Error(codes.InvalidArgument, err.Error())
		}
		if m == nil {
			if m, err = n.meshFor(ctx, h.revision); err != nil {
				return err
			}
			if int(h.sender) >= len(m.a.Peers) || int(h.sender) == m.a.Self {
				s := fmt.Sprintf("exchange: frame from sender %d, not a peer of %d members other than %d", h.sender, len(m.a.Peers), m.a.Self)
				m = nil
				return status.Error(codes.InvalidArgument, s)
			}
			sender = int(h.sender)
			m.streamStarted(sender)
		} else if h.revision != m.a.Revision || int(h.sender) != sender {
			reason, refused = malformed("a stream of sender %d at revision %d carries a frame of sender %d at revision %d",
				sender, m.a.Revision, h.sender, h.revision), true
			return status.Error(codes.InvalidArgument, reason.Error())
		}
		if err := m.deliver(ctx, h, payload); err != nil {
			// The stream's end while the frame waited is no refusal.
			reason, refused = err, ctx.Err() == nil
			return toStatus(err)
		}
		f.B = f.B[:0:0] // the payload is the mesh's now
	}
}

// toStatus is the stream status that tells a sender why its frame was
// refused.
func toStatus(err error) error {
	var a abortRefusal
	switch {
	case errors.As(err, &a):
		return status.Error(codes.Aborted, string(a.payload))
	case errors.Is(err, ErrPeerAborted):
		// The mesh failed because a peer aborted: the sender learns why.
		return status.Error(codes.Aborted, string(abortPayload(err)))
	case errors.Is(err, ErrMalformed):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrAssignmentMoved):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unavailable, err.Error())
}
