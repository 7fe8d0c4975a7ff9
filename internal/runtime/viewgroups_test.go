package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestViewsStepConcurrently checks that on two workers the views of one
// group step at the same time: the first view's step waits until the
// second's has started, which it could not on one goroutine. A view
// reading another steps after it, in a later group.
func TestViewsStepConcurrently(t *testing.T) {
	ctx := context.Background()
	e, err := Open(NewMemoryStore(), Options{Workers: 2, ParallelMinRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession()
	for _, q := range []string{
		"CREATE TABLE t (k int, v int)",
		"CREATE MATERIALIZED VIEW a AS SELECT k, sum(v) FROM t GROUP BY k",
		"CREATE MATERIALIZED VIEW b AS SELECT count(*) FROM t",
		"CREATE MATERIALIZED VIEW c AS SELECT count(*) FROM a",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	bStarted := make(chan struct{})
	var order []string
	testHookStepView = func(view string) {
		switch view {
		case "a":
			select {
			case <-bStarted:
			case <-time.After(10 * time.Second):
				t.Error("view a stepped alone: b did not start while a was stepping")
			}
		case "b":
			close(bStarted)
		case "c":
			order = append(order, view) // after the group of a and b
		}
	}
	defer func() { testHookStepView = nil }()
	if _, err := s.Exec(ctx, "INSERT INTO t VALUES (1, 10), (2, 20), (1, 5)", nil); err != nil {
		t.Fatal(err)
	}
	testHookStepView = nil
	if len(order) != 1 {
		t.Fatalf("view c stepped %d times, want 1", len(order))
	}
	if got := rowsOf(t, s, "SELECT (SELECT count FROM b), (SELECT count FROM c), (SELECT sum FROM a WHERE k = 1)"); got != "3|2|15\n" {
		t.Fatalf("views after the insert: %q, want 3|2|15", got)
	}
	if err := e.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentViewsFailLikeOne checks that when views of one group
// fail, the statement fails with the error of the first failing view in
// creation order, as on one worker, whichever finishes first, and that
// nothing of the group's steps is left: the stores of one and two workers
// stay identical. A panic in a view stepping on another goroutine is the
// statement's internal error, not the end of the process. The Unsplit
// form writes tables beside their views' steps (tablebeside.go): an
// error of the write (a duplicate key) comes before the views'.
func TestConcurrentViewsFailLikeOne(t *testing.T) { concurrentViewsFailLikeOne(t, 1) }

func TestConcurrentViewsFailLikeOneUnsplit(t *testing.T) {
	defer func(v, b int) { viewsMinRows, besideMinRows = v, b }(viewsMinRows, besideMinRows)
	viewsMinRows, besideMinRows = 1, 1
	concurrentViewsFailLikeOne(t, 1<<30)
}

func concurrentViewsFailLikeOne(t *testing.T, minRows int) {
	ctx := context.Background()
	counts := []int{1, 2, 3}
	var engines []*Engine
	var sessions []*Session
	for _, n := range counts {
		e, err := Open(NewMemoryStore(), Options{Workers: n, ParallelMinRows: minRows})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		engines = append(engines, e)
		sessions = append(sessions, e.NewSession())
	}
	exec := func(q string) string {
		t.Helper()
		var first string
		for i, s := range sessions {
			res, err := s.Exec(ctx, q, nil)
			got := fmt.Sprintf("%s %v", errs.SQLState(err), err)
			if err == nil {
				got = fmt.Sprintf("%s %v", res.Tag, res.Rows)
			}
			if i == 0 {
				first = got
			} else if got != first {
				t.Fatalf("%s\non %d workers: %s\non 1 worker: %s", q, counts[i], got, first)
			}
		}
		want := dumpStore(t, engines[0])
		for i, e := range engines[1:] {
			if got := dumpStore(t, e); got != want {
				t.Fatalf("after %s\nthe store on %d workers differs from the store on 1:\n%s", q, counts[i+1], firstDifference(want, got))
			}
		}
		return first
	}
	exec("CREATE TABLE t (k int, v int, s text)")
	exec("CREATE MATERIALIZED VIEW ok1 AS SELECT k, count(*) FROM t GROUP BY k")
	exec("CREATE MATERIALIZED VIEW divides AS SELECT k, 100 / v AS q FROM t")
	exec("CREATE MATERIALIZED VIEW casts AS SELECT k, s::int AS n FROM t")
	exec("CREATE MATERIALIZED VIEW ok2 AS SELECT sum(v) FROM t")
	exec("INSERT INTO t VALUES (1, 4, '7'), (2, 5, '8')")
	// Both failing views fail; the first in creation order names the error.
	if got := exec("INSERT INTO t VALUES (3, 0, 'x'), (4, 1, '9')"); !strings.Contains(got, "division by zero") {
		t.Fatalf("two failing views: %s, want the first's division by zero", got)
	}
	// Only the later one fails.
	if got := exec("INSERT INTO t VALUES (5, 2, 'y')"); !strings.Contains(got, "invalid input syntax") {
		t.Fatalf("the later view failing: %s, want its invalid input", got)
	}
	exec("INSERT INTO t VALUES (6, 3, '10')")
	exec("SELECT * FROM ok1, ok2 ORDER BY k")

	exec("CREATE TABLE p (id int PRIMARY KEY, v int)")
	exec("CREATE MATERIALIZED VIEW pdiv AS SELECT id, 10 / v AS q FROM p")
	exec("CREATE MATERIALIZED VIEW pcount AS SELECT count(*) FROM p")
	exec("INSERT INTO p VALUES (1, 1), (2, 2)")
	// The duplicate key, found by the table's write, comes before the
	// view's division by zero.
	if got := exec("INSERT INTO p VALUES (3, 0), (1, 5)"); !strings.Contains(got, "duplicate key") {
		t.Fatalf("a duplicate key and a failing view: %s, want the duplicate key", got)
	}
	if got := exec("INSERT INTO p VALUES (3, 0), (4, 5)"); !strings.Contains(got, "division by zero") {
		t.Fatalf("a failing view: %s, want its division by zero", got)
	}
	exec("INSERT INTO p VALUES (3, 3), (4, 4)")
	exec("UPDATE p SET v = v + 1 WHERE id > 2")
	if got := exec("UPDATE p SET v = v - 1 WHERE id = 1"); !strings.Contains(got, "division by zero") {
		t.Fatalf("an update failing a view: %s, want its division by zero", got)
	}
	exec("SELECT * FROM p, pcount ORDER BY id")

	// A panic in any of the group's views fails the statement alone.
	for _, view := range []string{"ok1", "ok2"} {
		testHookStepView = func(v string) {
			if v == view {
				var xs []int
				_ = xs[len(v)]
			}
		}
		for i, s := range sessions {
			_, err := s.Exec(ctx, "INSERT INTO t VALUES (7, 7, '7')", nil)
			if errs.SQLState(err) != "XX000" || !strings.Contains(err.Error(), "index out of range") {
				t.Fatalf("a panic in view %s on %d workers: %v, want XX000", view, counts[i], err)
			}
		}
		testHookStepView = nil
	}
	exec("INSERT INTO t VALUES (8, 8, '8')")
	for _, e := range engines {
		if err := e.VerifyViews(); err != nil {
			t.Fatal(err)
		}
	}
}
