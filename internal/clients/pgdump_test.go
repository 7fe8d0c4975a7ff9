package clients

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// dumpSchema is created in RockStream, dumped with pg_dump and loaded
// into PostgreSQL; the same statements run directly in PostgreSQL give
// the reference catalog. Defaults are of the types whose constants
// PostgreSQL prints as RockStream does: a default stored coerced to its
// column's type (bigint DEFAULT 1) prints as '1'::bigint in RockStream,
// where PostgreSQL prints the literal as written.
const dumpSchema = `
CREATE ROLE pd_reader;
CREATE SCHEMA pd_s;
CREATE TABLE pd_orders (id int PRIMARY KEY, customer text NOT NULL DEFAULT 'anon', amount numeric(10,2),
  placed date, note varchar(20), at timestamptz, flags boolean[], score double precision);
CREATE UNIQUE INDEX pd_orders_note ON pd_orders (note);
CREATE INDEX pd_orders_cust ON pd_orders (customer, placed);
CREATE TABLE pd_s.items (order_id int NOT NULL, sku text, qty bigint, n int DEFAULT 1, PRIMARY KEY (order_id, sku));
CREATE VIEW pd_big AS SELECT id, amount FROM pd_orders WHERE amount > 5;
CREATE MATERIALIZED VIEW pd_totals AS SELECT customer, sum(amount) AS total, count(*) AS n FROM pd_orders GROUP BY customer;
CREATE VIEW pd_a_top AS SELECT customer, total FROM pd_totals WHERE n > 1;
CREATE MATERIALIZED VIEW pd_s.qty AS SELECT o.customer, sum(i.qty) AS q FROM pd_orders o JOIN pd_s.items i ON i.order_id = o.id GROUP BY o.customer;
GRANT SELECT ON pd_orders, pd_big TO pd_reader;
GRANT USAGE ON SCHEMA pd_s TO pd_reader;
INSERT INTO pd_orders VALUES (1, 'ann', 7.5, '2026-01-02', 'first', '2026-01-02 03:04:05+00', '{t,f}', 1.5),
  (2, 'bob', 3, NULL, NULL, NULL, NULL, NULL), (3, 'ann', 9, NULL, 'third', NULL, '{}', -0.25);
INSERT INTO pd_s.items VALUES (1, 'x', 2, 4), (1, 'y', 5, 5), (3, 'x', 1, 6);
`

// dumpCatalog lists what a dump must carry over, for comparing a loaded
// dump with the reference: schemas with their owners and privileges,
// relations with their kind, owner and privileges, columns with type,
// NOT NULL and default, indexes and constraints by definition, and the
// views' definitions as PostgreSQL prints them.
const dumpCatalog = `
SELECT 'schema', nspname, pg_get_userbyid(nspowner), coalesce(nspacl::text, '') FROM pg_namespace
 WHERE nspname NOT LIKE 'pg_%' AND nspname NOT IN ('information_schema', 'rockstream_catalog')
UNION ALL
SELECT 'relation', n.nspname || '.' || c.relname, c.relkind::text || ' ' || pg_get_userbyid(c.relowner), coalesce(c.relacl::text, '')
 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname LIKE 'pd_%' OR c.relname LIKE 'pd_%'
UNION ALL
SELECT 'column', c.relname || '.' || a.attname, format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
  coalesce(pg_get_expr(d.adbin, d.adrelid), '')
 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE (n.nspname LIKE 'pd_%' OR c.relname LIKE 'pd_%') AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'v', 'm')
UNION ALL
SELECT 'index', indexrelid::regclass::text, pg_get_indexdef(indexrelid), '' FROM pg_index WHERE indrelid::regclass::text LIKE '%pd_%'
UNION ALL
SELECT 'constraint', conrelid::regclass::text || ' ' || conname, pg_get_constraintdef(oid), '' FROM pg_constraint WHERE conrelid::regclass::text LIKE '%pd_%'
UNION ALL
SELECT 'view', c.oid::regclass::text, c.relkind::text, pg_get_viewdef(c.oid) FROM pg_class c WHERE c.relkind IN ('v', 'm') AND c.oid::regclass::text LIKE '%pd_%'
ORDER BY 1, 2, 3, 4`

// dumpData lists the rows of the tables and materialized views.
const dumpData = `
SELECT 'pd_orders', * FROM (SELECT id, customer, amount, placed, note, at, flags, score FROM pd_orders ORDER BY id) o;
SELECT 'items', * FROM (SELECT * FROM pd_s.items ORDER BY 1, 2) i;
SELECT 'totals', * FROM (SELECT * FROM pd_totals ORDER BY 1) t;
SELECT 'qty', * FROM (SELECT * FROM pd_s.qty ORDER BY 1) q;`

