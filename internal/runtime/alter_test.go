package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// alterSession is a session of a new engine in memory whose backfills
// start from one-row chunks and report every chunk, collecting its
// notices.
func alterSession(t *testing.T) (*Session, *[]string) {
	t.Cleanup(SetBackfillProgress(1, 0, 0))
	s := OpenMemory().NewSession()
	var notes []string
	s.OnNotice(func(n Notice) { notes = append(notes, n.Message) })
	return s, &notes
}

func alterQuery(t *testing.T, s *Session, q string) string {
	t.Helper()
	res, err := s.Exec(context.Background(), q, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return formatRows(res)
}

func backfilled(notes []string, view string) bool {
	for _, n := range notes {
		if strings.HasPrefix(n, "backfill of "+view+":") {
			return true
		}
	}
	return false
}

// TestAlterKeepsViewState: ADD COLUMN, RENAME COLUMN and RENAME TO keep
// the materialized views that read the table running on their state (no
// backfill); DROP COLUMN of a column a view saw but does not read
// recomputes the view, whose contents stay right.
func TestAlterKeepsViewState(t *testing.T) {
	s, notes := alterSession(t)
	execAll(t, s,
		"CREATE TABLE t (a int, b int, c text)",
		"CREATE TABLE u (k int, y int)",
		"INSERT INTO t VALUES (1, 2, 'x'), (3, 4, 'y')",
		"INSERT INTO u VALUES (1, 10), (3, 30)",
		"CREATE MATERIALIZED VIEW m AS SELECT t.a, u.y FROM t JOIN u ON t.a = u.k",
		"CREATE MATERIALIZED VIEW g AS SELECT count(*) AS n, sum(b) AS s FROM t")
	for _, q := range []string{
		"ALTER TABLE t ADD COLUMN d int DEFAULT 5",
		"ALTER TABLE t RENAME COLUMN a TO aa",
		"ALTER TABLE t RENAME TO t2",
		"ALTER TABLE u RENAME TO u2",
	} {
		*notes = nil
		execAll(t, s, q)
		if backfilled(*notes, "m") || backfilled(*notes, "g") {
			t.Errorf("%s recomputed a view: %q", q, *notes)
		}
	}
	execAll(t, s, "INSERT INTO t2 VALUES (1, 7, 'z', 0)", "DELETE FROM t2 WHERE b = 4")
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY 1, 2"), "1|10\n1|10\n"; got != want {
		t.Errorf("m = %q, want %q", got, want)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM g"), "2|9\n"; got != want {
		t.Errorf("g = %q, want %q", got, want)
	}
	*notes = nil
	execAll(t, s, "ALTER TABLE t2 DROP COLUMN c")
	if !backfilled(*notes, "m") {
		t.Errorf("DROP COLUMN of a column m saw did not recompute it: %q", *notes)
	}
	execAll(t, s, "INSERT INTO t2 VALUES (3, 1, 1)")
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY 1, 2"), "1|10\n1|10\n3|30\n"; got != want {
		t.Errorf("m after DROP COLUMN = %q, want %q", got, want)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM g"), "3|10\n"; got != want {
		t.Errorf("g after DROP COLUMN = %q, want %q", got, want)
	}
	// Rows stored before the rewrite leave the views exactly; a column
	// added after a view was created is none of its business.
	*notes = nil
	execAll(t, s, "ALTER TABLE t2 ALTER COLUMN d TYPE bigint", "DELETE FROM t2 WHERE aa = 1")
	if backfilled(*notes, "m") {
		t.Errorf("TYPE of a column added after m recomputed it: %q", *notes)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY 1, 2"), "3|30\n"; got != want {
		t.Errorf("m after DELETE = %q, want %q", got, want)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM g"), "1|1\n"; got != want {
		t.Errorf("g after DELETE = %q, want %q", got, want)
	}
}

