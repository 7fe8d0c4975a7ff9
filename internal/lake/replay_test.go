package lake

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/storage"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// side is one server a replay drives: RockLake or PostgreSQL.
type side struct {
	name  string
	addr  string
	db    string
	conns map[string]*wireClient
	norm  *normalizer
}

// replay drives RockLake and a real PostgreSQL 15 through the same
// message sequences and compares every response.
type replay struct {
	t    testing.TB
	pg   *side
	lake *side
	srv  *Server
	dir  string
	cfg  Config
}

// newReplay starts a RockLake server on a fresh directory (without the
// bootstrap unless bootstrap is set: the scenario initializes the lake
// as DuckDB does) and creates a fresh PostgreSQL database.
func newReplay(t *testing.T, bootstrap bool) *replay {
	dsn := pgtest.NewDatabase(t, "lake")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	r := &replay{t: t, dir: t.TempDir()}
	r.cfg = Config{Dir: r.dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), NoBootstrap: !bootstrap, Durability: storage.Relaxed, DataPath: "./lakedata/"}
	r.pg = &side{name: "postgres", addr: u.Host, db: strings.TrimPrefix(u.Path, "/"), conns: map[string]*wireClient{}, norm: newNormalizer()}
	r.lake = &side{name: "rocklake", db: "lake", conns: map[string]*wireClient{}, norm: newNormalizer()}
	r.startLake()
	t.Cleanup(func() {
		for _, s := range []*side{r.pg, r.lake} {
			for _, c := range s.conns {
				c.close()
			}
		}
		if r.srv != nil {
			r.srv.Close()
		}
	})
	return r
}

func (r *replay) startLake() {
	srv, err := Open(r.cfg)
	if err != nil {
		r.t.Fatalf("open RockLake: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.t.Fatal(err)
	}
	go srv.Serve(ln)
	r.srv = srv
	r.lake.addr = ln.Addr().String()
}

// restartLake closes RockLake and opens it again on the same directory;
// its connections are gone.
func (r *replay) restartLake() {
	for name, c := range r.lake.conns {
		c.close()
		delete(r.lake.conns, name)
	}
	if err := r.srv.Close(); err != nil {
		r.t.Fatalf("close RockLake: %v", err)
	}
	r.startLake()
}

func (r *replay) sides(both bool) []*side {
	if both {
		return []*side{r.lake, r.pg}
	}
	return []*side{r.lake}
}

func (s *side) conn(t testing.TB, name string) *wireClient {
	c, ok := s.conns[name]
	if !ok {
		c = dialWire(t, s.addr, s.db)
		s.conns[name] = c
	}
	return c
}

// step runs one scripted exchange on a side and renders the answer.
type step func(t testing.TB, s *side) ([]pgproto3.BackendMessage, error)

func (r *replay) run(name string, both bool, o renderOpts, fn step) string {
	r.t.Helper()
	lakeMsgs, err := fn(r.t, r.lake)
	if err != nil {
		r.t.Fatalf("%s on RockLake: %v (after %d messages)", name, err, len(lakeMsgs))
	}
	got := r.lake.norm.render(lakeMsgs, o)
	if !both {
		return got
	}
	pgMsgs, err := fn(r.t, r.pg)
	if err != nil {
		r.t.Fatalf("%s on PostgreSQL: %v", name, err)
	}
	want := r.pg.norm.render(pgMsgs, o)
	if os.Getenv("LAKE_REPLAY_DUMP") != "" {
		r.t.Logf("%s postgres:\n%s", name, want)
	}
	if got != want {
		r.t.Errorf("%s: RockLake and PostgreSQL differ\n%s", name, diffLines(want, got))
	}
	return got
}

// diffLines shows the first differing line of two renderings, with
// context.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	from := max(0, i-3)
	for j := from; j < i; j++ {
		fmt.Fprintf(&b, "   %s\n", w[j])
	}
	for j := i; j < len(w) && j < i+4; j++ {
		fmt.Fprintf(&b, "pg %s\n", w[j])
	}
	for j := i; j < len(g) && j < i+4; j++ {
		fmt.Fprintf(&b, "rl %s\n", g[j])
	}
	fmt.Fprintf(&b, "(postgres %d lines, rocklake %d lines)", len(w), len(g))
	return b.String()
}

func opts(d *datadriven.TestData) renderOpts {
	o := renderOpts{mask: map[int]bool{}}
	if a, ok := d.Arg("mask"); ok {
		for _, v := range a.Vals {
			n, _ := strconv.Atoi(v)
			o.mask[n] = true
		}
	}
	o.publicOnly = d.HasArg("public-only")
	o.sortRows = d.HasArg("sort")
	return o
}

func connArg(d *datadriven.TestData) string {
	if a, ok := d.Arg("conn"); ok && len(a.Vals) > 0 {
		return a.Vals[0]
	}
	return "A"
}

