package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestUniqueIndexWritePaths checks every write path of a table against
// its unique index, on one worker and on three (writes split by bucket):
// a second row with a key fails with PostgreSQL's message and detail,
// the failed statement changes nothing, and the index stays in step.
// The oracle script unique_indexes.sql compares the SQL paths with
// PostgreSQL; this test adds the messages, COPY, the ingest API (the
// connectors' path) and a restart.
func TestUniqueIndexWritePaths(t *testing.T) {
	ctx := context.Background()
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			st := NewMemoryStore()
			eng, err := Open(st, Options{Workers: workers, ParallelMinRows: 1})
			if err != nil {
				t.Fatal(err)
			}
			s := eng.NewSession()
			execAll(t, s,
				"CREATE TABLE t (id int PRIMARY KEY, email text, n int)",
				"CREATE MATERIALIZED VIEW c AS SELECT count(*) AS rows FROM t",
				"INSERT INTO t SELECT i, 'e' || i, i % 3 FROM generate_series(1, 30) i",
				"CREATE UNIQUE INDEX t_email ON t (email)",
				"CREATE UNIQUE INDEX t_nn ON t (n, email) NULLS NOT DISTINCT",
			)
			fails := func(step, msg, detail string, run func() error) {
				t.Helper()
				err := run()
				var e *errs.Error
				if !errors.As(err, &e) || errs.SQLState(err) != "23505" || e.Message != msg || e.Detail != detail {
					t.Fatalf("%s: %v (detail %q), want 23505 %s / %s", step, err, detailOf(err), msg, detail)
				}
				if err := eng.VerifyIndexes(); err != nil {
					t.Fatalf("after %s: %v", step, err)
				}
				if got := strings.TrimSpace(rowsOf(t, s, "SELECT rows FROM c")); got != "30" {
					t.Fatalf("after %s: the view counts %s rows", step, got)
				}
			}
			exec := func(q string) func() error {
				return func() error { _, err := s.Exec(ctx, q, nil); return err }
			}
			dup := `duplicate key value violates unique constraint "t_email"`
			fails("INSERT", dup, "Key (email)=(e7) already exists.", exec("INSERT INTO t VALUES (100, 'e7', 0)"))
			fails("INSERT of two rows", dup, "Key (email)=(x) already exists.", exec("INSERT INTO t VALUES (100, 'x', 0), (101, 'x', 0)"))
			fails("UPDATE", dup, "Key (email)=(e1) already exists.", exec("UPDATE t SET email = 'e1' WHERE id = 2"))
			fails("COPY", dup, "Key (email)=(e3) already exists.", func() error {
				res, err := s.Exec(ctx, "COPY t FROM STDIN", nil)
				if err == nil {
					_, err = s.CopyFrom(ctx, res.CopyIn, strings.NewReader("200\tnew\t1\n201\te3\t1\n"))
				}
				return err
			})
			fails("Ingest", dup, "Key (email)=(e4) already exists.", func() error {
				_, err := eng.Ingest(ctx, &Ingest{Changes: []RowChange{
					{Table: "t", Op: Upsert, Row: zset.Row{types.MakeInt(types.Int4, 300), types.MakeText("e4"), types.MakeInt(types.Int4, 1)}},
				}})
				return err
			})
			// NULLS NOT DISTINCT: a second (NULL, NULL) is a duplicate;
			// t_email lets NULLs be.
			execAll(t, s, "INSERT INTO t VALUES (300, NULL, NULL)")
			_, err = s.Exec(ctx, "INSERT INTO t VALUES (301, NULL, NULL)", nil)
			if errs.SQLState(err) != "23505" || !strings.Contains(err.Error(), `"t_nn"`) || detailOf(err) != "Key (n, email)=(null, null) already exists." {
				t.Fatalf("NULLS NOT DISTINCT: %v (detail %q)", err, detailOf(err))
			}
			execAll(t, s, "DELETE FROM t WHERE id = 300")
			// A swap of two keys in one statement leaves no duplicate.
			execAll(t, s, "UPDATE t SET email = CASE id WHEN 1 THEN 'e2' ELSE 'e1' END WHERE id IN (1, 2)")
			if got := strings.TrimSpace(rowsOf(t, s, "SELECT id FROM t WHERE email = 'e1'")); got != "2" {
				t.Fatalf("after the swap, e1 is %s's", got)
			}
			_, err = s.Exec(ctx, "CREATE UNIQUE INDEX t_n ON t (n)", nil)
			var e *errs.Error
			if !errors.As(err, &e) || e.Message != `could not create unique index "t_n"` || !strings.HasPrefix(e.Detail, "Key (n)=(") || !strings.HasSuffix(e.Detail, ") is duplicated.") {
				t.Fatalf("CREATE UNIQUE INDEX over duplicates: %v (detail %q)", err, detailOf(err))
			}
			s.Close()
			if err := eng.Close(); err != nil {
				t.Fatal(err)
			}

			// After a restart the index is still unique.
			eng, err = Open(st, Options{Workers: workers, ParallelMinRows: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			s = eng.NewSession()
			if err := eng.VerifyIndexes(); err != nil {
				t.Fatal(err)
			}
			fails("INSERT after restart", dup, "Key (email)=(e9) already exists.", exec("INSERT INTO t VALUES (100, 'e9', 0)"))
			if got := strings.TrimSpace(rowsOf(t, s, "SELECT indexdef FROM pg_indexes WHERE indexname = 't_nn'")); got != "CREATE UNIQUE INDEX t_nn ON public.t USING btree (n, email) NULLS NOT DISTINCT" {
				t.Fatalf("pg_indexes after restart: %s", got)
			}
		})
	}
}

func detailOf(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return ""
}
