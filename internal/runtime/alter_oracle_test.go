package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// The ALTER oracle tests run one script of DDL and DML against
// RockStream and PostgreSQL 15. In the script, {MV} is MATERIALIZED VIEW
// here and VIEW in PostgreSQL (a plain view is always fresh there). Each
// statement must succeed on both sides or fail on both with the same
// SQLSTATE and message; after each, every table and view of the schema
// must hold the same rows on both sides.

var alterScript = []string{
	`CREATE TABLE t (a int, b int, c text)`,
	`CREATE TABLE u (k int PRIMARY KEY, x text)`,
	`INSERT INTO t VALUES (1, 10, 'p'), (2, 20, 'q'), (2, 20, 'q'), (NULL, 30, NULL), (3, NULL, 'r')`,
	`INSERT INTO u VALUES (1, 'one'), (2, 'two'), (4, 'four')`,
	`CREATE {MV} m_ab AS SELECT a, b FROM t`,
	`CREATE {MV} m_star AS SELECT * FROM t`,
	`CREATE {MV} m_agg AS SELECT b, count(*) AS n, sum(a) AS s FROM t GROUP BY b`,
	`CREATE VIEW pv AS SELECT a, c FROM t WHERE a > 1`,
	`CREATE {MV} m_pv AS SELECT c, count(*) AS n FROM pv GROUP BY c`,
	`CREATE {MV} m_join AS SELECT t.a, u.x FROM t JOIN u ON t.a = u.k`,
	// ADD COLUMN: the views never see it.
	`ALTER TABLE t ADD COLUMN d int DEFAULT 7`,
	`INSERT INTO t VALUES (4, 40, 's', 8), (1, 11, 'p', 7)`,
	`UPDATE t SET d = d + 1 WHERE a = 2`,
	`ALTER TABLE t ADD COLUMN IF NOT EXISTS d int`,
	`ALTER TABLE t ADD COLUMN a int`,
	`ALTER TABLE t ADD COLUMN n int NOT NULL`,
	`ALTER TABLE t ADD COLUMN e text NOT NULL DEFAULT 'e', ADD COLUMN f numeric`,
	`DELETE FROM t WHERE a = 3`,
	// RENAME COLUMN and RENAME TO: the views go on.
	`ALTER TABLE t RENAME COLUMN a TO aa`,
	`ALTER TABLE t RENAME COLUMN zz TO q`,
	`ALTER TABLE t RENAME COLUMN b TO c`,
	`INSERT INTO t (aa, b, c) VALUES (2, 21, 'q'), (5, 50, 't')`,
	`ALTER TABLE t RENAME TO t2`,
	`ALTER TABLE t2 RENAME TO u`,
	`INSERT INTO t2 (aa, b) VALUES (1, 12)`,
	`DELETE FROM t2 WHERE b = 20`,
	// DROP COLUMN: refused while a view reads the column.
	`ALTER TABLE t2 DROP COLUMN b`,
	`ALTER TABLE t2 DROP COLUMN zz`,
	`ALTER TABLE t2 DROP COLUMN IF EXISTS zz`,
	`ALTER TABLE t2 DROP COLUMN d`,
	`ALTER TABLE t2 DROP COLUMN f, DROP COLUMN e`,
	`? SELECT attname, attnum, attisdropped, atttypid, attnotnull, atthasdef FROM pg_attribute WHERE attrelid = 't2'::regclass AND attnum > 0`,
	`? SELECT relnatts FROM pg_class WHERE relname = 't2'`,
	`? SELECT adnum, pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 't2'::regclass`,
	`INSERT INTO t2 VALUES (6, 60, 'u')`,
	// TYPE: refused for a column a view reads, a rewrite otherwise.
	`ALTER TABLE t2 ALTER COLUMN c TYPE varchar(10)`,
	`ALTER TABLE t2 ADD COLUMN g text DEFAULT '12'`,
	`ALTER TABLE t2 ALTER COLUMN g TYPE int`,
	`ALTER TABLE t2 ALTER COLUMN g TYPE int USING g::int + 1`,
	`ALTER TABLE t2 ALTER COLUMN g DROP DEFAULT, ALTER COLUMN g TYPE int USING g::int + 1`,
	`INSERT INTO t2 VALUES (7, 70, 'v', 3)`,
	`ALTER TABLE t2 ALTER COLUMN g TYPE numeric(4, 1)`,
	`ALTER TABLE t2 ALTER COLUMN g TYPE int USING g / 0`,
	`CREATE TABLE kv (k numeric PRIMARY KEY, v text)`,
	`INSERT INTO kv VALUES (1.4, 'a'), (2.6, 'bb'), (5, NULL)`,
	`ALTER TABLE kv ALTER COLUMN k TYPE int`,
	`ALTER TABLE kv ALTER COLUMN v TYPE int USING length(v), ADD COLUMN w text DEFAULT 'w'`,
	`INSERT INTO kv VALUES (4, 4)`,
	`INSERT INTO kv VALUES (3, 3)`,
	`ALTER TABLE kv ALTER COLUMN k TYPE int USING k / 2`,
	`ALTER TABLE kv DROP COLUMN v`,
	`UPDATE kv SET w = 'x' WHERE k = 3`,
	// NOT NULL and DEFAULT.
	`ALTER TABLE t2 ALTER COLUMN aa SET NOT NULL`,
	`DELETE FROM t2 WHERE aa IS NULL`,
	`ALTER TABLE t2 ALTER COLUMN aa SET NOT NULL`,
	`INSERT INTO t2 (b) VALUES (1)`,
	`ALTER TABLE t2 ALTER COLUMN aa DROP NOT NULL, ALTER COLUMN b SET DEFAULT 42`,
	`INSERT INTO t2 (c) VALUES ('w')`,
	`ALTER TABLE t2 ALTER COLUMN b DROP DEFAULT`,
	`INSERT INTO t2 (aa) VALUES (8)`,
	`ALTER TABLE t2 ALTER COLUMN zz SET DEFAULT 1`,
	`ALTER TABLE u ALTER COLUMN k DROP NOT NULL`,
	// A keyed table: TYPE of the key rewrites the keys.
	`ALTER TABLE u ALTER COLUMN k TYPE bigint`,
	`ALTER TABLE u ALTER COLUMN x TYPE int USING length(x)`,
	`INSERT INTO u VALUES (3, 5)`,
	`INSERT INTO u VALUES (3, 6)`,
	`ALTER TABLE u ADD COLUMN y int DEFAULT 0, ALTER COLUMN y SET NOT NULL`,
	`? SELECT attname, attnum, atttypid, attnotnull FROM pg_attribute WHERE attrelid = 'u'::regclass AND attnum > 0`,
	`? SELECT conkey FROM pg_constraint WHERE conrelid = 'u'::regclass`,
	// Replacing views.
	`CREATE OR REPLACE VIEW pv AS SELECT a FROM t2`,
	`CREATE OR REPLACE VIEW pv AS SELECT aa AS a, c, b FROM t2 WHERE aa > 2`,
	`CREATE OR REPLACE VIEW pv AS SELECT aa AS a, c::text AS c FROM t2 WHERE aa > 2`,
	`INSERT INTO t2 VALUES (9, 90, 'x')`,
	`CREATE OR REPLACE {MV} m_agg AS SELECT b, count(*) AS n, sum(aa) + 0 AS s FROM t2 WHERE b > 15 GROUP BY b`,
	`INSERT INTO t2 VALUES (9, 90, 'x')`,
	// Renaming views.
	`ALTER VIEW t2 RENAME TO t3`,
	`ALTER TABLE pv RENAME TO pv2`,
	`ALTER VIEW pv2 RENAME TO pv`,
	`ALTER {MV} m_pv RENAME TO m_pv2`,
	`ALTER TABLE IF EXISTS nosuch ADD COLUMN z int`,
	`ALTER TABLE nosuch ADD COLUMN z int`,
	`ALTER TABLE m_ab ADD COLUMN z int`,
	`INSERT INTO t2 VALUES (10, 100, 'y')`,
	// CASCADE drops the views that read the column.
	`ALTER TABLE t2 DROP COLUMN b CASCADE`,
	`INSERT INTO t2 VALUES (11, 'z')`,
	`ALTER TABLE t2 DROP COLUMN aa CASCADE`,
	`INSERT INTO t2 VALUES ('zz')`,
}

