package runtime

import "testing"

// TestSavepointsAndViews: a materialized view read inside a block follows
// the block back to a savepoint, and after COMMIT equals its query. (The
// statements' results and errors are compared with PostgreSQL in
// internal/gateway/testdata/messages/savepoints.txt.)
func TestSavepointsAndViews(t *testing.T) {
	eng, block, other := deferredSetup(t)
	mustExec(t, block, "BEGIN")
	mustExec(t, block, "INSERT INTO t VALUES (1, 10)") // deferred
	mustExec(t, block, "SAVEPOINT a")                  // takes the token
	mustExec(t, block, "INSERT INTO t VALUES (2, 20)")
	if got := line(t, block, "SELECT * FROM total"); got != "2 | 30\n" {
		t.Fatalf("in the block: %q", got)
	}
	mustExec(t, block, "SAVEPOINT b")
	mustExec(t, block, "UPDATE t SET v = v * 100")
	if got := line(t, block, "SELECT * FROM total"); got != "2 | 3000\n" {
		t.Fatalf("in the block: %q", got)
	}
	mustExec(t, block, "ROLLBACK TO b")
	if got := line(t, block, "SELECT * FROM total"); got != "2 | 30\n" {
		t.Fatalf("after ROLLBACK TO b: %q", got)
	}
	mustExec(t, block, "ROLLBACK TO a")
	if got := line(t, block, "SELECT * FROM total"); got != "1 | 10\n" {
		t.Fatalf("after ROLLBACK TO a: %q", got)
	}
	mustExec(t, block, "INSERT INTO t VALUES (3, 30)")
	mustExec(t, block, "RELEASE a")
	mustExec(t, block, "COMMIT")
	if got := line(t, other, "SELECT * FROM total"); got != "2 | 40\n" {
		t.Fatalf("after COMMIT: %q", got)
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	// The write token is free again.
	meanwhile(t, other, "DELETE FROM t WHERE k = 3")
}
