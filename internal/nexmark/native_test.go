package nexmark_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/nexmark"
)

// TestBatchWriterIsInsertText applies the same stream to two instances,
// through BatchWriter into one and as INSERT text (Inserts, the form the
// oracle tests compare with PostgreSQL) into the other: every table ends
// up with the same rows.
func TestBatchWriterIsInsertText(t *testing.T) {
	ctx := context.Background()
	open := func() *rockstream.DB {
		db, err := rockstream.Open(rockstream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for _, tb := range nexmark.Tables {
			if _, err := db.Exec(ctx, tb.CreateTable(0, false)); err != nil {
				t.Fatal(err)
			}
		}
		return db
	}
	native, text := open(), open()
	gen := nexmark.NewGenerator(nexmark.Config{Seed: 7})
	for range 3 {
		events := gen.NextN(700)
		batch := native.NewBatch()
		w, err := nexmark.NewBatchWriter(batch)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(events); err != nil {
			t.Fatal(err)
		}
		if err := native.Apply(ctx, batch); err != nil {
			t.Fatal(err)
		}
		s := text.Session()
		for _, st := range append(append([]string{"BEGIN"}, nexmark.Inserts(events)...), "COMMIT") {
			if _, err := s.Exec(ctx, st); err != nil {
				t.Fatalf("%.80s: %v", st, err)
			}
		}
		s.Close()
	}
	for _, tb := range nexmark.Tables {
		q := fmt.Sprintf("SELECT * FROM %s ORDER BY 1, 2, 3, 4, 5, 6, 7", tb.Name)
		got, want := tableText(t, native, q), tableText(t, text, q)
		if got != want {
			t.Errorf("%s through BatchWriter differs from INSERT text", tb.Name)
		}
		if n := strings.Count(got, "\n"); n < 10 {
			t.Errorf("%s has only %d rows", tb.Name, n+1)
		}
	}
}

func tableText(t *testing.T, db *rockstream.DB, q string) string {
	t.Helper()
	res, err := db.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, r := range res.Rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, v := range r {
			if v == nil {
				b.WriteString("NULL|")
			} else {
				b.WriteString(*v + "|")
			}
		}
	}
	return b.String()
}
