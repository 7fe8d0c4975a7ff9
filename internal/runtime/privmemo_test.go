package runtime

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/internal/types"
)

// TestPrivilegeMemoFollowsCommits: a session that keeps its role's
// privileges between executions (privmemo.go) sees every change another
// session commits at its next execution, prepared or not: a revoked
// grant, a membership, a superuser attribute given and taken back, a
// role dropped and created again; and a change of its own block before it commits.
func TestPrivilegeMemoFollowsCommits(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	admin := eng.NewSession()
	runAll(t, admin, []string{
		"CREATE ROLE bob LOGIN", "CREATE ROLE readers NOLOGIN",
		"CREATE TABLE t (id bigint PRIMARY KEY, x int)", "INSERT INTO t VALUES (1, 10), (2, 20)",
		"CREATE MATERIALIZED VIEW v AS SELECT id, sum(x) AS s FROM t GROUP BY id",
		"GRANT SELECT ON v TO bob",
	})
	bob := asRole(eng, "bob")
	defer bob.Close()
	p, err := bob.Prepare("SELECT s FROM v WHERE id = $1", nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func() error {
		_, err := bob.ExecPrepared(ctx, p, []types.Value{types.MakeInt(types.Int8, 1)})
		return err
	}
	const denied = "permission denied for materialized view v"
	wantDenied := func(step string) {
		t.Helper()
		err := read()
		if err == nil || err.Error() != denied {
			t.Fatalf("%s: prepared read: got %v, want %q", step, err, denied)
		}
		expectDenied(t, bob, "SELECT s FROM v WHERE id = 2", denied)
	}
	wantAllowed := func(step string) {
		t.Helper()
		if err := read(); err != nil {
			t.Fatalf("%s: prepared read: %v", step, err)
		}
		if got := formatRows(mustExec(t, bob, "SELECT s FROM v WHERE id = 2")); got != "20\n" {
			t.Fatalf("%s: read %q", step, got)
		}
	}
	wantAllowed("granted")
	wantAllowed("granted, again") // from the memo
	runAll(t, admin, []string{"REVOKE SELECT ON v FROM bob"})
	wantDenied("revoked")
	runAll(t, admin, []string{"GRANT SELECT ON v TO readers"})
	wantDenied("granted to a role bob is not a member of")
	runAll(t, admin, []string{"GRANT readers TO bob"})
	wantAllowed("member of readers")
	runAll(t, admin, []string{"REVOKE readers FROM bob"})
	wantDenied("membership revoked")
	runAll(t, admin, []string{"ALTER ROLE bob SUPERUSER"})
	wantAllowed("superuser")
	runAll(t, admin, []string{"ALTER ROLE bob NOSUPERUSER"})
	wantDenied("superuser no longer")

	// A block's own grant applies to its statements before it commits
	// and not after it rolls back.
	runAll(t, admin, []string{"ALTER ROLE bob CREATEROLE", "CREATE ROLE helper NOLOGIN", "GRANT SELECT ON v TO helper WITH GRANT OPTION", "GRANT helper TO bob"})
	wantAllowed("member of helper")
	runAll(t, bob, []string{"BEGIN", "REVOKE helper FROM bob"})
	if err := read(); err == nil || err.Error() != denied {
		t.Fatalf("after its own block's REVOKE: got %v, want %q", err, denied)
	}
	runAll(t, bob, []string{"ROLLBACK"})
	wantAllowed("block rolled back")

	// A role dropped and created again starts with nothing.
	runAll(t, admin, []string{"REVOKE helper FROM bob", "REVOKE SELECT ON v FROM helper", "DROP ROLE helper", "GRANT SELECT ON v TO bob"})
	wantAllowed("granted again")
	runAll(t, admin, []string{"REVOKE SELECT ON v FROM bob", "DROP ROLE bob", "CREATE ROLE bob LOGIN"})
	wantDenied("created again")
}