// TestAlterDependentErrors checks the DETAIL and HINT of the refusals,
// as PostgreSQL 15 words them.
func TestAlterDependentErrors(t *testing.T) {
	s, _ := alterSession(t)
	execAll(t, s,
		"CREATE TABLE t (a int, b int, c text)",
		"CREATE VIEW v AS SELECT a, b FROM t",
		"CREATE MATERIALIZED VIEW m AS SELECT b FROM t")
	for _, c := range []struct{ stmt, code, msg, detail, hint string }{
		{"ALTER TABLE t DROP COLUMN b", "2BP01", "cannot drop column b of table t because other objects depend on it",
			"view v depends on column b of table t\nmaterialized view m depends on column b of table t",
			"Use DROP ... CASCADE to drop the dependent objects too."},
		{"ALTER TABLE t ALTER COLUMN b TYPE text", "0A000", "cannot alter type of a column used by a view or rule",
			`rule _RETURN on view v depends on column "b"`, ""},
		{"ALTER TABLE t ALTER COLUMN c TYPE int", "42804", `column "c" cannot be cast automatically to type integer`,
			"", `You might need to specify "USING c::integer".`},
		{"ALTER TABLE v ADD COLUMN q int", "42809", `ALTER action ADD COLUMN cannot be performed on relation "v"`,
			"This operation is not supported for views.", ""},
		{"ALTER MATERIALIZED VIEW v RENAME TO w", "42809", `"v" is not a materialized view`, "", ""},
		{"CREATE OR REPLACE VIEW v AS SELECT a FROM t", "42P16", "cannot drop columns from view", "", ""},
		{"CREATE OR REPLACE MATERIALIZED VIEW v AS SELECT a FROM t", "42809", `"v" is not a materialized view`, "", ""},
	} {
		_, err := s.Exec(context.Background(), c.stmt, nil)
		var e *errs.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want an error", c.stmt, err)
		}
		if errs.SQLState(err) != c.code || e.Message != c.msg || e.Detail != c.detail || e.Hint != c.hint {
			t.Errorf("%s:\n got %s %q detail %q hint %q\nwant %s %q detail %q hint %q", c.stmt,
				errs.SQLState(err), e.Message, e.Detail, e.Hint, c.code, c.msg, c.detail, c.hint)
		}
	}
	execAll(t, s, "ALTER TABLE t DROP COLUMN b CASCADE")
	if got := alterQuery(t, s, "SELECT relname FROM pg_class WHERE relname IN ('v', 'm')"); got != "" {
		t.Errorf("CASCADE left %q", got)
	}
}

// TestViewDefinitionAfterRename: pg_views shows a view's definition with
// the relation's and the column's new names, the output column keeping
// its name.
func TestViewDefinitionAfterRename(t *testing.T) {
	s, _ := alterSession(t)
	execAll(t, s,
		"CREATE TABLE t (a int, c text)",
		"CREATE VIEW w AS SELECT a, t.c FROM t WHERE a > 0",
		"ALTER TABLE t RENAME COLUMN a TO aa",
		"ALTER TABLE t RENAME TO tt",
		"INSERT INTO tt VALUES (1, 'x')")
	if got, want := alterQuery(t, s, "SELECT definition FROM pg_views WHERE viewname = 'w'"),
		"SELECT aa AS a, tt.c FROM tt WHERE aa > 0\n"; got != want {
		t.Errorf("definition = %q, want %q", got, want)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM w"), "1|x\n"; got != want {
		t.Errorf("w = %q, want %q", got, want)
	}
}

