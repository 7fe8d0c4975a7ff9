package runtime

import (
	"context"
	"testing"
)

// TestCommentRecovery reopens an engine after COMMENT ON: the comments
// come back, and a comment removed or a relation dropped before the
// close stays gone.
func TestCommentRecovery(t *testing.T) {
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
		return formatRows(res)
	}
	s := e1.NewSession()
	for _, q := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, v text)",
		"CREATE MATERIALIZED VIEW m AS SELECT v, count(*) AS n FROM t GROUP BY v",
		"CREATE TABLE gone (a int)",
		"COMMENT ON TABLE t IS 'kept'",
		"COMMENT ON COLUMN t.v IS 'value'",
		"COMMENT ON COLUMN t.k IS 'removed'",
		"COMMENT ON COLUMN t.k IS NULL",
		"COMMENT ON MATERIALIZED VIEW m IS 'counts'",
		"COMMENT ON TABLE gone IS 'dropped'",
		"DROP TABLE gone",
	} {
		run(s, q)
	}
	query := "SELECT obj_description('t'::regclass, 'pg_class') AS t, col_description('t'::regclass, 1) AS k, " +
		"col_description('t'::regclass, 2) AS v, obj_description('m'::regclass, 'pg_class') AS m, " +
		"(SELECT count(*) FROM pg_description) AS n"
	before := run(s, query)
	// pg_description counts the three comments and schema public's.
	if want := "kept|NULL|value|counts|4\n"; before != want {
		t.Fatalf("comments:\n%s\nwant:\n%s", before, want)
	}
	s.Close()
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e2.Close()
	if after := run(e2.NewSession(), query); after != before {
		t.Fatalf("comments changed across reopen:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
