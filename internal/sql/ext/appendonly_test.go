package ext

import "testing"

func TestAppendOnly(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"CREATE TABLE t (a int) APPEND ONLY", true},
		{"create table t (a int, b numeric(10, 2)) append only with (event_time = 'ts', lateness = '1 s')", true},
		{"CREATE UNLOGGED TABLE t (a int) /* c */ APPEND -- x\n ONLY;", true},
		{`CREATE TABLE "append only" (a text DEFAULT ') APPEND ONLY')`, false},
		{"CREATE TABLE t (a int)", false},
		{"CREATE TABLE t (a int) APPEND", false},
		{"CREATE VIEW v AS SELECT 1 AS append_only", false},
		{"SELECT 'APPEND ONLY'", false},
		{"CREATE TABLE t (a int) ONLY APPEND", false},
	} {
		got, ok := AppendOnly(c.in)
		if ok != c.want {
			t.Errorf("%q: recognized %v, want %v", c.in, ok, c.want)
		}
		if len(got) != len(c.in) {
			t.Errorf("%q: length changed to %d", c.in, len(got))
		}
		if !ok && got != c.in {
			t.Errorf("%q: changed to %q", c.in, got)
		}
		if ok && (containsFold(got, "append") || containsFold(got, "only")) {
			t.Errorf("%q: clause left in %q", c.in, got)
		}
	}
}
