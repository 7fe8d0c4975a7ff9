package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// TestStatementPanicIsAnError makes statements panic in the middle of
// their work (outside a block, and inside one after a write has taken the
// write token) and checks that each fails with XX000, naming the panic, while the
// engine and the session go on: the statement's writes are gone, the
// write token is free for another session, and a block the panic failed
// accepts only its end, as after any error.
func TestStatementPanicIsAnError(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	var seen []any
	eng.OnPanic(func(r any, stack []byte) {
		if !strings.Contains(string(stack), "TestStatementPanicIsAnError") {
			t.Errorf("the stack given to OnPanic does not show where the panic came from:\n%s", stack)
		}
		seen = append(seen, r)
	})
	testHookDispatch = func(s *Session, text string) {
		if strings.Contains(text, "boom") {
			// In a block, a write of the session's own first, so that
			// the panic leaves a write and the write token behind.
			if s.txn.Block() {
				if _, err := s.dispatch(ctx, "", ParseStatement("UPDATE t SET a = a + 100").tree.Stmts[0].Stmt, nil); err != nil {
					t.Errorf("update before the panic: %v", err)
				}
			}
			var xs []int
			_ = xs[len(text)]
		}
	}
	defer func() { testHookDispatch = nil }()

	s, other := eng.NewSession(), eng.NewSession()
	defer s.Close()
	defer other.Close()
	mustExec := func(s *Session, q string) *Result {
		t.Helper()
		res, err := s.Exec(ctx, q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return res
	}
	wantPanic := func(q string) {
		t.Helper()
		_, err := s.Exec(ctx, q, nil)
		var e *errs.Error
		if err == nil || !errors.As(err, &e) || e.SQLState != "XX000" || !strings.HasPrefix(e.Message, "internal error: runtime error: index out of range") {
			t.Fatalf("%s: got %v, want XX000 internal error: runtime error: index out of range", q, err)
		}
		if !strings.Contains(e.Detail, "panic in ") || !strings.Contains(e.Detail, "panics_test.go") {
			t.Errorf("%s: detail %q does not name where the panic was", q, e.Detail)
		}
	}
	sum := func() string {
		t.Helper()
		res := mustExec(other, "SELECT sum(a) FROM t")
		return types.Format(res.Rows[0][0], res.Columns[0].Type)
	}
	mustExec(s, "CREATE TABLE t (a int)")
	mustExec(s, "INSERT INTO t VALUES (1), (2)")

	// Outside a block: the statement's transaction rolls back.
	wantPanic("SELECT 'boom' FROM t")
	if got := sum(); got != "3" {
		t.Fatalf("sum after a panic outside a block = %s, want 3", got)
	}
	writeWithin := func(s *Session) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := s.Exec(c, "UPDATE t SET a = a + 1", nil); err != nil {
			t.Fatalf("a write after the panic: %v (the write token was not released?)", err)
		}
	}
	writeWithin(other)

	// Inside a block: the block fails, ROLLBACK ends it.
	mustExec(s, "BEGIN")
	mustExec(s, "INSERT INTO t VALUES (10)")
	wantPanic("SELECT 'boom'")
	if _, err := s.Exec(ctx, "SELECT 1", nil); errs.SQLState(err) != "25P02" {
		t.Fatalf("statement after a panic in a block: %v, want 25P02", err)
	}
	mustExec(s, "ROLLBACK")
	if got := sum(); got != "5" {
		t.Fatalf("sum after a rolled-back block = %s, want 5", got)
	}
	writeWithin(other)
	writeWithin(s)
	if got := sum(); got != "9" {
		t.Fatalf("sum = %s, want 9", got)
	}
	if len(seen) != 2 {
		t.Fatalf("OnPanic saw %d panics, want 2", len(seen))
	}
}
