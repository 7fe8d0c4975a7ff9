package oracle

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseScript(t *testing.T) {
	text := `-- a comment; not a statement
CREATE TABLE t (a int, "b;c" text);
INSERT INTO t VALUES (1, 'x;y'), (2, 'it''s; ok'), (3, E'back\'slash;'), (4, $$dollar;$$), (5, $q$tagged $$;$q$);
/* block; /* nested; */ still comment; */
--! error 22012
SELECT 1 / 0;
--! unordered
SELECT a FROM t
  ORDER BY a; -- trailing
;;
--! rockstream-error 0A000
SELECT $1::int;
select 'no semicolon at the end'`
	got, err := ParseScript("s.sql", text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Statement{
		{SQL: `CREATE TABLE t (a int, "b;c" text)`, Line: 2},
		{SQL: `INSERT INTO t VALUES (1, 'x;y'), (2, 'it''s; ok'), (3, E'back\'slash;'), (4, $$dollar;$$), (5, $q$tagged $$;$q$)`, Line: 3},
		{SQL: `SELECT 1 / 0`, Line: 6, Expect: Expectation{Error: "22012"}},
		{SQL: "SELECT a FROM t\n  ORDER BY a", Line: 8, Expect: Expectation{Unordered: true}},
		{SQL: `SELECT $1::int`, Line: 12, Expect: Expectation{EngineOnlyError: "0A000"}},
		{SQL: `select 'no semicolon at the end'`, Line: 13},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%#v\nwant\n%#v", got, want)
	}
	// FormatScript renders a script that parses back to the same
	// statements (lines aside).
	again, err := ParseScript("again.sql", FormatScript(got))
	if err != nil {
		t.Fatal(err)
	}
	for i := range again {
		again[i].Line = 0
		got[i].Line = 0
	}
	if !reflect.DeepEqual(again, got) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", again, got)
	}
}

func TestParseScriptErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"SELECT 'open", "s.sql:1: unterminated quoted string"},
		{"SELECT 1;\n/* open", "s.sql:2: unterminated /* comment"},
		{"SELECT $x$ open", "unterminated dollar-quoted string $x$"},
		{"--! frobnicate\nSELECT 1;", `s.sql:1: unknown directive "frobnicate"`},
		{"--! error 22O1\nSELECT 1;", "unknown directive"},
		{"SELECT 1\n--! error 22012\n;", "s.sql:2: directive inside a statement"},
		{"SELECT 1;\n--! unordered\n", "applies to no statement"},
		{"--! unordered\n;", "directive before an empty statement"},
	} {
		_, err := ParseScript("s.sql", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseScript(%q) error = %v, want %q", c.text, err, c.want)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want stmtInfo
		pg   string
	}{
		{"SELECT a FROM t", stmtInfo{kind: kindQuery}, ""},
		{"SELECT a FROM t ORDER BY a", stmtInfo{kind: kindQuery, ordered: true}, ""},
		{"SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", stmtInfo{kind: kindQuery, ordered: true}, ""},
		{"SELECT a FROM (SELECT a FROM t ORDER BY a) s", stmtInfo{kind: kindQuery}, ""},
		{"VALUES (1)", stmtInfo{kind: kindQuery}, ""},
		{"SELECT 1 INTO x", stmtInfo{kind: kindChange}, ""},
		{"begin", stmtInfo{kind: kindBegin}, ""},
		{"START TRANSACTION", stmtInfo{kind: kindBegin}, ""},
		{"END", stmtInfo{kind: kindCommit}, ""},
		{"ABORT", stmtInfo{kind: kindRollback}, ""},
		{"Create Materialized View V1 as select 1", stmtInfo{kind: kindCreateMatView, name: "v1"}, "CREATE VIEW V1 as select 1"},
		{"CREATE VIEW w AS SELECT 1", stmtInfo{kind: kindCreateView, name: "w"}, ""},
		{"drop materialized view if exists v1, public.v2 cascade", stmtInfo{kind: kindDropMatView, dropped: []string{"v1", "v2"}}, "DROP VIEW if exists v1, public.v2 cascade"},
		{"DROP VIEW v", stmtInfo{kind: kindDropView, dropped: []string{"v"}}, ""},
		{"DROP TABLE t", stmtInfo{kind: kindChange}, ""},
		{"INSERT INTO t VALUES (1)", stmtInfo{kind: kindChange}, ""},
		{"SELEC 1", stmtInfo{kind: kindChange}, ""},
	} {
		got := classify(c.sql)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("classify(%q) = %+v, want %+v", c.sql, got, c.want)
		}
		pg, ok := postgresText(c.sql, got)
		want := c.pg
		if want == "" {
			want = c.sql
		}
		if !ok || pg != want {
			t.Errorf("postgresText(%q) = %q, %v; want %q", c.sql, pg, ok, want)
		}
	}
	if _, ok := postgresText("/* c */ CREATE MATERIALIZED VIEW v AS SELECT 1", classify("/* c */ CREATE MATERIALIZED VIEW v AS SELECT 1")); ok {
		t.Error("postgresText rewrote a statement that starts with a comment")
	}
}
