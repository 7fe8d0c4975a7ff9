package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/types"
)

// The join oracle tests maintain materialized views with outer joins,
// semi- and anti-joins and subqueries through sequences of transactions,
// and after every transaction compare each view with the same query as a
// plain view in PostgreSQL (always fresh), as multisets of rows printed
// as text. A transaction that makes PostgreSQL's view fail (a scalar
// subquery returning two rows: 21000) must fail here with the same
// SQLSTATE and change nothing; PostgreSQL's transaction is then rolled
// back too.

// joinTables are the tables of the join cases: small domains, so that
// keys collide, and NULLs.
var joinTables = []oracleTable{
	{"a", []oracleColumn{{"k", "int", intDomain}, {"x", "int", intDomain}}},
	{"b", []oracleColumn{{"k", "int", intDomain}, {"y", "int", intDomain}}},
	{"c", []oracleColumn{{"k", "int", intDomain}, {"z", "text", []string{"'p'", "'q'", "'r'"}}}},
}

var intDomain = []string{"0", "1", "2", "3"}

// joinViews are the view queries the random test maintains.
var joinViews = []string{
	// Outer joins.
	`SELECT a.k AS ak, x, b.k AS bk, y FROM a LEFT JOIN b ON a.k = b.k`,
	`SELECT a.k AS ak, x, b.k AS bk, y FROM a RIGHT JOIN b ON a.k = b.k AND a.x < b.y`,
	`SELECT a.k AS ak, x, b.k AS bk, y FROM a FULL JOIN b ON a.k = b.k`,
	`SELECT a.k AS ak, x, b.k AS bk, y FROM a FULL JOIN b ON a.k = b.k AND a.x <> b.y`,
	`SELECT * FROM a FULL JOIN b USING (k)`,
	`SELECT a.k AS ak, x, b.k AS bk, y FROM a LEFT JOIN b ON a.x < b.y`,
	`SELECT a.k AS ak, x, b.k AS bk, y, c.k AS ck, z FROM a LEFT JOIN b ON a.k = b.k LEFT JOIN c ON b.k = c.k`,
	`SELECT a.k AS ak, x, b.k AS bk, y, c.k AS ck, z FROM a JOIN b ON a.k = b.k FULL JOIN c ON a.x = c.k`,
	`SELECT a.k AS ak, x, b.k AS bk, y, c.k AS ck, z FROM a LEFT JOIN (b FULL JOIN c ON b.y = c.k) ON a.k = b.k`,
	`SELECT a.*, b.y FROM a LEFT JOIN b ON a.k = b.k WHERE b.y IS NULL`,
	`SELECT a.k AS ak, x, b.k AS bk, y FROM a LEFT JOIN b ON a.k = b.k AND a.x > 0 AND b.y > 0`,
	`SELECT a.k AS ak, x, b.k AS bk, y FROM a LEFT JOIN b ON false`,
	`SELECT a.k, count(b.y) AS n, sum(b.y) AS s, count(*) AS rows FROM a LEFT JOIN b ON a.k = b.k GROUP BY a.k`,
	`SELECT n, count(*) AS custdist FROM (SELECT a.k, count(b.y) AS n FROM a LEFT JOIN b ON a.k = b.k AND b.y <> 2 GROUP BY a.k) co GROUP BY n`,
	// Semi- and anti-joins.
	`SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k)`,
	`SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.y <> a.x)`,
	`SELECT * FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k)`,
	`SELECT * FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.y <> a.x)`,
	`SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b) AND NOT EXISTS (SELECT 1 FROM c WHERE c.k = a.x)`,
	`SELECT * FROM a WHERE x IN (SELECT y FROM b)`,
	`SELECT * FROM a WHERE x NOT IN (SELECT y FROM b)`,
	`SELECT * FROM a WHERE x NOT IN (SELECT y FROM b WHERE b.k = a.k)`,
	`SELECT * FROM a WHERE x NOT IN (SELECT y FROM b WHERE b.k = a.k AND b.y > a.k)`,
	`SELECT * FROM a WHERE (k, x) IN (SELECT k, y FROM b)`,
	`SELECT * FROM a WHERE (k, x) NOT IN (SELECT k, y FROM b)`,
	`SELECT * FROM a WHERE x > ALL (SELECT y FROM b WHERE b.k = a.k)`,
	`SELECT * FROM a WHERE x < ANY (SELECT y FROM b)`,
	`SELECT * FROM a WHERE x <> ALL (SELECT y FROM b)`,
	`SELECT * FROM a WHERE k IN (SELECT k FROM b GROUP BY k HAVING sum(y) > 1)`,
	`SELECT * FROM a WHERE x IN (SELECT DISTINCT y FROM b WHERE b.k = a.k)`,
	// Tests as values (mark joins), with PostgreSQL's NULLs.
	`SELECT a.*, x IN (SELECT y FROM b) AS in_b, x NOT IN (SELECT y FROM b WHERE b.k = a.k) AS not_in,
	        EXISTS (SELECT 1 FROM c WHERE c.k = a.k) AS has_c, x >= ALL (SELECT y FROM b) AS ge_all FROM a`,
	`SELECT * FROM a WHERE x IS NULL OR EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.y > a.x)`,
	`SELECT * FROM a WHERE NOT (x IN (SELECT y FROM b) OR k IN (SELECT k FROM c))`,
	`SELECT * FROM a WHERE CASE WHEN x > 1 THEN k IN (SELECT k FROM b) ELSE NOT EXISTS (SELECT 1 FROM c WHERE c.k = a.x) END`,
	// Scalar subqueries.
	`SELECT a.k, a.x, (SELECT max(y) FROM b WHERE b.k = a.k) AS m FROM a`,
	`SELECT a.k, (SELECT count(*) FROM b WHERE b.k = a.k) AS n, (SELECT count(y) + 1 FROM b WHERE b.k = a.x) AS n1 FROM a`,
	`SELECT * FROM a WHERE x < (SELECT avg(y) FROM b WHERE b.k = a.k)`,
	`SELECT * FROM a WHERE x > (SELECT avg(y) FROM b WHERE y > 0)`,
	`SELECT k, sum(x) AS s FROM a GROUP BY k HAVING sum(x) > (SELECT sum(y) FROM b) / 4`,
	`SELECT k, (SELECT max(z) FROM c WHERE c.k = a.k) AS z FROM a GROUP BY k`,
	// Nested.
	`SELECT * FROM a WHERE k IN (SELECT b.k FROM b WHERE b.y IN (SELECT c.k FROM c) AND b.y > (SELECT count(*) FROM c WHERE c.k = b.k))`,
	`SELECT * FROM (SELECT a.k, (SELECT max(y) FROM b WHERE b.k = a.k) AS m FROM a) s WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.k = s.m)`,
}

