package runtime

import (
	"context"
	"testing"
)

// TestCreateTableAsRecovery reopens an engine after CREATE TABLE AS and
// SELECT INTO: the tables come back as the ordinary tables they were
// created as, with their rows and column types, and take changes.
func TestCreateTableAsRecovery(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	e1, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(s *Session, sql string) string {
		t.Helper()
		res, err := s.Exec(ctx, sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if len(res.Columns) == 0 {
			return res.Tag
		}
		return formatRows(res)
	}
	s := e1.NewSession()
	run(s, "CREATE TABLE src (k int PRIMARY KEY, v numeric(8,2), s varchar(3))")
	run(s, "INSERT INTO src VALUES (1, 1.5, 'a'), (2, NULL, 'b'), (3, 3, NULL)")
	if tag := run(s, "CREATE TABLE made AS SELECT k, v, s, k * 2 AS twice FROM src WHERE k > 1"); tag != "SELECT 2" {
		t.Fatalf("CREATE TABLE AS tag = %q, want SELECT 2", tag)
	}
	if tag := run(s, "SELECT k INTO picked FROM src"); tag != "SELECT 3" {
		t.Fatalf("SELECT INTO tag = %q, want SELECT 3", tag)
	}
	query := "SELECT k, v, s, twice, pg_typeof(v)::text, pg_typeof(s)::text FROM made ORDER BY k"
	before := run(s, query) + run(s, "SELECT * FROM picked ORDER BY k")
	s.Close()
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}

	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e2.Close()
	s2 := e2.NewSession()
	if after := run(s2, query) + run(s2, "SELECT * FROM picked ORDER BY k"); after != before {
		t.Fatalf("tables changed across reopen:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	run(s2, "INSERT INTO made VALUES (9, 9.999, 'z', 0)")
	if got, want := run(s2, "SELECT v FROM made WHERE k = 9"), run(s2, "SELECT 10.00::numeric(8,2) AS v"); got != want {
		t.Fatalf("insert after reopen: got\n%s\nwant\n%s", got, want)
	}
}
