package oracle

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// faulty is a PostgreSQL engine with injected faults, to show that the
// runner notices each kind of disagreement.
type faulty struct {
	*Postgres
	exec    func(sql string, res *Result, err error) (*Result, error)
	observe func(sql string, res *Result) *Result
}

func (f *faulty) Exec(ctx context.Context, sql string) (*Result, error) {
	res, err := f.Postgres.Exec(ctx, sql)
	if f.exec != nil {
		return f.exec(sql, res, err)
	}
	return res, err
}

func (f *faulty) Observe(ctx context.Context, sql string) (*Result, error) {
	res, err := f.Postgres.Observe(ctx, sql)
	if f.observe != nil && err == nil {
		res = f.observe(sql, res)
	}
	return res, err
}

// runFaulty runs script against PostgreSQL and f, each in a new schema of
// the database at dsn, and returns the findings, one string each.
func runFaulty(t *testing.T, dsn, script string, f *faulty, strict bool) ([]string, error) {
	t.Helper()
	stmts, err := ParseScript("test.sql", script)
	if err != nil {
		t.Fatal(err)
	}
	f.Postgres = newPostgresIn(t, dsn, "faulty")
	r := &Runner{Ref: newPostgresIn(t, dsn, "postgres"), SUT: f, Source: "test.sql", Strict: strict}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fs, err := r.Run(ctx, stmts, 0)
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out, err
}

const faultScript = `CREATE TABLE t (a int, b int);
INSERT INTO t VALUES (1, 1), (2, 0), (3, 3);
CREATE MATERIALIZED VIEW v AS SELECT a, b FROM t WHERE b > 0;
INSERT INTO t VALUES (4, 4);
--! error 22012
SELECT a / b FROM t;
SELECT a FROM t ORDER BY a;
`

