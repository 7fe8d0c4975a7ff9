package oracle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestScripts runs each testdata/*.sql script against RockStream and a
// real PostgreSQL, statement by statement, and after every statement
// compares every materialized view with PostgreSQL's evaluation of the
// same query (a plain view there, always fresh) as a multiset of rows in
// PostgreSQL's text format. A statement must succeed on both or fail on
// both with the same SQLSTATE; a query's rows must be the same multiset.
//
// Comments just before a statement direct the comparison, for what
// PostgreSQL does not have:
//
//	-- postgres: SQL          run SQL on PostgreSQL instead (one line per
//	                          statement; several lines run in order; an
//	                          empty SQL runs nothing there)
//	-- rockstream-only        run the statement on RockStream only
//	-- error: SQLSTATE        ... and expect it to fail so
//	-- expect: a|b|NULL       ... and expect these rows, in order
//
// CREATE MATERIALIZED VIEW becomes CREATE VIEW on PostgreSQL. Times are in
// UTC on both.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".sql"), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			runScript(t, string(text))
		})
	}
}

// statement is one statement of a script with its directives.
type statement struct {
	sql       string
	line      int
	postgres  []string // nil: the statement itself
	rsOnly    bool
	wantError string
	expect    []string
	hasExpect bool
}

// parseScript splits a script into statements, reading the directive
// comments before each.
func parseScript(t *testing.T, text string) []statement {
	res, err := pg.Scan(text)
	if err != nil {
		t.Fatalf("scanning the script: %v", err)
	}
	var out []statement
	cur := statement{}
	start := -1
	for _, tok := range res.Tokens {
		switch tok.Token {
		case pg.Token_SQL_COMMENT:
			if start < 0 {
				cur.directive(t, strings.TrimSpace(strings.TrimPrefix(text[tok.Start:tok.End], "--")))
			}
			continue
		case pg.Token_C_COMMENT:
			continue
		case pg.Token_ASCII_59:
			if start >= 0 {
				cur.sql = text[start:tok.End]
				cur.line = strings.Count(text[:start], "\n") + 1
				out = append(out, cur)
			}
			cur, start = statement{}, -1
			continue
		}
		if start < 0 {
			start = int(tok.Start)
		}
	}
	if start >= 0 {
		t.Fatalf("the script ends without a semicolon")
	}
	return out
}

func (s *statement) directive(t *testing.T, c string) {
	key, val, _ := strings.Cut(c, ":")
	val = strings.TrimSpace(val)
	switch strings.TrimSpace(key) {
	case "postgres":
		if s.postgres == nil {
			s.postgres = []string{}
		}
		if val != "" {
			s.postgres = append(s.postgres, val)
		}
	case "rockstream-only":
		s.rsOnly = true
	case "error":
		s.wantError = val
	case "expect":
		s.hasExpect = true
		s.expect = append(s.expect, val)
	}
}

// oracleRun is one script's run: both sides and the views to compare.
type oracleRun struct {
	t     *testing.T
	ctx   context.Context
	rs    *rockstream.Session
	pg    *pgconn.PgConn
	views []string
	// aborted is set while a transaction block failed on both sides:
	// nothing can be read until it ends.
	aborted bool
}

func runScript(t *testing.T, text string) {
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "oracle"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 1").ReadAll(); err != nil {
		t.Fatal(err)
	}
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := &oracleRun{t: t, ctx: ctx, rs: db.Session(), pg: conn}
	defer r.rs.Close()
	for _, st := range parseScript(t, text) {
		r.step(st)
	}
	if err := db.VerifyViews(); err != nil {
		t.Errorf("at the end: %v", err)
	}
}

func (r *oracleRun) step(st statement) {
	t := r.t
	where := fmt.Sprintf("line %d: %s", st.line, oneLine(st.sql))
	rsRes, rsErr := r.rs.Exec(r.ctx, st.sql)
	if st.rsOnly || st.wantError != "" || st.hasExpect {
		switch {
		case st.wantError != "" && rsErr == nil:
			t.Errorf("%s: succeeded, want error %s", where, st.wantError)
		case st.wantError != "" && errs.SQLState(rsErr) != st.wantError:
			t.Errorf("%s: error %s (%v), want %s", where, errs.SQLState(rsErr), rsErr, st.wantError)
		case st.wantError == "" && rsErr != nil:
			t.Errorf("%s: %v", where, rsErr)
		case st.hasExpect:
			if got := rsRows(rsRes); !slices.Equal(got, st.expect) {
				t.Errorf("%s:\ngot  %q\nwant %q", where, got, st.expect)
			}
		}
	}
	if !st.rsOnly {
		pgSQL := st.postgres
		if pgSQL == nil {
			pgSQL = []string{r.forPostgres(st.sql)}
		}
		var pgRows []string
		var pgErr error
		pgHasRows := false
		for _, q := range pgSQL {
			results, err := r.pg.Exec(r.ctx, q).ReadAll()
			if err != nil {
				pgErr = err
				break
			}
			if len(results) > 0 && results[len(results)-1].Err != nil {
				pgErr = results[len(results)-1].Err
				break
			}
			if len(results) > 0 {
				last := results[len(results)-1]
				pgRows, pgHasRows = pgResultRows(last), len(last.FieldDescriptions) > 0
			}
		}
		switch {
		case rsErr != nil && pgErr == nil:
			t.Errorf("%s: RockStream failed (%s: %v), PostgreSQL did not", where, errs.SQLState(rsErr), rsErr)
		case rsErr == nil && pgErr != nil:
			t.Errorf("%s: PostgreSQL failed (%v), RockStream did not", where, pgErr)
		case rsErr != nil && errs.SQLState(rsErr) != pgState(pgErr):
			t.Errorf("%s: RockStream failed with %s (%v), PostgreSQL with %s (%v)", where, errs.SQLState(rsErr), rsErr, pgState(pgErr), pgErr)
		case rsErr == nil && rsRes.Columns != nil && (st.postgres == nil || pgHasRows):
			if got, want := sorted(rsRows(rsRes)), sorted(pgRows); !slices.Equal(got, want) {
				t.Errorf("%s: rows differ\nRockStream:\n%s\nPostgreSQL:\n%s", where, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		if rsErr != nil && pgErr != nil && r.inBlock() {
			r.aborted = true
		}
	}
	r.track(st.sql, rsErr)
	r.compareViews(where)
}

// inBlock reports whether PostgreSQL's session is in a transaction block.
func (r *oracleRun) inBlock() bool {
	s := r.pg.TxStatus()
	return s == 'T' || s == 'E'
}

// track follows the materialized views the script creates and drops, and
// the end of a failed block.
func (r *oracleRun) track(sql string, rsErr error) {
	tree, err := pg.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return
	}
	n := tree.Stmts[0].Stmt
	switch {
	case n.GetTransactionStmt() != nil:
		switch n.GetTransactionStmt().Kind {
		case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			r.aborted = false
		}
	case rsErr != nil:
	case n.GetCreateTableAsStmt() != nil:
		name := n.GetCreateTableAsStmt().Into.Rel.Relname
		if !slices.Contains(r.views, name) {
			r.views = append(r.views, name)
		}
	case n.GetDropStmt() != nil:
		for _, o := range n.GetDropStmt().Objects {
			items := o.GetList().GetItems()
			name := items[len(items)-1].GetString_().GetSval()
			r.views = slices.DeleteFunc(r.views, func(v string) bool { return v == name })
		}
	}
}

// compareViews compares every materialized view with PostgreSQL's.
func (r *oracleRun) compareViews(where string) {
	if r.aborted {
		return
	}
	for _, v := range r.views {
		q := "SELECT * FROM " + v
		rsRes, err := r.rs.Exec(r.ctx, q)
		if err != nil {
			r.t.Errorf("%s: reading view %s: %v", where, v, err)
			continue
		}
		results, err := r.pg.Exec(r.ctx, q).ReadAll()
		if err == nil && len(results) == 1 {
			err = results[0].Err
		}
		if err != nil {
			r.t.Errorf("%s: PostgreSQL reading view %s: %v", where, v, err)
			continue
		}
		got, want := sorted(rsRows(rsRes)), sorted(pgResultRows(results[0]))
		if !slices.Equal(got, want) {
			r.t.Errorf("%s: view %s differs from PostgreSQL\nRockStream:\n%s\nPostgreSQL:\n%s",
				where, v, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// forPostgres turns CREATE and DROP MATERIALIZED VIEW into CREATE and
// DROP VIEW.
func (r *oracleRun) forPostgres(sql string) string {
	tree, err := pg.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return sql
	}
	if ds := tree.Stmts[0].Stmt.GetDropStmt(); ds != nil && ds.RemoveType == pg.ObjectType_OBJECT_MATVIEW {
		ds.RemoveType = pg.ObjectType_OBJECT_VIEW
		q, err := pg.Deparse(tree)
		if err != nil {
			r.t.Fatalf("deparsing %s: %v", sql, err)
		}
		return q
	}
	ca := tree.Stmts[0].Stmt.GetCreateTableAsStmt()
	if ca == nil || ca.Objtype != pg.ObjectType_OBJECT_MATVIEW {
		return sql
	}
	q, err := pg.Deparse(&pg.ParseResult{Version: tree.Version, Stmts: []*pg.RawStmt{{Stmt: ca.Query}}})
	if err != nil {
		r.t.Fatalf("deparsing %s: %v", sql, err)
	}
	var cols []string
	for _, c := range ca.Into.ColNames {
		cols = append(cols, c.GetString_().GetSval())
	}
	head := "CREATE VIEW " + ca.Into.Rel.Relname
	if len(cols) > 0 {
		head += " (" + strings.Join(cols, ", ") + ")"
	}
	return head + " AS " + q
}

func rsRows(res *rockstream.Result) []string {
	if res == nil {
		return nil
	}
	var out []string
	for _, row := range res.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = *v
			}
		}
		out = append(out, strings.Join(vals, "|"))
	}
	return out
}

func pgResultRows(res *pgconn.Result) []string {
	var out []string
	for _, row := range res.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = string(v)
			}
		}
		out = append(out, strings.Join(vals, "|"))
	}
	return out
}

func pgState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return "?"
}

func sorted(rows []string) []string {
	out := slices.Clone(rows)
	slices.Sort(out)
	return out
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return s
}
