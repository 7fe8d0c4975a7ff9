package exchange

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/grpcraw"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func TestFrameRoundTrip(t *testing.T) {
	h := header{kind: kindBatch, last: true, sender: 2, revision: 1 << 40, key: Key{Epoch: 9, Scope: 3, Node: -1, Iteration: 7}, sequence: 5}
	f := appendFrame([]byte("prefix"), h, []byte("payload"))[len("prefix"):]
	if len(f) != headerSize+len("payload") {
		t.Fatalf("frame of %d bytes", len(f))
	}
	got, payload, err := parseFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	if got != h || string(payload) != "payload" {
		t.Fatalf("parsed %+v %q, want %+v", got, payload, h)
	}
}

// TestParseFrameErrors shows the message of each way a frame is broken.
func TestParseFrameErrors(t *testing.T) {
	good := appendFrame(nil, header{kind: kindMax, last: true, sender: 1, revision: 3}, make([]byte, 8))
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	reseal := func(b []byte) []byte { // a valid checksum over edited bytes
		binary.LittleEndian.PutUint32(b[44:], frameCRC(b[:44], b[headerSize:]))
		return b
	}
	for _, c := range []struct {
		frame []byte
		want  string
	}{
		{good[:20], "a frame of 20 bytes is shorter than its 48-byte header"},
		{edit(func(b []byte) []byte { b[0] = 2; return b }), "frame format version 2, expected 1"},
		{edit(func(b []byte) []byte { b[1] = 9; return b }), "unknown frame kind 9"},
		{edit(func(b []byte) []byte { b[2] = 3; return b }), "unknown frame flags 0x3 0"},
		{good[:len(good)-1], "frame header says 8 payload bytes, the frame has 7"},
		{edit(func(b []byte) []byte { b[9] ^= 1; return b }), "frame checksum"},
		{edit(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "frame checksum"},
		{edit(func(b []byte) []byte { b[2] = 0; return reseal(b) }), "a max frame is not one 8-byte chunk"},
	} {
		_, _, err := parseFrame(c.frame)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want ErrMalformed saying %q", err, c.want)
		}
		if errs.SQLState(err) != "08P01" {
			t.Errorf("SQLSTATE %s, want 08P01", errs.SQLState(err))
		}
	}
}