// rowsOf runs the queries of dumpData one by one.
func rowsOf(t *testing.T, e endpoint, psql string) string {
	t.Helper()
	var out strings.Builder
	for _, q := range strings.Split(strings.TrimSpace(dumpData), ";") {
		if q = strings.TrimSpace(q); q != "" {
			out.WriteString(runCombined(t, e, ".", psql, "-X", "-A", "-c", q))
		}
	}
	return out.String()
}

// pgDump returns the pg_dump of the reference version, skipping the test
// when it is not installed.
func pgDump(t *testing.T) string {
	t.Helper()
	p := filepath.Join(pgtest.BinDir(), "pg_dump")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return requireTool(t, "pg_dump")
}

// TestPgDumpLoadsIntoPostgres runs the real pg_dump against RockStream,
// schema only (-s) and with the data, loads each dump into a fresh
// PostgreSQL database with psql (stopping at the first error) and
// compares the catalog (and the rows) with those of the same statements
// run in PostgreSQL directly. A materialized view arrives as PostgreSQL's
// CREATE MATERIALIZED VIEW of its query.
func TestPgDumpLoadsIntoPostgres(t *testing.T) {
	if *target == "postgres" {
		t.Skip("dumps RockStream; the reference side is PostgreSQL already")
	}
	psql := requireTool(t, "psql")
	dump := pgDump(t)
	pgtest.Require(t)
	rs := startRockStream(t)
	rs.user = "rockstream"
	runCombined(t, rs, ".", psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", dumpSchema)

	newDB := func() endpoint {
		e := postgresEndpoint(t)
		e.user = "rockstream"
		return e
	}
	ref := newDB()
	ref.user = "postgres"
	// RockStream's objects belong to its bootstrap superuser, rockstream;
	// pg_dump does not dump roles (pg_dumpall does), so they are made
	// first, as on any restore into another cluster.
	createBootstrapRole(t, ref, psql)
	ref.user = "rockstream"
	refSchema := strings.Replace(dumpSchema, "CREATE ROLE pd_reader;", `DO $$BEGIN CREATE ROLE pd_reader; EXCEPTION WHEN duplicate_object THEN NULL; END$$;`, 1) +
		// PostgreSQL's materialized views hold their rows as of a REFRESH.
		"REFRESH MATERIALIZED VIEW pd_totals; REFRESH MATERIALIZED VIEW pd_s.qty;"
	runCombined(t, ref, ".", psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", refSchema)
	want := runCombined(t, ref, ".", psql, "-X", "-A", "-c", dumpCatalog)
	wantData := rowsOf(t, ref, psql)
	if strings.Contains(want, "ERROR") || !strings.Contains(want, "pd_totals") {
		t.Fatalf("reference catalog query failed:\n%s", want)
	}

	for _, mode := range []struct {
		name string
		args []string
	}{{"schema", []string{"-s"}}, {"data", nil}} {
		t.Run(mode.name, func(t *testing.T) {
			cmd := exec.Command(dump, append([]string{"--no-password"}, mode.args...)...)
			cmd.Env = rs.env("pd")
			out, err := cmd.Output()
			if err != nil {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("pg_dump %v: %v\n%s", mode.args, err, stderr)
			}
			text := string(out)
			if !strings.Contains(text, "CREATE MATERIALIZED VIEW public.pd_totals AS") {
				t.Errorf("the dump has no CREATE MATERIALIZED VIEW for pd_totals:\n%s", text)
			}
			// RockStream's system relations and their schema belong to its
			// built-in extension, which pg_dump leaves out.
			if strings.Contains(text, "rockstream_catalog") {
				t.Errorf("the dump holds RockStream's system relations:\n%s", text)
			}
			file := filepath.Join(t.TempDir(), "dump.sql")
			if err := os.WriteFile(file, out, 0o644); err != nil {
				t.Fatal(err)
			}
			loaded := newDB()
			if res := runCombined(t, loaded, ".", psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", file); strings.Contains(res, "ERROR") {
				t.Fatalf("loading the dump into PostgreSQL failed:\n%s\ndump:\n%s", res, text)
			}
			if got := runCombined(t, loaded, ".", psql, "-X", "-A", "-c", dumpCatalog); got != want {
				t.Errorf("the loaded dump's catalog differs from PostgreSQL's\nloaded:\n%s\nreference:\n%s\ndump:\n%s", got, want, text)
			}
			if mode.args == nil {
				if got := rowsOf(t, loaded, psql); got != wantData {
					t.Errorf("the loaded dump's rows differ\nloaded:\n%s\nreference:\n%s", got, wantData)
				}
			}
		})
	}
}
