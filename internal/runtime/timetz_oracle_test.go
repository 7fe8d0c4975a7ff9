package runtime

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestTimeTZMatchesPostgres compares time with time zone with PostgreSQL:
// input and output at various offsets, precision, casts, comparisons
// (by UTC equivalent, then offset), arithmetic, AT TIME ZONE, functions,
// and views grouped and joined by a timetz column, maintained under
// inserts, updates and deletes with NULLs and duplicates.
func TestTimeTZMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	pgc := oracleConn(t, "timetz")
	s := OpenMemory().NewSession()
	o := &joinOracle{t: t, s: s, pg: pgc}
	same := func(queries ...string) {
		t.Helper()
		for _, q := range queries {
			if _, err := o.theirs([]string{q}); err != nil {
				t.Fatalf("PostgreSQL: %s: %v", q, err)
			}
			o.same(q)
		}
	}
	same(
		`SELECT '10:30'::timetz, '10:30+02'::timetz, '10:30:15.25-05:30'::timetz, '23:59:59.999999+14'::timetz, '00:00-12'::timetz, '24:00+00'::timetz`,
		`SELECT '04:05:06 PST'::timetz, '04:05 PM +0545'::timetz, '10:30 z'::timetz, '10:30:00+01:02:03'::timetz, 'allballs'::timetz, time with time zone '1:2:3.456 -7'`,
		`SELECT '2026-07-01 10:30 Europe/Berlin'::timetz, '2026-01-01 10:30 Europe/Berlin'::timetz, '2026-01-02 04:05:06+03'::timetz, '2026-01-02 10:30 Asia/Tokyo'::timetz, '10:30 UTC'::timetz`,
		`SELECT '10:30:15.123456+02'::timetz(2), '10:30:15.5+02'::timetz(0), '23:59:59.9+01'::timetz(0), '10:30:15.123456+02'::time(3) with time zone`,
		`SELECT '10:00+02'::timetz = '09:00+01', '10:00+02'::timetz < '09:00+01', '10:00+02'::timetz > '09:00+01', '10:00+02'::timetz = '10:00+02:00', '23:00-02'::timetz > '00:30+00', '10:00+00'::timetz <> '10:00+01'`,
		`SELECT '10:30+02'::timetz::time, '10:30+02'::timetz::text, timestamptz '2026-01-02 04:05:06.7+03'::timetz, time '10:30'::timetz, timestamptz 'infinity'::timetz IS NULL`,
		`SELECT '10:30+02'::timetz + interval '15 hours', interval '1 day 2 hours' + '23:00-03'::timetz, '10:00+05:30'::timetz - interval '11 hours 30 minutes', '10:00+02'::timetz + interval '1 month'`,
		`SELECT date '2026-01-02' + '10:00+02'::timetz, '24:00-05'::timetz + date '2026-12-31', date 'infinity' + '10:00+00'::timetz`,
		`SELECT '10:00+02'::timetz AT TIME ZONE 'UTC', '10:00+02'::timetz AT TIME ZONE 'PST', '10:00+02'::timetz AT TIME ZONE 'Asia/Kolkata', '23:30-01'::timetz AT TIME ZONE '+03', '01:00+05'::timetz AT TIME ZONE interval '-02:30', '10:00+00'::timetz AT TIME ZONE 'UTC+3'`,
		`SELECT time '10:00' AT TIME ZONE 'UTC', '10:00+02'::timetz AT TIME ZONE interval '20 hours'`,
		`SELECT extract(hour from '10:30+02'::timetz), extract(minute from '10:30:15-05:30'::timetz), extract(second from '10:30:15.25+02'::timetz), extract(milliseconds from '10:30:15.25+02'::timetz), extract(microseconds from '10:30:15.25+02'::timetz), extract(epoch from '10:00:01.5+02'::timetz)`,
		`SELECT extract(timezone from '10:30-05:30'::timetz), extract(timezone_hour from '10:30-05:30'::timetz), extract(timezone_minute from '10:30-05:30'::timetz), date_part('epoch', '01:00+05'::timetz), date_part('timezone', '10:30+01:02:03'::timetz), date_part('hour', '24:00+00'::timetz)`,
		`SELECT pg_typeof('10:00+02'::timetz)::text, pg_typeof(current_time)::text, format_type('timetz'::regtype, 3), 'timetz'::regtype::oid, '_timetz'::regtype::oid, 'time with time zone'::regtype::text, 1266::regtype::text`,
		`SELECT ARRAY['10:00+02'::timetz, '11:00:30-05']::text, greatest('10:00+02'::timetz, '09:00+00'), least('10:00+02'::timetz, '09:00+00'), '{10:00+02,NULL}'::timetz[]`,
		`SELECT to_jsonb('10:30+02'::timetz), to_jsonb('10:30:15.5-05:30'::timetz), jsonb_build_object('10:30+01:02:03'::timetz, 1), to_jsonb(ARRAY['23:00-12'::timetz])`,
		`SELECT CASE WHEN true THEN time '10:00' ELSE '11:00+02'::timetz END, time '10:00' = '10:00+00'::timetz, '10:00+02'::timetz::varchar(5), pg_typeof(CASE WHEN false THEN time '10:00' ELSE '11:00+02'::timetz END)::text`,
		`SELECT time '10:00' UNION SELECT '10:00+01'::timetz`,
		`SELECT count(DISTINCT x), min(x), max(x) FROM (VALUES ('10:00+02'::timetz), ('09:00+01'), ('10:00+02:00'), (NULL)) v(x)`,
		`SELECT x FROM (VALUES ('10:00+02'::timetz), ('09:00+01'), ('08:00+00'), ('10:00+00'), (NULL), ('23:00-05')) v(x) ORDER BY x`,
	)
	// Text without an offset, and time to timetz, take the session
	// zone's offset.
	mustBoth(t, s, pgc, "SET TimeZone = 'Asia/Kolkata'")
	same(`SELECT '10:30'::timetz, time '23:00'::timetz, '2026-07-01 10:30'::timetz, '10:30+02'::timetz, timestamptz '2026-01-02 04:05:06+00'::timetz`)
	mustBoth(t, s, pgc, "SET TimeZone = 'America/New_York'")
	same(`SELECT '2026-07-01 10:30'::timetz, '2026-01-01 10:30'::timetz, timestamptz '2026-07-01 12:00+00'::timetz, timestamptz '2026-01-01 12:00+00'::timetz, '10:30-04'::timetz`)
	// Text without an offset and time to timetz take New York's offset on
	// the current date (the transaction's), as in PostgreSQL; a view's
	// query, which has no current date, refuses them when created.
	same("SELECT '10:30'::timetz, time '10:30'::timetz, '10:00+02'::timetz AT TIME ZONE 'Europe/Berlin'")
	mustBoth(t, s, pgc, "CREATE TABLE texts (id int PRIMARY KEY, s text, tm time)")
	same("SELECT s::timetz, tm::timetz FROM texts")
	if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW nyv AS SELECT tm::timetz AS t FROM texts", nil); errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), "America/New_York") {
		t.Errorf("a view casting time to timetz in New York: got %v, want 0A000 naming the zone", err)
	}
	mustBoth(t, s, pgc, "SET TimeZone = 'Asia/Kolkata'")
	mustBoth(t, s, pgc, "INSERT INTO texts VALUES (1, '10:30', '11:00'), (2, '10:30-02', '23:59'), (3, NULL, NULL)")
	same(`SELECT s::timetz, tm::timetz, tm::timetz = '11:00+05:30' FROM texts`)
	mustBoth(t, s, pgc, "SET TimeZone = 'UTC'")
	for _, q := range []string{
		"SELECT '25:00+00'::timetz", "SELECT 'abc'::timetz", "SELECT '10:00+16'::timetz", "SELECT '10:30 America/New_York'::timetz",
		"SELECT '10:30 Mars/Base'::timetz", "SELECT '10:30 Asia/Tokyo'::timetz", "SELECT date_part('day', '10:00+00'::timetz)", "SELECT extract(foo from '10:00+00'::timetz)",
		"SELECT '10:00+00'::timetz - '09:00+00'::timetz", "SELECT '10:00+00'::timetz + 1", "SELECT '10:00+00'::timetz::timestamptz",
		"SELECT timestamp '2026-01-01 10:00'::timetz", "SELECT '10:00+00'::timetz AT TIME ZONE interval '1 day'", "SELECT '10:00+00'::timetz(-1)",
	} {
		_, ours := s.Exec(ctx, q, nil)
		_, theirs := pgc.Exec(ctx, q).ReadAll()
		if errs.SQLState(ours) != sqlState(theirs) || theirs == nil {
			t.Errorf("%s: RockStream %v, PostgreSQL %v", q, ours, theirs)
		}
	}

	for _, q := range []string{
		"CREATE TABLE meets (id int PRIMARY KEY, at timetz, at0 timetz(0), room text)",
		"INSERT INTO meets VALUES (1, '10:00+02', '10:00:00.6+02', 'a'), (2, '09:00+01', '09:00+01', 'b'), (3, '10:00+02', NULL, 'c'), (4, NULL, '08:00-05', 'a'), (5, '23:59:59.999999-03:30', '24:00+00', 'b')",
		"CREATE TABLE slots (at timetz PRIMARY KEY, label text)",
		"INSERT INTO slots VALUES ('10:00+02', 'ten at two'), ('09:00+01', 'nine at one'), ('08:00+00', 'eight'), ('23:59:59.999999-03:30', 'late')",
		"CREATE INDEX ON meets (at0)",
	} {
		mustBoth(t, s, pgc, q)
	}
	views := []string{
		`SELECT at, count(*) AS n, min(room) AS r, max(at0) AS latest FROM meets GROUP BY at`,
		`SELECT min(at) AS first, max(at) AS last, count(at) AS n FROM meets`,
		`SELECT m.id, s.label FROM meets m JOIN slots s ON m.at = s.at`,
		`SELECT id, at + interval '90 minutes' AS later, at::time AS local, extract(timezone from at) AS tz FROM meets WHERE at > '08:30+00'`,
		`SELECT at AT TIME ZONE 'UTC' AS utc, count(*) AS n FROM meets GROUP BY 1`,
	}
	for i, v := range views {
		if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW zv"+string(rune('0'+i))+" AS "+v, nil); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	check := func() {
		t.Helper()
		same(views...)
		same(`SELECT * FROM meets WHERE at >= '09:00+01' ORDER BY at, id`, `SELECT id FROM meets WHERE at0 = '10:00:01+02'`, `SELECT * FROM slots WHERE at = '10:00+02'`)
		for i := range views {
			want, _ := o.theirs([]string{views[i]})
			if got := o.ours("SELECT * FROM zv" + string(rune('0'+i))); !slices.Equal(got, want[0]) {
				t.Errorf("view %s:\nRockStream: %s\nPostgreSQL: %s", views[i], strings.Join(got, "; "), strings.Join(want[0], "; "))
			}
		}
	}
	check()
	mustBoth(t, s, pgc, "INSERT INTO meets VALUES (6, '08:00+00', '08:00+00', 'c'), (7, NULL, NULL, 'd'), (8, '10:00+02', '10:00+02', 'd')")
	check()
	mustBoth(t, s, pgc, "UPDATE meets SET at = at + interval '1 hour' WHERE room = 'a'")
	mustBoth(t, s, pgc, "UPDATE meets SET at = '09:00+01' WHERE id = 3")
	check()
	mustBoth(t, s, pgc, "DELETE FROM meets WHERE at = '09:00+01'")
	mustBoth(t, s, pgc, "DELETE FROM slots WHERE at = '08:00+00'")
	mustBoth(t, s, pgc, "UPDATE meets SET at = NULL WHERE id = 1")
	check()
	if _, err := s.Exec(ctx, "INSERT INTO slots VALUES ('10:00+02:00', 'again')", nil); errs.SQLState(err) != "23505" {
		t.Errorf("a duplicate timetz key: got %v, want 23505", err)
	}
	if _, err := s.Exec(ctx, "INSERT INTO slots VALUES ('11:00+03', 'same instant, other zone')", nil); err != nil {
		t.Errorf("a timetz key equal in UTC with another offset: %v", err)
	}
}

