package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

func TestRedactSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE ROLE a WITH LOGIN PASSWORD 'x''y'":                                 "CREATE ROLE a WITH LOGIN PASSWORD '********'",
		"alter user b password 'pw'":                                               "alter user b password '********'",
		"CREATE SINK k FROM v INTO KAFKA (sasl_password = 'p', topic = 't')":       "CREATE SINK k FROM v INTO KAFKA (sasl_password = '********', topic = 't')",
		"CREATE SOURCE s FROM POSTGRES (connection = 'host=h password=pw user=u')": "CREATE SOURCE s FROM POSTGRES (connection = 'host=h password=******** user=u')",
		"CREATE SOURCE s FROM POSTGRES (connection = 'postgres://u:pw@h:5432/db')": "CREATE SOURCE s FROM POSTGRES (connection = 'postgres://u:********@h:5432/db')",
		"CREATE TABLE passwords (k int)":                                           "CREATE TABLE passwords (k int)",
		"postgres://h:5432/db":                                                     "postgres://h:5432/db",
	} {
		if got := RedactSecrets(in); got != want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAuditLog: statements that change the catalog or roles are recorded,
// numbered across a reopen of the log, with who ran them and how they
// ended; reads and row changes are not; a line a crash cut short is
// skipped, a damaged one is an error.
func TestAuditLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng, err := Open(NewMemoryStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := OpenAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	eng.SetAuditLog(l)
	s := eng.NewSession()
	s.SetClient(ClientInfo{User: "carol"})
	for _, q := range []string{"CREATE TABLE t (k int)", "INSERT INTO t VALUES (1)", "SELECT * FROM t", "CREATE USER u PASSWORD 'pw'", "BEGIN", "DROP TABLE t", "ROLLBACK"} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Exec(ctx, "DROP TABLE nope", nil); errs.CodeOf(err) != errs.UndefinedTable {
		t.Fatal(err)
	}
	l.Close()
	l, err = OpenAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	eng.SetAuditLog(l)
	embedded := eng.NewSession()
	if _, err := embedded.Exec(ctx, "GRANT SELECT ON t TO u", nil); err == nil {
		t.Log("GRANT succeeded")
	}
	l.Close()
	path := filepath.Join(dir, AuditFileName)
	// A last line without its newline, as a crash leaves it.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":99,"ti`)
	f.Close()
	evs, err := ReadAuditLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		got = append(got, ev.Role+" "+ev.Kind+" "+ev.Outcome+" "+ev.SQLState+" "+ev.Statement)
	}
	want := []string{
		"carol ddl ok  CREATE TABLE t (k int)",
		"carol role ok  CREATE USER u PASSWORD '********'",
		"carol ddl ok  DROP TABLE t",
		"carol ddl error 42P01 DROP TABLE nope",
		"embedded role",
	}
	if len(got) != len(want) {
		t.Fatalf("audit events:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("event %d: %q, want %q", i+1, got[i], want[i])
		}
	}
	if evs, _ := ReadAuditLog(path, 4); len(evs) != 1 || evs[0].Seq != 5 {
		t.Fatalf("events after 4: %+v", evs)
	}
	os.WriteFile(path, []byte("{\"seq\":1}\nnot json\n"), 0o600)
	if _, err := ReadAuditLog(path, 0); errs.CodeOf(err) != errs.DataCorrupted || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("damaged log: %v", err)
	}
}
