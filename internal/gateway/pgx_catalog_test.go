package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestPgxCatalog loads types with pgx (Conn.LoadType, which reads pg_type
// by OID) and reads catalog columns of the catalog types (oid, name,
// "char", regclass, regtype, arrays of them) in every query mode, binary
// formats included, from RockStream and from PostgreSQL: the values must
// be equal.
func TestPgxCatalog(t *testing.T) {
	pgtest.Require(t)
	ctx := context.Background()
	ts := startServer(t, Config{})
	setup := "CREATE TABLE orders (id bigint PRIMARY KEY, note varchar(40))"
	read := func(conn *pgx.Conn) string {
		var b strings.Builder
		for _, name := range []string{"int4", "numeric", "_text", "varchar"} {
			typ, err := conn.LoadType(ctx, name)
			if err != nil {
				fmt.Fprintf(&b, "LoadType %s: %v\n", name, err)
				continue
			}
			fmt.Fprintf(&b, "LoadType %s: %s %d\n", name, typ.Name, typ.OID)
		}
		var (
			oid     uint32
			relname string
			relkind string
			cls     string
			typ     string
			attrs   []string
			typs    []uint32
		)
		err := conn.QueryRow(ctx, `SELECT c.oid, c.relname, c.relkind::text, c.oid::regclass::text,
			(SELECT a.atttypid::regtype::text FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum = 2),
			ARRAY(SELECT attname FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 ORDER BY attnum),
			ARRAY(SELECT atttypid FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 ORDER BY attnum)
			FROM pg_class c WHERE c.oid = $1::regclass`, "orders").Scan(&oid, &relname, &relkind, &cls, &typ, &attrs, &typs)
		if err != nil {
			fmt.Fprintf(&b, "query: %v\n", err)
			return b.String()
		}
		fmt.Fprintf(&b, "%s %s %s %s %v %v oid>0:%v\n", relname, relkind, cls, typ, attrs, typs, oid > 0)
		return b.String()
	}
	pgConn := connectPgx(t, pgtest.NewDatabase(t, "gwpgxcat"), pgx.QueryExecModeCacheStatement)
	if _, err := pgConn.Exec(ctx, setup); err != nil {
		t.Fatal(err)
	}
	rsSetup := connectPgx(t, ts.dsn("tester", ""), pgx.QueryExecModeSimpleProtocol)
	if _, err := rsSetup.Exec(ctx, setup); err != nil {
		t.Fatal(err)
	}
	want := read(pgConn)
	if !strings.Contains(want, "orders r orders character varying [id note] [20 1043] oid>0:true") {
		t.Fatalf("PostgreSQL gives an unexpected answer:\n%s", want)
	}
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			if got := read(connectPgx(t, ts.dsn("tester", ""), mode)); got != want {
				t.Errorf("RockStream:\n%s\nPostgreSQL:\n%s", got, want)
			}
		})
	}
}
