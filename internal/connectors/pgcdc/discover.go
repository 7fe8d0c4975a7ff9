package pgcdc

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Discover reads the definitions of the upstream tables a source will
// replicate: the tables named (schema.name or name, which means public),
// or when names is empty every table of the publication.
func Discover(ctx context.Context, conn *pgconn.PgConn, publication string, names []string) ([]Table, error) {
	if len(names) == 0 {
		rows, err := query(ctx, conn, "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2", publication)
		if err != nil {
			return nil, fmt.Errorf("listing the tables of publication %q: %w", publication, err)
		}
		if len(rows) == 0 {
			return nil, fmt.Errorf("publication %q does not exist or has no tables", publication)
		}
		for _, r := range rows {
			names = append(names, r[0]+"."+r[1])
		}
	}
	tables := make([]Table, 0, len(names))
	for _, n := range names {
		schema, name := "public", n
		if i := strings.IndexByte(n, '.'); i >= 0 {
			schema, name = n[:i], n[i+1:]
		}
		t, err := discoverTable(ctx, conn, schema, name)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return tables, nil
}

func discoverTable(ctx context.Context, conn *pgconn.PgConn, schema, name string) (Table, error) {
	t := Table{Schema: schema, Name: name}
	rel, err := query(ctx, conn, `SELECT c.oid::text, c.relreplident::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')`, schema, name)
	if err != nil {
		return t, err
	}
	if len(rel) == 0 {
		return t, fmt.Errorf("upstream table %s.%s does not exist", schema, name)
	}
	oid, ident := rel[0][0], rel[0][1]
	t.FullIdentity = ident == "f"
	cols, err := query(ctx, conn, `SELECT attname, atttypid::text, atttypmod::text, attnotnull::text FROM pg_attribute
		WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`, oid)
	if err != nil {
		return t, err
	}
	for _, c := range cols {
		typOID, _ := strconv.ParseUint(c[1], 10, 32)
		typmod, _ := strconv.ParseInt(c[2], 10, 32)
		typ, err := MapType(uint32(typOID), int32(typmod))
		if err != nil {
			return t, fmt.Errorf("column %q of upstream table %s.%s: %w", c[0], schema, name, err)
		}
		t.Columns = append(t.Columns, Column{Name: c[0], OID: uint32(typOID), TypMod: int32(typmod), NotNull: c[3] == "true", Type: typ})
	}
	keys, err := query(ctx, conn, `SELECT a.attname FROM pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
		JOIN pg_attribute a ON a.attnum = k.attnum WHERE i.indrelid = $1::oid AND i.indisprimary AND a.attrelid = $1::oid ORDER BY k.ord`, oid)
	if err != nil {
		return t, err
	}
	for _, k := range keys {
		for j, c := range t.Columns {
			if c.Name == k[0] {
				t.Key = append(t.Key, j)
			}
		}
	}
	if t.Key == nil && !t.FullIdentity {
		return t, fmt.Errorf("upstream table %s.%s has no primary key and its REPLICA IDENTITY is not FULL, so its UPDATEs and DELETEs cannot be replicated; run ALTER TABLE %s REPLICA IDENTITY FULL", schema, name, t.QualifiedName())
	}
	return t, nil
}

// EnsurePublication creates publication name for tables unless it exists;
// an existing publication must publish every one of them. A publication
// it creates carries source's mark (its comment), so that DROP SOURCE
// drops it and never one the user made.
func EnsurePublication(ctx context.Context, conn *pgconn.PgConn, name, source string, tables []Table) error {
	rows, err := query(ctx, conn, "SELECT 1 FROM pg_publication WHERE pubname = $1", name)
	if err != nil {
		return err
	}
	if len(rows) > 0 {
		published, err := query(ctx, conn, "SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = $1", name)
		if err != nil {
			return err
		}
		in := map[string]bool{}
		for _, r := range published {
			in[r[0]] = true
		}
		for i := range tables {
			if t := &tables[i]; !in[t.Schema+"."+t.Name] {
				return fmt.Errorf("publication %q does not publish table %s.%s; add it with ALTER PUBLICATION %s ADD TABLE %s", name, t.Schema, t.Name, QuoteIdent(name), t.QualifiedName())
			}
		}
		return nil
	}
	list := make([]string, len(tables))
	for i := range tables {
		list[i] = tables[i].QualifiedName()
	}
	// One Query message: the publication and its mark commit together.
	create := "CREATE PUBLICATION " + QuoteIdent(name) + " FOR TABLE " + strings.Join(list, ", ") +
		"; COMMENT ON PUBLICATION " + QuoteIdent(name) + " IS " + quoteLiteral(publicationMark(source))
	if _, err = conn.Exec(ctx, create).ReadAll(); err != nil {
		return fmt.Errorf("creating publication %q: %w", name, err)
	}
	return nil
}

// query runs sql with text parameters and returns its rows as text.
func query(ctx context.Context, conn *pgconn.PgConn, sql string, args ...string) ([][]string, error) {
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = []byte(a)
	}
	res := conn.ExecParams(ctx, sql, params, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	out := make([][]string, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			out[i][j] = string(v)
		}
	}
	return out, nil
}
