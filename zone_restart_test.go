package rockstream_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
)

// TestViewZoneAcrossRestart checks that a materialized view keeps the
// time zone of the session that created it: readers in other zones see
// the same rows, changes after a restart are maintained in that zone, and
// EXPLAIN INCREMENTAL names it.
func TestViewZoneAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := rockstream.Open(rockstream.Options{Storage: dir, Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	berlin := db.Session()
	for _, s := range []string{
		"SET TimeZone = 'Europe/Berlin'",
		"CREATE TABLE ev (id int PRIMARY KEY, ts timestamptz)",
		"CREATE MATERIALIZED VIEW days AS SELECT ts::date AS d, to_char(ts, 'HH24:MI') AS hm, count(*) AS n FROM ev GROUP BY 1, 2",
		"INSERT INTO ev VALUES (1, '2026-03-28 23:30:00+00')",
	} {
		if _, err := berlin.Exec(ctx, s); err != nil {
			t.Fatal(s, ": ", err)
		}
	}
	read := func(db *rockstream.DB, zone string) string {
		t.Helper()
		s := db.Session()
		defer s.Close()
		if _, err := s.Exec(ctx, "SET TimeZone = '"+zone+"'"); err != nil {
			t.Fatal(err)
		}
		res, err := s.Exec(ctx, "SELECT d, hm, n FROM days ORDER BY d, hm")
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, r := range res.Rows {
			rows = append(rows, *r[0]+" "+*r[1]+" "+*r[2])
		}
		return strings.Join(rows, "; ")
	}
	// 23:30 UTC on March 28 is 00:30 on March 29 in Berlin, whoever reads.
	want := "2026-03-29 00:30 1"
	for _, zone := range []string{"UTC", "America/New_York", "Europe/Berlin"} {
		if got := read(db, zone); got != want {
			t.Errorf("read in %s: %q, want %q", zone, got, want)
		}
	}
	berlin.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = rockstream.Open(rockstream.Options{Storage: dir, Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Maintained after the restart in Berlin time, from a UTC session.
	if _, err := db.Exec(ctx, "INSERT INTO ev VALUES (2, '2026-07-01 22:15:00+00')"); err != nil {
		t.Fatal(err)
	}
	want = "2026-03-29 00:30 1; 2026-07-02 00:15 1"
	if got := read(db, "Asia/Kolkata"); got != want {
		t.Errorf("after restart: %q, want %q", got, want)
	}
	res, err := db.Exec(ctx, "EXPLAIN INCREMENTAL days")
	if err != nil {
		t.Fatal(err)
	}
	last := res.Rows[len(res.Rows)-1]
	if *last[0] != "Time zone: Europe/Berlin" {
		t.Errorf("EXPLAIN INCREMENTAL days ends with %q, want the view's time zone", *last[0])
	}
}
