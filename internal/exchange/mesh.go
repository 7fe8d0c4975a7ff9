package exchange

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rockstream/rockstream/internal/zset"
)

// Mesh is the exchange among the members of one assignment. Its calls
// (Exchange, Any, Max) are made one at a time, by one caller, and every
// member passes the same keys in the same order, as the workers of a
// circuit pass its exchanges. After a call fails, the mesh has failed:
// every later call returns the same error, and the caller closes it.
type Mesh struct {
	node  *Node
	a     Assignment
	links []*link // by peer; nil for Self
	ctx   context.Context
	stop  context.CancelFunc
	// sent counts the frame bytes sent to peers (BytesSent).
	sent      atomic.Int64
	closeOnce sync.Once

	mu struct {
		sync.Mutex
		// msgs holds what peers sent, by message, until a call takes it.
		// buffered counts the bytes of the messages no call has asked
		// for yet, which BufferBytes bounds.
		msgs     map[msgID]*message
		buffered int
		// streams counts each peer's open streams into this mesh; lost
		// is why its last one ended (nil while one is open).
		streams []int
		lost    []error
		// aborted holds why each peer aborted (its abort frame), which
		// fails the calls waiting for a part it has not sent.
		aborted []error
		err     error  // why the mesh failed; set once
		abort   []byte // the payload of this member's abort frame (Abort)
		changed chan struct{}
	}
}

// msgID names one message: what one sender sent for one key.
type msgID struct {
	kind   kind
	key    Key
	sender int
}

// message is a message being received or received.
type message struct {
	chunks [][]byte // the payloads so far, until the last is in
	bytes  int
	next   uint32 // the sequence number of the next chunk
	asked  bool   // a call waits for it; its bytes are not buffered
	done   bool
	err    error // why it could not be received
	batch  zset.Batch
	value  int64
}

func newMesh(n *Node, a Assignment) *Mesh {
	m := &Mesh{node: n, a: a, links: make([]*link, len(a.Peers))}
	m.ctx, m.stop = context.WithCancel(context.Background())
	for p, addr := range a.Peers {
		if p != a.Self {
			m.links[p] = &link{m: m, peer: p, addr: addr}
		}
	}
	m.mu.msgs = make(map[msgID]*message)
	m.mu.streams = make([]int, len(a.Peers))
	m.mu.lost = make([]error, len(a.Peers))
	m.mu.aborted = make([]error, len(a.Peers))
	m.mu.changed = make(chan struct{})
	return m
}

// Assignment returns the assignment m serves.
func (m *Mesh) Assignment() Assignment { return m.a }

// Self is this member's index in the assignment.
func (m *Mesh) Self() int { return m.a.Self }

// Members is how many members the assignment has.
func (m *Mesh) Members() int { return len(m.a.Peers) }

// BytesSent is how many frame bytes, headers included, m's calls have
// sent to its peers.
func (m *Mesh) BytesSent() int64 { return m.sent.Load() }

// Close fails m's pending and later calls with ErrClosed, tells its
// peers that it left (the abort frame of ErrClosed, unless it aborted
// already or its assignment moved), so that their calls waiting for its
// parts fail, ends its
// streams to them and detaches it from its node. It gives the peers up
// to closeGrace to take the frames sent before their streams end.
func (m *Mesh) Close() {
	m.closeOnce.Do(func() {
		m.fail(ErrClosed)
		// A mesh whose assignment moved says nothing: its peers learn it
		// from the refusals of the newer revision its node joined.
		if !errors.Is(m.failed(), ErrAssignmentMoved) && m.markAborted(ErrClosed) {
			m.tell(ErrClosed, closeGrace)
		}
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		var wg sync.WaitGroup
		for _, l := range m.links {
			if l != nil {
				wg.Go(func() { l.close(ctx) })
			}
		}
		waitOrDone(ctx, &wg)
		cancel()
		m.stop()
		m.node.detach(m)
	})
}

