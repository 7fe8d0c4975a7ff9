package exchange

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
	"pgregory.net/rapid"
)

// startNodes starts n nodes on loopback ports, closed when the test ends.
func startNodes(t testing.TB, n int, opts Options) []*Node {
	t.Helper()
	nodes := make([]*Node, n)
	for i := range nodes {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if nodes[i], err = Listen(lis, opts); err != nil {
			t.Fatal(err)
		}
		node := nodes[i]
		t.Cleanup(func() {
			if err := node.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	return nodes
}

func addrsOf(nodes []*Node) []string {
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr()
	}
	return addrs
}

// joinAll makes nodes join revision rev with peers (by default the
// nodes), as the last len(nodes) of peers.
func joinAll(t testing.TB, nodes []*Node, rev uint64, peers ...string) []*Mesh {
	t.Helper()
	if peers == nil {
		peers = addrsOf(nodes)
	}
	meshes := make([]*Mesh, len(nodes))
	for i, n := range nodes {
		m, err := n.Join(Assignment{Revision: rev, Self: len(peers) - len(nodes) + i, Peers: peers})
		if err != nil {
			t.Fatal(err)
		}
		meshes[i] = m
	}
	return meshes
}

// part is what member from sends member to for key k: a random batch
// over random columns, the same for the same arguments.
func part(k Key, from, to int) zset.Batch {
	seed := int(k.Epoch)*1_000_003 + int(k.Node)*10_007 + int(k.Iteration)*101 + from*11 + to
	return rapid.Custom(func(t *rapid.T) zset.Batch { return drawBatch(t, 40) }).Example(seed)
}

// runAll runs f on every mesh at once and returns their errors.
func runAll(meshes []*Mesh, f func(i int, m *Mesh) error) []error {
	errList := make([]error, len(meshes))
	var wg sync.WaitGroup
	for i, m := range meshes {
		wg.Go(func() { errList[i] = f(i, m) })
	}
	wg.Wait()
	return errList
}

func noErrors(t *testing.T, errList []error) {
	t.Helper()
	for i, err := range errList {
		if err != nil {
			t.Fatalf("mesh %d: %v", i, err)
		}
	}
}

// exchangeKey runs one Exchange of key k on mesh i and checks what it
// gets against the parts every member sends.
func exchangeKey(ctx context.Context, m *Mesh, i int, k Key) error {
	n := len(m.a.Peers)
	out := make([]zset.Batch, n)
	for p := range out {
		out[p] = part(k, i, p)
	}
	in, err := m.Exchange(ctx, k, out)
	if err != nil {
		return err
	}
	for p := range in {
		if err := equalEntries(in[p], part(k, p, i)); err != nil {
			return fmt.Errorf("%v from %d: %w", k, p, err)
		}
	}
	return nil
}

func equalEntries(got, want zset.Batch) (err error) {
	var f fatalf
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	sameEntries(&f, got, want)
	return nil
}

// fatalf adapts sameEntries to return an error through a panic.
type fatalf struct{}

func (*fatalf) Helper()                           {}
func (*fatalf) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// TestExchangeManyKeys runs three meshes through many keys, agreements
// between the exchanges, members sleeping at random so that some run
// ahead; every member gets exactly what the others sent it.
func TestExchangeManyKeys(t *testing.T) {
	nodes := startNodes(t, 3, Options{ChunkBytes: 4 << 10, BufferBytes: 16 << 10})
	meshes := joinAll(t, nodes, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	noErrors(t, runAll(meshes, func(i int, m *Mesh) error {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		for e := range uint64(3) {
			for node := range int32(12) {
				k := Key{Epoch: e, Scope: 0, Node: node}
				if rng.IntN(4) == 0 {
					time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
				}
				if err := exchangeKey(ctx, m, i, k); err != nil {
					return err
				}
				// Max and Any of values every member can compute.
				got, err := m.Max(ctx, k, int64(i*7)-int64(node))
				if err != nil {
					return err
				}
				if want := int64(14) - int64(node); got != want {
					return fmt.Errorf("Max of %v: %d, want %d", k, got, want)
				}
				any, err := m.Any(ctx, k, int32(i) == node%4)
				if err != nil {
					return err
				}
				if want := node%4 < 3; any != want {
					return fmt.Errorf("Any of %v: %v, want %v", k, any, want)
				}
			}
		}
		return nil
	}))
}

// TestRunAheadIsBounded has member 0 send a large part for a key member 1
// has not asked for yet: member 1 buffers at most BufferBytes of it, and
// member 0 is held back until member 1 asks.
func TestRunAheadIsBounded(t *testing.T) {
	opts := Options{ChunkBytes: 16 << 10, BufferBytes: 64 << 10}
	nodes := startNodes(t, 2, opts)
	meshes := joinAll(t, nodes, 1)
	big := textBatch(2000, 400) // about 800 KB
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k := Key{Node: 1}
	done := make(chan error, 1)
	go func() {
		in, err := meshes[0].Exchange(ctx, k, []zset.Batch{nil, big})
		if err == nil && len(in[1]) != 0 {
			err = fmt.Errorf("member 0 got %d entries, want none", len(in[1]))
		}
		done <- err
	}()
	// Member 0 sends until the bound holds it back: what member 1 buffers
	// never passes the bound, though the part is many times larger.
	m1 := meshes[1]
	peak := waitBuffered(t, m1)
	for range 50 {
		time.Sleep(5 * time.Millisecond)
		m1.mu.Lock()
		peak = max(peak, m1.mu.buffered)
		m1.mu.Unlock()
	}
	if peak > opts.BufferBytes {
		t.Fatalf("member 1 buffers %d bytes, want at most %d", peak, opts.BufferBytes)
	}
	in, err := m1.Exchange(ctx, k, []zset.Batch{nil, nil})
	if err != nil {
		t.Fatal(err)
	}
	sameEntries(t, in[0], big)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m1.mu.Lock()
	defer m1.mu.Unlock()
	if m1.mu.buffered != 0 || len(m1.mu.msgs) != 0 {
		t.Fatalf("after the exchange member 1 holds %d bytes in %d messages", m1.mu.buffered, len(m1.mu.msgs))
	}
}

// textBatch is rows of an int8 and a text of width bytes.
func textBatch(rows, width int) zset.Batch {
	b := make(zset.Batch, rows)
	s := strings.Repeat("abcdefghij", width/10+1)[:width]
	for i := range b {
		b[i] = zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, int64(i)), types.MakeText(s)}, Weight: int64(i%5 - 2)}
	}
	return b
}

