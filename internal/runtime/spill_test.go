package runtime

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/spill"
	"github.com/rockstream/rockstream/internal/types"
)

// spillSetup returns a session of an in-memory engine spilling under a
// test directory, and a PostgreSQL connection, both holding the same
// tables: t (20,000 rows of many groups, NULLs, text needing its
// collation, numerics and floats with NaN) and u (a join partner), with
// work_mem at its least (64kB) on both sides.
func spillSetup(t *testing.T) (*Session, *pgconn.PgConn, string) {
	t.Helper()
	pgtest.Require(t)
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "spill"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgc.Close(ctx) })
	tmp := t.TempDir()
	eng, err := Open(NewMemoryStore(), Options{TempParent: tmp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	s := eng.NewSession()
	for _, q := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int, s text, n numeric, f float8)",
		`INSERT INTO t SELECT i, CASE WHEN i % 13 = 0 THEN NULL ELSE i % 2003 END, (i * 7919) % 1000,
			CASE WHEN i % 17 = 0 THEN NULL ELSE chr(65 + i % 26) || lower(chr(65 + i % 7)) || (i % 101) END,
			(i % 997) / 7.0, CASE WHEN i % 251 = 0 THEN 'NaN'::float8 ELSE (i % 89) * 0.5 END
			FROM generate_series(1, 20000) i`,
		"CREATE TABLE u (k int PRIMARY KEY, g int, w text)",
		"INSERT INTO u SELECT i, CASE WHEN i % 11 = 0 THEN NULL ELSE i % 3001 END, 'w' || i FROM generate_series(1, 9000) i",
		"SET work_mem = '64kB'",
	} {
		mustBoth(t, s, pgc, q)
	}
	return s, pgc, tmp
}

// spillCompare runs q on both sides and compares the rows, in order when
// ordered.
func spillCompare(t *testing.T, s *Session, pgc *pgconn.PgConn, q string, ordered bool) {
	spillCompareAs(t, s, pgc, q, ordered, false)
}

// spillCompareAs is spillCompare reading the rows as the wire gateway
// does (Session.ExecStreaming) when streamed.
func spillCompareAs(t *testing.T, s *Session, pgc *pgconn.PgConn, q string, ordered, streamed bool) {
	t.Helper()
	ctx := context.Background()
	var res *Result
	var err error
	if streamed {
		res, err = s.ExecStreaming(ctx, ParseStatement(q))
	} else {
		res, err = s.Exec(ctx, q, nil)
	}
	if err != nil {
		t.Errorf("%s: %v", q, err)
		return
	}
	if res.Stream != nil {
		for {
			rows, err := res.Stream.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: streamed: %v", q, err)
				return
			}
			res.Rows = append(res.Rows, rows...)
		}
		res.Stream.Close()
	} else if streamed && ordered {
		t.Errorf("%s: not streamed", q)
	}
	var got []string
	for _, r := range res.Rows {
		vals := make([]string, len(r))
		for i, v := range r {
			vals[i] = "NULL"
			if !v.IsNull() {
				vals[i] = types.Format(v, res.Columns[i].Type)
			}
		}
		got = append(got, strings.Join(vals, " | "))
	}
	pr, err := pgc.Exec(ctx, q).ReadAll()
	if err != nil {
		t.Fatalf("PostgreSQL: %s: %v", q, err)
	}
	var want []string
	for _, row := range pr[0].Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = "NULL"
			if v != nil {
				vals[i] = string(v)
			}
		}
		want = append(want, strings.Join(vals, " | "))
	}
	if !ordered {
		slices.Sort(got)
		slices.Sort(want)
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, PostgreSQL %d", q, len(got), len(want))
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: row %d is %q, PostgreSQL's %q", q, i, got[i], want[i])
			return
		}
	}
}

