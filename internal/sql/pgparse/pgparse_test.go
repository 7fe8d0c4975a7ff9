package pgparse

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

func TestDepth(t *testing.T) {
	sum := func(n int) string { return "SELECT " + strings.Repeat("1+", n-1) + "1" }
	parens := func(n int) string { return "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }
	ands := func(n int) string { return "SELECT 1 WHERE " + strings.Repeat("true AND ", n) + "true" }
	list := func(n int) string { return "SELECT " + strings.Repeat("1+1, ", n) + "1" }
	for _, c := range []struct {
		name string
		sql  string
		ok   bool
	}{
		{"a sum of 24,000 terms", sum(24000), false},
		{"a sum of 1,001 terms", sum(MaxDepth + 2), false},
		{"a sum of 900 terms", sum(900), true},
		{"1,500 parentheses", parens(1500), false},
		{"900 parentheses", parens(900), true},
		{"5,000 ANDs (flattened by the parser)", ands(5000), true},
		{"a select list of 5,000 short sums", list(5000), true},
		{"casts chained 2,000 times", "SELECT 1" + strings.Repeat("::int", 2000), false},
		{"unterminated string", "SELECT '" + strings.Repeat("+", 5000), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.sql)
			if c.ok && err != nil {
				t.Fatalf("refused: %v (depth %d)", err, Depth(c.sql))
			}
			if !c.ok {
				if errs.SQLState(err) != "54001" {
					t.Fatalf("got %v (depth %d), want 54001", err, Depth(c.sql))
				}
				if _, err := Parse(c.sql); errs.SQLState(err) != "54001" {
					t.Fatalf("Parse: %v, want 54001", err)
				}
			}
			if c.ok && err == nil && !strings.HasPrefix(c.name, "unterminated") {
				if _, err := Parse(c.sql); err != nil {
					t.Fatalf("Parse: %v", err)
				}
			}
		})
	}
}

// TestTooLong: a statement longer than PostgreSQL's largest message fails
// with 54000 before it is scanned.
func TestTooLong(t *testing.T) {
	text := "SELECT '" + strings.Repeat("x", MaxBytes-8) + "'"
	if len(text) != MaxBytes+1 {
		t.Fatalf("len = %d", len(text))
	}
	err := Check(text)
	if errs.SQLState(err) != "54000" || err.Error() != "statement is too long" {
		t.Fatalf("a statement of %d bytes: %v, want 54000 statement is too long", len(text), err)
	}
	if _, err := Parse(text); errs.SQLState(err) != "54000" {
		t.Fatalf("Parse: %v", err)
	}
}
