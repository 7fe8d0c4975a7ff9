package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// TestPreparedSelectKeepsPlan runs prepared SELECTs many times: the plan
// is kept while nothing binding reads changes (rows written included), is
// bound again after DDL and after SET TimeZone, SET ROLE and SET
// search_path, and every execution returns what the same query run
// without preparing returns. Privileges are checked on every execution.
func TestPreparedSelectKeepsPlan(t *testing.T) {
	ctx := context.Background()
	s, mustExec := memorySession(t)
	mustExec("CREATE TABLE t (id bigint PRIMARY KEY, x int, ts timestamptz)")
	mustExec("INSERT INTO t SELECT g, g % 7, '2026-01-01 00:00:00+00'::timestamptz + g * interval '1 hour' FROM generate_series(1, 50) g")
	mustExec("CREATE MATERIALIZED VIEW v AS SELECT x, count(*) AS n, sum(id) AS s FROM t GROUP BY x")
	const q = "SELECT id, x, ts::text FROM t WHERE id = $1 OR x = $2"
	p, err := s.Prepare(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	// check runs p with (id, x) and compares with the query with the
	// values written as literals.
	check := func(id, x int64) {
		t.Helper()
		res, err := s.ExecPrepared(ctx, p, []types.Value{types.MakeInt(types.Int8, id), types.MakeInt(types.Int4, x)})
		if err != nil {
			t.Fatal(err)
		}
		lit, err := s.Exec(ctx, fmt.Sprintf("SELECT id, x, ts::text FROM t WHERE id = %d OR x = %d", id, x), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sortedResult(res), sortedResult(lit); got != want {
			t.Fatalf("(%d, %d):\n%swant:\n%s", id, x, got, want)
		}
	}
	check(3, 100)
	if p.sel == nil || p.sel.p == nil {
		t.Fatal("the SELECT keeps no plan")
	}
	kept := p.sel.p
	check(4, 2)
	check(60, 5)
	mustExec("INSERT INTO t VALUES (60, 1, '2026-06-01 12:00:00+00')")
	check(60, 5)
	if p.sel.p != kept {
		t.Fatal("the SELECT was bound again without DDL or a setting changing")
	}

	mustExec("SET TimeZone = 'America/New_York'")
	check(60, 5)
	if p.sel.p == kept {
		t.Fatal("the SELECT kept its plan across SET TimeZone")
	}
	kept = p.sel.p
	mustExec("CREATE INDEX t_x ON t (x)")
	check(60, 5)
	if p.sel.p == kept {
		t.Fatal("the SELECT kept its plan across CREATE INDEX")
	}

	// A table dropped and created again with other columns: the new
	// table's rows, in its new column order and types.
	mustExec("DROP MATERIALIZED VIEW v")
	mustExec("DROP TABLE t")
	mustExec("CREATE TABLE t (x int, ts text, id bigint PRIMARY KEY)")
	mustExec("INSERT INTO t VALUES (5, 'five', 1), (6, 'six', 2)")
	check(2, 5)

	// Privileges: a role that may read t, then may not.
	mustExec("CREATE ROLE reader")
	mustExec("GRANT SELECT ON t TO reader")
	mustExec("SET ROLE reader")
	check(1, 6)
	mustExec("RESET ROLE")
	mustExec("REVOKE SELECT ON t FROM reader")
	mustExec("SET ROLE reader")
	_, err = s.ExecPrepared(ctx, p, []types.Value{types.MakeInt(types.Int8, 1), types.MakeInt(types.Int4, 6)})
	if errs.SQLState(err) != "42501" {
		t.Fatalf("after REVOKE: %v", err)
	}
	mustExec("RESET ROLE")
	check(1, 6)

	// In a transaction block the kept plan reads the block's rows, and
	// DDL in the block binds again, also after ROLLBACK.
	mustExec("BEGIN")
	mustExec("INSERT INTO t VALUES (7, 'seven', 3)")
	check(3, 7)
	mustExec("CREATE INDEX t_ts ON t (ts)")
	check(3, 7)
	mustExec("ROLLBACK")
	check(3, 7)
	check(7, 5)

	// SQL PREPARE and EXECUTE keep the plan too.
	mustExec("PREPARE byid (bigint) AS SELECT x, ts FROM t WHERE id = $1")
	for _, id := range []string{"1", "2", "1"} {
		res, err := s.Exec(ctx, "EXECUTE byid ("+id+")", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := formatRows(res), map[string]string{"1": "5|five\n", "2": "6|six\n"}[id]; got != want {
			t.Fatalf("EXECUTE byid (%s): %q, want %q", id, got, want)
		}
	}
	sp, err := s.sqlPrepared.Get("byid")
	if err != nil {
		t.Fatal(err)
	}
	if sp.sel == nil || sp.sel.p == nil {
		t.Fatal("EXECUTE keeps no plan")
	}
}

// TestPreparedSelectNotKept checks the statements whose plan is not
// kept, because binding read a parameter's value or the plan reads the
// clock or the session: each execution gives its own answer.
func TestPreparedSelectNotKept(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e, err := Open(NewMemoryStore(), Options{Clock: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession()
	defer s.Close()
	for _, q := range []string{
		"CREATE TABLE t (id bigint PRIMARY KEY, ts timestamptz)",
		"INSERT INTO t VALUES (1, '2026-03-01 10:00:00+00'), (2, '2026-03-01 13:00:00+00'), (3, '2026-03-01 15:00:00+00')",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		query  string
		params [][]types.Value
		want   []string
	}{
		{"SELECT id FROM t ORDER BY id LIMIT $1",
			[][]types.Value{{types.MakeInt(types.Int8, 1)}, {types.MakeInt(types.Int8, 2)}},
			[]string{"1\n", "1\n2\n"}},
		{"SELECT id FROM t ORDER BY id OFFSET $1",
			[][]types.Value{{types.MakeInt(types.Int8, 2)}, {types.MakeInt(types.Int8, 1)}},
			[]string{"3\n", "2\n3\n"}},
		{"SELECT id FROM t WHERE ts < now() AND id >= $1 ORDER BY id",
			[][]types.Value{{types.MakeInt(types.Int8, 1)}, {types.MakeInt(types.Int8, 1)}},
			[]string{"1\n", "1\n2\n"}},
		{"SELECT id, current_user = $1 FROM t WHERE id = 1",
			[][]types.Value{{types.MakeText("nobody")}, {types.MakeText("nobody")}},
			[]string{"1|f\n", "1|f\n"}},
	} {
		p, err := s.Prepare(tc.query, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		clock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		for i, params := range tc.params {
			res, err := s.ExecPrepared(ctx, p, params)
			if err != nil {
				t.Fatalf("%s: %v", tc.query, err)
			}
			if got := formatRows(res); got != tc.want[i] {
				t.Fatalf("%s, execution %d:\n%swant:\n%s", tc.query, i+1, got, tc.want[i])
			}
			if p.sel != nil && p.sel.p != nil {
				t.Fatalf("%s: the plan is kept", tc.query)
			}
			clock = clock.Add(2 * time.Hour)
		}
	}
}

// sortedResult is formatRows of res with its rows sorted.
func sortedResult(res *Result) string {
	lines := strings.Split(formatRows(res), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestPreparedStreamKeepsScanConds: a prepared SELECT whose rows stream
// keeps the key conditions of its scans with its plan, and each
// execution reads the key ranges of its own parameters through them:
// the same rows as the query with the values written as literals, for
// keys present and absent, NULL, an IN list and a range, across commits
// and across a DDL that replaces the relation.
func TestPreparedStreamKeepsScanConds(t *testing.T) {
	ctx := context.Background()
	s, mustExec := memorySession(t)
	mustExec("CREATE TABLE t (id bigint PRIMARY KEY, x int)")
	mustExec("INSERT INTO t SELECT g, g % 7 FROM generate_series(1, 5000) g")
	mustExec("CREATE MATERIALIZED VIEW v AS SELECT id, count(*) AS n, sum(x) AS s FROM t GROUP BY id")
	const where = "id = %s OR id IN (%s, 17) OR (id > %s AND id <= %s + 2)"
	p, err := s.Prepare("SELECT id, n, s FROM v WHERE "+fmt.Sprintf(where, "$1", "$2", "$3", "$3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	lit := func(v *int64) string {
		if v == nil {
			return "NULL"
		}
		return fmt.Sprint(*v)
	}
	val := func(v *int64) types.Value {
		if v == nil {
			return types.Null
		}
		return types.MakeInt(types.Int8, *v)
	}
	check := func(a, b, c *int64) {
		t.Helper()
		res, err := s.ExecPreparedStreaming(ctx, p, []types.Value{val(a), val(b), val(c)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stream == nil {
			t.Fatal("the result is not a stream")
		}
		for res.Stream.More() {
			rows, err := res.Stream.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			res.Rows = append(res.Rows, rows...)
		}
		q := "SELECT id, n, s FROM v WHERE " + fmt.Sprintf(where, lit(a), lit(b), lit(c), lit(c))
		want, err := s.Exec(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sortedResult(res), sortedResult(want); got != want {
			t.Fatalf("%s:\n%swant:\n%s", q, got, want)
		}
	}
	n := func(v int64) *int64 { return &v }
	check(n(3), n(4000), n(100))
	kc := p.sel.circuits
	if kc == nil || len(kc.conds) != 1 {
		t.Fatal("the streamed SELECT keeps no scan conditions")
	}
	var kept keptConds
	for _, c := range kc.conds {
		kept = c
	}
	check(n(9999), nil, n(4998))
	check(nil, nil, nil)
	check(n(-1), n(5000), n(0))
	mustExec("INSERT INTO t VALUES (9999, 3)")
	mustExec("DELETE FROM t WHERE id = 4000")
	check(n(9999), n(4000), n(4998))
	for _, c := range kc.conds {
		if c.o != kept.o || &c.scans[0] != &kept.scans[0] {
			t.Fatal("the scan conditions were found again without DDL")
		}
	}

	// The view replaced by one with other columns: its conditions are
	// found again, on the new relation.
	mustExec("DROP MATERIALIZED VIEW v")
	mustExec("CREATE MATERIALIZED VIEW v AS SELECT sum(x) AS s, count(*) AS n, id FROM t GROUP BY id")
	check(n(3), n(9999), n(10))
	if kc := p.sel.circuits; kc != nil {
		for _, c := range kc.conds {
			if c.o == kept.o {
				t.Fatal("the scan conditions of the dropped view were used")
			}
		}
	}
}

// memorySession returns a session of an in-memory engine, both closed at
// the test's end, and a function that runs a statement in it, failing
// the test on an error.
func memorySession(t *testing.T) (*Session, func(q string)) {
	e := OpenMemory()
	t.Cleanup(func() { e.Close() })
	s := e.NewSession()
	t.Cleanup(s.Close)
	return s, func(q string) {
		t.Helper()
		if _, err := s.Exec(context.Background(), q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
