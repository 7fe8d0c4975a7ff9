package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// list joins n items made by f from 1 to n.
func list(n int, f func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = f(i + 1)
	}
	return strings.Join(items, ", ")
}

// TestLimitsMatchPostgres: PostgreSQL's limits on target lists (1,664
// entries), table columns (1,600) and parameters (65,535), reached in the
// simple and the extended protocol, give PostgreSQL's answers, and the
// session goes on.
func TestLimitsMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwlimits"))
	pgConn := dialRaw(t, addr, map[string]string{"user": "postgres", "database": db})
	rsConn := dialRaw(t, ts.addr, nil)
	one := func(int) string { return "1" }
	col := func(i int) string { return fmt.Sprintf("c%d int", i) }
	params := func(n int) [][]byte {
		p := make([][]byte, n)
		for i := range p {
			p[i] = []byte("1")
		}
		return p
	}
	int4s := func(n int) []uint32 {
		p := make([]uint32, n)
		for i := range p {
			p[i] = 23
		}
		return p
	}
	exchanges := [][]pgproto3.FrontendMessage{
		{rawQuery("SELECT " + list(1664, one))},
		{rawQuery("SELECT " + list(1665, one))},
		{rawQuery("SELECT count(*) FROM (SELECT " + list(1665, one) + ") s")},
		{&pgproto3.Parse{Query: "SELECT " + list(1665, one)}, &pgproto3.Sync{}},
		{rawQuery("CREATE TABLE t1601 (" + list(1601, col) + ")")},
		{rawQuery("CREATE TABLE t1600 (" + list(1600, col) + ")")},
		{rawQuery("SELECT * FROM t1600 a, t1600 b")},
		{&pgproto3.Parse{Query: "SELECT * FROM t1600 a, t1600 b"}, &pgproto3.Sync{}},
		{rawQuery("SELECT a.*, 1 FROM t1600 a, t1600 b")},
		{rawQuery("CREATE VIEW wide AS SELECT * FROM t1600 a, t1600 b")},
		{rawQuery("CREATE MATERIALIZED VIEW wide1601 AS SELECT a.*, 1 AS extra FROM t1600 a")},
		{rawQuery("SELECT repeat('x', 1073741824)")},
		// 65,535 parameters, the most a Bind message can carry.
		{&pgproto3.Parse{Query: "SELECT $65535::int", ParameterOIDs: int4s(65535)},
			&pgproto3.Bind{Parameters: params(65535)}, &pgproto3.Execute{}, &pgproto3.Sync{}},
		{&pgproto3.Parse{Query: "SELECT $65536::int", ParameterOIDs: int4s(65535)},
			&pgproto3.Bind{Parameters: params(65535)}, &pgproto3.Execute{}, &pgproto3.Sync{}},
		{rawQuery("SELECT 1")},
	}
	for _, ex := range exchanges {
		want := runExchange(t, pgConn, exchange{ex})
		got := runExchange(t, rsConn, exchange{ex})
		compareLogs(t, got, want)
	}

	// A statement with more parameters than a ParameterDescription can
	// count: PostgreSQL sends a malformed one; RockStream refuses to
	// describe it.
	rsConn.send(&pgproto3.Parse{Query: "SELECT $65536::int", ParameterOIDs: int4s(65535)},
		&pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Sync{})
	compareLogs(t, rsConn.until(), []string{"ParseComplete",
		`ErrorResponse(ERROR 08P01 prepared statement "" has 65536 parameters, more than the 65535 a ParameterDescription message can describe)`,
		"ReadyForQuery(I)"})
}
