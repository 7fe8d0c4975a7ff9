package gateway

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// copyScenario runs COPY in and out through pgx (simple protocol COPY, as
// pgx and psql send it) and returns what it observed.
func copyScenario(t *testing.T, conn *pgx.Conn) []string {
	ctx := context.Background()
	pc := conn.PgConn()
	var log []string
	exec := func(q string) {
		tag, err := pc.Exec(ctx, q).ReadAll()
		if err != nil {
			log = append(log, q+" => "+errCode(err))
			return
		}
		log = append(log, fmt.Sprintf("%s => %s", q, tag[len(tag)-1].CommandTag))
	}
	copyIn := func(q, data string) {
		tag, err := pc.CopyFrom(ctx, strings.NewReader(data), q)
		log = append(log, fmt.Sprintf("%s <= %q => %s %s", q, data, tag, errCode(err)))
	}
	copyOut := func(q string) {
		var buf bytes.Buffer
		tag, err := pc.CopyTo(ctx, &buf, q)
		log = append(log, fmt.Sprintf("%s => %q %s %s", q, buf.String(), tag, errCode(err)))
	}
	exec("CREATE TABLE c (id int PRIMARY KEY, name text, amount numeric(8,2), at timestamp)")
	copyIn("COPY c FROM STDIN", "1\tone\t1.50\t2026-01-02 03:04:05\n2\t\\N\t\\N\t\\N\n")
	copyIn("COPY c (id, name) FROM STDIN (FORMAT csv, HEADER true)", "id,name\n3,\"th,ree\"\n4,\n")
	copyIn("COPY c FROM STDIN", "5\tfive\tnot a number\t\\N\n")
	copyIn("COPY c FROM STDIN", "6\tsix\n")
	copyOut("COPY (SELECT * FROM c ORDER BY id) TO STDOUT")
	copyOut("COPY (SELECT id, name FROM c ORDER BY id) TO STDOUT (FORMAT csv, HEADER)")
	copyOut("COPY (SELECT id, amount, at FROM c ORDER BY id) TO STDOUT (FORMAT binary)")
	copyOut("COPY c TO STDOUT (FORMAT csv)")
	exec("SELECT count(*) FROM c")
	return log
}

func TestCopyMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	want := copyScenario(t, connectPgx(t, pgtest.NewDatabase(t, "gwcopy"), pgx.QueryExecModeCacheStatement))
	got := copyScenario(t, connectPgx(t, ts.dsn("tester", ""), pgx.QueryExecModeCacheStatement))
	compareLogs(t, got, want)
}

