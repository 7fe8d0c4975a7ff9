package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// deferredSetup opens an engine with a keyed table, a view over it, and
// two sessions: one for a transaction block, one for other writers.
func deferredSetup(t *testing.T) (eng *Engine, block, other *Session) {
	t.Helper()
	eng = OpenMemory()
	block, other = eng.NewSession(), eng.NewSession()
	t.Cleanup(func() {
		block.Close() // rolls back a block a failed test left open
		other.Close()
		eng.Close()
	})
	mustExec(t, other, "CREATE TABLE t (k int PRIMARY KEY, v int NOT NULL)")
	mustExec(t, other, "CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(v) AS s FROM t")
	return eng, block, other
}

func wantState(t *testing.T, err error, state string) {
	t.Helper()
	if got := errs.SQLState(err); got != state {
		t.Fatalf("error %v (SQLSTATE %s), want SQLSTATE %s", err, got, state)
	}
}

// meanwhile runs a statement of another session while a block is open;
// it fails the test, rather than hang, if the block makes it wait.
func meanwhile(t *testing.T, s *Session, q string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.Exec(ctx, q, nil); err != nil {
		t.Fatalf("%s while a block is open: %v", q, err)
	}
}

// wantLine fails the test unless the first row of q is want; when says
// when the check is made.
func wantLine(t *testing.T, s *Session, q, want, when string) {
	t.Helper()
	if got := rowLine(mustExec(t, s, q).Rows[0], nil); got != want {
		t.Fatalf("%s: %s = %q, want %q", when, q, got, want)
	}
}

