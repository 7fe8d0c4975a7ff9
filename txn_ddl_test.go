package rockstream_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
)

// TestTransactionalDDLSurvivesRestart runs DDL inside transaction blocks
// and multi-statement strings on a durable instance, reopens it, and
// checks that exactly the committed catalog changes came back: a block's
// tables and views with the block's rows, nothing of a block rolled back,
// and views still maintained after the restart.
func TestTransactionalDDLSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := rockstream.Open(rockstream.Options{Storage: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := db.Session()
	must := func(s *rockstream.Session, sql string) string {
		t.Helper()
		var out []string
		err := s.ExecEach(ctx, sql, func(r *rockstream.Result) error {
			out = append(out, r.Tag)
			for _, row := range r.Rows {
				var vals []string
				for _, v := range row {
					vals = append(vals, *v)
				}
				out = append(out, strings.Join(vals, ","))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return strings.Join(out, " ")
	}
	must(s, "BEGIN; CREATE TABLE t (g int, x int); INSERT INTO t VALUES (1, 10), (2, 20)")
	must(s, "CREATE MATERIALIZED VIEW sums AS SELECT g, sum(x) AS s FROM t GROUP BY g; INSERT INTO t VALUES (1, 1); COMMIT")
	must(s, "BEGIN; CREATE TABLE gone (a int); CREATE MATERIALIZED VIEW gone_v AS SELECT count(*) AS n FROM gone; DROP MATERIALIZED VIEW sums; ROLLBACK")
	if _, err := s.Exec(ctx, "CREATE TABLE gone2 (a int); INSERT INTO gone2 VALUES (1); SELECT 1/0"); errs.SQLState(err) != "22012" {
		t.Fatalf("failing string: got %v", err)
	}
	must(s, "CREATE TABLE u (a int); CREATE MATERIALIZED VIEW un AS SELECT count(*) AS n FROM u; INSERT INTO u VALUES (7), (8)")
	epoch := db.Epoch()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = rockstream.Open(rockstream.Options{Storage: dir})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if db.Epoch() != epoch {
		t.Fatalf("epoch after reopen = %d, want %d", db.Epoch(), epoch)
	}
	s = db.Session()
	defer s.Close()
	if got, want := must(s, "SELECT * FROM sums ORDER BY g"), "SELECT 2 1,11 2,20"; got != want {
		t.Errorf("sums after reopen: got %q, want %q", got, want)
	}
	if got, want := must(s, "SELECT * FROM un"), "SELECT 1 2"; got != want {
		t.Errorf("un after reopen: got %q, want %q", got, want)
	}
	for _, name := range []string{"gone", "gone_v", "gone2"} {
		if _, err := s.Exec(ctx, "SELECT * FROM "+name); errs.SQLState(err) != "42P01" {
			t.Errorf("%s after reopen: got %v, want 42P01", name, err)
		}
	}
	must(s, "INSERT INTO t VALUES (2, 2); INSERT INTO u VALUES (9)")
	if got, want := must(s, "SELECT * FROM sums ORDER BY g; SELECT * FROM un"), "SELECT 2 1,11 2,22 SELECT 1 3"; got != want {
		t.Errorf("views maintained after reopen: got %q, want %q", got, want)
	}
	if err := db.VerifyViews(); err != nil {
		t.Error(err)
	}
}

// TestExecStringIsOneTransaction checks the embedded API's handling of a
// string of several statements: one transaction up to the first error,
// which it reports with its position in the whole string.
func TestExecStringIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, "CREATE TABLE t (a int)"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(ctx, "INSERT INTO t VALUES (1);\nSELECT nope FROM t; INSERT INTO t VALUES (2)")
	var e *errs.Error
	if !errors.As(err, &e) || e.SQLState != "42703" || e.Position != 34 {
		t.Fatalf("got %#v, want 42703 at position 34", err)
	}
	s := db.Session()
	defer s.Close()
	var notices []string
	s.OnNotice(func(n rockstream.Notice) { notices = append(notices, n.Severity+" "+n.SQLState+" "+n.Message) })
	res, err := s.Exec(ctx, "INSERT INTO t VALUES (3); COMMIT; SELECT count(*) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if *res.Rows[0][0] != "1" {
		t.Errorf("count = %s, want 1: the failed string left rows behind", *res.Rows[0][0])
	}
	if len(notices) != 1 || notices[0] != "WARNING 25P01 there is no transaction in progress" {
		t.Errorf("notices = %q", notices)
	}
	// BEGIN in a string opens a block that outlives it.
	if _, err := s.Exec(ctx, "INSERT INTO t VALUES (4); BEGIN; INSERT INTO t VALUES (5)"); err != nil {
		t.Fatal(err)
	}
	other, err := db.Query(ctx, "SELECT count(*) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if *other.Rows[0][0] != "1" {
		t.Errorf("another session sees %s rows before COMMIT, want 1", *other.Rows[0][0])
	}
	if _, err := s.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	other, _ = db.Query(ctx, "SELECT count(*) FROM t")
	if *other.Rows[0][0] != "1" {
		t.Errorf("after ROLLBACK another session sees %s rows, want 1", *other.Rows[0][0])
	}
}
