package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/rockstream/rockstream/internal/cluster"
	"github.com/rockstream/rockstream/internal/grpcraw"
)

// The gRPC service every process of a cluster serves: a stream of the
// protocol's messages (JSON-encoded cluster.Message, one a gRPC message;
// the receiver answers nothing but the stream's final status) and a unary
// Status call answering the node's state as JSON.
const (
	nodeService    = "rockstream.control.v1.Node"
	messagesMethod = "/" + nodeService + "/Messages"
	statusMethod   = "/" + nodeService + "/Status"
)

var messagesDesc = grpc.StreamDesc{StreamName: "Messages", ServerStreams: true, ClientStreams: true}

// GRPCNetworkConfig configures a GRPCNetwork.
type GRPCNetworkConfig struct {
	// Keys is the cluster's key layout: where nodes advertise their
	// endpoints and where the coordinator's election is.
	Keys Keys
	// QueueSize bounds the messages waiting to be sent to one node
	// (default 1024); past it, messages to that node are dropped.
	QueueSize int
	// AddressTTL is the lease of the advertised endpoint keys (default
	// 5 s): how long the key of a process that died stays.
	AddressTTL time.Duration
	// Logger receives the network's log lines; nil discards them.
	Logger *slog.Logger
}

// GRPCNetwork is a Network between processes over gRPC. Each process
// serves one endpoint and advertises its address in etcd under
// Keys.Node(id) for each node it holds (Advertise); messages to the
// coordinator go to the address the election's leader campaigned with.
// Messages to nodes attached in this process are handed over directly.
//
// Delivery is best effort, as the protocol expects: each destination has
// a bounded queue drained by one stream, in order; a full queue drops,
// and a stream that fails is reopened (the address resolved again) after
// a short pause, losing what it was sending. Send never blocks.
type GRPCNetwork struct {
	cfg    GRPCNetworkConfig
	cli    *clientv3.Client
	server *grpc.Server
	lis    net.Listener
	served chan error
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		local  map[cluster.NodeID]Receiver
		peers  map[cluster.NodeID]chan cluster.Message
		status func(withState bool) any
		leases []clientv3.LeaseID
		closed bool
	}
}

// ListenGRPC serves the network's endpoint on lis, with cli for the
// address lookups. Close stops it.
func ListenGRPC(lis net.Listener, cli *clientv3.Client, cfg GRPCNetworkConfig) *GRPCNetwork {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 1024
	}
	if cfg.AddressTTL <= 0 {
		cfg.AddressTTL = 5 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &GRPCNetwork{cfg: cfg, cli: cli, lis: lis, served: make(chan error, 1), log: log}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.mu.local = map[cluster.NodeID]Receiver{}
	n.mu.peers = map[cluster.NodeID]chan cluster.Message{}
	n.server = grpc.NewServer(grpc.ForceServerCodec(grpcraw.Codec{}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}))
	sd := messagesDesc
	sd.Handler = func(_ any, s grpc.ServerStream) error { return n.serveMessages(s) }
	n.server.RegisterService(&grpc.ServiceDesc{
		ServiceName: nodeService, HandlerType: (*any)(nil), Streams: []grpc.StreamDesc{sd},
		Methods: []grpc.MethodDesc{{MethodName: "Status", Handler: n.serveStatus}},
	}, n)
	go func() { n.served <- n.server.Serve(lis) }()
	return n
}

// Addr is the address the endpoint listens on, as it is advertised.
func (n *GRPCNetwork) Addr() string { return n.lis.Addr().String() }

// Attach makes r receive the messages to id that reach this process.
func (n *GRPCNetwork) Attach(id cluster.NodeID, r Receiver) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.local[id] = r
}

// SetStatus makes the endpoint's Status call answer f, as JSON; withState
// asks for the node's data as well.
func (n *GRPCNetwork) SetStatus(f func(withState bool) any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.status = f
}

