package rockstream

import (
	"reflect"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  -- only a comment\n", nil},
		{"SELECT 1", []string{"SELECT 1"}},
		{"SELECT 1; SELECT 2;", []string{"SELECT 1;", "SELECT 2;"}},
		{"SELECT ';' ; -- c;\n/* ; */ SELECT 2", []string{"SELECT ';' ;", "/* ; */ SELECT 2"}},
		{"selec 1;", []string{"selec 1;"}},
		{";;SELECT 1;;", []string{"SELECT 1;"}},
		{"EXPLAIN INCREMENTAL v;\nSELECT 'it''s';", []string{"EXPLAIN INCREMENTAL v;", "SELECT 'it''s';"}},
		{"SELECT 'unterminated", []string{"SELECT 'unterminated"}},
	} {
		got, err := SplitStatements(tc.in)
		if err != nil {
			t.Fatalf("SplitStatements(%q): %v", tc.in, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitStatements(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