// fail records err as why m failed, if it has not failed yet, and wakes
// every waiter.
func (m *Mesh) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.err == nil {
		m.mu.err = err
		m.notifyLocked()
	}
}

func (m *Mesh) notifyLocked() {
	close(m.mu.changed)
	m.mu.changed = make(chan struct{})
}

// Exchange sends out[p] to peer p, for every peer, and returns what each
// peer sent this member for key, by peer. Its own part, out[Self], stays
// local: in[Self] is out[Self].
func (m *Mesh) Exchange(ctx context.Context, key Key, out []zset.Batch) ([]zset.Batch, error) {
	if len(out) != len(m.a.Peers) {
		return nil, fmt.Errorf("exchange: %d outgoing parts for %d peers", len(out), len(m.a.Peers))
	}
	msgs, err := m.call(ctx, kindBatch, key, func(p int) ([][]byte, error) { return m.batchFrames(key, out[p]) })
	if err != nil {
		return nil, err
	}
	in := make([]zset.Batch, len(out))
	for p, msg := range msgs {
		if msg != nil {
			in[p] = msg.batch
		}
	}
	in[m.a.Self] = out[m.a.Self]
	return in, nil
}

// Any reports whether any member passed true for key.
func (m *Mesh) Any(ctx context.Context, key Key, local bool) (bool, error) {
	v := int64(0)
	if local {
		v = 1
	}
	r, err := m.agree(ctx, kindAny, key, v)
	return r != 0, err
}

// Max returns the largest value the members passed for key.
func (m *Mesh) Max(ctx context.Context, key Key, local int64) (int64, error) {
	return m.agree(ctx, kindMax, key, local)
}

func (m *Mesh) agree(ctx context.Context, k kind, key Key, local int64) (int64, error) {
	frame := [][]byte{appendFrame(nil, m.header(k, key, 0, true), binary.LittleEndian.AppendUint64(nil, uint64(local)))}
	msgs, err := m.call(ctx, k, key, func(int) ([][]byte, error) { return frame, nil })
	if err != nil {
		return 0, err
	}
	r := local
	for p, msg := range msgs {
		if p != m.a.Self {
			r = max(r, msg.value)
		}
	}
	return r, nil
}

func (m *Mesh) header(k kind, key Key, seq uint32, last bool) header {
	return header{kind: k, last: last, sender: uint32(m.a.Self), revision: m.a.Revision, key: key, sequence: seq}
}

// batchFrames returns the frames of b for key: its Arrow IPC stream cut
// into chunks of at most ChunkBytes, at least one frame.
func (m *Mesh) batchFrames(key Key, b zset.Batch) ([][]byte, error) {
	ipc, err := EncodeBatch(nil, b)
	if err != nil {
		return nil, err
	}
	chunk := m.node.opts.ChunkBytes
	frames := make([][]byte, 0, len(ipc)/chunk+1)
	for seq := 0; ; seq++ {
		n := min(chunk, len(ipc))
		last := n == len(ipc)
		frames = append(frames, appendFrame(make([]byte, 0, headerSize+n), m.header(kindBatch, key, uint32(seq), last), ipc[:n]))
		ipc = ipc[n:]
		if last {
			return frames, nil
		}
	}
}

// call sends every peer its frames (made by framesFor) and waits for the
// message of kind k and key from every peer, returned by peer (nil for
// Self). Any failure fails the mesh.
func (m *Mesh) call(ctx context.Context, k kind, key Key, framesFor func(p int) ([][]byte, error)) ([]*message, error) {
	if err := m.failed(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// A call whose context has ended sends nothing: its part would
		// tell the peers it got this far.
		err = fmt.Errorf("%w: the %s call for %v: %w", ErrPeerLost, k, key, err)
		m.fail(err)
		return nil, err
	}
	m.ask(k, key)
	var wg sync.WaitGroup
	for p, l := range m.links {
		if l == nil {
			continue
		}
		frames, err := framesFor(p)
		if err != nil {
			m.fail(err)
			break
		}
		wg.Go(func() {
			if err := l.send(ctx, frames); err != nil {
				m.failOrGone(p, err)
				return
			}
			n := 0
			for _, f := range frames {
				n += len(f)
			}
			m.sent.Add(int64(n))
		})
	}
	msgs, err := m.await(ctx, k, key)
	wg.Wait()
	if err == nil {
		err = m.failed()
	}
	return msgs, err
}