// TestReplaceMaterializedView: CREATE OR REPLACE MATERIALIZED VIEW
// recomputes the view under its id; with the same columns it keeps its
// history and its readers, with other columns it starts its history
// again and is refused while a view reads it. AS OF EPOCH before an ADD
// COLUMN of its table reads the view as it was (its columns never
// change).
func TestReplaceMaterializedView(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	e, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
		"CREATE MATERIALIZED VIEW m AS SELECT a, b FROM t WHERE a > 1",
		"CREATE MATERIALIZED VIEW n AS SELECT count(*) AS c FROM m")
	before := e.Epoch()
	execAll(t, s, "ALTER TABLE t ADD COLUMN c int DEFAULT 0", "INSERT INTO t VALUES (5, 50, 5)")
	if got, want := alterQuery(t, s, fmt.Sprintf("SELECT * FROM m AS OF EPOCH %d ORDER BY a", before)), "2|20\n3|30\n"; got != want {
		t.Errorf("m AS OF EPOCH before ADD COLUMN = %q, want %q", got, want)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY a"), "2|20\n3|30\n5|50\n"; got != want {
		t.Errorf("m after ADD COLUMN = %q, want %q", got, want)
	}
	replaced := e.Epoch()
	execAll(t, s, "CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT a, b FROM t WHERE a < 3")
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY a"), "1|10\n2|20\n"; got != want {
		t.Errorf("m = %q, want %q", got, want)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM n"), "2\n"; got != want {
		t.Errorf("n = %q, want %q", got, want)
	}
	// The same columns: the history before the replacement stays.
	if got, want := alterQuery(t, s, fmt.Sprintf("SELECT * FROM m AS OF EPOCH %d ORDER BY a", replaced)), "2|20\n3|30\n5|50\n"; got != want {
		t.Errorf("m AS OF EPOCH before the replacement = %q, want %q", got, want)
	}
	_, err = s.Exec(ctx, "CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT a FROM t", nil)
	if errs.SQLState(err) != "42P16" || err.Error() != "cannot drop columns from view" {
		t.Fatalf("replacing m with fewer columns while n reads it: %v, want 42P16", err)
	}
	execAll(t, s, "DROP MATERIALIZED VIEW n",
		"CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT a * 2 AS d, c FROM t",
		"INSERT INTO t VALUES (4, 40, 1)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS m AS SELECT 1 AS x")
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY d"), "2|0\n4|0\n6|0\n8|1\n10|5\n"; got != want {
		t.Errorf("m replaced = %q, want %q", got, want)
	}
	// Other columns: the old history is gone.
	if _, err := s.Exec(ctx, fmt.Sprintf("SELECT * FROM m AS OF EPOCH %d", replaced), nil); errs.SQLState(err) != "22023" {
		t.Errorf("m AS OF EPOCH before a replacement with other columns: %v, want 22023", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e.Close()
	s = e.NewSession()
	execAll(t, s, "DELETE FROM t WHERE a = 1")
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY d"), "4|0\n6|0\n8|1\n10|5\n"; got != want {
		t.Errorf("m after reopen = %q, want %q", got, want)
	}
}

// TestExplainAfterAddColumn: a plain view over a table that gained a
// column reads it through a projection that EXPLAIN does not show.
func TestExplainAfterAddColumn(t *testing.T) {
	s, _ := alterSession(t)
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"CREATE VIEW v AS SELECT * FROM t",
		"ALTER TABLE t ADD COLUMN c int",
		"INSERT INTO t VALUES (1, 2, 3)")
	got := alterQuery(t, s, "EXPLAIN INCREMENTAL SELECT a FROM v")
	if strings.Contains(got, shapeSep) || !strings.Contains(got, "scan t") {
		t.Errorf("EXPLAIN = %q", got)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM v"), "1|2\n"; got != want {
		t.Errorf("v = %q, want %q", got, want)
	}
}

