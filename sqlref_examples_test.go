package rockstream

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestSQLReferenceExamples runs the `sql example` blocks of docs/sql.md in
// order on one fresh instance: every statement must succeed, and every
// materialized view must then equal its query recomputed from scratch.
func TestSQLReferenceExamples(t *testing.T) {
	doc, err := os.ReadFile("docs/sql.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "```sql example":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if len(blocks) == 0 {
		t.Fatal("docs/sql.md has no `sql example` blocks")
	}
	db, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	for i, b := range blocks {
		stmts, err := SplitStatements(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range stmts {
			if _, err := s.Exec(ctx, stmt); err != nil {
				t.Fatalf("example block %d: %s\n%v", i+1, stmt, err)
			}
		}
	}
	if err := db.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}
