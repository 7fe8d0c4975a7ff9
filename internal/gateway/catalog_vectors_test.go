package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestCatalogVectors reads pg_catalog's int2vector and oidvector columns
// (their text, their zero-based subscripts, their type names) and name
// subscripts, as pg_dump does, from RockStream and from PostgreSQL: the
// answers must be equal.
func TestCatalogVectors(t *testing.T) {
	pgtest.Require(t)
	ctx := context.Background()
	ts := startServer(t, Config{})
	setup := []string{
		"CREATE TABLE pairs (a int, b text, c int, PRIMARY KEY (c, a))",
		"CREATE FUNCTION pick(x int, y text) RETURNS int LANGUAGE sql AS 'SELECT x'",
	}
	queries := []string{
		"SELECT i.indkey, i.indkey[0], i.indkey[1], i.indkey[2] IS NULL, i.indkey[-1] IS NULL, i.indkey::text FROM pg_index i WHERE i.indrelid = 'pairs'::regclass",
		"SELECT a.attname FROM pg_index i, pg_attribute a WHERE i.indrelid = 'pairs'::regclass AND a.attrelid = i.indrelid AND a.attnum = i.indkey[1]",
		"SELECT p.proargtypes, p.proargtypes[0], array_to_string(p.proargtypes::regtype[], ',') FROM pg_proc p WHERE p.proname = 'pick'",
		"SELECT a.attname, a.atttypid::regtype::text, format_type(a.atttypid, NULL) FROM pg_attribute a WHERE a.attrelid = 'pg_index'::regclass AND a.attname IN ('indkey', 'indclass') ORDER BY 1",
		"SELECT t.oid, t.typname, t.typelem, t.typcategory FROM pg_type t WHERE t.oid IN (22, 30) ORDER BY 1",
		"SELECT t.typname, t.typname[0], t.typname[1], t.typname[10], t.typname[64] IS NULL FROM pg_type t WHERE t.oid IN (23, 1007) ORDER BY 1",
	}
	read := func(conn *pgx.Conn) string {
		var b strings.Builder
		for _, q := range queries {
			rows, err := conn.Query(ctx, q)
			if err != nil {
				fmt.Fprintf(&b, "%s: %v\n", q, err)
				continue
			}
			for rows.Next() {
				vals, err := rows.Values()
				if err != nil {
					fmt.Fprintf(&b, "values: %v\n", err)
					break
				}
				fmt.Fprintf(&b, "%v\n", vals)
			}
			if err := rows.Err(); err != nil {
				fmt.Fprintf(&b, "%s: %v\n", q, err)
			}
			rows.Close()
		}
		return b.String()
	}
	pgConn := connectPgx(t, pgtest.NewDatabase(t, "gwvectors"), pgx.QueryExecModeSimpleProtocol)
	rsConn := connectPgx(t, ts.dsn("tester", ""), pgx.QueryExecModeSimpleProtocol)
	for _, s := range setup {
		for _, c := range []*pgx.Conn{pgConn, rsConn} {
			if _, err := c.Exec(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := read(pgConn)
	if !strings.Contains(want, "[3 1 3 1 true true 3 1]") {
		t.Fatalf("PostgreSQL gives an unexpected answer:\n%s", want)
	}
	if got := read(rsConn); got != want {
		t.Errorf("RockStream:\n%s\nPostgreSQL:\n%s", got, want)
	}
}
