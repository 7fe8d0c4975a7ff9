package runtime

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestTimeTZCurrentDateMatchesPostgres compares with PostgreSQL, in
// session zones with daylight saving time, the forms of time with time
// zone that take a zone's offset on the current date (both sides run
// today): text without an offset (literals, casts of a column, INSERT
// values, COPY-free defaults), time to timetz (explicit, implicit in a
// comparison, of a column), and AT TIME ZONE a region, a constant or a
// column, also in a UTC session.
func TestTimeTZCurrentDateMatchesPostgres(t *testing.T) {
	pgc := oracleConn(t, "timetzdst")
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
	for _, q := range []string{
		"CREATE TABLE texts (id int PRIMARY KEY, s text, tm time, zone text)",
		"INSERT INTO texts VALUES (1, '10:30', '11:00', 'Europe/Berlin'), (2, '10:30-02', '23:59:59.5', 'America/New_York'), (3, NULL, NULL, NULL), (4, '2026-01-15 08:00', '00:00', 'Asia/Tokyo'), (5, '02:30', '02:30', '+03')",
	} {
		mustBoth(t, s, pgc, q)
	}
	queries := []string{
		"SELECT '10:30'::timetz, '00:00'::timetz, '23:59:59.999999'::timetz, '02:30'::timetz, timetz '10:30', '10:30'::timetz(0), '10:30+02'::timetz",
		"SELECT time '10:30'::timetz, time '02:30'::timetz, cast(time '23:00' AS time with time zone), time '10:30' = '10:30'::timetz, time '10:30' < '15:30+00'::timetz",
		"SELECT '10:00+02'::timetz AT TIME ZONE 'Europe/Berlin', '10:00+02'::timetz AT TIME ZONE 'America/New_York', '23:30-01'::timetz AT TIME ZONE 'Australia/Sydney', timezone('Europe/London', '10:00+00'::timetz)",
		"SELECT id, s::timetz, tm::timetz, tm::timetz AT TIME ZONE zone, '10:00+00'::timetz AT TIME ZONE zone FROM texts ORDER BY id",
		"SELECT ARRAY['10:00', '11:00+01']::timetz[], ARRAY[time '10:00']::timetz[]",
		"SELECT extract(timezone from '10:30'::timetz), extract(timezone from time '10:30'::timetz)",
	}
	for _, zone := range []string{"America/New_York", "Europe/Berlin", "UTC"} {
		mustBoth(t, s, pgc, "SET TimeZone = '"+zone+"'")
		same(queries...)
	}
	// DML values, expressions and column defaults take the statement's
	// date too.
	for _, zone := range []string{"America/New_York", "Europe/Berlin"} {
		mustBoth(t, s, pgc, "SET TimeZone = '"+zone+"'")
		mustBoth(t, s, pgc, "CREATE TABLE meet_"+zone[:2]+" (id int PRIMARY KEY, at timetz, later timetz DEFAULT time '18:00', at2 timetz DEFAULT '07:15'::time::timetz)")
		mustBoth(t, s, pgc, "INSERT INTO meet_"+zone[:2]+" (id, at) VALUES (1, '10:30'), (2, time '11:00'), (3, '09:00+01'), (4, '12:00'::timetz AT TIME ZONE 'Europe/Berlin')")
		mustBoth(t, s, pgc, "INSERT INTO meet_"+zone[:2]+" (id, at) SELECT 10 + id, tm FROM texts WHERE tm IS NOT NULL")
		mustBoth(t, s, pgc, "UPDATE meet_"+zone[:2]+" SET later = at::time::timetz WHERE id > 10")
		same("SELECT * FROM meet_" + zone[:2] + " ORDER BY id")
	}
	// COPY FROM and parameters read text without an offset on the
	// current date too.
	mustBoth(t, s, pgc, "SET TimeZone = 'Europe/Berlin'")
	mustBoth(t, s, pgc, "CREATE TABLE copied (id int PRIMARY KEY, at timetz, ats timetz[])")
	p := copyPeer{t: t, ctx: context.Background(), s: s, pgc: pgc}
	p.load("COPY copied FROM STDIN", "1\t10:30\t{10:00,11:00+03}\n2\t23:59:59\t\\N\n")
	if got, want := p.copyOut("COPY (SELECT * FROM copied ORDER BY id) TO STDOUT"); !bytes.Equal(got, want) {
		t.Errorf("COPY of timetz without an offset in Berlin:\nRockStream: %q\nPostgreSQL: %q", got, want)
	}
	param := "10:30"
	res, err := s.Exec(context.Background(), "SELECT $1::timetz::text", []*string{&param})
	if err != nil {
		t.Fatal(err)
	}
	want, err := o.theirs([]string{"SELECT '10:30'::timetz::text"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(formatRows(res)); got != want[0][0] {
		t.Errorf("a timetz parameter without an offset in Berlin: RockStream %q, PostgreSQL %q", got, want[0][0])
	}
}

// TestTimeTZCurrentDateClock pins the engine's clock: the current date
// of a timetz conversion is the transaction's, so New York's offset is
// -05 in winter and -04 in summer, and on the day clocks spring forward
// a time before 02:00 takes the offset before and one after it the
// offset after, as PostgreSQL's DetermineTimeZoneOffset resolves the
// current date's clock reading the time. It stays within a transaction.
func TestTimeTZCurrentDateClock(t *testing.T) {
	_, _, query, check := clockedSession(t, 0) // 2026-12-01 10:00 UTC
	query("SET TimeZone = 'America/New_York'")
	check("SELECT '10:30'::timetz, time '10:30'::timetz, '10:00+00'::timetz AT TIME ZONE 'Europe/Berlin'", "10:30:00-05|10:30:00-05|11:00:00+01\n")
	query("SET TimeZone = 'Europe/Berlin'")
	check("SELECT '10:30'::timetz, '10:00+00'::timetz AT TIME ZONE 'America/New_York'", "10:30:00+01|05:00:00-05\n")
	query("CREATE TABLE ev (id int PRIMARY KEY, at timetz DEFAULT '08:00'::time)")
	query("INSERT INTO ev (id) VALUES (1)")
	check("SELECT at FROM ev", "08:00:00+01\n")

	summer := newClockAt(t, "2026-07-01 12:00:00")
	summer.query("SET TimeZone = 'America/New_York'")
	summer.check("SELECT '10:30'::timetz, time '10:30'::timetz, '10:00+00'::timetz AT TIME ZONE 'Europe/Berlin'", "10:30:00-04|10:30:00-04|12:00:00+02\n")
	// 2026-03-08: New York springs forward at 02:00 (07:00 UTC).
	spring := newClockAt(t, "2026-03-08 12:00:00")
	spring.query("SET TimeZone = 'America/New_York'")
	spring.check("SELECT '01:59'::timetz, '02:30'::timetz, '03:00'::timetz, time '01:00'::timetz, time '12:00'::timetz", "01:59:00-05|02:30:00-05|03:00:00-04|01:00:00-05|12:00:00-04\n")
	// AT TIME ZONE takes the offset at the transaction's start instant.
	spring.check("SELECT '00:00+00'::timetz AT TIME ZONE 'America/New_York'", "20:00:00-04\n")
	before := newClockAt(t, "2026-03-08 06:59:00")
	before.check("SELECT '00:00+00'::timetz AT TIME ZONE 'America/New_York'", "19:00:00-05\n")

	// Within a transaction the date is the transaction's, however long
	// it runs.
	query("BEGIN")
	first := query("SELECT '10:30'::timetz, time '10:30'::timetz")
	if again := query("SELECT '10:30'::timetz, time '10:30'::timetz"); again != first {
		t.Errorf("the current date moved within a transaction: %q then %q", first, again)
	}
	query("COMMIT")
}

// clockAt is a session of an engine whose clock stands at one instant.
type clockAt struct {
	query func(string) string
	check func(q, want string)
}

func newClockAt(t *testing.T, utc string) clockAt {
	t.Helper()
	at, err := time.Parse("2006-01-02 15:04:05", utc)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(NewMemoryStore(), Options{Clock: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := e.NewSession()
	c := clockAt{}
	c.query = func(q string) string {
		t.Helper()
		res, err := s.Exec(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return formatRows(res)
	}
	c.check = func(q, want string) {
		t.Helper()
		if got := c.query(q); got != want {
			t.Errorf("%s at %s:\n got %q\nwant %q", q, utc, got, want)
		}
	}
	return c
}

// TestTimeTZViewRefusesCurrentDate: a materialized view whose result
// would depend on the current date (text without an offset or time to
// timetz in a zone with daylight saving time, AT TIME ZONE a region with
// it or a zone that is not a constant) is refused when created, with
// 0A000; the fixed forms (offsets, fixed zones, intervals) are allowed,
// and such a view keeps being maintained, equal to PostgreSQL's query,
// while the base table is written with values that did read the date.
func TestTimeTZViewRefusesCurrentDate(t *testing.T) {
	ctx := context.Background()
	pgc := oracleConn(t, "timetzdstview")
	s := OpenMemory().NewSession()
	o := &joinOracle{t: t, s: s, pg: pgc}
	mustBoth(t, s, pgc, "CREATE TABLE slots (id int PRIMARY KEY, at timetz, tm time, s text, zone text)")
	refused := map[string][]string{
		"America/New_York": {
			"SELECT '10:30'::timetz AS t",
			"SELECT id FROM slots WHERE at > '10:30'",
			"SELECT tm::timetz AS t FROM slots",
			"SELECT s::timetz AS t FROM slots",
			"SELECT id FROM slots WHERE tm = at",
			"SELECT at AT TIME ZONE 'Europe/Berlin' AS t FROM slots",
			"SELECT at AT TIME ZONE zone AS t FROM slots",
			"SELECT tm::timetz AS t FROM slots WHERE id > 0 UNION ALL SELECT at FROM slots",
		},
		"UTC": {
			"SELECT at AT TIME ZONE 'America/New_York' AS t FROM slots",
			"SELECT at AT TIME ZONE zone AS t FROM slots",
			"SELECT timezone(s, at) AS t FROM slots",
			"SELECT id, count(*) FROM slots GROUP BY id, at AT TIME ZONE 'Europe/Berlin'",
		},
	}
	for _, zone := range []string{"America/New_York", "UTC"} {
		if _, err := s.Exec(ctx, "SET TimeZone = '"+zone+"'", nil); err != nil {
			t.Fatal(err)
		}
		for _, q := range refused[zone] {
			_, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW r AS "+q, nil)
			if errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), "current date") {
				t.Errorf("CREATE MATERIALIZED VIEW AS %s in %s: got %v, want 0A000 about the current date", q, zone, err)
			}
		}
	}
	mustBoth(t, s, pgc, "SET TimeZone = 'America/New_York'")
	views := []string{
		"SELECT id, at AT TIME ZONE '+02' AS p2, at AT TIME ZONE 'UTC' AS u, at AT TIME ZONE 'Asia/Tokyo' AS tk, at AT TIME ZONE 'PST' AS pst, at AT TIME ZONE interval '-03:30' AS iv FROM slots",
		"SELECT id, '10:30-04'::timetz AS fixed, '2026-07-01 10:30'::timetz AS dated, at > '10:30+00' AS late FROM slots",
		"SELECT at, count(*) AS n FROM slots GROUP BY at",
	}
	for i, v := range views {
		if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW ok"+string(rune('0'+i))+" AS "+v, nil); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	check := func() {
		t.Helper()
		for i, v := range views {
			want, err := o.theirs([]string{v + " ORDER BY 1, 2"})
			if err != nil {
				t.Fatalf("PostgreSQL: %s: %v", v, err)
			}
			if got := o.ours("SELECT * FROM ok" + string(rune('0'+i)) + " ORDER BY 1, 2"); !slices.Equal(got, want[0]) {
				t.Errorf("view %s:\nRockStream: %s\nPostgreSQL: %s", v, strings.Join(got, "; "), strings.Join(want[0], "; "))
			}
		}
	}
	check()
	// Writes whose values read New York's offset on the current date
	// maintain the views.
	mustBoth(t, s, pgc, "INSERT INTO slots VALUES (1, '10:30', '11:00', '10:30', 'Europe/Berlin'), (2, time '23:00', '23:00', NULL, NULL), (3, '08:00+01', NULL, '08:00', 'UTC'), (4, NULL, NULL, NULL, NULL)")
	check()
	mustBoth(t, s, pgc, "UPDATE slots SET at = tm::timetz WHERE tm IS NOT NULL")
	mustBoth(t, s, pgc, "UPDATE slots SET at = at AT TIME ZONE zone WHERE zone IS NOT NULL AND at IS NOT NULL")
	check()
	mustBoth(t, s, pgc, "DELETE FROM slots WHERE id = 2")
	mustBoth(t, s, pgc, "INSERT INTO slots SELECT id + 10, s::timetz, tm, s, zone FROM slots")
	check()
}
