package runtime

import (
	"context"
	"testing"
)

// TestAppendOnlyRecovery reopens the store of an append-only table: the
// table is still append-only, its views still take its rows, and rows
// inserted after the reopen go after the ones before it (none is
// overwritten).
func TestAppendOnlyRecovery(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	run := func(e *Engine, sql string) string {
		t.Helper()
		s := e.NewSession()
		defer s.Close()
		res, err := s.Exec(ctx, sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return formatRows(res)
	}
	e1, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run(e1, "CREATE TABLE events (kind text, n int) APPEND ONLY")
	run(e1, "CREATE MATERIALIZED VIEW per_kind AS SELECT kind, count(*) AS c, sum(n) AS s FROM events GROUP BY kind")
	run(e1, "INSERT INTO events VALUES ('a', 1), ('a', 1), ('b', 2)")
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}

	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e2.Close()
	run(e2, "INSERT INTO events VALUES ('a', 1), ('c', 3)")
	if got, want := run(e2, "SELECT * FROM per_kind ORDER BY kind"), "a|3|3\nb|1|2\nc|1|3\n"; got != want {
		t.Errorf("view after reopen:\n%s\nwant:\n%s", got, want)
	}
	if got, want := run(e2, "SELECT kind, count(*) FROM events GROUP BY kind ORDER BY kind"), "a|3\nb|1\nc|1\n"; got != want {
		t.Errorf("table after reopen:\n%s\nwant:\n%s", got, want)
	}
	s := e2.NewSession()
	defer s.Close()
	if _, err := s.Exec(ctx, "DELETE FROM events", nil); err == nil {
		t.Error("DELETE after reopen succeeded; the table must still be append-only")
	}
	if err := e2.VerifyViews(); err != nil {
		t.Error(err)
	}
}