// TestDeferredInsertsLetOthersWrite: a block of INSERTs holds no write
// token, so another session's write commits while the block is open; the
// block's rows are invisible to it until COMMIT, which applies them in one
// epoch with the views following.
func TestDeferredInsertsLetOthersWrite(t *testing.T) {
	eng, block, other := deferredSetup(t)
	mustExec(t, block, "BEGIN")
	res := mustExec(t, block, "INSERT INTO t VALUES (1, 10), (2, 20) RETURNING k")
	if res.Tag != "INSERT 0 2" || len(res.Rows) != 2 {
		t.Fatalf("INSERT in the block: %s %v", res.Tag, res.Rows)
	}
	mustExec(t, block, "INSERT INTO t (k, v) VALUES (3, 30)")

	done := make(chan error, 1)
	go func() {
		_, err := other.Exec(context.Background(), "INSERT INTO t VALUES (100, 1)", nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		mustExec(t, block, "ROLLBACK") // lets the waiting INSERT through
		<-done
		t.Fatal("another session's INSERT waited for the open block")
	}
	wantLine(t, other, "SELECT * FROM total", "1 | 1\n", "another session sees")
	before := eng.Epoch()
	mustExec(t, block, "COMMIT")
	if got := eng.Epoch(); got != before+1 {
		t.Errorf("COMMIT took epochs %d..%d, want one", before, got)
	}
	wantLine(t, other, "SELECT * FROM total", "4 | 61\n", "after COMMIT")
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestDeferredReadsOwnWrites: a read in the block sees the block's rows,
// in the table and through the views.
func TestDeferredReadsOwnWrites(t *testing.T) {
	_, block, other := deferredSetup(t)
	mustExec(t, other, "INSERT INTO t VALUES (1, 10)")
	mustExec(t, block, "BEGIN")
	mustExec(t, block, "INSERT INTO t VALUES (2, 20)")
	wantLine(t, block, "SELECT * FROM total", "2 | 30\n", "the block reads")
	mustExec(t, block, "INSERT INTO t VALUES (3, 30)")
	mustExec(t, block, "UPDATE t SET v = v + 1 WHERE k = 1")
	wantLine(t, block, "SELECT count(*), sum(v) FROM t", "3 | 61\n", "the block reads")
	mustExec(t, block, "COMMIT")
	wantLine(t, other, "SELECT * FROM total", "3 | 61\n", "after COMMIT")
}

// TestDeferredErrorsAtTheStatement: what the block can know when a
// statement runs fails that statement, as in PostgreSQL: a duplicate key
// within the block or with a committed row, a NOT NULL violation.
func TestDeferredErrorsAtTheStatement(t *testing.T) {
	_, block, other := deferredSetup(t)
	mustExec(t, other, "INSERT INTO t VALUES (5, 50)")
	for _, c := range []struct{ q, state string }{
		{"INSERT INTO t VALUES (1, 1), (1, 2)", "23505"},
		{"INSERT INTO t VALUES (5, 1)", "23505"},
		{"INSERT INTO t VALUES (6, NULL)", "23502"},
	} {
		mustExec(t, block, "BEGIN")
		mustExec(t, block, "INSERT INTO t VALUES (9, 9)")
		_, err := block.Exec(context.Background(), c.q, nil)
		wantState(t, err, c.state)
		_, err = block.Exec(context.Background(), "INSERT INTO t VALUES (10, 10)", nil)
		wantState(t, err, "25P02")
		if tag := mustExec(t, block, "COMMIT").Tag; tag != "ROLLBACK" {
			t.Fatalf("COMMIT of the failed block: %s", tag)
		}
	}
	wantLine(t, other, "SELECT * FROM total", "1 | 50\n", "after the failed blocks")
}

// TestDeferredConflictsAtCommit: a key another session commits after the
// block inserted it fails the block where its rows are applied — COMMIT,
// or the first statement that needs the write token — and nothing of the
// block is applied; a table dropped or replaced in between fails it too.
func TestDeferredConflictsAtCommit(t *testing.T) {
	eng, block, other := deferredSetup(t)
	mustExec(t, block, "BEGIN")
	mustExec(t, block, "INSERT INTO t VALUES (1, 1), (7, 7)")
	meanwhile(t, other, "INSERT INTO t VALUES (7, 70)")
	_, err := block.Exec(context.Background(), "COMMIT", nil)
	wantState(t, err, "23505")

	mustExec(t, block, "BEGIN")
	mustExec(t, block, "INSERT INTO t VALUES (8, 8)")
	meanwhile(t, other, "INSERT INTO t VALUES (8, 80)")
	_, err = block.Exec(context.Background(), "SELECT * FROM t", nil)
	wantState(t, err, "23505")
	mustExec(t, block, "ROLLBACK")
	wantLine(t, other, "SELECT * FROM total", "2 | 150\n", "after the conflicts")

	mustExec(t, other, "CREATE TABLE u (x int)")
	mustExec(t, block, "BEGIN")
	mustExec(t, block, "INSERT INTO u VALUES (1)")
	meanwhile(t, other, "DROP TABLE u")
	_, err = block.Exec(context.Background(), "COMMIT", nil)
	wantState(t, err, "42P01")

	mustExec(t, other, "CREATE TABLE u (x int)")
	mustExec(t, block, "BEGIN")
	mustExec(t, block, "INSERT INTO u VALUES (1)")
	meanwhile(t, other, "DROP TABLE u")
	meanwhile(t, other, "CREATE TABLE u (x int)")
	_, err = block.Exec(context.Background(), "COMMIT", nil)
	wantState(t, err, "40001")
	wantLine(t, other, "SELECT count(*) FROM u", "0\n", "the new table u holds")
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestDeferredRollback: ROLLBACK forgets the block's rows.
func TestDeferredRollback(t *testing.T) {
	_, block, other := deferredSetup(t)
	mustExec(t, block, "BEGIN")
	mustExec(t, block, "INSERT INTO t VALUES (1, 1)")
	mustExec(t, block, "ROLLBACK")
	mustExec(t, block, "INSERT INTO t VALUES (1, 2)")
	wantLine(t, other, "SELECT * FROM total", "1 | 2\n", "after ROLLBACK and an insert")
}