func TestRunnerFindsDisagreements(t *testing.T) {
	dsn := pgtest.NewDatabase(t, "oracle")
	for _, c := range []struct {
		name  string
		fault faulty
		want  []string // substrings, one finding each, in order
	}{
		{
			name: "no fault",
		},
		{
			name: "view row lost",
			fault: faulty{observe: func(sql string, res *Result) *Result {
				if len(res.Rows) > 2 {
					res.Rows = res.Rows[:len(res.Rows)-1]
				}
				return res
			}},
			want: []string{"test.sql:4: INSERT INTO t VALUES (4, 4)\n  materialized view v differs from postgres:\n    missing from faulty (postgres has them) (1 row):\n      (4 | 4)"},
		},
		{
			name: "view row duplicated",
			fault: faulty{observe: func(sql string, res *Result) *Result {
				if len(res.Rows) > 0 {
					res.Rows = append(res.Rows, res.Rows[0])
				}
				return res
			}},
			// Reported once: the difference stays the same afterwards.
			want: []string{"test.sql:3: CREATE MATERIALIZED VIEW v AS SELECT a, b FROM t WHERE b > 0\n  materialized view v differs from postgres:\n    extra in faulty (postgres does not have them) (1 row):\n      (1 | 1)"},
		},
		{
			name: "view column type",
			fault: faulty{observe: func(sql string, res *Result) *Result {
				res.Columns[1].TypeOID = 20
				return res
			}},
			want: []string{"columns differ:\n      want (a integer, b integer)\n      got  (a integer, b bigint)"},
		},
		{
			name: "error swallowed",
			fault: faulty{exec: func(sql string, res *Result, err error) (*Result, error) {
				if err != nil {
					return &Result{Columns: []Column{{"?column?", 23}}, Tag: "SELECT 0"}, nil
				}
				return res, err
			}},
			want: []string{"test.sql:6: SELECT a / b FROM t\n  postgres failed with 22012: division by zero\n  faulty succeeded (SELECT 0)"},
		},
		{
			name: "other SQLSTATE",
			fault: faulty{exec: func(sql string, res *Result, err error) (*Result, error) {
				if err != nil {
					return nil, &Error{SQLState: "22003", Message: "out of range"}
				}
				return res, err
			}},
			want: []string{"both failed, with different SQLSTATEs:\n    postgres: 22012: division by zero\n    faulty: 22003: out of range"},
		},
		{
			name: "spurious error",
			fault: faulty{exec: func(sql string, res *Result, err error) (*Result, error) {
				if strings.HasPrefix(sql, "INSERT INTO t VALUES (4") {
					return nil, &Error{SQLState: "XX000", Message: "boom"}
				}
				return res, err
			}},
			// The faulty engine did run the insert, so the view agrees.
			want: []string{"postgres succeeded (INSERT 0 1)\n  faulty failed with XX000: boom"},
		},
		{
			name: "order",
			fault: faulty{exec: func(sql string, res *Result, err error) (*Result, error) {
				if strings.HasSuffix(sql, "ORDER BY a") {
					res.Rows[0], res.Rows[1] = res.Rows[1], res.Rows[0]
				}
				return res, err
			}},
			want: []string{"same rows in a different order (the query has ORDER BY); first difference at row 1:\n      postgres: (1)\n      faulty: (2)"},
		},
		{
			name: "tag",
			fault: faulty{exec: func(sql string, res *Result, err error) (*Result, error) {
				if res != nil && strings.HasPrefix(res.Tag, "INSERT") {
					res.Tag = "INSERT 0 99"
				}
				return res, err
			}},
			want: []string{`command tag: postgres "INSERT 0 3", faulty "INSERT 0 99"`, `command tag: postgres "INSERT 0 1", faulty "INSERT 0 99"`},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.fault
			got, err := runFaulty(t, dsn, faultScript, &f, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d findings, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n---\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("finding %d:\n%s\nwant it to contain:\n%s", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestRunnerEngineOnlyExpectation(t *testing.T) {
	dsn := pgtest.NewDatabase(t, "oracle")
	script := "CREATE TABLE t (a int);\n--! rockstream-error 0A000\nCREATE MATERIALIZED VIEW v AS SELECT a FROM t;\n"
	got, err := runFaulty(t, dsn, script, &faulty{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0], "faulty accepted the statement (SELECT 0); want SQLSTATE 0A000") {
		t.Fatalf("findings: %q", got)
	}
}

func TestRunnerScriptErrors(t *testing.T) {
	dsn := pgtest.NewDatabase(t, "oracle")
	for _, c := range []struct{ script, want string }{
		{"SELEC 1;", `test.sql:1: script error: PostgreSQL rejected the statement (42601: syntax error at or near "SELEC"); fix it, or mark it "--! error 42601"`},
		{"--! error 22012\nSELECT 1;", `test.sql:2: script error: the statement is marked "--! error 22012" but PostgreSQL accepted it`},
		{"--! error 22012\nSELECT 1 + 'x';", `but PostgreSQL failed with 22P02`},
	} {
		_, err := runFaulty(t, dsn, c.script, &faulty{}, true)
		var se *ScriptError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a script error containing %q", c.script, err, c.want)
		}
	}
	// Not strict: PostgreSQL's failures are compared, not judged.
	if got, err := runFaulty(t, dsn, "SELEC 1;", &faulty{}, false); err != nil || len(got) != 0 {
		t.Errorf("not strict: findings %q, error %v", got, err)
	}
}

// eager reports a materialized view's failure at the statement that
// causes it, even inside a transaction block, as an engine may.
func eager(ctx context.Context, f *faulty) func(sql string, res *Result, err error) (*Result, error) {
	return func(sql string, res *Result, err error) (*Result, error) {
		info := classify(sql)
		if err != nil || info.kind == kindQuery || info.kind == kindBegin || f.script.TxStatus() != 'T' {
			return res, err
		}
		verr, cerr := f.checkViews(ctx)
		if cerr != nil {
			return nil, cerr
		}
		if verr != nil {
			return nil, verr
		}
		return res, nil
	}
}

// TestRunnerEagerViewFailure: an engine that reports a view failure at
// the statement that causes it, in a block that COMMIT fails anyway,
// agrees with PostgreSQL.
func TestRunnerEagerViewFailure(t *testing.T) {
	dsn := pgtest.NewDatabase(t, "oracle")
	script := `CREATE TABLE t (id int, units int);
INSERT INTO t VALUES (1, 1);
CREATE MATERIALIZED VIEW v AS SELECT id, 10 / units AS u FROM t;
BEGIN;
INSERT INTO t VALUES (2, 2);
INSERT INTO t VALUES (3, 0);
UPDATE t SET units = 5 WHERE id = 1;
--! error 22012
COMMIT;
BEGIN;
INSERT INTO t SELECT id + 10, 0 FROM t;
SELECT 1;
ROLLBACK;
INSERT INTO t VALUES (4, 4);
`
	f := &faulty{}
	f.exec = eager(context.Background(), f)
	got, err := runFaulty(t, dsn, script, f, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("findings:\n%s", strings.Join(got, "\n---\n"))
	}
}

// TestRunnerEarlyFailureOfValidTransaction: an engine that fails a block
// at an intermediate state which the block later repairs has rejected a
// valid transaction.
func TestRunnerEarlyFailureOfValidTransaction(t *testing.T) {
	dsn := pgtest.NewDatabase(t, "oracle")
	script := `CREATE TABLE t (g int, x int);
CREATE MATERIALIZED VIEW v AS SELECT g, 10 / (count(*) - 2) AS q FROM t GROUP BY g;
BEGIN;
INSERT INTO t VALUES (1, 1), (1, 2), (1, 3);
DELETE FROM t WHERE x = 3;
INSERT INTO t VALUES (1, 4);
COMMIT;
`
	f := &faulty{}
	f.exec = eager(context.Background(), f)
	got, err := runFaulty(t, dsn, script, f, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "test.sql:7: COMMIT\n  faulty failed the transaction at line 5 (DELETE FROM t WHERE x = 3) with 22012: division by zero (maintaining materialized view v), but its final state is valid: postgres commits it"
	if len(got) < 1 || got[0] != want {
		t.Fatalf("findings:\n%s\nwant first:\n%s", strings.Join(got, "\n---\n"), want)
	}
	if len(got) != 2 || !strings.Contains(got[1], "materialized view v differs") {
		t.Fatalf("want the view to differ after COMMIT; findings:\n%s", strings.Join(got, "\n---\n"))
	}
}

// TestRunnerViewsBetweenTransactions checks that ViewsBetweenTransactions
// reads the views after statements outside a transaction block and after
// its COMMIT, not after the statements inside it, and still finds a
// difference the block leaves.
func TestRunnerViewsBetweenTransactions(t *testing.T) {
	dsn := pgtest.NewDatabase(t, "oracle")
	script := `CREATE TABLE t (a int);
CREATE MATERIALIZED VIEW v AS SELECT a FROM t;
BEGIN;
INSERT INTO t VALUES (1);
INSERT INTO t VALUES (2);
COMMIT;
INSERT INTO t VALUES (3);
`
	stmts, err := ParseScript("test.sql", script)
	if err != nil {
		t.Fatal(err)
	}
	var readAfter []int // lines after which the view was read
	line := 0
	f := &faulty{Postgres: newPostgresIn(t, dsn, "faulty"), observe: func(sql string, res *Result) *Result {
		readAfter = append(readAfter, line)
		if len(res.Rows) == 2 {
			res.Rows = res.Rows[:1] // lose a row the block inserted
		}
		return res
	}}
	r := &Runner{Ref: newPostgresIn(t, dsn, "postgres"), SUT: f, Source: "test.sql", Strict: true, ViewsBetweenTransactions: true}
	var findings []string
	for _, st := range stmts {
		line = st.Line
		fs, err := r.Step(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			findings = append(findings, f.String())
		}
	}
	if want := []int{2, 6, 7}; !slices.Equal(readAfter, want) {
		t.Errorf("view read after lines %v, want %v", readAfter, want)
	}
	if len(findings) != 1 || !strings.HasPrefix(findings[0], "test.sql:6: COMMIT") {
		t.Errorf("findings %q, want one at the COMMIT", findings)
	}
}
