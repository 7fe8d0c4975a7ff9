package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestJSONDateTimesMatchPostgres compares the JSON text of dates, times
// and timestamps with PostgreSQL's in several session zones, ad hoc and in
// a materialized view, which keeps the zone it was created in.
func TestJSONDateTimesMatchPostgres(t *testing.T) {
	ctx := context.Background()
	pgc := oracleConn(t, "jsonzone")
	s := OpenMemory().NewSession()
	o := &joinOracle{t: t, s: s, pg: pgc}
	same := o.same
	for _, q := range []string{
		"CREATE TABLE ev (id int PRIMARY KEY, at timestamptz, ts timestamp, d date, tm time)",
		"INSERT INTO ev VALUES (1, '2026-01-02 03:04:05.25+00', '2026-01-02 03:04:05', '2026-01-02', '03:04:05.5'), " +
			"(2, '2026-07-01 12:00:00+00', '2026-07-01 12:00', '2026-07-01', '24:00'), (3, NULL, NULL, NULL, NULL), " +
			"(4, '1850-06-01 00:00:00+00', '0044-03-15 12:00 BC', '0044-03-15 BC', '00:00'), (5, 'infinity', '-infinity', 'infinity', '23:59:59.999999')",
	} {
		mustBoth(t, s, pgc, q)
	}
	queries := []string{
		`SELECT id, to_json(at) AS a, to_jsonb(at) AS b, to_json(ts) AS c, to_jsonb(d) AS d, to_json(tm) AS e, to_jsonb(tm) AS f FROM ev`,
		`SELECT id, json_build_object('at', at, 'ts', ts, 'd', d) AS a, jsonb_build_object('at', at, 'tm', tm) AS b, json_build_array(at, d) AS c, jsonb_build_array(at, ts) AS d FROM ev`,
		`SELECT id, row_to_json(ROW(at, ts, d, tm)) AS a, to_json(ARRAY[at, at + interval '1 day']) AS b, to_jsonb(ARRAY[at]) AS c FROM ev`,
		`SELECT jsonb_agg(at ORDER BY id) AS a, json_agg(at ORDER BY id) AS b, jsonb_agg(d ORDER BY id) AS c, jsonb_object_agg(id, at) AS d, json_object_agg(id, at) AS e FROM ev`,
		`SELECT jsonb_build_object(at, 1) FROM ev WHERE at IS NOT NULL`,
		`SELECT to_json('2026-03-29 01:30:00+00'::timestamptz), to_jsonb('2026-10-25 00:30:00+00'::timestamptz), to_json('2026-01-02 03:04:05'::timestamp)`,
	}
	for _, zone := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Europe/Amsterdam", "-3.5"} {
		mustBoth(t, s, pgc, "SET TimeZone = '"+zone+"'")
		same(queries...)
	}
	// A view keeps its zone when the session's changes.
	mustBoth(t, s, pgc, "SET TimeZone = 'America/New_York'")
	views := queries[:4]
	for i, v := range views {
		if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW jz"+string(rune('0'+i))+" AS "+v, nil); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	if _, err := s.Exec(ctx, "SET TimeZone = 'Asia/Kolkata'", nil); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		for i, v := range views {
			want, err := o.theirs([]string{v})
			if err != nil {
				t.Fatalf("PostgreSQL: %v", err)
			}
			if got := o.ours("SELECT * FROM jz" + string(rune('0'+i))); !slices.Equal(got, want[0]) {
				t.Errorf("view %s:\nRockStream: %s\nPostgreSQL: %s", v, strings.Join(got, "; "), strings.Join(want[0], "; "))
			}
		}
	}
	check()
	mustBoth(t, s, pgc, "INSERT INTO ev VALUES (6, '2026-11-01 05:30:00+00', '2026-11-01 01:30', '2026-11-01', '01:30')")
	mustBoth(t, s, pgc, "DELETE FROM ev WHERE id = 1")
	check()
}
