package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestDeepStatementIsRefused sends the statements that used to overflow
// the parser's stack and take the process down: each fails with 54001,
// alone, in a message of several statements and as a prepared statement,
// and the session goes on.
func TestDeepStatementIsRefused(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	deep := "SELECT " + strings.Repeat("1+", 24000) + "1"
	if _, err := s.Exec(ctx, deep, nil); errs.SQLState(err) != "54001" {
		t.Fatalf("deep SELECT: %v, want 54001", err)
	}
	stmts, bad := ParseMessage("SELECT 1; " + deep)
	if bad == nil || errs.SQLState(bad.SyntaxError()) != "54001" {
		t.Fatalf("message with a deep statement: %d statements, bad %v", len(stmts), bad)
	}
	if _, err := s.Prepare(deep, nil); errs.SQLState(err) != "54001" {
		t.Fatalf("Prepare of a deep SELECT: %v, want 54001", err)
	}
	res, err := s.Exec(ctx, "SELECT "+strings.Repeat("1+", 899)+"1", nil)
	if err != nil {
		t.Fatalf("a 900-term sum: %v", err)
	}
	if got := formatRows(res); got != "900\n" {
		t.Fatalf("a 900-term sum = %q", got)
	}
}