// Advertise puts the endpoint's address under Keys.Node(id), bound to a
// lease the network keeps alive until Close (and registers again if etcd
// lost it). It returns once the first put succeeded.
func (n *GRPCNetwork) Advertise(ctx context.Context, id cluster.NodeID) error {
	lease, err := n.advertiseOnce(ctx, id)
	if err != nil {
		return err
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for n.ctx.Err() == nil {
			ch, err := n.cli.KeepAlive(n.ctx, lease)
			if err == nil {
				for range ch {
				}
			}
			if n.ctx.Err() != nil {
				return
			}
			n.log.Warn("endpoint key lost; advertising again", "node", string(id))
			for n.ctx.Err() == nil {
				if lease, err = n.advertiseOnce(n.ctx, id); err == nil {
					break
				}
				sleepCtx(n.ctx, time.Second)
			}
		}
	}()
	return nil
}

func (n *GRPCNetwork) advertiseOnce(ctx context.Context, id cluster.NodeID) (clientv3.LeaseID, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g, err := n.cli.Grant(ctx, ttlSeconds(n.cfg.AddressTTL))
	if err != nil {
		return 0, fmt.Errorf("control: advertise %s: %w", id, err)
	}
	if _, err := n.cli.Put(ctx, n.cfg.Keys.Node(id), n.Addr(), clientv3.WithLease(g.ID)); err != nil {
		return 0, fmt.Errorf("control: advertise %s: %w", id, err)
	}
	n.mu.Lock()
	n.mu.leases = append(n.mu.leases, g.ID)
	n.mu.Unlock()
	return g.ID, nil
}

// Resolve returns the address of node id's endpoint: the advertised one,
// or for the coordinator the address the election's leader campaigned
// with.
func (n *GRPCNetwork) Resolve(ctx context.Context, id cluster.NodeID) (string, error) {
	return ResolveNode(ctx, n.cli, n.cfg.Keys, id)
}

// Resolve returns the address of node id's endpoint in the store's
// cluster (see GRPCNetwork.Resolve).
func (s *Store) Resolve(ctx context.Context, id cluster.NodeID) (string, error) {
	return ResolveNode(ctx, s.cli, s.keys, id)
}

// ResolveNode returns the address of node id's endpoint in the cluster of
// keys (see GRPCNetwork.Resolve).
func ResolveNode(ctx context.Context, cli *clientv3.Client, keys Keys, id cluster.NodeID) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var resp *clientv3.GetResponse
	var err error
	if id == cluster.CoordinatorID {
		// concurrency.Election keeps candidates under the prefix plus "/";
		// the leader is the oldest.
		resp, err = cli.Get(ctx, keys.Election()+"/", clientv3.WithFirstCreate()...)
	} else {
		resp, err = cli.Get(ctx, keys.Node(id))
	}
	if err != nil {
		return "", fmt.Errorf("control: resolve %s: %w", id, err)
	}
	if len(resp.Kvs) == 0 {
		return "", fmt.Errorf("control: resolve %s: no endpoint advertised", id)
	}
	return string(resp.Kvs[0].Value), nil
}

// Send implements Network.
func (n *GRPCNetwork) Send(m cluster.Message) {
	n.mu.Lock()
	if n.mu.closed {
		n.mu.Unlock()
		return
	}
	if r := n.mu.local[m.To]; r != nil {
		n.mu.Unlock()
		r(m)
		return
	}
	q := n.mu.peers[m.To]
	if q == nil {
		q = make(chan cluster.Message, n.cfg.QueueSize)
		n.mu.peers[m.To] = q
		n.wg.Add(1)
		go n.sendLoop(m.To, q)
	}
	n.mu.Unlock()
	select {
	case q <- m:
	default: // dropped: the protocol resends
	}
}

// sendLoop drains the queue of node id through a stream to its endpoint,
// reopened whenever it fails.
func (n *GRPCNetwork) sendLoop(id cluster.NodeID, q <-chan cluster.Message) {
	defer n.wg.Done()
	for n.ctx.Err() == nil {
		addr, err := n.Resolve(n.ctx, id)
		if err == nil {
			err = n.stream(id, addr, q)
		}
		if n.ctx.Err() != nil {
			return
		}
		n.log.Debug("stream to node ended", "to", string(id), "addr", addr, "err", err)
		sleepCtx(n.ctx, 100*time.Millisecond)
	}
}