func TestAlterMatchesPostgres(t *testing.T) {
	runAlterScript(t, OpenMemory().NewSession(), connectOracle(t), alterScript)
}

// TestAlterRestart runs the script, reopens the store, compares every
// relation again and goes on changing the tables: the catalog replays
// the ALTER statements, the views their inputs as they saw them.
func TestAlterRestart(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	pgc := connectOracle(t)
	e1, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runAlterScript(t, e1.NewSession(), pgc, alterScript[:len(alterScript)-4])
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e2.Close()
	s := e2.NewSession()
	compareRelations(t, s, pgc, "reopen")
	runAlterScript(t, s, pgc, append(alterScript[len(alterScript)-4:],
		`INSERT INTO u VALUES (12, 13, 1)`,
		`ALTER TABLE u RENAME COLUMN y TO yy`,
		`CREATE {MV} m_u AS SELECT * FROM u WHERE k > 1`,
		`ALTER TABLE u ADD COLUMN w int DEFAULT 1`,
		`INSERT INTO u VALUES (13, 1, 1, 1)`))
	_ = ctx
}

func connectOracle(t *testing.T) *pgconn.PgConn {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "alter"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgc.Close(ctx) })
	return pgc
}

func runAlterScript(t *testing.T, s *Session, pgc *pgconn.PgConn, script []string) {
	t.Helper()
	ctx := context.Background()
	failed := 0
	defer func() { t.Logf("%d statements, %d refused on both sides", len(script), failed) }()
	for _, stmt := range script {
		if q, ok := strings.CutPrefix(stmt, "? "); ok {
			o := &joinOracle{t: t, s: s, pg: pgc}
			want, err := o.theirs([]string{q})
			if err != nil {
				t.Fatalf("PostgreSQL: %s: %v", q, err)
			}
			if got := o.ours(q); !slices.Equal(got, want[0]) {
				t.Fatalf("%s differs:\nRockStream:\n  %s\nPostgreSQL:\n  %s", q, strings.Join(got, "\n  "), strings.Join(want[0], "\n  "))
			}
			continue
		}
		ours := strings.ReplaceAll(stmt, "{MV}", "MATERIALIZED VIEW")
		theirs := strings.ReplaceAll(stmt, "{MV}", "VIEW")
		_, pgErr := pgc.Exec(ctx, theirs).ReadAll()
		_, ourErr := s.Exec(ctx, ours, nil)
		if (pgErr == nil) != (ourErr == nil) || pgErr != nil && sqlState(pgErr) != errs.SQLState(ourErr) {
			t.Fatalf("%s:\nPostgreSQL: %v\nRockStream: %v", stmt, pgErr, ourErr)
		}
		if pgErr != nil {
			var pe *pgconn.PgError
			if asPgError(pgErr, &pe) && pe.Message != ourErr.Error() {
				t.Errorf("%s: message differs:\nPostgreSQL: %s\nRockStream: %s", stmt, pe.Message, ourErr.Error())
			}
			failed++
			t.Logf("refused: %s: %v", stmt, ourErr)
			continue
		}
		compareRelations(t, s, pgc, stmt)
	}
}

func asPgError(err error, pe **pgconn.PgError) bool {
	e, ok := err.(*pgconn.PgError)
	if ok {
		*pe = e
	}
	return ok
}

// compareRelations compares the names and the rows of the schema's
// relations on both sides.
func compareRelations(t *testing.T, s *Session, pgc *pgconn.PgConn, after string) {
	t.Helper()
	const list = `SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'v', 'm') ORDER BY 1`
	o := &joinOracle{t: t, s: s, pg: pgc}
	names := o.ours(list)
	want, err := o.theirs([]string{list})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, want[0]) {
		t.Fatalf("after %s: relations differ:\nRockStream: %v\nPostgreSQL: %v", after, names, want[0])
	}
	var queries []string
	for _, n := range names {
		queries = append(queries, "SELECT * FROM "+n)
	}
	want, err = o.theirs(queries)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		if got := o.ours(q); !slices.Equal(got, want[i]) {
			t.Fatalf("after %s: %s differs:\nRockStream:\n  %s\nPostgreSQL:\n  %s", after, q,
				strings.Join(got, "\n  "), strings.Join(want[i], "\n  "))
		}
	}
}