// singleRowViews are scalar subqueries that may return several rows,
// which fails the transaction (21000) while a view reads them; they run
// apart, so that they do not hold back the others.
var singleRowViews = []string{
	`SELECT a.k, (SELECT c.z FROM c WHERE c.k = a.x) AS z FROM a`,
	`SELECT a.k, (SELECT b.y FROM b WHERE b.k = a.k AND b.y > a.x) AS y FROM a`,
	`SELECT * FROM a WHERE x = (SELECT k FROM c WHERE z = 'p')`,
	`SELECT a.k, (SELECT DISTINCT y FROM b WHERE b.k = a.k) AS y FROM a WHERE x > 0`,
}

// joinSteps are scripted transactions with the hard cases of outer joins,
// run before the random ones.
var joinSteps = [][]string{
	{"INSERT INTO a VALUES (1, 10), (1, 10), (2, 20), (NULL, 30)", "INSERT INTO b VALUES (1, 5), (1, 5), (NULL, 7)"},
	// A row gains its first match, another loses its last.
	{"INSERT INTO b VALUES (2, 25)", "DELETE FROM b WHERE k = 1"},
	{"INSERT INTO c VALUES (2, 'p'), (3, 'q'), (NULL, 'r')"},
	// A join-key update on one side with a delete on the other.
	{"UPDATE a SET k = 3 WHERE x = 20", "DELETE FROM b WHERE k = 2"},
	{"INSERT INTO b VALUES (3, 1), (3, NULL)", "UPDATE a SET x = NULL WHERE k IS NULL"},
	// Both sides of a full join change in one transaction.
	{"UPDATE a SET k = 2 WHERE k = 1", "UPDATE b SET k = 1 WHERE k = 3", "INSERT INTO b VALUES (2, 20)"},
	{"DELETE FROM a WHERE k = 2", "DELETE FROM b WHERE k = 2", "INSERT INTO a VALUES (1, 1)"},
	{"INSERT INTO c VALUES (3, 's')"},
	{"DELETE FROM c WHERE k = 3 AND z = 's'", "UPDATE b SET y = 3 WHERE y IS NULL"},
	{"DELETE FROM a", "DELETE FROM b"},
	{"INSERT INTO a VALUES (1, 1), (2, 2)", "INSERT INTO b VALUES (1, NULL)"},
	// UPDATE and DELETE with subqueries in WHERE.
	{"INSERT INTO a VALUES (3, 3), (NULL, 3)", "INSERT INTO c VALUES (2, 'p'), (2, 'q')"},
	{"DELETE FROM a WHERE k IN (SELECT k FROM c WHERE z = 'q')", "UPDATE b SET y = 2 WHERE EXISTS (SELECT 1 FROM a WHERE a.k = b.k)"},
	{"UPDATE a SET x = x + 1 WHERE x NOT IN (SELECT y FROM b)", "DELETE FROM c WHERE k < (SELECT max(k) FROM a)"},
}

