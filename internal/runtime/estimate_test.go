package runtime

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

var stateNoteRe = regexp.MustCompile(`\[state: (\d+k?) keys, ([^;]*); estimated state: (\d+k?) keys, ([^;]*);`)

// explainLines runs q and returns its QUERY PLAN lines.
func explainLines(t *testing.T, s *Session, q string) []string {
	t.Helper()
	return strings.Split(strings.TrimRight(rowsOf(t, s, q), "\n"), "\n")
}

// TestExplainEstimateExact: with inputs smaller than a sample, the
// estimate of every operator's state is exact, before the view exists
// (EXPLAIN INCREMENTAL ESTIMATE query) and compared with the state
// measured once it does.
func TestExplainEstimateExact(t *testing.T) {
	eng, err := Open(NewMemoryStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := eng.NewSession()
	runAll(t, s, []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"CREATE TABLE u (k int PRIMARY KEY, name text)",
		"INSERT INTO t SELECT i, i % 10, i FROM generate_series(1, 3000) AS i",
		"INSERT INTO u SELECT i, 'n' || i FROM generate_series(1, 2000) AS i",
	})
	for _, q := range []string{
		"SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g",
		"SELECT t.k, u.name FROM t JOIN u ON t.k = u.k",
		"SELECT DISTINCT v % 100 AS r FROM t",
		"SELECT g, min(v) AS lo, max(v) AS hi FROM t GROUP BY g",
		"SELECT k, rank() OVER (PARTITION BY g ORDER BY v) AS r FROM t",
	} {
		before := explainLines(t, s, "EXPLAIN INCREMENTAL ESTIMATE "+q)
		if last := before[len(before)-1]; !strings.Contains(last, "Estimated from every row of t (3000 rows)") {
			t.Fatalf("%s: last line %q", q, last)
		}
		runAll(t, s, []string{"CREATE MATERIALIZED VIEW v AS " + q})
		after := explainLines(t, s, "EXPLAIN INCREMENTAL ESTIMATE v")
		notes := 0
		for i, line := range after {
			m := stateNoteRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			notes++
			if m[1] != m[3] || m[2] != m[4] {
				t.Errorf("%s: measured %s keys (%s), estimated %s (%s): %s", q, m[1], m[2], m[3], m[4], line)
			}
			// The estimate before creation said the same.
			if i >= len(before) || !strings.Contains(before[i], "estimated state: "+m[3]+" keys, "+m[4]+";") {
				t.Errorf("%s: before creation the estimate was not %s keys, %s:\n%s", q, m[3], m[4], strings.Join(before, "\n"))
			}
		}
		if notes == 0 {
			t.Fatalf("%s: no operator with state:\n%s", q, strings.Join(after, "\n"))
		}
		runAll(t, s, []string{"DROP MATERIALIZED VIEW v"})
	}
}

// TestExplainEstimateSampled: over inputs larger than a sample, the
// estimate extrapolates: a fixed number of groups stays fixed, state that
// grows with the data grows with it.
func TestExplainEstimateSampled(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 50,000 rows")
	}
	eng, err := Open(NewMemoryStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := eng.NewSession()
	runAll(t, s, []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"CREATE TABLE u (k int PRIMARY KEY, name text)",
		"INSERT INTO t SELECT i, i % 10, i FROM generate_series(1, 50000) AS i",
		"INSERT INTO u SELECT i, 'n' || i FROM generate_series(1, 30000) AS i",
		"CREATE MATERIALIZED VIEW groups AS SELECT g, count(*) AS n FROM t GROUP BY g",
		"CREATE MATERIALIZED VIEW joined AS SELECT t.k, u.name FROM t JOIN u ON t.k = u.k",
		"CREATE MATERIALIZED VIEW dist AS SELECT DISTINCT v % 1000 AS r FROM t",
	})
	epoch := eng.Epoch()
	for _, c := range []struct {
		view      string
		tolerance float64
	}{{"groups", 0}, {"joined", 0.1}, {"dist", 0.1}} {
		lines := explainLines(t, s, "EXPLAIN INCREMENTAL ESTIMATE "+c.view)
		if !strings.Contains(lines[len(lines)-1], "samples of 40% and 20% of the rows of t (50000 rows)") {
			t.Fatalf("%s: last line %q", c.view, lines[len(lines)-1])
		}
		found := false
		for _, line := range lines {
			m := stateNoteRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			found = true
			measured, estimated := keysCount(m[1]), keysCount(m[3])
			if d := estimated/measured - 1; d > c.tolerance || d < -c.tolerance {
				t.Errorf("%s: estimated %v keys, measured %v: more than %.0f%% off\n%s", c.view, estimated, measured, 100*c.tolerance, line)
			}
		}
		if !found {
			t.Fatalf("%s: no operator with state:\n%s", c.view, strings.Join(lines, "\n"))
		}
	}
	if eng.Epoch() != epoch {
		t.Fatal("EXPLAIN INCREMENTAL ESTIMATE committed an epoch")
	}
	ctx := context.Background()
	for q, code := range map[string]errs.Code{
		"EXPLAIN INCREMENTAL ESTIMATE t":                        errs.WrongObjectType,
		"EXPLAIN INCREMENTAL ESTIMATE nope":                     errs.UndefinedTable,
		"EXPLAIN INCREMENTAL ESTIMATE SELECT nope FROM t":       errs.UndefinedColumn,
		"EXPLAIN INCREMENTAL ESTIMATE INSERT INTO t VALUES (1)": errs.SyntaxError,
	} {
		if _, err := s.Exec(ctx, q, nil); errs.CodeOf(err) != code {
			t.Errorf("%s = %v, want %s", q, err, code)
		}
	}
}

// keysCount reads a count as fmtCount prints it.
func keysCount(s string) float64 {
	f := 1.0
	if n, ok := strings.CutSuffix(s, "k"); ok {
		s, f = n, 1000
	}
	v, _ := strconv.ParseFloat(s, 64)
	return v * f
}