// encodeBinaryCopy builds a binary COPY stream (header, tuples,
// trailer, as DuckDB sends them in three CopyData messages) from rows
// written as "v|v|...", typed by types; NULL is a null, "now" a
// timestamp of the current time.
func encodeBinaryCopy(t testing.TB, types []Type, lines []string) [][]byte {
	header := append([]byte(binarySignature), 0, 0, 0, 0, 0, 0, 0, 0)
	var body []byte
	for _, l := range lines {
		fields := strings.Split(l, "|")
		if len(fields) != len(types) {
			t.Fatalf("row %q has %d fields, want %d", l, len(fields), len(types))
		}
		body = binary.BigEndian.AppendUint16(body, uint16(len(types)))
		for i, f := range fields {
			f = strings.TrimSpace(f)
			if f == "NULL" {
				body = binary.BigEndian.AppendUint32(body, 0xFFFFFFFF)
				continue
			}
			var v Value
			var err error
			if types[i] == TTimestamptz && f == "now" {
				v = timestampOf(time.Now().UTC().Truncate(time.Microsecond))
			} else if v, err = parseText(types[i], f); err != nil {
				t.Fatalf("row %q: %v", l, err)
			}
			at := len(body)
			body = append(body, 0, 0, 0, 0)
			body = v.AppendBinary(body)
			binary.BigEndian.PutUint32(body[at:], uint32(len(body)-at-4))
		}
	}
	return [][]byte{header, body, {0xFF, 0xFF}}
}

func parseTypes(t testing.TB, d *datadriven.TestData) []Type {
	a, ok := d.Arg("types")
	if !ok {
		t.Fatalf("%s: copy-in needs types=...", d.Pos)
	}
	var out []Type
	for _, v := range a.Vals {
		typ, ok := typeFromName(v)
		if !ok {
			t.Fatalf("%s: unknown type %q", d.Pos, v)
		}
		out = append(out, typ)
	}
	return out
}

// initCatalog creates the catalog as DuckDB does on a first ATTACH, on
// both servers, in schema (DuckLake's METADATA_SCHEMA; public when
// empty); it returns the answer to the last statement (COMMIT).
func (r *replay) initCatalog(name, conn, schema string, both bool, o renderOpts) string {
	stmts := append([]string{"BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ"}, CatalogDDL()...)
	stmts = append(stmts, InitialRows("./lakedata/", time.Now(), "01a230c2-da2c-7c8e-8e62-4d0cd3f5b5a1")...)
	stmts = append(stmts, "COMMIT")
	var out string
	for _, q := range stmts {
		if schema != "" {
			q = strings.ReplaceAll(q, `"public".`, `"`+schema+`".`)
		}
		out = r.run(name, both, o, func(t testing.TB, s *side) ([]pgproto3.BackendMessage, error) {
			c := s.conn(t, conn)
			c.fe.Send(&pgproto3.Query{String: q})
			return c.until(t)
		})
	}
	return out
}

