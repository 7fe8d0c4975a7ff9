package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestInsertReportsFirstDuplicateRow checks that an INSERT whose rows
// repeat stored keys, or each other's, reports the first offending row in
// the statement's order, as PostgreSQL does, although the keys are looked
// up bucket by bucket: for every pair of stored keys p and q (their
// buckets fall in either order) the statement (new, p, new, q) reports p,
// and (new, new', new', p) reports new' (the repeat within the statement
// comes first). A failed statement writes nothing.
func TestInsertReportsFirstDuplicateRow(t *testing.T) {
	ctx := context.Background()
	s, mustExec := memorySession(t)
	mustExec("CREATE TABLE t (id int PRIMARY KEY, v int)")
	mustExec("INSERT INTO t SELECT i, i FROM generate_series(1, 12) i")
	fails := func(q string, key int) {
		t.Helper()
		_, err := s.Exec(ctx, q, nil)
		if want := fmt.Sprintf("Key (id)=(%d) already exists.", key); errs.SQLState(err) != "23505" || detailOf(err) != want {
			t.Fatalf("%s: %v (detail %q), want 23505 and %q", q, err, detailOf(err), want)
		}
	}
	for p := 1; p <= 12; p++ {
		for q := 1; q <= 12; q++ {
			if p != q {
				fails(fmt.Sprintf("INSERT INTO t VALUES (100, 0), (%d, 0), (101, 0), (%d, 0)", p, q), p)
			}
		}
		fails(fmt.Sprintf("INSERT INTO t VALUES (100, 0), (%d, 0), (%d, 0), (%d, 0)", 200+p, 200+p, p), 200+p)
		fails(fmt.Sprintf("INSERT INTO t VALUES (100, 0), (%d, 0), (%d, 0), (%d, 0)", p, 300+p, 300+p), p)
	}
	res, err := s.Exec(ctx, "SELECT count(*), max(id) FROM t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(formatRows(res)); got != "12|12" {
		t.Fatalf("after the failed INSERTs: count and max %s, want 12|12", got)
	}
	mustExec("INSERT INTO t SELECT i, i FROM generate_series(13, 1000) i")
	mustExec("INSERT INTO t VALUES (1001, 0), (1002, 0)")
	if res, err = s.Exec(ctx, "SELECT count(*), sum(id) FROM t", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(formatRows(res)); got != "1002|502503" {
		t.Fatalf("count and sum %s, want 1002|502503", got)
	}
}

// TestNewKeysRepeated: an INSERT without ON CONFLICT fails at the first
// row, in order, whose key an earlier row or a stored row holds, whether
// the rows come in key order (checked by that order) or out of it
// (hashed), on one worker and split between two, and writes nothing.
func TestNewKeysRepeated(t *testing.T) {
	for _, opts := range []Options{{Workers: 1}, {Workers: 2, ParallelMinRows: 2}} {
		e, err := Open(NewMemoryStore(), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s := e.NewSession()
		mustExec(t, s, "CREATE TABLE t (id int PRIMARY KEY, v text)")
		mustExec(t, s, "INSERT INTO t VALUES (100, 'stored'), (200, 'stored')")
		for _, c := range []struct{ values, dup string }{
			{"(1,'a'), (2,'b'), (3,'c'), (2,'again')", "2"},          // in order, then a repeat
			{"(1,'a'), (2,'b'), (3,'c'), (4,'d'), (1,'again')", "1"}, // a repeat of the first
			{"(3,'a'), (1,'b'), (2,'c'), (1,'again'), (3,'x')", "1"}, // out of order
			{"(1,'a'), (5,'b'), (4,'c'), (6,'d'), (5,'again')", "5"}, // out of order late, a repeat of the ordered part
			{"(1,'a'), (2,'b'), (100,'c'), (2,'again')", "100"},      // in order, a stored key first
			{"(7,'a'), (6,'b'), (200,'c'), (6,'again')", "200"},      // out of order, a stored key first
			{"(-3,'a'), (-2,'b'), (0,'c'), (-2,'again')", "-2"},      // negative keys in order
			{"(10,'a'), (20,'b'), (30,'c'), (40,'d'), (50,'e')", ""}, // in order, new
			{"(15,'a'), (12,'b'), (35,'c'), (11,'d'), (45,'e')", ""}, // out of order, new
		} {
			_, err := s.Exec(context.Background(), "INSERT INTO t VALUES "+c.values, nil)
			if c.dup == "" {
				if err != nil {
					t.Errorf("workers %d: %s: %v", opts.Workers, c.values, err)
				}
				continue
			}
			want := "Key (id)=(" + c.dup + ") already exists."
			if errs.CodeOf(err) != errs.UniqueViolation || err.(*errs.Error).Detail != want {
				t.Errorf("workers %d: %s: got %v, want 23505 with %q", opts.Workers, c.values, err, want)
			}
		}
		if got := mustExec(t, s, "SELECT count(*), sum(id) FROM t").Rows[0]; got[0].Int() != 12 || got[1].Int() != 300+150+118 {
			t.Errorf("workers %d: the table holds count, sum %v, want the 12 rows inserted", opts.Workers, got)
		}
	}
}
