package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// Queries of the extended protocol whose plan is a scan with filters and
// projections send their rows as they are produced, and an Execute with
// a row limit makes only the rows it sends.

// streamedPortalCases run against PostgreSQL and against the gateway
// over the table of setupStream: the traces must be equal.
var streamedPortalCases = []struct {
	name string
	ex   exchange
}{
	{"portal suspension", exchange{{
		&pgproto3.Parse{Query: "SELECT k, v FROM big WHERE k <= $1"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("7")}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{MaxRows: 3},
		&pgproto3.Execute{MaxRows: 3},
		&pgproto3.Execute{MaxRows: 3},
		&pgproto3.Execute{MaxRows: 3},
		&pgproto3.Sync{},
	}}},
	{"exact row limit", exchange{{
		&pgproto3.Parse{Query: "SELECT k FROM big WHERE k BETWEEN 101 AND 104"},
		&pgproto3.Bind{},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Sync{},
	}}},
	// Rows past the limit would fail (division by zero at k = 9000):
	// they are never made.
	{"a row limit stops the work", exchange{{
		&pgproto3.Parse{Query: "SELECT k, 1 / (k - 9000) FROM big"},
		&pgproto3.Bind{},
		&pgproto3.Execute{MaxRows: 5},
		&pgproto3.Sync{},
	}}},
	{"LIMIT stops the work", exchange{{
		&pgproto3.Parse{Query: "SELECT 1 / (k - 9000) FROM big WHERE v = $1 LIMIT 4"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("3")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
	// A cursor-style fetch in a transaction block, as JDBC does with a
	// fetch size: a named portal fetched a few rows per Sync.
	{"named portal fetched across Syncs", exchange{
		{&pgproto3.Query{String: "BEGIN"}},
		{
			&pgproto3.Parse{Name: "fetch", Query: "SELECT k, v * 2 FROM big WHERE k % 1000 = 0 AND v <> $1"},
			&pgproto3.Bind{PreparedStatement: "fetch", DestinationPortal: "c1", Parameters: [][]byte{[]byte("5")}, ResultFormatCodes: []int16{1}},
			&pgproto3.Execute{Portal: "c1", MaxRows: 2},
			&pgproto3.Sync{},
		},
		{&pgproto3.Execute{Portal: "c1", MaxRows: 2}, &pgproto3.Sync{}},
		{&pgproto3.Execute{Portal: "c1", MaxRows: 20}, &pgproto3.Sync{}},
		{&pgproto3.Execute{Portal: "c1", MaxRows: 2}, &pgproto3.Sync{}},
		{&pgproto3.Query{String: "COMMIT"}},
	}},
}

func TestStreamedPortalsMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	dsn := pgtest.NewDatabase(t, "gwportals")
	ts := startServer(t, Config{})
	setupStream(t, connectPgx(t, dsn, pgx.QueryExecModeSimpleProtocol))
	setupStream(t, ts.connect(t, pgx.QueryExecModeSimpleProtocol))
	addr, db := pgAddr(t, dsn)
	pgConn := dialRaw(t, addr, map[string]string{"user": "postgres", "database": db})
	rsConn := dialRaw(t, ts.addr, nil)
	for _, tc := range streamedPortalCases {
		t.Run(tc.name, func(t *testing.T) {
			want := runExchange(t, pgConn, tc.ex)
			got := runExchange(t, rsConn, tc.ex)
			compareLogs(t, got, want)
		})
	}
}

// TestExtendedStreamSendsRowsBeforeTheEnd: an Execute without a row
// limit sends the rows of a streamed scan before the statement ends: a
// division by zero at row 9,000 comes after the rows of the chunks
// before it. pgx, which runs every query through the extended protocol,
// reads them so too.
func TestExtendedStreamSendsRowsBeforeTheEnd(t *testing.T) {
	ts := startServer(t, Config{})
	setupStream(t, ts.connect(t, pgx.QueryExecModeSimpleProtocol))
	r := dialRaw(t, ts.addr, nil)
	r.send(&pgproto3.Parse{Query: "SELECT k, 1 / (k - 9000) FROM big"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	trace := r.until()
	n := 0
	for _, m := range trace {
		if strings.HasPrefix(m, "DataRow") {
			n++
		}
	}
	if n < streamChunkRows || !strings.Contains(trace[len(trace)-2], "22012") || trace[len(trace)-1] != "ReadyForQuery(I)" {
		t.Fatalf("want the rows before the failing one, then 22012: %d rows, ends %v", n, trace[max(0, len(trace)-2):])
	}

	c := ts.connect(t, pgx.QueryExecModeCacheStatement)
	rows, err := c.Query(context.Background(), "SELECT k FROM big WHERE v = $1", 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != (streamRows+5)/7 || got[0] != 2 || got[len(got)-1] != 9998 {
		t.Fatalf("pgx read %d rows, %v … %v", len(got), got[:min(3, len(got))], got[max(0, len(got)-3):])
	}
}

// TestCancelStopsExtendedStream: a cancel request while an Execute sends
// a streamed query's rows ends them with 57014, and the session goes on.
func TestCancelStopsExtendedStream(t *testing.T) {
	ts := startServer(t, Config{})
	setupStream(t, ts.connect(t, pgx.QueryExecModeSimpleProtocol))
	r := dialRaw(t, ts.addr, nil)
	r.send(&pgproto3.Parse{Query: streamLong}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	r.next(12) // ParseComplete, BindComplete and ten rows
	cancel := dialRawNoStartup(t, ts.addr)
	cancel.send(&pgproto3.CancelRequest{ProcessID: r.pid, SecretKey: r.key})
	cancel.until()
	trace := r.until()
	rows := 0
	for _, m := range trace {
		if strings.HasPrefix(m, "DataRow") {
			rows++
		}
	}
	if rows+10 >= streamRows || len(trace) < 2 || !strings.Contains(trace[len(trace)-2], "57014") {
		t.Fatalf("want the rows cut short by 57014: %d more rows, ends %.200v", rows, trace[max(0, len(trace)-2):])
	}
	r.send(rawQuery("SELECT 1"))
	compareLogs(t, r.until(), []string{"RowDescription(?column?:23:4:-1:0)", `DataRow("1")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
}

// TestExtendedStreamOfSpilledSort: a sort past work_mem is streamed from
// its merged runs over the extended protocol too, in pgx's prepared mode
// and with a portal row limit, in PostgreSQL's order.
func TestExtendedStreamOfSpilledSort(t *testing.T) {
	ts := startServer(t, Config{})
	setupStream(t, ts.connect(t, pgx.QueryExecModeSimpleProtocol))
	c := ts.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "SET work_mem = '64kB'"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "SELECT k FROM big ORDER BY v DESC, k LIMIT $1", 10)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	// v = k % 7: the largest v is 6, on k = 6, 13, 20, ...
	for i, k := range got {
		if want := int32(6 + 7*i); k != want {
			t.Fatalf("row %d: %d, want %d (%v)", i, k, want, got)
		}
	}
	if len(got) != 10 {
		t.Fatalf("%d rows", len(got))
	}
	r := dialRaw(t, ts.addr, nil)
	r.send(&pgproto3.Query{String: "SET work_mem = '64kB'"})
	r.until()
	r.send(&pgproto3.Parse{Query: "SELECT k FROM big ORDER BY v, k"}, &pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 3}, &pgproto3.Sync{})
	trace := r.until()
	if len(trace) < 2 || !strings.HasPrefix(trace[len(trace)-2], "PortalSuspended") {
		t.Fatalf("want three rows and PortalSuspended: %v", trace)
	}
}
