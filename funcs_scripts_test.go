package rockstream_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
)

// TestFunctionScriptsAcrossRestarts runs the function scripts of the
// PostgreSQL oracle (internal/oracle/testdata), which check the results
// of an in-memory instance against PostgreSQL, on a durable instance that
// is closed and reopened after every statement, and demands the same
// outcome of every statement and the same contents of every view as in
// memory: the state of string_agg's arrangements, of the variance
// family's sums and of jsonb values (rows, keys, ordered aggregates)
// survives recovery exactly.
func TestFunctionScriptsAcrossRestarts(t *testing.T) {
	for _, name := range []string{"functions", "string_agg", "regex_functions", "bytea_functions", "trig_bitwise", "jsonb"} {
		t.Run(name, func(t *testing.T) {
			script, err := os.ReadFile("internal/oracle/testdata/" + name + ".sql")
			if err != nil {
				t.Fatal(err)
			}
			stmts, err := rockstream.SplitStatements(string(script))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			mem, err := rockstream.Open(rockstream.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			opts := rockstream.Options{Storage: t.TempDir(), Relaxed: true}
			disk, err := rockstream.Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { disk.Close() }()
			var views []string
			for _, stmt := range stmts {
				if m := createMatView.FindStringSubmatch(stmt); m != nil {
					views = append(views, m[1])
				}
				want, got := runText(ctx, mem, stmt), runText(ctx, disk, stmt)
				if got != want {
					t.Fatalf("%s\n durable: %s\nin memory: %s", stmt, got, want)
				}
				if err := disk.Close(); err != nil {
					t.Fatal(err)
				}
				if disk, err = rockstream.Open(opts); err != nil {
					t.Fatal(err)
				}
				for _, v := range views {
					want, got := runText(ctx, mem, "SELECT * FROM "+v), runText(ctx, disk, "SELECT * FROM "+v)
					if got != want {
						t.Fatalf("after %s\nview %s after restart:\n%s\nin memory:\n%s", stmt, v, got, want)
					}
				}
				if err := disk.VerifyViews(); err != nil {
					t.Fatalf("after %s: %v", stmt, err)
				}
			}
			if len(views) == 0 {
				t.Fatal("the script creates no materialized view")
			}
		})
	}
}

var createMatView = regexp.MustCompile(`(?is)^(?:\s*--[^\n]*\n)*\s*CREATE\s+MATERIALIZED\s+VIEW\s+(\w+)`)

// runText runs a statement and renders its outcome: the error, or the rows
// sorted.
func runText(ctx context.Context, db *rockstream.DB, sql string) string {
	res, err := db.Exec(ctx, sql)
	if err != nil {
		return "ERROR " + errs.SQLState(err) + ": " + err.Error()
	}
	rows := make([]string, len(res.Rows))
	for i, row := range res.Rows {
		parts := make([]string, len(row))
		for j, v := range row {
			if v == nil {
				parts[j] = "NULL"
			} else {
				parts[j] = fmt.Sprintf("%q", *v)
			}
		}
		rows[i] = strings.Join(parts, " | ")
	}
	sort.Strings(rows)
	return res.Tag + "\n" + strings.Join(rows, "\n")
}
