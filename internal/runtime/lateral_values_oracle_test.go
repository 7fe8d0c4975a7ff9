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

// TestLateralValuesMatchesPostgres compares LATERAL (VALUES ...) reading
// the row before it, a per-row flat map, with PostgreSQL: ad hoc and in
// materialized views maintained through inserts, updates and deletes, with
// NULLs and duplicate rows.
func TestLateralValuesMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "lateralvalues"))
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	s := OpenMemory().NewSession()
	o := &joinOracle{t: t, s: s, pg: pgc}
	for _, q := range []string{
		"CREATE TABLE lv (id int PRIMARY KEY, a int, b int, name text)",
		"CREATE TABLE lw (k int, c int)",
		"INSERT INTO lv VALUES (1, 10, 20, 'x'), (2, 5, 5, NULL), (3, NULL, 7, 'z'), (4, NULL, NULL, 'w')",
		"INSERT INTO lw VALUES (1, 100), (1, 100), (2, NULL), (5, 1)",
	} {
		mustBoth(t, s, pgc, q)
	}
	views := []string{
		`SELECT lv.id, v.x FROM lv CROSS JOIN LATERAL (VALUES (lv.a), (lv.b)) v(x)`,
		`SELECT id, v.x, v.tag FROM lv JOIN LATERAL (VALUES (a, 'a'), (b, 'b'), (a + b, 'sum')) v(x, tag) ON v.x IS NOT NULL`,
		`SELECT v.column1, v.column2, count(*) AS n, sum(id) AS s FROM lv, LATERAL (VALUES (a, name), (b, name), (a, upper(name))) v GROUP BY 1, 2`,
		`SELECT lw.k, lw.c, v.y FROM lw CROSS JOIN LATERAL (VALUES (lw.c), (lw.c * 2), (NULL::int)) v(y)`,
		`SELECT lv.id, lw.c, v.z FROM lv JOIN lw ON lw.k = lv.id CROSS JOIN LATERAL (VALUES (lv.a + lw.c), (lv.b)) v(z)`,
		`SELECT id, v.x FROM lv LEFT JOIN LATERAL (VALUES (a), (b)) v(x) ON v.x > 6`,
		`SELECT DISTINCT v.x FROM lv, LATERAL (VALUES (a), (b), (a)) v(x)`,
	}

	for i, v := range views {
		name := "lvv" + string(rune('0'+i))
		if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW "+name+" AS "+v, nil); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if _, err := pgc.Exec(ctx, "CREATE VIEW "+name+" AS "+v).ReadAll(); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", v, err)
		}

	}
	check := func() {
		t.Helper()
		for _, v := range append(append([]string(nil), views...), `SELECT 1 AS one, v.* FROM (VALUES (1, 2)) w(p, q), LATERAL (VALUES (p, q), (q, p), (p + q, NULL)) v`) {
			want, err := o.theirs([]string{v})
			if err != nil {
				t.Fatalf("PostgreSQL: %v", err)
			}
			if got := o.ours(v); !slices.Equal(got, want[0]) {
				t.Errorf("%s:\nRockStream: %s\nPostgreSQL: %s", v, strings.Join(got, "; "), strings.Join(want[0], "; "))
			}
		}
		for i := range views {
			name := "lvv" + string(rune('0'+i))
			want, err := o.theirs([]string{"SELECT * FROM " + name})
			if err != nil {
				t.Fatalf("PostgreSQL: %v", err)
			}
			if got := o.ours("SELECT * FROM " + name); !slices.Equal(got, want[0]) {
				t.Errorf("view %s:\nRockStream: %s\nPostgreSQL: %s", views[i], strings.Join(got, "; "), strings.Join(want[0], "; "))
			}
		}
	}
	check()
	for _, step := range []string{
		"INSERT INTO lv VALUES (5, 1, 1, 'x'), (6, 20, 10, 'x')",
		"INSERT INTO lw VALUES (5, 1), (6, NULL), (1, 7)",
		"UPDATE lv SET a = b, b = a WHERE id IN (1, 3)",
		"DELETE FROM lv WHERE id = 2",
		"DELETE FROM lw WHERE k = 1 AND c = 100",
		"UPDATE lv SET name = NULL WHERE id = 6",
	} {
		mustBoth(t, s, pgc, step)
		check()
	}
	// Errors as PostgreSQL's.
	for _, q := range []string{
		`SELECT * FROM lv, LATERAL (VALUES (a, b), (a)) v`,
		`SELECT * FROM lv, LATERAL (VALUES (a), ('x')) v`,
		`SELECT * FROM lv, LATERAL (VALUES (a), (b)) v(x, y)`,
		`SELECT * FROM lv, LATERAL (VALUES (a / 0)) v`,
	} {
		_, ours := s.Exec(ctx, q, nil)
		_, theirs := pgc.Exec(ctx, q).ReadAll()
		if ours == nil || errs.SQLState(ours) != sqlState(theirs) {
			t.Errorf("%s: RockStream %v, PostgreSQL %v", q, ours, theirs)
		}
	}
}