func TestJoinsMatchPostgres(t *testing.T) {
	runOracle(t, oracleCase{tables: joinTables, views: joinViews, steps: joinSteps, random: 150})
}

func TestScalarSubqueriesMatchPostgres(t *testing.T) {
	runOracle(t, oracleCase{tables: joinTables, views: singleRowViews, steps: joinSteps, random: 100, failing: true})
}

// oracleCase is a schema, views over it, scripted transactions and a
// number of random ones.
type oracleCase struct {
	tables []oracleTable
	views  []string
	steps  [][]string
	random int
	// failing views may fail to compute: they are read after every
	// statement, not only at the end of each transaction.
	failing bool
}

// oracleTable is a table and the values its random rows take.
type oracleTable struct {
	name string
	cols []oracleColumn
}

type oracleColumn struct {
	name, typ string
	domain    []string // SQL literals; NULL is added
}

// oracleConn connects to a new PostgreSQL database named name, closed
// at the end of the test.
func oracleConn(t *testing.T, name string) *pgconn.PgConn {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgc.Close(ctx) })
	// Small tables: keep PostgreSQL from planning parallel or JIT work.
	if _, err := pgc.Exec(ctx, "SET jit = off; SET max_parallel_workers_per_gather = 0").ReadAll(); err != nil {
		t.Fatal(err)
	}
	return pgc
}

// createViewsBoth creates each query as materialized view v<i> here and
// as view v<i> in PostgreSQL, and returns the names.
func createViewsBoth(t *testing.T, s *Session, pgc *pgconn.PgConn, queries []string) []string {
	ctx := context.Background()
	var names []string
	for i, q := range queries {
		name := fmt.Sprintf("v%d", i)
		if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW "+name+" AS "+q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, err := pgc.Exec(ctx, "CREATE VIEW "+name+" AS "+q).ReadAll(); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
		names = append(names, name)
	}
	return names
}

func runOracle(t *testing.T, c oracleCase) {
	pgc := oracleConn(t, "joins")
	s := OpenMemory().NewSession()
	for _, tb := range c.tables {
		var cols []string
		for _, col := range tb.cols {
			cols = append(cols, col.name+" "+col.typ)
		}
		mustBoth(t, s, pgc, "CREATE TABLE "+tb.name+" ("+strings.Join(cols, ", ")+")")
	}
	names := createViewsBoth(t, s, pgc, c.views)
	o := &joinOracle{t: t, s: s, pg: pgc, views: names, queries: c.views, failing: c.failing}
	for _, step := range c.steps {
		o.step(step)
	}
	rng := rand.New(rand.NewPCG(1, uint64(len(c.views))))
	steps := c.random
	if testing.Short() {
		steps /= 5
	}
	for i := 0; i < steps; i++ {
		var step []string
		for n := 1 + rng.IntN(3); n > 0; n-- {
			step = append(step, randomDML(rng, c.tables))
		}
		o.step(step)
	}
	t.Logf("%d transactions, %d failed with 21000 on both sides", len(c.steps)+steps, o.failed)
}