// leftovers returns the files under the spill area of the test's
// engine.
func leftovers(t *testing.T, tmp string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// TestSpilledStateMatchesPostgres: hash aggregates of many groups (every
// kind of aggregate), DISTINCT, DISTINCT ON, joins of every kind and set
// operations at work_mem = 64kB move their state to disk and give
// PostgreSQL's rows; no temporary file is left after each.
func TestSpilledStateMatchesPostgres(t *testing.T) {
	s, pgc, tmp := spillSetup(t)
	for _, q := range []string{
		"SELECT k % 5000 AS b, count(*), sum(v), min(s), max(n), avg(v), count(DISTINCT v % 3), bool_and(v > 10), string_agg(s, ',' ORDER BY s, k), array_agg(k ORDER BY k) FROM t GROUP BY k % 5000",
		"SELECT count(*), sum(c), max(m) FROM (SELECT k, count(*) c, max(f) m FROM t GROUP BY k) x",
		"SELECT g, s, count(*), stddev_samp(v), percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM t GROUP BY g, s",
		"SELECT DISTINCT s, v FROM t",
		"SELECT DISTINCT n, f FROM t",
		"SELECT DISTINCT ON (g) g, k, v FROM t ORDER BY g, v DESC, k",
		"SELECT t.k, u.k, u.w FROM t JOIN u ON t.g = u.g",
		"SELECT t.k, u.k FROM t LEFT JOIN u ON t.g = u.g AND u.k % 3 = 0",
		"SELECT t.k, u.k FROM t RIGHT JOIN u ON t.g = u.g",
		"SELECT t.k, u.k FROM t FULL JOIN u ON t.g = u.g AND t.v < 500",
		"SELECT k, v FROM t WHERE g IN (SELECT g FROM u WHERE k % 2 = 0)",
		"SELECT k, v FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.g = t.g)",
		"SELECT g, s FROM t UNION SELECT g, w FROM u",
		"SELECT g FROM t INTERSECT ALL SELECT g FROM u",
		"SELECT g, v FROM t EXCEPT SELECT g, k FROM u",
		"SELECT u.g, count(*), sum(t.v) FROM t JOIN u ON t.g = u.g GROUP BY u.g",
	} {
		before, steps := spill.Totals(), joinChunkedSteps.Load()
		spillCompare(t, s, pgc, q, false)
		if n := joinChunkedSteps.Load() - steps; n < 3 && strings.Count(q, " u") > 0 {
			t.Errorf("%s: %d chunks stepped, want one relation after the other in chunks", q, n)
		}
		after := spill.Totals()
		t.Logf("%.60s: %d spills, %d bytes", q, after.Spills-before.Spills, after.Bytes-before.Bytes)
		if after.Spills == before.Spills {
			t.Errorf("%s: nothing spilled", q)
		}
		if left := leftovers(t, tmp); len(left) > 0 {
			t.Errorf("%s: temporary files left: %v", q, left)
		}
	}
}

// TestSpilledSortMatchesPostgres: ORDER BY of a relation larger than
// work_mem (multi-key, DESC, NULLS FIRST/LAST, collations, NaN,
// numerics, expressions, LIMIT and OFFSET, projections above) is an
// external merge sort of several runs and gives PostgreSQL's rows in
// PostgreSQL's order; no temporary file is left after each.
func TestSpilledSortMatchesPostgres(t *testing.T) {
	s, pgc, tmp := spillSetup(t)
	for _, q := range []string{
		"SELECT * FROM t ORDER BY k DESC",
		"SELECT k, g, v FROM t ORDER BY g NULLS FIRST, v DESC, k",
		"SELECT k, s FROM t ORDER BY s DESC NULLS LAST, k",
		`SELECT k, s FROM t ORDER BY s COLLATE "C" DESC NULLS FIRST, k DESC`,
		"SELECT k, f, n FROM t ORDER BY f, n DESC, k",
		"SELECT k, v * 3 - g AS x FROM t WHERE v > 100 ORDER BY v * 3 - g, k LIMIT 50 OFFSET 7000",
		"SELECT k FROM t ORDER BY v, k OFFSET 19990",
		"SELECT s || '/' || k FROM t WHERE g IS NOT NULL ORDER BY g DESC, k LIMIT 100",
		"SELECT k, u.w FROM (SELECT k FROM t ORDER BY k DESC LIMIT 30) x JOIN u USING (k)",
	} {
		for _, streamed := range []bool{false, true} {
			before := spilledSorts.Load()
			spillCompareAs(t, s, pgc, q, !strings.Contains(q, "JOIN"), streamed)
			if spilledSorts.Load() == before && !strings.Contains(q, "JOIN") {
				t.Errorf("%s: the sort wrote no runs", q)
			}
			if left := leftovers(t, tmp); len(left) > 0 {
				t.Errorf("%s: temporary files left: %v", q, left)
			}
		}
	}
}

// TestSpillingStatementStops: a spilling statement that fails, passes
// its temp_file_limit, is canceled or times out reports that with its
// SQLSTATE and leaves no temporary file; the session goes on.
func TestSpillingStatementStops(t *testing.T) {
	s, _, tmp := spillSetup(t)
	ctx := context.Background()
	check := func(what string, err error, sqlstate string) {
		t.Helper()
		if got := errs.SQLState(err); got != sqlstate {
			t.Errorf("%s: %v (%s), want %s", what, err, got, sqlstate)
		}
		if left := leftovers(t, tmp); len(left) > 0 {
			t.Errorf("%s: temporary files left: %v", what, left)
		}
	}
	// Division by zero once the last chunk is in, long after the state
	// spilled.
	before := spill.Totals()
	_, err := s.Exec(ctx, "SELECT 1 / (count(*) - 20000) FROM (SELECT DISTINCT k, s FROM t) x", nil)
	check("an error", err, "22012")
	if spill.Totals().Spills == before.Spills {
		t.Error("the failing statement did not spill")
	}
	for _, q := range []string{"SET temp_file_limit = '100kB'", "SELECT DISTINCT k, s FROM t", "SELECT * FROM t ORDER BY s, k"} {
		_, err = s.Exec(ctx, q, nil)
	}
	check("temp_file_limit", err, "53400")
	_, err = s.Exec(ctx, "SELECT DISTINCT k, s FROM t", nil)
	check("temp_file_limit", err, "53400")
	if _, err := s.Exec(ctx, "RESET temp_file_limit", nil); err != nil {
		t.Fatal(err)
	}
	// A self-join of 400,000 pairs, canceled once it has spilled, and
	// stopped by statement_timeout.
	const long = "SELECT count(*) FROM (SELECT DISTINCT a.k, b.k FROM t a JOIN t b ON a.v = b.v) x"
	cctx, cancel := context.WithCancel(ctx)
	before = spill.Totals()
	go func() {
		for spill.Totals().Spills == before.Spills && cctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = s.Exec(cctx, long, nil)
	cancel()
	check("a cancel", err, "57014")
	if _, err := s.Exec(ctx, "SET statement_timeout = '300ms'", nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.Exec(ctx, long, nil)
	check("statement_timeout", err, "57014")
	if _, err := s.Exec(ctx, "RESET statement_timeout", nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.Exec(ctx, "SELECT count(*) FROM (SELECT DISTINCT k, s FROM t) x", nil)
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0].Int() != 20000 {
		t.Errorf("after the stopped statements: %v %v", res, err)
	}
}

// TestSpilledSortStreamClosed: a streamed ORDER BY keeps its runs while
// it is read, and removes them when its reader closes it part way or its
// statement is canceled.
func TestSpilledSortStreamClosed(t *testing.T) {
	s, _, tmp := spillSetup(t)
	ctx := context.Background()
	for _, cancelIt := range []bool{false, true} {
		res, err := s.ExecStreaming(ctx, ParseStatement("SELECT * FROM t ORDER BY s, k"))
		if err != nil || res.Stream == nil {
			t.Fatalf("%v, %v", res, err)
		}
		if rows, err := res.Stream.Next(ctx); err != nil || len(rows) == 0 {
			t.Fatalf("first rows: %d, %v", len(rows), err)
		}
		if len(leftovers(t, tmp)) == 0 {
			t.Fatal("no runs while the stream is read")
		}
		if cancelIt {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			for err == nil {
				_, err = res.Stream.Next(cctx)
			}
			if errs.SQLState(err) != "57014" {
				t.Errorf("canceled stream: %v", err)
			}
		}
		res.Stream.Close()
		if left := leftovers(t, tmp); len(left) > 0 {
			t.Errorf("cancel=%v: temporary files left: %v", cancelIt, left)
		}
	}
}