// failOrGone fails m with err, unless err says peer p aborted (its
// abort, or its refusal of a frame after it): then only the calls that
// wait for a part p did not send fail (await), as p's abort frame makes
// them.
func (m *Mesh) failOrGone(p int, err error) {
	if !errors.Is(err, ErrPeerAborted) {
		m.fail(err)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.aborted[p] == nil {
		m.mu.aborted[p] = err
	}
	m.notifyLocked()
}

func (m *Mesh) failed() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.err
}

// ask marks the messages of k and key from every peer as asked for: their
// bytes leave the buffer bound, and their frames are admitted at once.
func (m *Mesh) ask(k kind, key Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.a.Peers {
		if p == m.a.Self {
			continue
		}
		id := msgID{k, key, p}
		msg := m.mu.msgs[id]
		if msg == nil {
			msg = &message{}
			m.mu.msgs[id] = msg
		}
		if !msg.asked {
			msg.asked = true
			m.mu.buffered -= msg.bytes
		}
	}
	m.notifyLocked()
}

// await waits until every peer's message of k and key is in and takes
// them, or fails: a peer's stream ended before it, the mesh failed, or
// ctx ended.
func (m *Mesh) await(ctx context.Context, k kind, key Key) ([]*message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		if m.mu.err != nil {
			return nil, m.mu.err
		}
		var missing []int
		for p := range m.a.Peers {
			msg := m.mu.msgs[msgID{k, key, p}]
			if p == m.a.Self || msg.done {
				continue
			}
			if msg.err != nil {
				err := fmt.Errorf("peer %d (%s)'s %s part of %v: %w", p, m.a.Peers[p], k, key, msg.err)
				m.failLocked(err)
				return nil, err
			}
			if err := m.mu.aborted[p]; err != nil {
				m.failLocked(err)
				return nil, err
			}
			if m.mu.streams[p] == 0 && m.mu.lost[p] != nil {
				err := fmt.Errorf("%w: peer %d (%s) ended its stream before its %s part of %v: %w",
					ErrPeerLost, p, m.a.Peers[p], k, key, m.mu.lost[p])
				m.failLocked(err)
				return nil, err
			}
			missing = append(missing, p)
		}
		if len(missing) == 0 {
			break
		}
		changed := m.mu.changed
		m.mu.Unlock()
		select {
		case <-changed:
			m.mu.Lock()
		case <-ctx.Done():
			m.mu.Lock()
			err := fmt.Errorf("%w: no %s part of %v from peers %v (%s): %w",
				ErrPeerLost, k, key, missing, m.addrs(missing), ctx.Err())
			m.failLocked(err)
			return nil, err
		}
	}
	msgs := make([]*message, len(m.a.Peers))
	for p := range m.a.Peers {
		if p != m.a.Self {
			id := msgID{k, key, p}
			msgs[p] = m.mu.msgs[id]
			delete(m.mu.msgs, id)
		}
	}
	return msgs, nil
}

func (m *Mesh) failLocked(err error) {
	if m.mu.err == nil {
		m.mu.err = err
		m.notifyLocked()
	}
}

func (m *Mesh) addrs(peers []int) []string {
	s := make([]string, len(peers))
	for i, p := range peers {
		s[i] = m.a.Peers[p]
	}
	return s
}

// streamStarted and streamEnded track peer p's streams into m.
func (m *Mesh) streamStarted(p int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.streams[p]++
	m.mu.lost[p] = nil
}

