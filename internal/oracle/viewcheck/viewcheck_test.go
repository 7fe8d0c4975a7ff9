// Package viewcheck runs the oracle scripts of internal/oracle/testdata
// against RockStream and a throwaway PostgreSQL: every statement runs on
// both, and after every statement each materialized view's contents must
// equal, as a multiset of rows in text form, PostgreSQL's answer for the
// same query (a plain view there, always fresh).
package viewcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var createMatview = regexp.MustCompile(`(?is)^\s*CREATE\s+MATERIALIZED\s+VIEW\s+(IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)`)

func TestScripts(t *testing.T) {
	pgtest.Require(t)
	files, err := filepath.Glob("../testdata/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".sql"), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, path string) {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := rockstream.SplitStatements(string(text))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "viewcheck"))
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(context.Background())
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs := db.Session()
	defer rs.Close()

	var views []string
	from := 0
	for i, stmt := range stmts {
		line := 0
		if at := strings.Index(string(text[from:]), stmt); at >= 0 {
			from += at
			line = strings.Count(string(text[:from]), "\n") + 1
		}
		pgStmt := stmt
		if m := createMatview.FindStringSubmatch(stmt); m != nil {
			views = append(views, strings.ToLower(m[2]))
			pgStmt = createMatview.ReplaceAllString(stmt, "CREATE VIEW $2")
		}
		_, rerr := rs.Exec(ctx, stmt)
		_, perr := pgc.Exec(ctx, pgStmt).ReadAll()
		if rerr != nil || perr != nil {
			t.Fatalf("%s:%d: statement %d: RockStream error %v, PostgreSQL error %v\n%s", path, line, i+1, rerr, perr, stmt)
		}
		for _, v := range views {
			q := "SELECT * FROM " + v
			got, err := rs.Exec(ctx, q)
			if err != nil {
				t.Fatalf("%s:%d: after %q: %s: %v", path, line, stmt, q, err)
			}
			res, err := pgc.Exec(ctx, q).ReadAll()
			if err != nil {
				t.Fatalf("%s:%d: after %q: PostgreSQL %s: %v", path, line, stmt, q, err)
			}
			g, w := rsRows(got), pgRows(res[0].Rows)
			if g != w {
				t.Fatalf("%s:%d: after %q\nview %s differs from PostgreSQL\nRockStream:\n%s\nPostgreSQL:\n%s", path, line, stmt, v, g, w)
			}
		}
	}
}

func render(row []*string) string {
	parts := make([]string, len(row))
	for i, v := range row {
		if v == nil {
			parts[i] = "NULL"
		} else {
			parts[i] = *v
		}
	}
	return strings.Join(parts, " | ")
}

func sorted(rows []string) string {
	sort.Strings(rows)
	return strings.Join(rows, "\n") + fmt.Sprintf("\n(%d rows)", len(rows))
}

func rsRows(r *rockstream.Result) string {
	var out []string
	for _, row := range r.Rows {
		out = append(out, render(row))
	}
	return sorted(out)
}

func pgRows(rows [][][]byte) string {
	var out []string
	for _, row := range rows {
		vals := make([]*string, len(row))
		for i, v := range row {
			if v != nil {
				s := string(v)
				vals[i] = &s
			}
		}
		out = append(out, render(vals))
	}
	return sorted(out)
}