type joinOracle struct {
	t       *testing.T
	s       *Session
	pg      *pgconn.PgConn
	views   []string
	queries []string
	failing bool
	failed  int
	steps   int
}

// step runs one transaction on both sides and compares the views.
func (o *joinOracle) step(stmts []string) {
	t, ctx := o.t, context.Background()
	t.Helper()
	o.steps++
	mustBoth(t, o.s, o.pg, "BEGIN")
	// Every view, and some of the queries ad hoc (one batch evaluation
	// of the circuit), in one round trip.
	var queries []string
	for _, v := range o.views {
		queries = append(queries, "SELECT * FROM "+v)
	}
	for i, q := range o.queries {
		if i%5 == o.steps%5 {
			queries = append(queries, q)
		}
	}
	// Inside a block, views catch up with the block's changes when they
	// are read: a statement after which PostgreSQL cannot compute a view
	// (it computes views when they are read) makes reading the view fail
	// here too, and the transaction is rolled back.
	var ourErr, pgErr error
	var want [][]string
	for i, stmt := range stmts {
		if _, err := o.pg.Exec(ctx, stmt).ReadAll(); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", stmt, err)
		}
		if _, err := o.s.Exec(ctx, stmt, nil); err != nil {
			ourErr = fmt.Errorf("%s: %w", stmt, err)
			if !o.failing {
				t.Fatalf("%v", ourErr)
			}
		}
		if !o.failing && i < len(stmts)-1 {
			continue
		}
		if want, pgErr = o.theirs(queries); pgErr != nil {
			pgErr = fmt.Errorf("after %s: %w", stmt, pgErr)
		}
		if ourErr == nil && o.failing {
			for _, q := range queries {
				if _, err := o.s.Exec(ctx, q, nil); err != nil {
					ourErr = fmt.Errorf("reading %s after %s: %w", q, stmt, err)
					break
				}
			}
		}
		if ourErr != nil || pgErr != nil {
			break
		}
	}
	if pgErr != nil || ourErr != nil {
		if sqlState(pgErr) != errs.SQLState(ourErr) {
			t.Fatalf("transaction %q: PostgreSQL: %v; RockStream: %v", stmts, pgErr, ourErr)
		}
		mustBoth(t, o.s, o.pg, "ROLLBACK")
		o.failed++
		if want, pgErr = o.theirs(queries); pgErr != nil {
			t.Fatalf("PostgreSQL after ROLLBACK: %v", pgErr)
		}
	} else {
		mustBoth(t, o.s, o.pg, "COMMIT")
	}
	for i, q := range queries {
		if got := o.ours(q); !slices.Equal(got, want[i]) {
			if i < len(o.views) {
				q = o.queries[i] + " (as view " + o.views[i] + ")"
			}
			t.Fatalf("after %q, differs from PostgreSQL: %s\nRockStream:\n  %s\nPostgreSQL:\n  %s",
				stmts, q, strings.Join(got, "\n  "), strings.Join(want[i], "\n  "))
		}
	}
}

// ours returns a query's rows here, printed as PostgreSQL prints them,
// sorted.
// same runs queries here and in PostgreSQL and reports each whose rows
// differ.
func (o *joinOracle) same(queries ...string) {
	o.t.Helper()
	want, err := o.theirs(queries)
	if err != nil {
		o.t.Fatalf("PostgreSQL: %v", err)
	}
	for i, q := range queries {
		if got := o.ours(q); !slices.Equal(got, want[i]) {
			o.t.Errorf("%s:\nRockStream: %s\nPostgreSQL: %s", q, strings.Join(got, "; "), strings.Join(want[i], "; "))
		}
	}
}

func (o *joinOracle) ours(q string) []string {
	o.t.Helper()
	res, err := o.s.Exec(context.Background(), q, nil)
	if err != nil {
		o.t.Fatalf("%s: %v", q, err)
	}
	rows := resultLines(res)
	slices.Sort(rows)
	return rows
}