// streamEnded records why peer p's stream ended (nil: it closed it) and
// drops p's partly received messages: the messages a call waits for fail
// with why. A stream this node refused (refused) says nothing of the
// peer, whose name anyone can send; one that ended otherwise, when it was
// p's last, means p is lost.
func (m *Mesh) streamEnded(p int, why error, refused bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.streams[p]--
	if !refused && m.mu.streams[p] > 0 {
		return
	}
	if why == nil {
		why = errors.New("the stream was closed")
	}
	if !refused {
		m.mu.lost[p] = why
		why = fmt.Errorf("%w: its stream ended: %w", ErrPeerLost, why)
	}
	for id, msg := range m.mu.msgs {
		if id.sender != p || msg.done || (msg.next == 0 && msg.err == nil) {
			continue
		}
		if !msg.asked {
			m.mu.buffered -= msg.bytes
			delete(m.mu.msgs, id)
			continue
		}
		msg.chunks, msg.bytes, msg.next = nil, 0, 0
		if msg.err == nil {
			msg.err = why
		}
	}
	m.notifyLocked()
}

// deliver takes one frame of h's sender, holding it back while the bytes
// buffered for messages not yet asked for would pass BufferBytes. On the
// last chunk of a message it decodes the message.
func (m *Mesh) deliver(ctx context.Context, h header, payload []byte) error {
	if h.kind == kindAbort {
		err := m.peerAborted(int(h.sender), payload)
		if errors.Is(err, ErrMalformed) {
			return err
		}
		m.failOrGone(int(h.sender), err)
		return nil
	}
	id := msgID{h.kind, h.key, int(h.sender)}
	m.mu.Lock()
	var msg *message
	for {
		if m.mu.abort != nil {
			err := abortRefusal{m.mu.abort}
			m.mu.Unlock()
			return err
		}
		if m.mu.err != nil {
			err := m.mu.err
			m.mu.Unlock()
			return err
		}
		msg = m.mu.msgs[id]
		switch {
		case msg == nil && h.sequence != 0:
			m.mu.Unlock()
			return malformed("chunk %d of sender %d's %s message for %v without its first", h.sequence, h.sender, h.kind, h.key)
		case msg != nil && (msg.done || h.sequence != msg.next):
			m.mu.Unlock()
			return malformed("chunk %d of sender %d's %s message for %v out of sequence", h.sequence, h.sender, h.kind, h.key)
		}
		if (msg != nil && msg.asked) || m.mu.buffered == 0 || m.mu.buffered+len(payload) <= m.node.opts.BufferBytes {
			break
		}
		changed := m.mu.changed
		m.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
		m.mu.Lock()
	}
	if msg == nil {
		msg = &message{}
		m.mu.msgs[id] = msg
	}
	msg.chunks = append(msg.chunks, payload)
	msg.bytes += len(payload)
	msg.next++
	if !msg.asked {
		m.mu.buffered += len(payload)
	}
	if !h.last {
		m.mu.Unlock()
		return nil
	}
	chunks := msg.chunks
	msg.chunks = nil
	m.mu.Unlock()

	var (
		batch zset.Batch
		value int64
		err   error
	)
	if h.kind == kindBatch {
		payload := chunks[0]
		if len(chunks) > 1 {
			payload = slices.Concat(chunks...)
		}
		batch, err = DecodeBatch(payload)
	} else {
		value = int64(binary.LittleEndian.Uint64(chunks[0]))
		if h.kind == kindAny && value != 0 && value != 1 {
			err = malformed("an any frame carries %d, not 0 or 1", value)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		if m.mu.msgs[id] == msg {
			msg.err = err
			m.notifyLocked()
		}
		return fmt.Errorf("sender %d's %s part of %v: %w", h.sender, h.kind, h.key, err)
	}
	if m.mu.msgs[id] == msg { // not dropped by a failure meanwhile
		msg.batch, msg.value, msg.done = batch, value, true
		m.notifyLocked()
	}
	return nil
}