// copyCases are raw exchanges of COPY in the simple and extended
// protocols, CopyFail included.
var copyCases = []struct {
	name string
	ex   exchange
}{
	{"simple copy in", exchange{
		{&pgproto3.Query{String: "COPY cc FROM STDIN"}},
	}},
	{"extended copy in", exchange{{
		&pgproto3.Parse{Query: "COPY cc FROM STDIN"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.CopyData{Data: []byte("10\tten\n")},
		&pgproto3.Flush{},
		&pgproto3.CopyData{Data: []byte("11\televen\n")},
		&pgproto3.CopyDone{},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Query{String: "SELECT * FROM cc ORDER BY n"},
	}}},
	{"extended copy fail", exchange{{
		&pgproto3.Parse{Query: "COPY cc FROM STDIN"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.CopyData{Data: []byte("12\ttwelve\n")},
		&pgproto3.CopyFail{Message: "client gave up"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Query{String: "SELECT count(*) FROM cc"},
	}}},
	{"extended copy out", exchange{{
		&pgproto3.Parse{Query: "COPY (SELECT * FROM cc ORDER BY n) TO STDOUT (FORMAT csv)"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
}

func TestCopyProtocolMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwcopyp"))
	pgConn := dialRaw(t, addr, map[string]string{"user": "postgres", "database": db})
	rsConn := dialRaw(t, ts.addr, nil)
	for _, r := range []*rawConn{pgConn, rsConn} {
		r.send(&pgproto3.Query{String: "CREATE TABLE cc (n int PRIMARY KEY, s text)"})
		r.until()
	}
	// The simple protocol: the server asks for data, the client sends it.
	for _, r := range []*rawConn{pgConn, rsConn} {
		r.send(&pgproto3.Query{String: "COPY cc FROM STDIN"})
		if got := describeMsg(r.receive()); got != "CopyInResponse(0 [0 0])" {
			t.Fatalf("got %s", got)
		}
		r.send(&pgproto3.CopyData{Data: []byte("1\tone\n2\t")}, &pgproto3.CopyData{Data: []byte("two\n")}, &pgproto3.CopyDone{})
	}
	compareLogs(t, rsConn.until(), pgConn.until())
	for _, tc := range copyCases[1:] {
		t.Run(tc.name, func(t *testing.T) {
			want := runExchange(t, pgConn, tc.ex)
			got := runExchange(t, rsConn, tc.ex)
			compareLogs(t, got, want)
		})
	}
}

func TestSubscribe(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	w := ts.connect(t, pgx.QueryExecModeCacheStatement)
	for _, q := range []string{
		"CREATE TABLE s (k int PRIMARY KEY, v text)",
		"CREATE MATERIALIZED VIEW sv AS SELECT k, v FROM s WHERE k > 0",
		"INSERT INTO s VALUES (1, 'one')",
	} {
		if _, err := w.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	epoch := func(tr string) string {
		// DataRow("<epoch>",...): the epoch varies; keep the rest.
		_, rest, _ := strings.Cut(tr, ",")
		return rest
	}

	r := dialRaw(t, ts.addr, nil)
	r.send(&pgproto3.Query{String: "SUBSCRIBE sv"})
	compareLogs(t, r.next(1), []string{"RowDescription(epoch:20:8:-1:0 diff:20:8:-1:0 k:23:4:-1:0 v:25:-1:-1:0)"})
	if got := epoch(r.next(1)[0]); got != `"1","1","one")` {
		t.Fatalf("snapshot row %s", got)
	}
	if _, err := w.Exec(ctx, "UPDATE s SET v = 'uno' WHERE k = 1"); err != nil {
		t.Fatal(err)
	}
	got := r.next(2)
	if epoch(got[0]) != `"-1","1","one")` || epoch(got[1]) != `"1","1","uno")` {
		t.Fatalf("change rows %v", got)
	}
	// A cancel request ends the subscription; the session goes on.
	cr := dialRawNoStartup(t, ts.addr)
	cr.send(&pgproto3.CancelRequest{ProcessID: r.pid, SecretKey: r.key})
	compareLogs(t, r.until(), []string{"ErrorResponse(ERROR 57014 canceling statement due to user request)", "ReadyForQuery(I)"})
	r.send(&pgproto3.Query{String: "SELECT 1"})
	compareLogs(t, r.until(), []string{"RowDescription(?column?:23:4:-1:0)", `DataRow("1")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})

	// COPY (SUBSCRIBE ...) TO STDOUT streams CopyData; a client that
	// goes away ends it and its session.
	before := ts.srv.Stats().Connections
	r2 := dialRaw(t, ts.addr, nil)
	r2.send(&pgproto3.Query{String: "COPY (SUBSCRIBE sv) TO STDOUT"})
	got = r2.next(2)
	if got[0] != "CopyOutResponse(0 [0 0 0 0])" || !strings.HasSuffix(got[1], `\t1\t1\tuno\n")`) {
		t.Fatalf("copy subscribe: %v", got)
	}
	r2.nc.Close()
	deadline := time.Now().Add(5 * time.Second)
	for ts.srv.Stats().Connections > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := ts.srv.Stats().Connections; n > before {
		t.Fatalf("%d connections after the subscriber left, want %d", n, before)
	}

	// Through the extended protocol, Describe of the portal gives the
	// subscription's columns.
	r3 := dialRaw(t, ts.addr, nil)
	r3.send(&pgproto3.Parse{Query: "SUBSCRIBE sv WITH (SNAPSHOT true)"}, &pgproto3.Bind{ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Flush{})
	got = r3.next(4)
	if got[2] != "RowDescription(epoch:20:8:-1:1 diff:20:8:-1:1 k:23:4:-1:1 v:25:-1:-1:1)" || !strings.HasSuffix(got[3], `"\x00\x00\x00\x00\x00\x00\x00\x01","\x00\x00\x00\x01","uno")`) {
		t.Fatalf("extended subscribe: %v", got)
	}
	r3.send(&pgproto3.Terminate{})

	// Messages pipelined behind a subscription wait for its end: here the
	// Sync after Execute answers once a cancel request ends it.
	r4 := dialRaw(t, ts.addr, nil)
	r4.send(&pgproto3.Parse{Query: "SUBSCRIBE sv"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	got = r4.next(3)
	if got[0] != "ParseComplete" || got[1] != "BindComplete" || epoch(got[2]) != `"1","1","uno")` {
		t.Fatalf("pipelined subscribe: %v", got)
	}
	cr = dialRawNoStartup(t, ts.addr)
	cr.send(&pgproto3.CancelRequest{ProcessID: r4.pid, SecretKey: r4.key})
	compareLogs(t, r4.until(), []string{"ErrorResponse(ERROR 57014 canceling statement due to user request)", "ReadyForQuery(I)"})
}

// TestSubscribeWithPgx reads a subscription with pgx in every query mode:
// rows arrive as changes commit; canceling the context ends it with a
// cancel request, and the connection stays usable.
func TestSubscribeWithPgx(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	w := ts.connect(t, pgx.QueryExecModeCacheStatement)
	for _, q := range []string{
		"CREATE TABLE s (k int PRIMARY KEY, v text)",
		"CREATE MATERIALIZED VIEW sv AS SELECT k, v FROM s",
		"INSERT INTO s VALUES (1, 'one')",
	} {
		if _, err := w.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for i, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(ts.dsn("tester", ""))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			// On cancel, pgx sends a CancelRequest instead of closing the
			// connection.
			cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
				return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 5 * time.Second}
			}
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			qctx, cancel := context.WithCancel(ctx)
			defer cancel()
			rows, err := c.Query(qctx, "SUBSCRIBE sv")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for len(got) < 2 && rows.Next() {
				var epoch, diff int64
				var k int32
				var v string
				if err := rows.Scan(&epoch, &diff, &k, &v); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d %d %s", diff, k, v))
				if len(got) == 1 {
					if _, err := w.Exec(ctx, "INSERT INTO s VALUES ($1, 'new')", 10+i); err != nil {
						t.Fatal(err)
					}
				}
			}
			if want := []string{"1 1 one", fmt.Sprintf("1 %d new", 10+i)}; i == 0 && strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("rows %v, want %v", got, want)
			}
			if len(got) != 2 {
				t.Fatalf("rows %v, %v", got, rows.Err())
			}
			cancel()
			rows.Close()
			if !strings.Contains(fmt.Sprint(rows.Err()), "57014") {
				t.Errorf("subscription ended with %v, want 57014", rows.Err())
			}
			var n int
			if err := c.QueryRow(ctx, "SELECT count(*) FROM s").Scan(&n); err != nil || n != i+2 {
				t.Fatalf("after the subscription: %d %v", n, err)
			}
		})
	}
}
