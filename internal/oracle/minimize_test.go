package oracle

import (
	"strings"
	"testing"
	"time"
)

func TestMinimize(t *testing.T) {
	var stmts []Statement
	for _, s := range strings.Fields("a b c d e f g h i j k l m n o p") {
		stmts = append(stmts, Statement{SQL: s})
	}
	// Fails when it contains c, then later k, then later n.
	fails := func(ss []Statement) bool {
		want := []string{"c", "k", "n"}
		for _, s := range ss {
			if len(want) > 0 && s.SQL == want[0] {
				want = want[1:]
			}
		}
		return len(want) == 0
	}
	got := Minimize(stmts, fails, time.Now().Add(time.Minute))
	var names []string
	for _, s := range got {
		names = append(names, s.SQL)
	}
	if strings.Join(names, " ") != "c k n" {
		t.Fatalf("minimized to %v", names)
	}
}
