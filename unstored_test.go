package rockstream_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
)

// TestBatchUnmaterialized applies batches to an unmaterialized table of a
// durable instance: the views take every row, the table keeps none, and
// after the instance is closed and opened again the views are the same,
// the table still keeps no rows and later batches still reach the views.
func TestBatchUnmaterialized(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *rockstream.DB {
		db, err := rockstream.Open(rockstream.Options{Storage: dir})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	apply := func(db *rockstream.DB, rows ...[]any) {
		t.Helper()
		b := db.NewBatch()
		for _, r := range rows {
			if err := b.Insert("ev", r...); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	db := open()
	for _, s := range []string{
		"CREATE TABLE ev (k text, v bigint) APPEND ONLY WITH (materialized = false)",
		"CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n, sum(v) AS s, max(v) AS top FROM ev GROUP BY k",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	apply(db, []any{"a", 1}, []any{"b", 2}, []any{"a", 3})
	apply(db, []any{"a", 1})
	const want = "a|3|5|3\nb|1|2|2"
	if got := rowsText(t, db, "SELECT * FROM per_k ORDER BY k"); got != want {
		t.Errorf("per_k = %q, want %q", got, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	defer db.Close()
	if got := rowsText(t, db, "SELECT * FROM per_k ORDER BY k"); got != want {
		t.Errorf("per_k after reopening = %q, want %q", got, want)
	}
	if _, err := db.Query(ctx, "SELECT * FROM ev"); err == nil || !strings.Contains(err.Error(), "keeps no rows") {
		t.Errorf("SELECT from the table after reopening: %v, want an error saying it keeps no rows", err)
	}
	if got := rowsText(t, db, "SELECT reloptions FROM pg_class WHERE relname = 'ev'"); !strings.Contains(got, "materialized=false") {
		t.Errorf("reloptions after reopening: %s", got)
	}
	apply(db, []any{"c", 7}, []any{"b", 1})
	if got, want := rowsText(t, db, "SELECT * FROM per_k ORDER BY k"), "a|3|5|3\nb|2|3|2\nc|1|7|7"; got != want {
		t.Errorf("per_k after a batch after reopening = %q, want %q", got, want)
	}
	if err := db.VerifyViews(); err != nil {
		t.Error(err)
	}
}