// rawSend opens a stream to addr, sends frames and returns the status
// the receiver ends it with.
func rawSend(t *testing.T, addr string, frames ...[]byte) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(grpcraw.Codec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := conn.NewStream(ctx, &streamDesc, methodName)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := s.SendMsg(&grpcraw.Message{B: f}); err != nil {
			break // the receiver ended the stream; RecvMsg says why
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	return s.RecvMsg(&grpcraw.Message{})
}

// TestMalformedFramesKeepServing sends a node broken frames: each stream
// ends with InvalidArgument saying what is wrong, and the node goes on
// exchanging with its peers, the key of a truncated message included.
func TestMalformedFramesKeepServing(t *testing.T) {
	nodes := startNodes(t, 3, Options{})
	meshes := joinAll(t, nodes, 1)
	k := Key{Node: 4}
	stream, err := EncodeBatch(nil, part(k, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(stream) < 100 {
		t.Fatalf("a part of %d bytes is too small to cut", len(stream))
	}
	frame := func(h header, payload []byte) []byte { return appendFrame(nil, h, payload) }
	h := header{kind: kindBatch, last: true, sender: 1, revision: 1, key: k}
	corrupt := frame(h, stream)
	corrupt[13] ^= 0x40
	for _, c := range []struct {
		name   string
		frames [][]byte
		want   string
	}{
		{"garbage", [][]byte{[]byte("not a frame at all, not even close to one")}, "shorter than its 48-byte header"},
		{"corrupt header", [][]byte{corrupt}, "frame checksum"},
		{"truncated Arrow bytes", [][]byte{frame(h, stream[:len(stream)-20])}, "no end-of-stream marker"},
		{"truncated mid-message", [][]byte{frame(h, stream[:len(stream)/2])}, "no end-of-stream marker"},
		{"not a peer", [][]byte{frame(header{kind: kindMax, last: true, sender: 7, revision: 1, key: k}, make([]byte, 8))}, "not a peer"},
		{"own index", [][]byte{frame(header{kind: kindMax, last: true, sender: 0, revision: 1, key: k}, make([]byte, 8))}, "not a peer"},
		{"chunk without its first", [][]byte{frame(header{kind: kindBatch, sequence: 1, sender: 1, revision: 1, key: k}, stream)}, "without its first"},
		{"chunk out of sequence", [][]byte{
			frame(header{kind: kindBatch, sender: 1, revision: 1, key: k}, stream[:10]),
			frame(header{kind: kindBatch, sequence: 2, sender: 1, revision: 1, key: k}, stream[10:]),
		}, "out of sequence"},
		{"sender changes", [][]byte{
			frame(header{kind: kindBatch, sender: 1, revision: 1, key: k}, stream[:10]),
			frame(header{kind: kindBatch, sequence: 1, sender: 2, revision: 1, key: k}, stream[10:]),
		}, "carries a frame of sender 2"},
		{"any not a boolean", [][]byte{frame(header{kind: kindAny, last: true, sender: 2, revision: 1, key: k}, binary.LittleEndian.AppendUint64(nil, 5))}, "not 0 or 1"},
	} {
		err := rawSend(t, nodes[0].Addr(), c.frames...)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), c.want) {
			t.Errorf("%s: status %v, want InvalidArgument saying %q", c.name, err, c.want)
		}
	}
	meshes[0].mu.Lock()
	left := len(meshes[0].mu.msgs)
	buffered := meshes[0].mu.buffered
	meshes[0].mu.Unlock()
	if left != 0 || buffered != 0 {
		t.Fatalf("broken streams left %d messages, %d bytes", left, buffered)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	noErrors(t, runAll(meshes, func(i int, m *Mesh) error { return exchangeKey(ctx, m, i, k) }))
}

// TestDeliveredTruncatedBatchFailsWaiter: a truncated message a call
// waits for fails the call, saying why, within its deadline.
func TestDeliveredTruncatedBatchFailsWaiter(t *testing.T) {
	nodes := startNodes(t, 2, Options{})
	meshes := joinAll(t, nodes, 1)
	k := Key{Node: 8}
	stream, err := EncodeBatch(nil, textBatch(10, 10))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := meshes[0].Exchange(ctx, k, []zset.Batch{nil, nil})
		done <- err
	}()
	// The call asks for the key first.
	for asked := false; !asked; time.Sleep(time.Millisecond) {
		meshes[0].mu.Lock()
		msg := meshes[0].mu.msgs[msgID{kindBatch, k, 1}]
		asked = msg != nil && msg.asked
		meshes[0].mu.Unlock()
	}
	h := header{kind: kindBatch, last: true, sender: 1, revision: 1, key: k}
	if err := rawSend(t, nodes[0].Addr(), appendFrame(nil, h, stream[:len(stream)-9])); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("status %v, want InvalidArgument", err)
	}
	err = <-done
	wantErr(t, err, ErrMalformed, "peer 1", "no end-of-stream marker")
}

// TestSpecExample checks the example of docs/format/exchange.md.
func TestSpecExample(t *testing.T) {
	b := zset.Batch{{Row: zset.Row{types.MakeInt(types.Int8, 1), types.MakeText("a")}, Weight: 2}}
	payload, err := EncodeBatch(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := payload[:5], []byte{0x02, 0x04, 0x00, 0x08, 0x00}; !bytes.Equal(got, want) {
		t.Fatalf("layout % x, want % x", got, want)
	}
	if !bytes.HasSuffix(payload, endOfStream) {
		t.Fatal("no end-of-stream marker")
	}
	f := appendFrame(nil, header{kind: kindBatch, last: true, sender: 1, revision: 7, key: Key{Epoch: 3, Node: 2}}, payload)
	want := []byte{1, 1, 1, 0, 1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 3, 0}
	if !bytes.HasPrefix(f, want) {
		t.Fatalf("header % x, want it to begin % x", f[:18], want)
	}
}