// TestCurrentTime: current_time is the session zone's time of day, with
// its offset, when the transaction began; it is stable within a
// transaction, allowed in queries, DML and defaults, refused in views.
func TestCurrentTime(t *testing.T) {
	_, s, query, check := clockedSession(t, 123456789)
	check("SELECT current_time, current_time(0), pg_typeof(current_time)::text, pg_typeof(current_time(3))::text",
		"10:00:01.123456+00|10:00:01+00|time with time zone|time with time zone\n")
	query("SET TimeZone = 'Asia/Kolkata'")
	check("SELECT current_time(2)", "15:30:03.12+05:30\n")
	query("SET TimeZone = 'America/New_York'")
	check("SELECT current_time(0), current_time::time = localtime", "05:00:05-05|t\n")
	query("BEGIN")
	first := query("SELECT current_time")
	if again := query("SELECT current_time"); again != first {
		t.Errorf("current_time moved within a transaction: %q then %q", first, again)
	}
	query("COMMIT")
	query("SET TimeZone = 'UTC'")
	query("CREATE TABLE ct (id int PRIMARY KEY, at timetz DEFAULT current_time(0), noted timetz)")
	query("INSERT INTO ct (id, noted) VALUES (1, current_time)")
	check("SELECT id, at, noted FROM ct", "1|10:00:12+00|10:00:12.123456+00\n")
	for _, q := range []string{
		"CREATE MATERIALIZED VIEW cv AS SELECT current_time AS t",
		"CREATE MATERIALIZED VIEW cv AS SELECT id FROM ct WHERE noted < current_time(2)",
		"CREATE VIEW cv AS SELECT current_time AS t",
	} {
		if _, err := s.Exec(context.Background(), q, nil); errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), "current_time") {
			t.Errorf("%s: got %v, want 0A000 naming current_time", q, err)
		}
	}
}

