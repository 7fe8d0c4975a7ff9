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
	wantLine(t, block, "SELECT * FROM total", "2 | 30\n", "in the block")
	mustExec(t, block, "SAVEPOINT b")
	mustExec(t, block, "UPDATE t SET v = v * 100")
	wantLine(t, block, "SELECT * FROM total", "2 | 3000\n", "in the block")
	mustExec(t, block, "ROLLBACK TO b")
	wantLine(t, block, "SELECT * FROM total", "2 | 30\n", "after ROLLBACK TO b")
	mustExec(t, block, "ROLLBACK TO a")
	wantLine(t, block, "SELECT * FROM total", "1 | 10\n", "after ROLLBACK TO a")
	mustExec(t, block, "INSERT INTO t VALUES (3, 30)")
	mustExec(t, block, "RELEASE a")
	mustExec(t, block, "COMMIT")
	wantLine(t, other, "SELECT * FROM total", "2 | 40\n", "after COMMIT")
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	// The write token is free again.
	meanwhile(t, other, "DELETE FROM t WHERE k = 3")
}
