package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/plan"
)

// TestChunkedQueriesMatchPostgres: aggregates, DISTINCT, filters and
// projections over a relation of several chunks (work_mem = 64kB makes a
// chunk 4,096 rows) give PostgreSQL's rows, NULLs, empty groups and
// retracted maxima included.
func TestChunkedQueriesMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "chunked"))
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	s := OpenMemory().NewSession()
	for _, q := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int, s text)",
		// 20,000 rows: the last chunks hold the largest v of some
		// groups, and g is NULL for every 13th row.
		"INSERT INTO t SELECT i, CASE WHEN i % 13 = 0 THEN NULL ELSE i % 37 END, (i * 7919) % 1000, 'x' || (i % 5) FROM generate_series(1, 20000) i",
		"CREATE TABLE empty (k int PRIMARY KEY, v int)",
	} {
		mustBoth(t, s, pgc, q)
	}
	if _, err := s.Exec(ctx, "SET work_mem = '64kB'", nil); err != nil {
		t.Fatal(err)
	}
	o := &joinOracle{t: t, s: s, pg: pgc}
	for _, q := range []string{
		"SELECT g, count(*), sum(v), min(v), max(v), avg(v) FROM t GROUP BY g",
		"SELECT count(*), sum(v), count(g), count(DISTINCT g) FROM t",
		"SELECT s, string_agg(DISTINCT g::text, ',' ORDER BY g::text) FROM t WHERE g < 5 GROUP BY s",
		"SELECT DISTINCT g % 5, s FROM t",
		"SELECT g, max(v) FROM t WHERE v > 990 GROUP BY g HAVING count(*) > 1",
		"SELECT k, v * 2 FROM t WHERE v = 7",
		"SELECT count(*), sum(v) FROM empty",
		"SELECT g, count(*) FROM t GROUP BY g ORDER BY count(*) DESC, g LIMIT 3",
	} {
		before := chunkedSteps.Load()
		want, err := o.theirs([]string{q})
		if err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
		if got := o.ours(q); strings.Join(got, "\n") != strings.Join(want[0], "\n") {
			t.Errorf("%s\nRockStream: %.400v\nPostgreSQL: %.400v", q, got, want[0])
		}
		if n := chunkedSteps.Load() - before; n < 4 && !strings.Contains(q, "empty") {
			t.Errorf("%s: %d chunks stepped, want at least 4", q, n)
		}
	}
}

func TestChunkable(t *testing.T) {
	scan := &plan.Scan{Relation: "t"}
	for _, tc := range []struct {
		p    plan.Node
		want bool
	}{
		{scan, true},
		{&plan.Aggregate{Input: &plan.Filter{Input: scan}}, true},
		{&plan.Distinct{Input: &plan.Project{Input: scan}}, true},
		{&plan.Join{Left: scan, Right: scan}, false},
		{&plan.Aggregate{Input: &plan.Limit{Input: scan}}, false},
	} {
		if got := chunkable(tc.p); got != tc.want {
			t.Errorf("chunkable(%T) = %v", tc.p, got)
		}
	}
}
