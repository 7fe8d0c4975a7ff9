package runtime

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestTimeTypeMatchesPostgres compares the time type (time without time
// zone) with PostgreSQL: input and output, casts, comparisons, arithmetic,
// functions, and a table keyed by time with a view maintained over it.
func TestTimeTypeMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	pgc := oracleConn(t, "timetype")
	s := OpenMemory().NewSession()
	o := &joinOracle{t: t, s: s, pg: pgc}
	same := o.same
	same(
		`SELECT '10:30'::time, '23:59:59.9999999'::time, '24:00'::time, time '1:2:3.456', '2026-01-02 04:05:06'::time, 'allballs'::time`,
		`SELECT '10:30:15.123456'::time(2), '10:30:15.5'::time(0), '04:05 PM'::time, '04:05:06+02'::time, time '00:00:00.000001'`,
		`SELECT '10:30'::time + interval '15 hours', interval '1 day 2 hours' + time '23:00', '10:30'::time - '11:00'::time, time '10:00' - interval '11 hours'`,
		`SELECT date '2026-01-02' + time '10:00', time '24:00' + date '2026-12-31', '10:30'::time < '10:31', time '10:30' = '10:30:00.000', time '24:00' > '23:59:59.999999'`,
		`SELECT timestamp '2026-01-02 04:05:06.7'::time, timestamptz '2026-01-02 04:05:06+00'::time, '10:00'::time::interval, interval '27 hours'::time, interval '-1 hour'::time`,
		`SELECT extract(hour from time '10:30'), extract(minute from time '10:30:15'), extract(second from time '10:30:15.25'), extract(milliseconds from time '10:30:15.25'), extract(microseconds from time '10:30:15.25'), extract(epoch from time '10:00:01.5')`,
		`SELECT date_part('hour', time '10:30'), date_part('epoch', time '24:00'), make_time(8, 15, 23.5), make_time(24, 0, 0), pg_typeof(time '10:00')::text, time '10:00'::text`,
		`SELECT ARRAY[time '10:00', '11:00:30']::text, greatest(time '10:00', '09:00'), least(time '10:00', '09:00')`,
		`SELECT to_char(time '10:30:15', 'HH24:MI:SS'), date_trunc('hour', time '10:30')`,
	)
	for _, q := range []string{
		"CREATE TABLE shifts (starts time PRIMARY KEY, ends time(0), who text)",
		"INSERT INTO shifts VALUES ('08:00', '16:00:00.6', 'a'), ('16:00', '24:00', 'b'), ('00:00', '08:00', 'c'), ('12:30:15.25', NULL, 'd')",
		"CREATE INDEX ON shifts (ends)",
	} {
		mustBoth(t, s, pgc, q)
	}
	views := []string{
		`SELECT min(starts) AS first, max(starts) AS last, max(ends) AS latest, count(*) AS n FROM shifts`,
		`SELECT who, ends - starts AS len FROM shifts WHERE starts >= '08:00'`,
		`SELECT starts + interval '30 minutes' AS s30, extract(hour from starts) AS h FROM shifts`,
	}
	for i, v := range views {
		if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW tv"+string(rune('0'+i))+" AS "+v, nil); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	check := func() {
		t.Helper()
		same(views...)
		same(`SELECT * FROM shifts WHERE starts > '09:00' ORDER BY starts`, `SELECT who FROM shifts WHERE ends = '16:00:01'`)
		for i := range views {
			want, _ := o.theirs([]string{views[i]})
			if got := o.ours("SELECT * FROM tv" + string(rune('0'+i))); !slices.Equal(got, want[0]) {
				t.Errorf("view %s:\nRockStream: %s\nPostgreSQL: %s", views[i], strings.Join(got, "; "), strings.Join(want[0], "; "))
			}
		}
	}
	check()
	mustBoth(t, s, pgc, "DELETE FROM shifts WHERE starts = '16:00'")
	mustBoth(t, s, pgc, "UPDATE shifts SET starts = starts + interval '1 hour' WHERE who = 'c'")
	check()
	for _, q := range []string{"SELECT '25:00'::time", "SELECT 'abc'::time", "SELECT make_time(25, 0, 0)", "SELECT date_part('day', time '10:00')", "SELECT time '10:00' + 1"} {
		_, ours := s.Exec(ctx, q, nil)
		_, theirs := pgc.Exec(ctx, q).ReadAll()
		if errs.SQLState(ours) != sqlState(theirs) {
			t.Errorf("%s: RockStream %v, PostgreSQL %v", q, ours, theirs)
		}
	}
}

// TestLocaltime: localtime is the session zone's time of day when the
// transaction began.
func TestLocaltime(t *testing.T) {
	_, _, query, check := clockedSession(t, 123456789)
	check("SELECT localtime, localtime(0), pg_typeof(localtime)::text", "10:00:01.123456|10:00:01|time without time zone\n")
	query("SET TimeZone = 'Asia/Kolkata'")
	check("SELECT localtime(2)", "15:30:03.12\n")
}

// TestTimeCopyMatchesPostgres loads time values by COPY in text and CSV
// and compares COPY TO output in text, CSV and binary, byte for byte, with
// PostgreSQL's; the binary output is then loaded back.
func TestTimeCopyMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "timecopy"))
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	s := OpenMemory().NewSession()
	mustBoth(t, s, pgc, "CREATE TABLE tc (id int PRIMARY KEY, at time, at0 time(0))")
	p := copyPeer{t: t, ctx: ctx, s: s, pgc: pgc}
	load, copyOut := p.load, p.copyOut
	load("COPY tc FROM STDIN", "1\t10:30:15.25\t10:30:15.5\n2\t\\N\t24:00\n3\t00:00:00.000001\t4:05 PM\n")
	load("COPY tc FROM STDIN WITH (FORMAT csv)", "4,23:59:59.999999,23:59:59.6\n5,allballs,\n")
	for _, opts := range []string{"", " WITH (FORMAT csv)", " WITH (FORMAT binary)"} {
		stmt := "COPY (SELECT * FROM tc ORDER BY id) TO STDOUT" + opts
		if got, want := copyOut(stmt); !bytes.Equal(got, want) {
			t.Errorf("%s:\nRockStream: %q\nPostgreSQL: %q", stmt, got, want)
		}
	}
	_, bin := copyOut("COPY (SELECT id + 10, at, at0 FROM tc) TO STDOUT WITH (FORMAT binary)")
	load("COPY tc FROM STDIN WITH (FORMAT binary)", string(bin))
	if got, want := copyOut("COPY (SELECT * FROM tc ORDER BY id) TO STDOUT"); !bytes.Equal(got, want) {
		t.Errorf("after a binary load:\nRockStream: %q\nPostgreSQL: %q", got, want)
	}
}