// followEvery is how often a stream looks up its destination's address
// again; it is reopened when the address moved (another coordinator was
// elected, the node restarted elsewhere), so that a stream to a process
// that stopped without closing it (SIGSTOP, a partition), which gRPC's
// keepalive would notice only after 10 s or more, does not hold up the
// messages to its successor.
const followEvery = 250 * time.Millisecond

func (n *GRPCNetwork) stream(id cluster.NodeID, addr string, q <-chan cluster.Message) error {
	conn, err := dial(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(n.ctx)
	defer cancel()
	moved := make(chan string, 1)
	go func() {
		t := time.NewTicker(followEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if now, err := n.Resolve(ctx, id); err == nil && now != addr {
				moved <- now
				cancel()
				return
			}
		}
	}()
	s, err := conn.NewStream(ctx, &messagesDesc, messagesMethod)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() {
		// The receiver sends nothing; this returns when the stream ends.
		var r grpcraw.Message
		ended <- s.RecvMsg(&r)
		cancel()
	}()
	for {
		select {
		case <-ctx.Done():
			select {
			case now := <-moved:
				return fmt.Errorf("control: %s moved from %s to %s", id, addr, now)
			case err := <-ended:
				return err
			default:
				return ctx.Err()
			}
		case m := <-q:
			data, err := json.Marshal(m)
			if err != nil {
				continue
			}
			if err := s.SendMsg(&grpcraw.Message{B: data}); err != nil {
				select {
				case now := <-moved:
					return fmt.Errorf("control: %s moved from %s to %s", id, addr, now)
				default:
				}
				return err
			}
		}
	}
}

func dial(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(grpcraw.Codec{})),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 2 * time.Second, Timeout: 2 * time.Second, PermitWithoutStream: true}),
	)
}

// serveMessages delivers one sender's messages to the nodes attached here
// until its stream ends; a message that does not decode ends the stream.
func (n *GRPCNetwork) serveMessages(s grpc.ServerStream) error {
	for {
		var r grpcraw.Message
		if err := s.RecvMsg(&r); err != nil {
			return nil // the sender closed or went away
		}
		var m cluster.Message
		if err := json.Unmarshal(r.B, &m); err != nil {
			return status.Errorf(codes.InvalidArgument, "control: a message that does not decode: %v", err)
		}
		n.mu.Lock()
		rcv := n.mu.local[m.To]
		n.mu.Unlock()
		if rcv != nil {
			rcv(m)
		}
	}
}

func (n *GRPCNetwork) serveStatus(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var req grpcraw.Message
	if err := dec(&req); err != nil {
		return nil, err
	}
	n.mu.Lock()
	f := n.mu.status
	n.mu.Unlock()
	if f == nil {
		return nil, status.Error(codes.Unavailable, "control: this node reports no status yet")
	}
	var q statusQuery
	if len(req.B) > 0 {
		if err := json.Unmarshal(req.B, &q); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "control: a status request that does not decode: %v", err)
		}
	}
	data, err := json.Marshal(f(q.State))
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &grpcraw.Message{B: data}, nil
}

// statusQuery is the request of the Status call.
type statusQuery struct {
	State bool `json:"state"`
}

// NodeStatus calls the Status method of the endpoint at addr, with the
// node's data when withState is set, and decodes its answer into into.
func NodeStatus(ctx context.Context, addr string, withState bool, into any) error {
	conn, err := dial(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	req, _ := json.Marshal(statusQuery{State: withState})
	var resp grpcraw.Message
	if err := conn.Invoke(ctx, statusMethod, &grpcraw.Message{B: req}, &resp); err != nil {
		return fmt.Errorf("control: status of %s: %w", addr, err)
	}
	return json.Unmarshal(resp.B, into)
}

// Close stops the endpoint and the streams, and revokes the advertised
// keys' leases so that they go at once.
func (n *GRPCNetwork) Close() error {
	n.mu.Lock()
	if n.mu.closed {
		n.mu.Unlock()
		return nil
	}
	n.mu.closed = true
	leases := n.mu.leases
	n.mu.Unlock()
	n.cancel()
	n.server.Stop()
	n.wg.Wait()
	for _, l := range leases {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = n.cli.Revoke(ctx, l)
		cancel()
	}
	if err := <-n.served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