// resultLines returns a result's rows as PostgreSQL prints them.
func resultLines(res *Result) []string {
	var rows []string
	for _, r := range res.Rows {
		vals := make([]string, len(r))
		for i, v := range r {
			vals[i] = "NULL"
			if !v.IsNull() {
				vals[i] = types.Format(v, res.Columns[i].Type)
			}
		}
		rows = append(rows, strings.Join(vals, " | "))
	}
	return rows
}

// theirs returns the queries' rows in PostgreSQL, each sorted.
func (o *joinOracle) theirs(queries []string) ([][]string, error) {
	res, err := o.pg.Exec(context.Background(), strings.Join(queries, ";\n")).ReadAll()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, r := range res {
		out = append(out, pgLinesOf(r.Rows))
	}
	return out, nil
}

// pgLinesOf returns PostgreSQL's text rows as " | "-joined lines with
// NULL for nulls, sorted.
func pgLinesOf(rows [][][]byte) []string {
	var lines []string
	for _, row := range rows {
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = "NULL"
			if v != nil {
				vals[i] = string(v)
			}
		}
		lines = append(lines, strings.Join(vals, " | "))
	}
	slices.Sort(lines)
	return lines
}

func mustBoth(t *testing.T, s *Session, pg *pgconn.PgConn, stmt string) {
	t.Helper()
	if _, err := s.Exec(context.Background(), stmt, nil); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	if _, err := pg.Exec(context.Background(), stmt).ReadAll(); err != nil {
		t.Fatalf("PostgreSQL: %s: %v", stmt, err)
	}
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// randomDML returns an insert, delete or update of one of tables, with
// values from the columns' domains and NULLs.
func randomDML(rng *rand.Rand, tables []oracleTable) string {
	tb := tables[rng.IntN(len(tables))]
	val := func(c oracleColumn) string {
		if rng.IntN(8) == 0 {
			return "NULL"
		}
		return c.domain[rng.IntN(len(c.domain))]
	}
	cond := func() string {
		c := tb.cols[rng.IntN(len(tb.cols))]
		if v := val(c); v != "NULL" {
			return c.name + " = " + v
		}
		return c.name + " IS NULL"
	}
	if rng.IntN(8) == 0 {
		// A condition with a subquery on another table's column of the
		// same type.
		other := tables[rng.IntN(len(tables))]
		c := tb.cols[rng.IntN(len(tb.cols))]
		var same []oracleColumn
		for _, oc := range other.cols {
			if oc.typ == c.typ {
				same = append(same, oc)
			}
		}
		if len(same) > 0 {
			oc := same[rng.IntN(len(same))]
			where := tb.name + "." + c.name + " IN (SELECT o." + oc.name + " FROM " + other.name + " o)"
			switch rng.IntN(3) {
			case 1:
				where = tb.name + "." + c.name + " NOT IN (SELECT o." + oc.name + " FROM " + other.name + " o WHERE o." + oc.name + " IS NOT NULL)"
			case 2:
				where = "NOT EXISTS (SELECT 1 FROM " + other.name + " o WHERE o." + oc.name + " = " + tb.name + "." + c.name + ")"
			}
			if rng.IntN(2) == 0 {
				return "DELETE FROM " + tb.name + " WHERE " + where
			}
			u := tb.cols[rng.IntN(len(tb.cols))]
			return "UPDATE " + tb.name + " SET " + u.name + " = " + val(u) + " WHERE " + where
		}
	}
	switch n := rng.IntN(10); {
	case n < 5:
		var rows []string
		for i := rng.IntN(3); i >= 0; i-- {
			var vals []string
			for _, c := range tb.cols {
				vals = append(vals, val(c))
			}
			rows = append(rows, "("+strings.Join(vals, ", ")+")")
		}
		return "INSERT INTO " + tb.name + " VALUES " + strings.Join(rows, ", ")
	case n < 7:
		return "DELETE FROM " + tb.name + " WHERE " + cond()
	}
	c := tb.cols[rng.IntN(len(tb.cols))]
	return "UPDATE " + tb.name + " SET " + c.name + " = " + val(c) + " WHERE " + cond()
}
