package runtime

import (
	"context"
	"slices"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestNamedArgumentsMatchPostgres calls SQL functions and make_interval
// with named arguments (=> and :=), mixed with positional ones, in
// queries and a materialized view, and compares results and errors with
// PostgreSQL.
func TestNamedArgumentsMatchPostgres(t *testing.T) {
	ctx := context.Background()
	pgc := oracleConn(t, "namedargs")
	s := OpenMemory().NewSession()
	o := &joinOracle{t: t, s: s, pg: pgc}
	for _, q := range []string{
		"CREATE FUNCTION diff(x int, y int) RETURNS int LANGUAGE SQL IMMUTABLE AS $$ SELECT x - y $$",
		"CREATE FUNCTION label(n int, prefix text) RETURNS text LANGUAGE SQL IMMUTABLE AS $$ SELECT prefix || n $$",
		"CREATE TABLE t (a int, b int)",
		"INSERT INTO t VALUES (1, 2), (5, 3), (NULL, 1)",
	} {
		mustBoth(t, s, pgc, q)
	}
	queries := []string{
		`SELECT diff(y => 1, x => 5), diff(5, y => 2), diff(x := 7, y := 1), label(prefix => 'n', n => 3)`,
		`SELECT a, diff(y => a, x => b) AS d, label(a, prefix := 'v') FROM t`,
		`SELECT make_interval(days => 3), make_interval(hours := 2, years => 1)`,
	}
	o.same(queries...)
	view := `SELECT a, diff(y => b, x => a) AS d FROM t`
	if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW nv AS "+view, nil); err != nil {
		t.Fatal(err)
	}
	mustBoth(t, s, pgc, "UPDATE t SET b = b + 10 WHERE a = 5")
	want, _ := o.theirs([]string{view})
	if got := o.ours("SELECT * FROM nv"); !slices.Equal(got, want[0]) {
		t.Errorf("view: RockStream %v, PostgreSQL %v", got, want[0])
	}
	for _, q := range []string{
		"SELECT diff(x => 1)", "SELECT diff(z => 1, x => 2)", "SELECT diff(x => 1, 2)", "SELECT diff(x => 1, x => 2)",
	} {
		_, ours := s.Exec(ctx, q, nil)
		_, theirs := pgc.Exec(ctx, q).ReadAll()
		if errs.SQLState(ours) != sqlState(theirs) {
			t.Errorf("%s: RockStream %v, PostgreSQL %v", q, ours, theirs)
		}
	}
}
