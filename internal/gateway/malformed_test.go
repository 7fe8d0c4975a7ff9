package gateway

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// rawMsg frames body parts as one message of type typ.
func rawMsg(typ byte, body ...string) []byte {
	var b []byte
	for _, p := range body {
		b = append(b, p...)
	}
	out := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(4+len(b)))
	return append(out, b...)
}

// TestMalformedMessagesMatchPostgres sends messages whose strings lack
// their NUL, whose Parse parameter count disagrees with the bytes that
// follow, or whose text is not UTF-8 (in a comment too), to PostgreSQL and
// to RockStream: the traces must be equal, and the session goes on.
func TestMalformedMessagesMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwmalformed"))
	sync := string(rawMsg('S'))
	cases := []struct {
		name string
		raw  []string // sent as is, then a Sync
	}{
		{"Query without NUL", []string{string(rawMsg('Q', "SELECT 1"))}},
		{"Query with bytes after its NUL", []string{string(rawMsg('Q', "SELECT 1\x00x"))}},
		{"Parse without NUL", []string{string(rawMsg('P', "\x00SELECT 1"))}},
		{"Parse name without NUL", []string{string(rawMsg('P', "stmt"))}},
		{"Parse count above its OIDs", []string{string(rawMsg('P', "\x00SELECT $1\x00", "\x00\x02\x00\x00\x00\x17"))}},
		{"Parse count below its OIDs", []string{string(rawMsg('P', "\x00SELECT 1\x00", "\x00\x00\x00\x00\x00\x17"))}},
		{"Parse without count", []string{string(rawMsg('P', "\x00SELECT 1\x00"))}},
		{"Execute without NUL", []string{string(rawMsg('E', "p"))}},
		{"Execute without row count", []string{string(rawMsg('E', "\x00"))}},
		{"Describe without NUL", []string{string(rawMsg('D', "Sx"))}},
		{"Describe empty", []string{string(rawMsg('D'))}},
		{"Close without NUL", []string{string(rawMsg('C', "Px"))}},
		{"Query not UTF-8", []string{string(rawMsg('Q', "SELECT '\xff'\x00"))}},
		{"Query not UTF-8 in a comment", []string{string(rawMsg('Q', "SELECT 1 -- \xe2\x28\xa1\x00"))}},
		{"Query with a surrogate", []string{string(rawMsg('Q', "SELECT '\xed\xa0\x80'\x00"))}},
		{"Query truncated sequence", []string{string(rawMsg('Q', "SELECT 1 --\xf0\x9f\x00"))}},
		{"Parse not UTF-8", []string{string(rawMsg('P', "\x00SELECT 1 /* \xc3 */\x00\x00\x00"))}},
		{"Parse name not UTF-8", []string{string(rawMsg('P', "s\xff\x00SELECT 1\x00\x00\x00"))}},
		// In a pipeline the error skips to Sync; in a block it fails
		// the block.
		{"malformed Execute in a pipeline", []string{
			string(rawMsg('P', "\x00SELECT 1\x00\x00\x00")), string(rawMsg('B', "\x00\x00\x00\x00\x00\x00\x00\x00")),
			string(rawMsg('E', "nonul")), string(rawMsg('Q', "SELECT 2\x00"))}},
		// Read while the first statement runs (watch.go), answered after it.
		{"malformed Query behind a running one", []string{
			string(rawMsg('Q', "SELECT count(*) FROM generate_series(1, 1000) a, generate_series(1, 1000) b\x00")), string(rawMsg('Q', "SELECT 1"))}},
		{"malformed Query in a block", []string{string(rawMsg('Q', "BEGIN\x00")), sync, string(rawMsg('Q', "SELECT 1"))}},
	}
	for _, c := range cases {
		var traces [2][]string
		for i, target := range []struct {
			addr   string
			params map[string]string
		}{{addr, map[string]string{"user": "postgres", "database": db}}, {ts.addr, nil}} {
			r := dialRaw(t, target.addr, target.params)
			for _, b := range c.raw {
				if _, err := r.nc.Write([]byte(b)); err != nil {
					t.Fatal(err)
				}
			}
			// Then whether the session goes on, out of any block.
			r.send(&pgproto3.Sync{}, rawQuery("ROLLBACK"), rawQuery("SELECT 'end'"))
			var tr []string
			for !slices.Contains(tr, `DataRow("end")`) && !slices.Contains(tr, "EOF") {
				tr = append(tr, r.until()...)
			}
			traces[i] = tr
		}
		t.Run(c.name, func(t *testing.T) { compareLogs(t, traces[1], traces[0]) })
	}
}

// TestMalformedStartupAndPassword: a startup user that is not UTF-8 is
// refused before authentication, and a password message without its NUL
// (or with bytes after it) ends the connection with PostgreSQL's error.
func TestMalformedStartupAndPassword(t *testing.T) {
	ts := startServer(t, Config{Auth: AuthConfig{Method: AuthPassword, Users: map[string]string{"alice": "pw"}}})
	r := dialRawNoStartup(t, ts.addr)
	r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "al\xffice"}})
	compareLogs(t, r.until(), []string{`ErrorResponse(FATAL 22021 invalid byte sequence for encoding "UTF8": 0xff)`, "EOF"})

	// A Bind whose portal name lacks its NUL ends the connection with a
	// word (PostgreSQL's ERROR would let it go on).
	tr := dialRaw(t, startServer(t, Config{}).addr, nil)
	if _, err := tr.nc.Write(rawMsg('B', "portal")); err != nil {
		t.Fatal(err)
	}
	compareLogs(t, tr.until(), []string{"ErrorResponse(FATAL 08P01 invalid frontend message: Bind body is invalid )", "EOF"})

	for _, body := range []string{"pw", "pw\x00x"} {
		r := dialRawNoStartup(t, ts.addr)
		r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice"}})
		if _, ok := r.receive().(*pgproto3.AuthenticationCleartextPassword); !ok {
			t.Fatal("no password request")
		}
		if _, err := r.nc.Write(rawMsg('p', body)); err != nil {
			t.Fatal(err)
		}
		compareLogs(t, r.until(), []string{"ErrorResponse(FATAL 08P01 invalid password packet size)", "EOF"})
	}
}
