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
