package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
)

// asRole returns a session of eng whose client authenticated as role.
func asRole(eng *Engine, role string) *Session {
	s := eng.NewSession()
	_ = s.Set("session_authorization", role)
	s.SetClient(ClientInfo{User: role})
	return s
}

// expectDenied runs q in s and wants 42501 with message msg.
func expectDenied(t *testing.T, s *Session, q, msg string) {
	t.Helper()
	_, err := s.Exec(context.Background(), q, nil)
	var e *errs.Error
	if !asErr(err, &e) || e.SQLState != "42501" || e.Message != msg {
		t.Fatalf("%s: got %v, want 42501 %s", q, err, msg)
	}
}

func asErr(err error, e **errs.Error) bool {
	x, ok := err.(*errs.Error)
	if ok {
		*e = x
	}
	return ok
}

// TestPrivilegesDurable: owners, grants, memberships and role attributes
// are kept across a restart and by a checkpoint, and roll back with the
// transaction block that made them.
func TestPrivilegesDurable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(d string) *Engine {
		st, err := storage.Open(storage.Options{Dir: d, Logger: quietLog, EpochKey: FrontierKey()})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := Open(st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	eng := open(filepath.Join(dir, "db"))
	admin := eng.NewSession()
	runAll(t, admin, []string{
		"CREATE ROLE bob LOGIN", "CREATE ROLE readers NOLOGIN", "CREATE ROLE alice LOGIN CREATEROLE",
		"CREATE TABLE t (k int)", "INSERT INTO t VALUES (1)", "CREATE TABLE secret (k int)",
		"GRANT readers TO bob", "GRANT SELECT ON t TO readers",
		"GRANT CREATE ON SCHEMA public TO alice",
	})
	alice := asRole(eng, "alice")
	runAll(t, alice, []string{"CREATE TABLE mine (k int)", "INSERT INTO mine VALUES (5)"})
	// A block's GRANT rolls back with it.
	runAll(t, admin, []string{"BEGIN", "GRANT SELECT ON secret TO bob", "ROLLBACK"})
	check := func(eng *Engine) {
		t.Helper()
		bob := asRole(eng, "bob")
		defer bob.Close()
		if got := formatRows(mustExec(t, bob, "SELECT k FROM t")); got != "1\n" {
			t.Fatalf("bob reads t: %q", got)
		}
		expectDenied(t, bob, "SELECT * FROM secret", "permission denied for table secret")
		expectDenied(t, bob, "SELECT * FROM mine", "permission denied for table mine")
		expectDenied(t, bob, "DROP TABLE mine", "must be owner of table mine")
		alice := asRole(eng, "alice")
		defer alice.Close()
		mustExec(t, alice, "SELECT * FROM mine")
		expectDenied(t, alice, "CREATE ROLE eve SUPERUSER", "must be superuser to create superusers")
	}
	check(eng)
	url := "file://" + filepath.Join(dir, "bucket")
	if _, err := eng.Checkpoint(ctx, url, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng = open(filepath.Join(dir, "db"))
	check(eng)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(dir, "restored")
	if err := storage.RestoreCheckpoint(ctx, url, restored, nil); err != nil {
		t.Fatal(err)
	}
	eng = open(restored)
	defer eng.Close()
	check(eng)
}

// TestSuperuserSessionsUnchanged: a session whose user is not a role of
// the catalog (an embedded session, a configured user) is a superuser, as
// before roles had privileges, and a store's objects without an owner
// record belong to the bootstrap superuser.
func TestSuperuserSessionsUnchanged(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := asRole(eng, "configured")
	runAll(t, s, []string{"CREATE TABLE t (k int)", "INSERT INTO t VALUES (1)", "CREATE ROLE bob", "GRANT SELECT ON t TO bob",
		"SET ROLE bob", "SELECT * FROM t", "RESET ROLE", "DROP TABLE t"})
	expectDenied(t, asRole(eng, "bob"), "CREATE TABLE u (k int)", "permission denied for schema public")
}

// TestAuditPrivileges: GRANT, REVOKE, default privileges and REASSIGN
// OWNED are audited as role changes, refused ones with their SQLSTATE.
func TestAuditPrivileges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng := OpenMemory()
	defer eng.Close()
	l, err := OpenAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	eng.SetAuditLog(l)
	admin := eng.NewSession()
	runAll(t, admin, []string{"CREATE ROLE bob", "CREATE TABLE t (k int)", "GRANT SELECT ON t TO bob",
		"ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO bob", "REVOKE SELECT ON t FROM bob"})
	bob := asRole(eng, "bob")
	if _, err := bob.Exec(ctx, "GRANT SELECT ON t TO bob", nil); errs.SQLState(err) != "42501" {
		t.Fatalf("bob's GRANT: %v", err)
	}
	runAll(t, admin, []string{"REASSIGN OWNED BY bob TO rockstream"})
	l.Close()
	evs, err := ReadAuditLog(filepath.Join(dir, AuditFileName), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		if ev.Kind == AuditRole {
			got = append(got, ev.Role+" "+ev.Outcome+" "+ev.SQLState+" "+ev.Statement)
		}
	}
	want := []string{
		"embedded ok  CREATE ROLE bob",
		"embedded ok  GRANT SELECT ON t TO bob",
		"embedded ok  ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO bob",
		"embedded ok  REVOKE SELECT ON t FROM bob",
		"bob error 42501 GRANT SELECT ON t TO bob",
		"embedded ok  REASSIGN OWNED BY bob TO rockstream",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPrivilegesOfRockStreamStatements: SUBSCRIBE, AS OF EPOCH, COPY of
// a SUBSCRIBE and sources and sinks are checked like the reads and DDL
// they are.
func TestPrivilegesOfRockStreamStatements(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	admin := eng.NewSession()
	runAll(t, admin, []string{"CREATE ROLE bob", "CREATE TABLE t (k int)", "INSERT INTO t VALUES (1)",
		"CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM t", "CREATE VIEW v AS SELECT k FROM t"})
	epoch := eng.Epoch()
	bob := asRole(eng, "bob")
	for _, q := range []string{"SUBSCRIBE m", "COPY (SUBSCRIBE m) TO STDOUT",
		fmt.Sprintf("SELECT * FROM m AS OF EPOCH %d", epoch), "EXPLAIN INCREMENTAL SELECT * FROM m"} {
		expectDenied(t, bob, q, "permission denied for materialized view m")
	}
	expectDenied(t, bob, "CREATE SOURCE src FROM testkind (host = 'h') INTO t2", "permission denied for database rockstream")
	expectDenied(t, bob, "CREATE SINK out FROM m INTO testkind (pw = 'x')", "permission denied for database rockstream")
	runAll(t, admin, []string{"GRANT SELECT ON m TO bob", "GRANT CREATE ON DATABASE rockstream TO bob"})
	res, err := bob.Exec(ctx, "SUBSCRIBE m", nil)
	if err != nil {
		t.Fatalf("SUBSCRIBE after GRANT: %v", err)
	}
	if res.Subscription == nil {
		t.Fatal("SUBSCRIBE gave no subscription")
	}
	res.Subscription.Close()
	mustExec(t, bob, fmt.Sprintf("SELECT * FROM m AS OF EPOCH %d", epoch))
	expectDenied(t, bob, "SUBSCRIBE v", "permission denied for view v")
	expectDenied(t, bob, "CREATE SINK out FROM v INTO testkind (pw = 'x')", "permission denied for view v")
	// A source makes a table: it also needs CREATE on the schema.
	expectDenied(t, bob, "CREATE SOURCE src FROM testkind (host = 'h') INTO t2", "permission denied for schema public")
}