// TestAlterInTransactionBlock: ALTER TABLE in a block commits or rolls
// back with the block's other changes, and the block's later statements
// see the new definition. A column's comment stays with it when an
// earlier column is dropped.
func TestAlterInTransactionBlock(t *testing.T) {
	s, _ := alterSession(t)
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"INSERT INTO t VALUES (1, 2)",
		"CREATE MATERIALIZED VIEW m AS SELECT a, b FROM t",
		"BEGIN",
		"INSERT INTO t VALUES (3, 4)",
		"ALTER TABLE t ADD COLUMN c int DEFAULT 9",
		"INSERT INTO t VALUES (5, 6, 7)",
		"ROLLBACK")
	if got, want := alterQuery(t, s, "SELECT * FROM t"), "1|2\n"; got != want {
		t.Errorf("t after ROLLBACK = %q, want %q", got, want)
	}
	execAll(t, s,
		"BEGIN",
		"INSERT INTO t VALUES (3, 4)",
		"ALTER TABLE t ADD COLUMN c int DEFAULT 9",
		"INSERT INTO t VALUES (5, 6, 7)",
		"ALTER TABLE t RENAME TO t2",
		"COMMIT")
	if got, want := alterQuery(t, s, "SELECT * FROM t2 ORDER BY a"), "1|2|9\n3|4|9\n5|6|7\n"; got != want {
		t.Errorf("t2 after COMMIT = %q, want %q", got, want)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY a"), "1|2\n3|4\n5|6\n"; got != want {
		t.Errorf("m after COMMIT = %q, want %q", got, want)
	}
	execAll(t, s,
		"CREATE TABLE k (x int, y int)",
		"COMMENT ON COLUMN k.y IS 'see'",
		"ALTER TABLE k DROP COLUMN x")
	if got, want := alterQuery(t, s, "SELECT col_description('k'::regclass, 2)"), "see\n"; got != want {
		t.Errorf("comment of c = %q, want %q", got, want)
	}
}

// TestAlterConnectorTables: a table a source writes into and a view a
// sink reads keep their columns, names and schemas while the connector
// exists.
func TestAlterConnectorTables(t *testing.T) {
	s, _ := alterSession(t)
	execAll(t, s,
		"CREATE SCHEMA s",
		"CREATE TABLE t (a int)",
		"CREATE MATERIALIZED VIEW v AS SELECT count(*) AS c FROM t",
		"CREATE SOURCE src FROM testkind (host = 'h', pw = 'x') INTO t",
		"CREATE SINK out FROM v INTO testkind (pw = 'x')")
	for q, want := range map[string]string{
		"ALTER TABLE t ADD COLUMN b int":           "cannot change the columns of table t: source src names it; drop it first",
		"ALTER TABLE t RENAME TO t2":               "cannot rename table t: source src names it; drop it first",
		"ALTER MATERIALIZED VIEW v RENAME TO v2":   "cannot rename materialized view v: sink out names it; drop it first",
		"ALTER TABLE t SET SCHEMA s":               "cannot move table t to another schema: source src names it; drop it first",
		"ALTER MATERIALIZED VIEW v SET SCHEMA s":   "cannot move materialized view v to another schema: sink out names it; drop it first",
		"ALTER TABLE t ALTER COLUMN a TYPE bigint": "cannot change the columns of table t: source src names it; drop it first",
	} {
		_, err := s.Exec(context.Background(), q, nil)
		if errs.SQLState(err) != "0A000" || err.Error() != want {
			t.Errorf("%s: %v, want 0A000 %s", q, err, want)
		}
	}
	execAll(t, s, "ALTER TABLE t ALTER COLUMN a SET DEFAULT 1", "ALTER TABLE t ALTER COLUMN a SET NOT NULL")
}

// TestAlterAppendOnly: an append-only table is rewritten in its own
// layout (arrival order), and takes rows after the rewrite.
func TestAlterAppendOnly(t *testing.T) {
	s, _ := alterSession(t)
	execAll(t, s,
		"CREATE TABLE e (k text, n int) APPEND ONLY",
		"INSERT INTO e VALUES ('b', 1)", "INSERT INTO e VALUES ('a', 2)", "INSERT INTO e VALUES ('b', 1)",
		"CREATE MATERIALIZED VIEW per_k AS SELECT k, sum(n) AS s FROM e GROUP BY k",
		"ALTER TABLE e ADD COLUMN z int DEFAULT 0",
		"INSERT INTO e VALUES ('c', 3, 1)",
		"ALTER TABLE e ALTER COLUMN z TYPE bigint")
	if got, want := alterQuery(t, s, "SELECT * FROM e"), "a|2|0\nb|1|0\nb|1|0\nc|3|1\n"; got != want {
		t.Errorf("e = %q, want %q", got, want)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM per_k ORDER BY k"), "a|2\nb|2\nc|3\n"; got != want {
		t.Errorf("per_k = %q, want %q", got, want)
	}
}
