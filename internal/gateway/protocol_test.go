package gateway

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// exchange is a batch of client messages and the server's answers up to
// ReadyForQuery (one trace per batch).
type exchange [][]pgproto3.FrontendMessage

// protocolCases run message by message against PostgreSQL and against the
// gateway: the traces of server messages must be equal.
var protocolCases = []struct {
	name string
	ex   exchange
}{
	{"portal suspension", exchange{{
		&pgproto3.Parse{Query: "SELECT n, s FROM nums ORDER BY n"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Sync{},
	}}},
	{"exact row limit", exchange{{
		&pgproto3.Parse{Query: "SELECT n FROM nums WHERE n <= 2 ORDER BY n"},
		&pgproto3.Bind{},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Sync{},
	}}},
	{"named statement survives Sync, binary results", exchange{
		{
			&pgproto3.Parse{Name: "s1", Query: "SELECT n, s FROM nums WHERE n > $1 ORDER BY n", ParameterOIDs: []uint32{0}},
			&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
			&pgproto3.Sync{},
		},
		{
			&pgproto3.Bind{DestinationPortal: "p1", PreparedStatement: "s1", Parameters: [][]byte{[]byte("3")}, ResultFormatCodes: []int16{1, 0}},
			&pgproto3.Describe{ObjectType: 'P', Name: "p1"},
			&pgproto3.Execute{Portal: "p1"},
			&pgproto3.Sync{},
		},
		{
			&pgproto3.Bind{PreparedStatement: "s1", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 4}}, ResultFormatCodes: []int16{1}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
	}},
	{"syntax error discards until Sync", exchange{
		{
			&pgproto3.Parse{Query: "SELEC 1"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "SELECT 1"}},
	}},
	{"execution error discards until Sync", exchange{{
		&pgproto3.Parse{Query: "SELECT 1/(n - n) FROM nums"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Parse{Query: "SELECT 2"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
	{"close statement", exchange{{
		&pgproto3.Parse{Name: "s2", Query: "SELECT 1"},
		&pgproto3.Close{ObjectType: 'S', Name: "s2"},
		&pgproto3.Close{ObjectType: 'S', Name: "never"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s2"},
		&pgproto3.Sync{},
	}}},
	{"close portal", exchange{{
		&pgproto3.Parse{Query: "SELECT 1"},
		&pgproto3.Bind{DestinationPortal: "p"},
		&pgproto3.Close{ObjectType: 'P', Name: "p"},
		&pgproto3.Execute{Portal: "p"},
		&pgproto3.Sync{},
	}}},
	{"describe statements without rows", exchange{{
		&pgproto3.Parse{Query: "INSERT INTO nums VALUES ($1, $2)"},
		&pgproto3.Describe{ObjectType: 'S'},
		&pgproto3.Parse{Name: "u", Query: "UPDATE nums SET s = $2 WHERE n = $1 RETURNING n, s || '!' AS t"},
		&pgproto3.Describe{ObjectType: 'S', Name: "u"},
		&pgproto3.Parse{Name: "d", Query: "DELETE FROM nums WHERE n = $1"},
		&pgproto3.Describe{ObjectType: 'S', Name: "d"},
		&pgproto3.Parse{Name: "b", Query: "BEGIN"},
		&pgproto3.Describe{ObjectType: 'S', Name: "b"},
		&pgproto3.Sync{},
	}}},
	{"declared parameter types", exchange{{
		&pgproto3.Parse{Query: "SELECT $1, $2::text", ParameterOIDs: []uint32{23, 0}},
		&pgproto3.Describe{ObjectType: 'S'},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("42"), []byte("x")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
	{"undetermined parameter type", exchange{{
		&pgproto3.Parse{Query: "SELECT $1"},
		&pgproto3.Sync{},
	}}},
	{"wrong number of parameters", exchange{{
		&pgproto3.Parse{Query: "SELECT $1::int"},
		&pgproto3.Bind{},
		&pgproto3.Sync{},
	}}},
	{"binary parameters of the wrong size", exchange{{
		&pgproto3.Parse{Query: "SELECT $1::int"},
		&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 0, 1}}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 1}}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{ParameterFormatCodes: []int16{1, 1}, Parameters: [][]byte{{0, 0, 0, 1}}},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 9}}, ResultFormatCodes: []int16{0, 1}},
		&pgproto3.Sync{},
	}}},
	{"bad parameter text", exchange{{
		&pgproto3.Parse{Query: "SELECT $1::int"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("abc")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	}}},
	{"portals end with the transaction", exchange{
		{
			&pgproto3.Parse{Query: "SELECT 1"},
			&pgproto3.Bind{DestinationPortal: "p"},
			&pgproto3.Sync{},
		},
		{
			&pgproto3.Execute{Portal: "p"},
			&pgproto3.Sync{},
		},
	}},
	{"portals survive Sync inside a block", exchange{
		{&pgproto3.Query{String: "BEGIN"}},
		{
			&pgproto3.Parse{Query: "SELECT n FROM nums ORDER BY n"},
			&pgproto3.Bind{DestinationPortal: "p"},
			&pgproto3.Execute{Portal: "p", MaxRows: 1},
			&pgproto3.Sync{},
		},
		{
			&pgproto3.Execute{Portal: "p", MaxRows: 1},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "ROLLBACK"}},
	}},
	{"insert returning with a row limit", exchange{
		{
			&pgproto3.Parse{Query: "INSERT INTO nums VALUES (10, 'ten'), (11, 'eleven'), (12, 'twelve') RETURNING n"},
			&pgproto3.Bind{},
			&pgproto3.Execute{MaxRows: 2},
			&pgproto3.Execute{MaxRows: 2},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "DELETE FROM nums WHERE n >= 10"}},
	}},
	{"empty queries", exchange{
		{&pgproto3.Query{String: ""}},
		{&pgproto3.Query{String: " ; "}},
		{&pgproto3.Query{String: "-- nothing"}},
		{
			&pgproto3.Parse{Query: ""},
			&pgproto3.Bind{},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
	}},
	{"several statements in one query", exchange{
		{&pgproto3.Query{String: "SELECT 1 AS a; SELECT 'x' AS b, NULL::int AS c"}},
		{&pgproto3.Query{String: "SELECT '' AS empty, NULL AS null"}},
		{&pgproto3.Query{String: "SELECT 1;\nSELECT nocol FROM nums; SELECT 3"}},
		{&pgproto3.Query{String: "SELECT 'é'; SELECT nocol FROM nums"}},
	}},
	{"transaction status and notices", exchange{
		{&pgproto3.Query{String: "BEGIN"}},
		{&pgproto3.Query{String: "BEGIN"}},
		{&pgproto3.Query{String: "SELECT 1/0"}},
		{&pgproto3.Query{String: "SELECT 1"}},
		{&pgproto3.Query{String: "COMMIT"}},
		{&pgproto3.Query{String: "COMMIT"}},
		{&pgproto3.Query{String: "ROLLBACK"}},
	}},
	{"time settings", exchange{
		{&pgproto3.Query{String: "SET statement_timeout = 'soon'"}},
		{&pgproto3.Query{String: "SET statement_timeout = '5 parsecs'"}},
		{&pgproto3.Query{String: "SET statement_timeout = -5"}},
		{&pgproto3.Query{String: "SET statement_timeout = '5s'"}},
		{&pgproto3.Query{String: "SHOW statement_timeout"}},
		{&pgproto3.Query{String: "RESET statement_timeout"}},
	}},
	{"cursors", exchange{
		{&pgproto3.Query{String: "BEGIN"}},
		{&pgproto3.Query{String: "DECLARE c CURSOR FOR SELECT n, s FROM nums ORDER BY n"}},
		{
			&pgproto3.Parse{Name: "f", Query: "FETCH 2 FROM c"},
			&pgproto3.Describe{ObjectType: 'S', Name: "f"},
			&pgproto3.Bind{PreparedStatement: "f", ResultFormatCodes: []int16{1, 0}},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{},
			&pgproto3.Parse{Query: "MOVE 1 IN c"},
			&pgproto3.Describe{ObjectType: 'S'},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "f"},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "FETCH ALL FROM c; CLOSE c"}},
		{&pgproto3.Query{String: "ROLLBACK"}},
	}},
	{"duplicate names", exchange{{
		&pgproto3.Parse{Name: "dup", Query: "SELECT 1"},
		&pgproto3.Parse{Name: "dup", Query: "SELECT 2"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Bind{DestinationPortal: "dp", PreparedStatement: "dup"},
		&pgproto3.Bind{DestinationPortal: "dp", PreparedStatement: "dup"},
		&pgproto3.Sync{},
	}}},
	{"missing statement and portal", exchange{{
		&pgproto3.Bind{PreparedStatement: "nope"},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Describe{ObjectType: 'P', Name: "nope"},
		&pgproto3.Sync{},
	}}},
	{"invalid subtypes", exchange{{
		&pgproto3.Describe{ObjectType: 'X'},
		&pgproto3.Sync{},
	}, {
		&pgproto3.Close{ObjectType: 'X'},
		&pgproto3.Sync{},
	}}},
	{"extended-protocol errors fail a block", exchange{
		{&pgproto3.Query{String: "BEGIN"}},
		{
			&pgproto3.Parse{Query: "SELEC 1"},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "SELECT 1"}},
		{&pgproto3.Query{String: "ROLLBACK"}},
		{&pgproto3.Query{String: "BEGIN"}},
		{
			&pgproto3.Bind{PreparedStatement: "nope"},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "COMMIT"}},
		{&pgproto3.Query{String: "BEGIN"}},
		{
			&pgproto3.Parse{Query: "SELECT $1::int"},
			&pgproto3.Bind{Parameters: [][]byte{[]byte("abc")}},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "ROLLBACK"}},
	}},
	{"a pipeline is one transaction", exchange{
		{
			&pgproto3.Parse{Query: "INSERT INTO nums VALUES (20, 'twenty')"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Parse{Query: "SELECT 1/(n - n) FROM nums"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "SELECT count(*) FROM nums WHERE n >= 20"}},
		{
			&pgproto3.Parse{Name: "ins", Query: "INSERT INTO nums VALUES ($1, 'x')"},
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("21")}},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("22")}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "SELECT count(*) FROM nums WHERE n >= 20"}},
		// An error at Bind, after an Execute, rolls the Execute back too.
		{
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("23")}},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("x24")}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "SELECT count(*) FROM nums WHERE n >= 20"}},
		// BEGIN makes the pipeline's statements a block that outlives Sync.
		{
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("25")}},
			&pgproto3.Execute{},
			&pgproto3.Parse{Query: "BEGIN"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("26")}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "ROLLBACK"}},
		{&pgproto3.Query{String: "SELECT count(*) FROM nums WHERE n >= 20"}},
		// COMMIT ends the transaction; the statements after it are the
		// next one.
		{
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("27")}},
			&pgproto3.Execute{},
			&pgproto3.Parse{Query: "COMMIT"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("28")}},
			&pgproto3.Execute{},
			&pgproto3.Parse{Query: "SELECT 1/(n - n) FROM nums"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		},
		{&pgproto3.Query{String: "SELECT n FROM nums WHERE n >= 20 ORDER BY n"}},
		{&pgproto3.Query{String: "DELETE FROM nums WHERE n >= 20"}},
	}},
	{"multiple commands in a prepared statement", exchange{{
		&pgproto3.Parse{Query: "SELECT 1; SELECT 2"},
		&pgproto3.Sync{},
	}}},
}

const protocolSetup = "CREATE TABLE nums (n int PRIMARY KEY, s text); INSERT INTO nums VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four'), (5, 'five')"

func runExchange(t *testing.T, r *rawConn, ex exchange) []string {
	var trace []string
	for _, batch := range ex {
		r.send(batch...)
		trace = append(trace, r.until()...)
	}
	return trace
}

func TestProtocolMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwproto"))
	pgConn := dialRaw(t, addr, map[string]string{"user": "postgres", "database": db})
	rsConn := dialRaw(t, ts.addr, nil)
	for _, r := range []*rawConn{pgConn, rsConn} {
		for _, q := range strings.Split(protocolSetup, "; ") {
			r.send(&pgproto3.Query{String: q})
			if tr := r.until(); strings.Contains(strings.Join(tr, " "), "Error") {
				t.Fatalf("setup: %v", tr)
			}
		}
	}
	for _, tc := range protocolCases {
		t.Run(tc.name, func(t *testing.T) {
			want := runExchange(t, pgConn, tc.ex)
			got := runExchange(t, rsConn, tc.ex)
			compareLogs(t, got, want)
		})
	}
}
