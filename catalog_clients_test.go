package rockstream_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestClientCatalogQueries runs the catalog queries that PostgreSQL
// clients send (captured from psql 15, pgcli and pgJDBC with PostgreSQL's
// log_statement = all; testdata/clients/*.txt) against RockStream and
// against PostgreSQL 15, both holding the schema of
// testdata/clients/schema.sql.
//
// Commands:
//   - compare: the query must give the same rows in both (in order when
//     it has ORDER BY), after normalization; the output is the rows.
//   - run: the query runs on RockStream only, and its rows (or error)
//     are the output: for queries over built-in objects, whose contents
//     differ from PostgreSQL's by design (RockStream has fewer types,
//     functions and settings).
//
// Normalization, applied to both sides' output, replaces what
// legitimately differs between two systems holding the same schema:
//   - OIDs: a user relation's OID is assigned by each system (PostgreSQL
//     from its OID counter, RockStream from the catalog id), so a value
//     equal to the OID of a user relation or index prints as
//     <oid:name>;
//   - owner names: objects belong to the bootstrap role, "postgres" in
//     the test server and "rockstream" in RockStream; both print as
//     <owner>.
//
// Queries may write {{oid:name}} for the OID of a relation: clients send
// the OIDs an earlier query returned, and each system gets its own.
func TestClientCatalogQueries(t *testing.T) {
	pgtest.Require(t)
	schema, err := os.ReadFile("testdata/clients/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, string(schema)); err != nil {
		t.Fatal(err)
	}
	pg, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "clients"))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	if _, err := pg.Exec(ctx, string(schema)).ReadAll(); err != nil {
		t.Fatal(err)
	}
	// The session's database name, as the wire gateway sets it from the
	// startup message.
	rs := &rockstreamSide{s: db.Session()}
	if _, err := rs.s.Exec(ctx, "SET current_database = 'clients'"); err != nil {
		t.Fatal(err)
	}
	ps := &postgresSide{conn: pg}
	for _, side := range []catalogSide{rs, ps} {
		if err := loadUserOIDs(ctx, side); err != nil {
			t.Fatal(err)
		}
	}
	datadriven.Walk(t, "testdata/clients", func(t *testing.T, path string) {
		if !strings.HasSuffix(path, ".txt") {
			return
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var params []string
			for _, a := range d.CmdArgs {
				if a.Key == "param" {
					params = append(params, a.Vals...)
				}
			}
			switch d.Cmd {
			case "compare":
				got := runOn(ctx, rs, d.Input, params)
				want := runOn(ctx, ps, d.Input, params)
				if got != want {
					t.Errorf("%s\nRockStream:\n%s\nPostgreSQL:\n%s", d.Input, got, want)
				}
				return got
			case "run":
				return runOn(ctx, rs, d.Input, params)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// catalogSide is one system the client queries run on.
type catalogSide interface {
	query(ctx context.Context, sql string, params []string) (cols []string, rows [][]*string, err error)
	oids() map[string]string
	owner() string
}

type rockstreamSide struct {
	s     *rockstream.Session
	names map[string]string
}

func (r *rockstreamSide) query(ctx context.Context, sql string, params []string) ([]string, [][]*string, error) {
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = p
	}
	res, err := r.s.Exec(ctx, sql, args...)
	if err != nil {
		return nil, nil, err
	}
	cols := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		cols[i] = c.Name
	}
	return cols, res.Rows, nil
}
func (r *rockstreamSide) oids() map[string]string { return r.names }
func (r *rockstreamSide) owner() string           { return "rockstream" }

type postgresSide struct {
	conn  *pgconn.PgConn
	names map[string]string
}

func (p *postgresSide) query(ctx context.Context, sql string, params []string) ([]string, [][]*string, error) {
	vals := make([][]byte, len(params))
	for i, v := range params {
		vals[i] = []byte(v)
	}
	rr := p.conn.ExecParams(ctx, sql, vals, nil, nil, nil)
	var raw [][][]byte
	for rr.NextRow() {
		row := make([][]byte, len(rr.Values()))
		for i, v := range rr.Values() {
			if v != nil {
				row[i] = append([]byte{}, v...)
			}
		}
		raw = append(raw, row)
	}
	fields := rr.FieldDescriptions()
	if _, err := rr.Close(); err != nil {
		return nil, nil, err
	}
	cols, rows := pgResult(fields, raw)
	return cols, rows, nil
}

func pgResult(fields []pgconn.FieldDescription, raw [][][]byte) ([]string, [][]*string) {
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f.Name
	}
	rows := make([][]*string, len(raw))
	for i, r := range raw {
		rows[i] = make([]*string, len(r))
		for j, v := range r {
			if v != nil {
				s := string(v)
				rows[i][j] = &s
			}
		}
	}
	return cols, rows
}
func (p *postgresSide) oids() map[string]string { return p.names }
func (p *postgresSide) owner() string           { return "postgres" }

// loadUserOIDs records the OIDs of the public relations and their indexes
// on side, for {{oid:name}} and for normalizing results.
func loadUserOIDs(ctx context.Context, side catalogSide) error {
	_, rows, err := side.query(ctx, `SELECT c.oid::text, c.relname::text FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`, nil)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, r := range rows {
		names[*r[1]] = *r[0]
	}
	switch s := side.(type) {
	case *rockstreamSide:
		s.names = names
	case *postgresSide:
		s.names = names
	}
	return nil
}

var oidPlaceholder = regexp.MustCompile(`\{\{oid:([a-z_]+)\}\}`)

// runOn runs sql on side and prints its normalized result.
func runOn(ctx context.Context, side catalogSide, sql string, params []string) string {
	oids := side.oids()
	sql = oidPlaceholder.ReplaceAllStringFunc(sql, func(m string) string {
		return oids[oidPlaceholder.FindStringSubmatch(m)[1]]
	})
	cols, rows, err := side.query(ctx, sql, params)
	if err != nil {
		return fmt.Sprintf("error (%s): %s\n", sqlState(err), err)
	}
	byOID := map[string]string{}
	for name, oid := range oids {
		byOID[oid] = "<oid:" + name + ">"
	}
	var b strings.Builder
	b.WriteString(strings.Join(cols, "|") + "\n")
	lines := make([]string, len(rows))
	for i, r := range rows {
		cells := make([]string, len(r))
		for j, v := range r {
			switch {
			case v == nil:
				cells[j] = "NULL"
			case byOID[*v] != "":
				cells[j] = byOID[*v]
			case *v == side.owner():
				cells[j] = "<owner>"
			default:
				cells[j] = *v
			}
		}
		lines[i] = strings.Join(cells, "|")
	}
	if !regexp.MustCompile(`(?is)order\s+by`).MatchString(sql) {
		sort.Strings(lines)
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func sqlState(err error) string {
	if pe, ok := err.(*pgconn.PgError); ok {
		return pe.Code
	}
	return errs.SQLState(err)
}
