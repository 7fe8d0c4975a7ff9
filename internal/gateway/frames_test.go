package gateway

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestFrameReader sends a stream of client messages through a frameReader,
// read whole or in pieces, to a protocol backend: the backend receives the
// same messages, and after each one syncFollows says whether a Sync comes
// next, never wrongly, and always when the client's bytes are all there.
func TestFrameReader(t *testing.T) {
	msgs := []pgproto3.FrontendMessage{
		&pgproto3.Parse{Name: "s", Query: "INSERT INTO t VALUES ($1)"},
		&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("1")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{bytes.Repeat([]byte("S"), 100_000)}},
		&pgproto3.Execute{},
		&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{{'S', 0, 0, 0, 4}}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.Query{String: "SELECT 1"},
		&pgproto3.Sync{},
		&pgproto3.Sync{},
		&pgproto3.Terminate{},
	}
	var stream []byte
	sslRequest := []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}
	stream = append(stream, sslRequest...)
	startup, err := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u"}}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	stream = append(stream, startup...)
	for _, m := range msgs {
		if stream, err = m.Encode(stream); err != nil {
			t.Fatal(err)
		}
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
		"data+err": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			f := newFrameReader(wrap(bytes.NewReader(stream)))
			be := pgproto3.NewBackend(f, io.Discard)
			for range 2 { // the SSLRequest, then the startup message
				if _, err := be.ReceiveStartupMessage(); err != nil {
					t.Fatal(err)
				}
			}
			for i, want := range msgs {
				got, err := be.Receive()
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if !reflect.DeepEqual(got, want) && fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("message %d: got %#v, want %#v", i, got, want)
				}
				next := i+1 < len(msgs) && reflect.TypeOf(msgs[i+1]) == reflect.TypeOf(&pgproto3.Sync{})
				if f.syncFollows() && !next {
					t.Fatalf("after message %d (%T): syncFollows, but %T follows", i, want, msgs[i+1])
				}
				if name == "whole" && f.syncFollows() != next {
					t.Fatalf("after message %d (%T): syncFollows = %v with every byte read", i, want, f.syncFollows())
				}
			}
			if _, err := be.Receive(); err == nil {
				t.Fatal("a message after the last")
			}
		})
	}
}
