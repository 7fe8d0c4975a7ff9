package rockstream_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestFunctionScripts runs the function scripts of internal/oracle/testdata
// statement by statement against RockStream and a real PostgreSQL (where
// each materialized view is a plain view, always fresh), and after every
// statement demands the same contents of every view (as multisets), the
// same result of every SELECT, the same errors (SQLSTATE and message), and
// that every view equals its query recomputed from scratch. The durable
// runs also close and reopen the instance after every statement.
func TestFunctionScripts(t *testing.T) {
	for _, name := range []string{"functions", "string_agg"} {
		t.Run(name, func(t *testing.T) {
			runFunctionScript(t, "internal/oracle/testdata/"+name+".sql", rockstream.Options{})
		})
		t.Run(name+"/durable", func(t *testing.T) {
			runFunctionScript(t, "internal/oracle/testdata/"+name+".sql",
				rockstream.Options{Storage: t.TempDir(), Relaxed: true})
		})
	}
}

var (
	createMatView = regexp.MustCompile(`(?is)^\s*CREATE\s+MATERIALIZED\s+VIEW\s+(\w+)`)
	orderedSelect = regexp.MustCompile(`(?is)\border\s+by\b[^()]*$`)
)

func runFunctionScript(t *testing.T, path string, opts rockstream.Options) {
	script, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := rockstream.SplitStatements(string(script))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "funcs"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, set := range []string{"SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, MDY'",
		"SET IntervalStyle = 'postgres'", "SET extra_float_digits = 1"} {
		if _, err := conn.Exec(ctx, set).ReadAll(); err != nil {
			t.Fatal(err)
		}
	}
	db, err := rockstream.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	var views []string
	for _, stmt := range stmts {
		pgStmt := stmt
		if m := createMatView.FindStringSubmatch(stmt); m != nil {
			pgStmt = createMatView.ReplaceAllString(stmt, "CREATE VIEW $1")
			views = append(views, m[1])
		}
		isSelect := strings.HasPrefix(strings.ToUpper(strings.TrimSpace(stmt)), "SELECT")
		got := rsRun(ctx, db, stmt)
		var want runResult
		if isSelect {
			want = pgRun(t, ctx, conn, pgStmt)
		} else {
			// A change that makes a view's expression fail fails in
			// RockStream, which maintains the view as it writes; in
			// PostgreSQL the plain view fails when read. Either way nothing
			// changes: the statement runs in a transaction that is rolled
			// back when a view cannot be read afterwards.
			pgRun(t, ctx, conn, "BEGIN")
			want = pgRun(t, ctx, conn, pgStmt)
			if want.err == "" && got.err != "" {
				for _, v := range views {
					if r := pgRun(t, ctx, conn, "SELECT * FROM "+v); r.err != "" {
						want = r
						break
					}
				}
			}
			if want.err != "" {
				pgRun(t, ctx, conn, "ROLLBACK")
			} else {
				pgRun(t, ctx, conn, "COMMIT")
			}
		}
		if isSelect && !orderedSelect.MatchString(stmt) {
			sort.Strings(want.rows)
			sort.Strings(got.rows)
		}
		if !isSelect {
			want.rows, got.rows = nil, nil
		}
		if want.String() != got.String() {
			t.Fatalf("%s\n got: %s\nwant: %s", stmt, got, want)
		}
		for _, v := range views {
			w := pgRun(t, ctx, conn, "SELECT * FROM "+v)
			g := rsRun(ctx, db, "SELECT * FROM "+v)
			sort.Strings(w.rows)
			sort.Strings(g.rows)
			if w.String() != g.String() {
				t.Fatalf("after %s\nview %s\n got: %s\nwant: %s", stmt, v, g, w)
			}
		}
		if err := db.VerifyViews(); err != nil {
			t.Fatalf("after %s: %v", stmt, err)
		}
		if opts.Storage != "" {
			// Recovery must bring back every view's state as it was.
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = rockstream.Open(opts); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, v := range views {
		w := pgRun(t, ctx, conn, "SELECT * FROM "+v)
		g := rsRun(ctx, db, "SELECT * FROM "+v)
		sort.Strings(w.rows)
		sort.Strings(g.rows)
		if w.String() != g.String() {
			t.Fatalf("at the end, view %s\n got: %s\nwant: %s", v, g, w)
		}
	}
}

// runResult is a statement's outcome: rows as text, or an error.
type runResult struct {
	rows []string
	err  string
}

func (r runResult) String() string {
	if r.err != "" {
		return "ERROR " + r.err
	}
	return fmt.Sprintf("%d rows\n  %s", len(r.rows), strings.Join(r.rows, "\n  "))
}

func rowText(vals []*string) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			parts[i] = "NULL"
		} else {
			parts[i] = fmt.Sprintf("%q", *v)
		}
	}
	return strings.Join(parts, " | ")
}

func pgRun(t *testing.T, ctx context.Context, conn *pgconn.PgConn, sql string) runResult {
	t.Helper()
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return runResult{err: pe.Code + ": " + pe.Message}
		}
		t.Fatalf("%s: %v", sql, err)
	}
	var out runResult
	for _, r := range res {
		for _, row := range r.Rows {
			vals := make([]*string, len(row))
			for i, b := range row {
				if b != nil {
					s := string(b)
					vals[i] = &s
				}
			}
			out.rows = append(out.rows, rowText(vals))
		}
	}
	return out
}

func rsRun(ctx context.Context, db *rockstream.DB, sql string) runResult {
	res, err := db.Exec(ctx, sql)
	if err != nil {
		return runResult{err: errs.SQLState(err) + ": " + err.Error()}
	}
	var out runResult
	for _, row := range res.Rows {
		out.rows = append(out.rows, rowText(row))
	}
	return out
}
