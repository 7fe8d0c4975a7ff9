package oracle

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseExtensions(t *testing.T) {
	text := `--! postgres CREATE MATERIALIZED VIEW v AS
--! postgres SELECT date_bin('1 hour', ts, '1970-01-01') AS w FROM t
CREATE MATERIALIZED VIEW v AS SELECT window_start AS w FROM TUMBLE(t, ts, '1 hour');
--! rockstream-only
--! rows a|NULL
--! rows b|2
SELECT * FROM rockstream_catalog.lateness;
--! rockstream-only
--! rows
SELECT 1 WHERE false;
--! rockstream-only
SET rockstream.max_recursion_iterations = 5;`
	got, err := ParseScript("s.sql", text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Expectation{
		{Postgres: "CREATE MATERIALIZED VIEW v AS SELECT date_bin('1 hour', ts, '1970-01-01') AS w FROM t"},
		{EngineOnly: true, HasRows: true, EngineRows: []string{"a|NULL", "b|2"}},
		{EngineOnly: true, HasRows: true},
		{EngineOnly: true},
	}
	for i, st := range got {
		if !reflect.DeepEqual(st.Expect, want[i]) {
			t.Errorf("statement %d: %#v, want %#v", i, st.Expect, want[i])
		}
	}
	if got[0].refSQL() != want[0].Postgres || got[1].refSQL() != got[1].SQL {
		t.Errorf("refSQL: %q, %q", got[0].refSQL(), got[1].refSQL())
	}
	again, err := ParseScript("again.sql", FormatScript(got))
	if err != nil {
		t.Fatal(err)
	}
	for i := range again {
		if !reflect.DeepEqual(again[i].Expect, got[i].Expect) {
			t.Errorf("round trip of statement %d: %#v, want %#v", i, again[i].Expect, got[i].Expect)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"--! rows a\nSELECT 1;", "rows follows rockstream-only"},
		{"--! rockstream-only\n--! postgres SELECT 1\nSELECT 1;", "rockstream-only goes with no other directive"},
		{"--! postgres\nSELECT 1;", "postgres needs the statement"},
	} {
		if _, err := ParseScript("s.sql", c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}

func TestCheckEngineOnly(t *testing.T) {
	a, b := "a", "b"
	res := &Result{Rows: [][]*string{{&a, nil}, {&b, &a}}}
	if d := checkEngineOnly(Expectation{EngineOnly: true, HasRows: true, EngineRows: []string{"a|NULL", "b|a"}}, res, nil); d != "" {
		t.Errorf("matching rows: %s", d)
	}
	if d := checkEngineOnly(Expectation{EngineOnly: true, HasRows: true, EngineRows: []string{"b|a", "a|NULL"}}, res, nil); d == "" {
		t.Error("rows in another order were accepted")
	}
	if d := checkEngineOnly(Expectation{EngineOnly: true}, nil, &Error{SQLState: "0A000", Message: "no"}); d == "" {
		t.Error("a failure was accepted")
	}
}