// TestTimeTZCopyMatchesPostgres loads timetz values by COPY in text, CSV
// and binary and compares COPY TO output, byte for byte, with
// PostgreSQL's.
func TestTimeTZCopyMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	pgc := oracleConn(t, "timetzcopy")
	s := OpenMemory().NewSession()
	mustBoth(t, s, pgc, "CREATE TABLE tc (id int PRIMARY KEY, at timetz, at0 timetz(0), ats timetz[])")
	p := copyPeer{t: t, ctx: ctx, s: s, pgc: pgc}
	load, copyOut := p.load, p.copyOut
	load("COPY tc FROM STDIN", "1\t10:30:15.25+02\t10:30:15.5-05:30\t{10:00+01,NULL}\n2\t\\N\t24:00+00\t\\N\n3\t00:00:00.000001-12\t4:05 PM +0545\t{}\n")
	load("COPY tc FROM STDIN WITH (FORMAT csv)", "4,23:59:59.999999+14,23:59:59.6+01:02:03,\"{23:00-03}\"\n5,allballs,,\n")
	for _, opts := range []string{"", " WITH (FORMAT csv)", " WITH (FORMAT binary)"} {
		stmt := "COPY (SELECT * FROM tc ORDER BY id) TO STDOUT" + opts
		if got, want := copyOut(stmt); !bytes.Equal(got, want) {
			t.Errorf("%s:\nRockStream: %q\nPostgreSQL: %q", stmt, got, want)
		}
	}
	_, bin := copyOut("COPY (SELECT id + 10, at, at0, ats FROM tc) TO STDOUT WITH (FORMAT binary)")
	load("COPY tc FROM STDIN WITH (FORMAT binary)", string(bin))
	if got, want := copyOut("COPY (SELECT * FROM tc ORDER BY id) TO STDOUT"); !bytes.Equal(got, want) {
		t.Errorf("after a binary load:\nRockStream: %q\nPostgreSQL: %q", got, want)
	}
}