// TestBatchOverMessageLimit sends a batch several times gRPC's message
// limit: it travels as many frames.
func TestBatchOverMessageLimit(t *testing.T) {
	nodes := startNodes(t, 2, Options{})
	meshes := joinAll(t, nodes, 1)
	big := textBatch(12_000, 1000) // about 12 MB against a 4 MiB limit
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	k := Key{Node: 3}
	res := make([][]zset.Batch, 2)
	noErrors(t, runAll(meshes, func(i int, m *Mesh) (err error) {
		out := []zset.Batch{nil, nil}
		out[1-i] = big
		res[i], err = m.Exchange(ctx, k, out)
		return err
	}))
	sameEntries(t, res[0][1], big)
	sameEntries(t, res[1][0], big)
}

// wantErr fails t unless err is target and mentions every one of parts.
func wantErr(t *testing.T, err, target error, parts ...string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not say %q", err, p)
		}
	}
}

// TestStaleRevision: a node that joined revision 2 refuses the frames of
// revision 1, and the senders' exchanges fail saying the assignment
// moved; at revision 2 they exchange again.
func TestStaleRevision(t *testing.T) {
	nodes := startNodes(t, 3, Options{})
	old := joinAll(t, nodes, 1)
	if _, err := nodes[0].Join(Assignment{Revision: 1, Self: 0, Peers: addrsOf(nodes)}); err == nil {
		t.Fatal("joined revision 1 twice")
	}
	m0, err := nodes[0].Join(Assignment{Revision: 2, Self: 0, Peers: addrsOf(nodes)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	k := Key{Node: 1}
	_, err = old[0].Exchange(ctx, k, make([]zset.Batch, 3))
	wantErr(t, err, ErrAssignmentMoved, "joined revision 2")
	errList := runAll(old[1:], func(i int, m *Mesh) error { return exchangeKey(ctx, m, i+1, k) })
	for _, err := range errList {
		wantErr(t, err, ErrAssignmentMoved, "revision 1", "at revision 2")
	}
	// A failed mesh stays failed.
	_, err = old[1].Max(ctx, Key{Node: 2}, 1)
	wantErr(t, err, ErrAssignmentMoved)
	for _, m := range old {
		m.Close()
	}
	meshes := append([]*Mesh{m0}, joinAll(t, nodes[1:], 2, addrsOf(nodes)...)...)
	noErrors(t, runAll(meshes, func(i int, m *Mesh) error { return exchangeKey(ctx, m, i, k) }))
}

// TestNewerRevision: a frame of a revision newer than the receiver's fails
// the receiver's pending exchange, and waits for the receiver to join the
// new revision, where it is delivered.
func TestNewerRevision(t *testing.T) {
	nodes := startNodes(t, 3, Options{})
	old := joinAll(t, nodes, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	k := Key{Epoch: 4, Node: 2}
	pending := make(chan error, 2)
	for i := 1; i <= 2; i++ {
		go func() { pending <- exchangeKey(ctx, old[i], i, k) }()
	}
	m0, err := nodes[0].Join(Assignment{Revision: 2, Self: 0, Peers: addrsOf(nodes)})
	if err != nil {
		t.Fatal(err)
	}
	done0 := make(chan error, 1)
	go func() { done0 <- exchangeKey(ctx, m0, 0, k) }()
	for range 2 {
		err := <-pending
		if !errors.Is(err, ErrAssignmentMoved) {
			t.Fatalf("pending exchange at revision 1: %v, want ErrAssignmentMoved", err)
		}
	}
	// The revision 2 frames were held; they arrive once the others join.
	meshes := append([]*Mesh{m0}, joinAll(t, nodes[1:], 2, addrsOf(nodes)...)...)
	noErrors(t, runAll(meshes[1:], func(i int, m *Mesh) error { return exchangeKey(ctx, m, i+1, k) }))
	if err := <-done0; err != nil {
		t.Fatal(err)
	}
}

// TestPeerClosedMidExchange closes a member while the others wait for
// its part: they fail at once, naming it, long before their deadline.
func TestPeerClosedMidExchange(t *testing.T) {
	nodes := startNodes(t, 3, Options{})
	meshes := joinAll(t, nodes, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	go func() {
		time.Sleep(200 * time.Millisecond)
		nodes[2].Close()
	}()
	errList := runAll(meshes[:2], func(i int, m *Mesh) error { return exchangeKey(ctx, m, i, Key{Node: 5}) })
	for _, err := range errList {
		wantErr(t, err, ErrPeerLost, "peer 2", nodes[2].Addr())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the exchange failed after %v", d)
	}
}

// TestPeerUnreachable: a member nobody listens for fails the exchange
// with ErrPeerLost within the deadline.
func TestPeerUnreachable(t *testing.T) {
	nodes := startNodes(t, 1, Options{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := lis.Addr().String()
	lis.Close()
	m, err := nodes[0].Join(Assignment{Revision: 1, Self: 0, Peers: []string{nodes[0].Addr(), gone}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = m.Exchange(ctx, Key{}, make([]zset.Batch, 2))
	wantErr(t, err, ErrPeerLost, "peer 1", gone)
}

// TestSilentPeerDeadline: a member that is reachable but never takes part
// makes the exchange fail when its context ends, naming it.
func TestSilentPeerDeadline(t *testing.T) {
	nodes := startNodes(t, 2, Options{})
	meshes := joinAll(t, nodes, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := meshes[0].Exchange(ctx, Key{Node: 9}, make([]zset.Batch, 2))
	wantErr(t, err, ErrPeerLost, "peers [1]", nodes[1].Addr(), "deadline exceeded")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v does not wrap the context's", err)
	}
}

func TestOptionsChecked(t *testing.T) {
	for _, o := range []Options{
		{ChunkBytes: 1 << 20, BufferBytes: 1 << 10},
		{ChunkBytes: 4 << 20},
		{ChunkBytes: -1},
	} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := Listen(lis, o); err == nil {
			n.Close()
			t.Errorf("options %+v accepted", o)
		}
		lis.Close()
	}
}

// TestPeerClosedMidMessage closes a member while the flow control holds
// it back in the middle of a large message: the receiver drops the part
// it has, and its exchange of that key fails, naming the member.
func TestPeerClosedMidMessage(t *testing.T) {
	nodes := startNodes(t, 2, Options{ChunkBytes: 16 << 10, BufferBytes: 64 << 10})
	meshes := joinAll(t, nodes, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	k := Key{Node: 6}
	sent := make(chan error, 1)
	go func() {
		_, err := meshes[1].Exchange(ctx, k, []zset.Batch{textBatch(2000, 400), nil})
		sent <- err
	}()
	m0 := meshes[0]
	waitBuffered(t, m0)
	nodes[1].Close()
	wantErr(t, <-sent, ErrClosed)
	_, err := m0.Exchange(ctx, k, []zset.Batch{nil, nil})
	wantErr(t, err, ErrPeerLost, "peer 1", nodes[1].Addr())
	m0.mu.Lock()
	defer m0.mu.Unlock()
	if m0.mu.buffered != 0 {
		t.Fatalf("%d bytes of the dropped message still counted", m0.mu.buffered)
	}
}

// waitBuffered waits until m buffers some bytes of messages not asked for
// yet, and returns how many.
func waitBuffered(t *testing.T, m *Mesh) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		m.mu.Lock()
		n := m.mu.buffered
		m.mu.Unlock()
		if n > 0 {
			return n
		}
	}
	t.Fatal("no bytes buffered after 10 s")
	return 0
}

// TestAbortTellsThePeers: a member that aborts before it sent anything
// (no stream open to any peer) makes the pending and later calls of the
// others fail promptly with ErrPeerAborted, carrying its error's
// SQLSTATE and message; its own later calls return its error.
func TestAbortTellsThePeers(t *testing.T) {
	nodes := startNodes(t, 3, Options{})
	meshes := joinAll(t, nodes, 1)
	defer func() {
		for _, m := range meshes {
			m.Close()
		}
	}()
	if meshes[1].Self() != 1 || meshes[1].Members() != 3 {
		t.Fatalf("Self %d, Members %d", meshes[1].Self(), meshes[1].Members())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cause := errs.New(errs.DivisionByZero, "division by zero")
	start := time.Now()
	errList := runAll(meshes, func(i int, m *Mesh) error {
		if i == 2 {
			m.Abort(cause)
			_, err := m.Max(ctx, Key{Epoch: 1}, 0)
			return err
		}
		return exchangeKey(ctx, m, i, Key{Epoch: 1, Node: 3})
	})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the calls took %v to fail", took)
	}
	for i, err := range errList {
		switch {
		case i == 2 && err != cause:
			t.Errorf("the aborting member's later call: %v, want its own error", err)
		case i < 2 && (!errors.Is(err, ErrPeerAborted) || errs.SQLState(err) != "22012" || !strings.Contains(err.Error(), "peer 2")):
			t.Errorf("member %d: %v (SQLSTATE %s), want ErrPeerAborted from peer 2 with 22012", i, err, errs.SQLState(err))
		}
	}
}

// TestAbortFrame: an abort frame is one chunk with a code; a frame
// without the code's terminator is malformed.
func TestAbortFrame(t *testing.T) {
	h := header{kind: kindAbort, last: true, sender: 1, revision: 2}
	if _, _, err := parseFrame(appendFrame(nil, h, []byte("RS22012\x00division by zero"))); err != nil {
		t.Fatal(err)
	}
	h.last = false
	if _, _, err := parseFrame(appendFrame(nil, h, []byte("RS22012\x00x"))); !errors.Is(err, ErrMalformed) {
		t.Fatalf("an abort frame of several chunks: %v", err)
	}
	m := &Mesh{a: Assignment{Peers: []string{"a", "b"}}}
	if err := m.peerAborted(1, []byte("no code")); !errors.Is(err, ErrMalformed) {
		t.Fatalf("an abort payload without its code: %v", err)
	}
}

// TestAbortedMeshRefusesFrames: a frame that reaches a member after it
// aborted (before its abort frame reached the sender, here never) is
// refused with the abort's error, so the sender fails with ErrPeerAborted
// and its SQLSTATE too.
func TestAbortedMeshRefusesFrames(t *testing.T) {
	nodes := startNodes(t, 2, Options{})
	addrs := addrsOf(nodes)
	m0, err := nodes[0].Join(Assignment{Revision: 1, Self: 0, Peers: addrs})
	if err != nil {
		t.Fatal(err)
	}
	defer m0.Close()
	// Member 1 names an address for member 0 where nothing listens: its
	// abort frame reaches nobody.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := lis.Addr().String()
	lis.Close()
	m1, err := nodes[1].Join(Assignment{Revision: 1, Self: 1, Peers: []string{nowhere, addrs[1]}})
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	m1.Abort(errs.New(errs.DivisionByZero, "division by zero"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = m0.Exchange(ctx, Key{Epoch: 1}, make([]zset.Batch, 2))
	if !errors.Is(err, ErrPeerAborted) || errs.SQLState(err) != "22012" || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("%v (SQLSTATE %s), want ErrPeerAborted with 22012", err, errs.SQLState(err))
	}
}

// TestCloseTellsThePeers: a member that closes its mesh tells its peers.
// The parts it sent before still count, even to a peer that asks for
// them only afterwards; a call waiting for a part it never sent fails
// promptly with ErrPeerAborted (57P01), though it had opened no stream
// to that peer before.
func TestCloseTellsThePeers(t *testing.T) {
	nodes := startNodes(t, 3, Options{})
	meshes := joinAll(t, nodes, 1)
	defer func() {
		for _, m := range meshes {
			m.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Member 0 sends its part of k1, then leaves before the others ask.
	k1, k2 := Key{Epoch: 1, Node: 1}, Key{Epoch: 1, Node: 2}
	sent := make(chan error, 1)
	go func() {
		_, err := meshes[0].Max(ctx, k1, 7)
		sent <- err
	}()
	for meshes[0].BytesSent() < 2*(headerSize+8) {
		time.Sleep(time.Millisecond)
	}
	meshes[0].Close()
	if err := <-sent; !errors.Is(err, ErrClosed) {
		t.Fatalf("the closed member's call: %v", err)
	}
	start := time.Now()
	noErrors(t, runAll(meshes[1:], func(i int, m *Mesh) error {
		v, err := m.Max(ctx, k1, int64(i))
		if err == nil && v != 7 {
			err = fmt.Errorf("max %d, want 7", v)
		}
		return err
	}))
	for i, err := range runAll(meshes[1:], func(i int, m *Mesh) error { return exchangeKey(ctx, m, i+1, k2) }) {
		if !errors.Is(err, ErrPeerAborted) || errs.SQLState(err) != "57P01" {
			t.Errorf("member %d: %v (SQLSTATE %s), want ErrPeerAborted with 57P01", i+1, err, errs.SQLState(err))
		}
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the calls took %v", took)
	}
}
