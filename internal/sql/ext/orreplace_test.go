package ext

import "testing"

func TestOrReplaceMatView(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT 1", "CREATE            MATERIALIZED VIEW m AS SELECT 1", true},
		{"create /* c */ or\n replace materialized view m as select 'or replace'", "create /* c */ " + "           " + " materialized view m as select 'or replace'", true},
		{"CREATE OR REPLACE VIEW v AS SELECT 1", "", false},
		{"CREATE MATERIALIZED VIEW replace AS SELECT 1", "", false},
		{"SELECT 'CREATE OR REPLACE MATERIALIZED VIEW'", "", false},
		{"CREATE OR REPLACE", "", false},
	} {
		got, ok := OrReplaceMatView(c.in)
		if ok != c.ok {
			t.Errorf("%q: recognized %v, want %v", c.in, ok, c.ok)
		}
		if !ok && got != c.in {
			t.Errorf("%q: changed to %q", c.in, got)
		}
		if ok && got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
