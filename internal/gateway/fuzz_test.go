package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/runtime"
)

// encodeMsgs encodes client messages into one byte stream.
func encodeMsgs(msgs ...pgproto3.FrontendMessage) []byte {
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.Encode(b); err != nil {
			panic(err)
		}
	}
	return b
}

var fuzzStartup = encodeMsgs(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "fuzz"}})

// fuzzSeeds are the seed corpus: valid sessions and a few broken ones.
func fuzzSeeds() [][]byte {
	q := func(s string) pgproto3.FrontendMessage { return &pgproto3.Query{String: s} }
	return [][]byte{
		encodeMsgs(q("CREATE TABLE IF NOT EXISTS f (a int PRIMARY KEY, b text)"), q("INSERT INTO f VALUES (1, 'x') ON CONFLICT DO NOTHING; SELECT * FROM f"), &pgproto3.Terminate{}),
		encodeMsgs(&pgproto3.Parse{Name: "s", Query: "SELECT $1::int + 1", ParameterOIDs: []uint32{23}},
			&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 7}}, ResultFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Execute{}, &pgproto3.Sync{}),
		encodeMsgs(&pgproto3.Parse{Query: "SELEC"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{}, q("SELECT 1")),
		encodeMsgs(q("BEGIN"), q("SELECT 1/0"), q("ROLLBACK"), q("COMMIT")),
		encodeMsgs(q("CREATE TABLE IF NOT EXISTS g (a int)"), q("COPY g FROM STDIN"), &pgproto3.CopyData{Data: []byte("1\n2\n")}, &pgproto3.CopyDone{}, q("COPY g TO STDOUT")),
		encodeMsgs(q("COPY g FROM STDIN"), &pgproto3.CopyData{Data: []byte("x\n")}, &pgproto3.CopyFail{Message: "no"}),
		encodeMsgs(&pgproto3.Bind{Parameters: [][]byte{nil}}, &pgproto3.Close{ObjectType: 'X'}, &pgproto3.Sync{}),
		encodeMsgs(&pgproto3.Parse{Query: "SELECT $1::numeric"}, &pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 1, 0, 0}}}, &pgproto3.Sync{}),
		[]byte("garbage"),
		{'Q', 0, 0, 0, 3},
		{'Q', 0, 0, 0, 5, 'x'},
		{},
	}
}

// FuzzSession feeds arbitrary bytes after a valid startup (or, when raw
// is set, from the very start) to a session over net.Pipe: the server
// must neither panic nor hang nor leak goroutines.
func FuzzSession(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, false)
	}
	f.Add(fuzzStartup, true)
	f.Add(append(encodeMsgs(&pgproto3.SSLRequest{}), fuzzStartup...), true)
	f.Add(encodeMsgs(&pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}}), true)

	var setup sync.Once
	var srv *Server
	var eng *runtime.Engine
	var panics atomic.Value
	f.Cleanup(func() {
		if eng != nil {
			testHookPanic = nil
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
			eng.Close()
		}
	})
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		setup.Do(func() {
			var err error
			if eng, err = instance.Open(instance.Options{}); err != nil {
				t.Fatal(err)
			}
			srv = New(eng, Config{StatementTimeout: time.Second, MaxMessageBytes: 1 << 16})
			testHookPanic = func(r any) { panics.Store(fmt.Sprint(r)) }
		})
		before := goruntime.NumGoroutine()
		client, server := net.Pipe()
		served := make(chan struct{})
		go func() {
			defer close(served)
			srv.serveConn(server)
		}()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		_ = client.SetDeadline(time.Now().Add(5 * time.Second))
		input := data
		if !raw {
			input = append(append([]byte(nil), fuzzStartup...), data...)
		}
		// A Terminate after the input lets a well-formed session end by
		// itself, having run all of it; otherwise the client hangs up.
		input = append(input, encodeMsgs(&pgproto3.Terminate{})...)
		_, _ = client.Write(input)
		select {
		case <-served:
		case <-time.After(200 * time.Millisecond):
		}
		client.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatalf("session did not end after its client left; input %q", input)
		}
		if p := panics.Load(); p != nil {
			t.Fatalf("session panicked: %v; input %q", p, input)
		}
		// Goroutines of the session (stream watchers, COPY readers) end
		// with it.
		deadline := time.Now().Add(5 * time.Second)
		for goruntime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := goruntime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after the session, %d before:\n%s", n, before, buf[:goruntime.Stack(buf, true)])
		}
	})
}