// TestReplay runs the scenarios in testdata/replay against RockLake and
// PostgreSQL. Directives:
//
//	connect conn=A              open a connection (both servers)
//	init-catalog [schema=s] [pg-only]
//	                            the catalog as DuckDB creates it (in s)
//	query conn=A [lake-only] [mask=i,...] [public-only] [sort]
//	                            one Query message (possibly many statements)
//	copy-in conn=A types=t,...  a Query starting COPY FROM STDIN; the first
//	                            input line is the statement, the rest rows
//	copy-text conn=A [fail=msg] the same with text rows sent as they are
//	                            ("|" stands for a tab)
//	copy-raw conn=A             the same with CopyData given in hex, one
//	                            message a line
//	extended conn=A             Parse <sql> / Describe S|P / Bind /
//	                            Execute / Sync lines, ending with Sync
//	send conn=A                 a Query whose answer is not read yet
//	wait conn=A                 read the answer of the last send
//	cancel conn=A [wrong-secret] a CancelRequest for A's session on a new
//	                            connection (with a wrong secret key)
//	disconnect conn=A           close the connection
//	restart                     close and reopen RockLake on its directory
//
// The expected output is RockLake's answer; every step not marked
// lake-only must also equal PostgreSQL's.
func TestReplay(t *testing.T) {
	datadriven.Walk(t, "testdata/replay", func(t *testing.T, path string) {
		bootstrap := strings.Contains(path, "bootstrap")
		r := newReplay(t, bootstrap)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			r.t = t
			conn := connArg(d)
			both := !d.HasArg("lake-only")
			switch d.Cmd {
			case "connect":
				r.lake.conn(t, conn)
				if both {
					r.pg.conn(t, conn)
				}
				return ""
			case "init-catalog":
				// The catalog as DuckDB creates it on a first ATTACH, on both
				// servers (pg-only: on PostgreSQL alone, for a bootstrapped
				// RockLake); only the last answer (COMMIT) is shown.
				if d.HasArg("pg-only") {
					r.pg.conn(t, conn)
					stmts := append([]string{"BEGIN"}, CatalogDDL()...)
					stmts = append(stmts, InitialRows(r.cfg.DataPath, time.Now(), "01a230c2-da2c-7c8e-8e62-4d0cd3f5b5a1")...)
					c := r.pg.conn(t, conn)
					c.fe.Send(&pgproto3.Query{String: strings.Join(append(stmts, "COMMIT"), ";")})
					msgs, err := c.until(t)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range msgs {
						if e, ok := m.(*pgproto3.ErrorResponse); ok {
							t.Fatalf("creating the catalog on PostgreSQL: %s", e.Message)
						}
					}
					return ""
				}
				schema := ""
				if a, ok := d.Arg("schema"); ok && len(a.Vals) > 0 {
					schema = a.Vals[0]
				}
				return r.initCatalog(d.Pos, conn, schema, both, opts(d))
			case "restart":
				r.restartLake()
				return ""
			case "send":
				// A Query whose answer is read later by wait: the server may
				// block it (a writer waiting for another transaction).
				for _, side := range r.sides(both) {
					c := side.conn(t, conn)
					c.fe.Send(&pgproto3.Query{String: d.Input})
					if err := c.fe.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				// Let the servers reach the point where the statement waits,
				// so that the next step finds it waiting.
				time.Sleep(150 * time.Millisecond)
				return ""
			case "wait":
				return r.run(d.Pos, both, opts(d), func(t testing.TB, s *side) ([]pgproto3.BackendMessage, error) {
					return s.conn(t, conn).until(t)
				})
			case "cancel":
				for _, side := range r.sides(both) {
					side.conn(t, conn).cancel(t, d.HasArg("wrong-secret"))
				}
				// The cancel reaches the server's session asynchronously.
				time.Sleep(150 * time.Millisecond)
				return ""
			case "disconnect":
				for _, side := range r.sides(both) {
					if c, ok := side.conns[conn]; ok {
						c.close()
						delete(side.conns, conn)
					}
				}
				return ""
			case "query":
				return r.run(d.Pos, both, opts(d), func(t testing.TB, s *side) ([]pgproto3.BackendMessage, error) {
					c := s.conn(t, conn)
					c.fe.Send(&pgproto3.Query{String: d.Input})
					return c.until(t)
				})
			case "copy-in", "copy-text", "copy-raw":
				lines := strings.Split(d.Input, "\n")
				var chunks [][]byte
				switch d.Cmd {
				case "copy-in":
					chunks = encodeBinaryCopy(t, parseTypes(t, d), lines[1:])
				case "copy-text":
					for _, l := range lines[1:] {
						chunks = append(chunks, []byte(strings.ReplaceAll(l, "|", "\t")+"\n"))
					}
				case "copy-raw":
					for _, l := range lines[1:] {
						b, err := hexBytes(l)
						if err != nil {
							t.Fatalf("%s: %v", d.Pos, err)
						}
						chunks = append(chunks, b)
					}
				}
				fail := ""
				if a, ok := d.Arg("fail"); ok {
					fail = strings.Join(a.Vals, " ")
				}
				return r.run(d.Pos, both, opts(d), func(t testing.TB, s *side) ([]pgproto3.BackendMessage, error) {
					return s.conn(t, conn).copyInRun(t, lines[0], chunks, fail)
				})
			case "extended":
				return r.run(d.Pos, both, opts(d), func(t testing.TB, s *side) ([]pgproto3.BackendMessage, error) {
					c := s.conn(t, conn)
					for _, l := range strings.Split(d.Input, "\n") {
						word, rest, _ := strings.Cut(l, " ")
						switch word {
						case "Parse":
							c.fe.Send(&pgproto3.Parse{Query: rest})
						case "Describe":
							c.fe.Send(&pgproto3.Describe{ObjectType: rest[0]})
						case "Bind":
							c.fe.Send(&pgproto3.Bind{})
						case "Execute":
							c.fe.Send(&pgproto3.Execute{})
						case "Sync":
							c.fe.Send(&pgproto3.Sync{})
						default:
							t.Fatalf("%s: unknown message %q", d.Pos, word)
						}
					}
					return c.until(t)
				})
			}
			t.Fatalf("%s: unknown directive %q", d.Pos, d.Cmd)
			return ""
		})
	})
}

func hexBytes(s string) ([]byte, error) {
	s = strings.ReplaceAll(s, " ", "")
	out := make([]byte, len(s)/2)
	for i := range out {
		n, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil, err
		}
		out[i] = byte(n)
	}
	return out, nil
}
