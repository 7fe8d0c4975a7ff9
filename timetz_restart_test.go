package rockstream_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
)

// TestTimeTZSurvivesRestart stores timetz values in a table keyed by
// timetz(2) and in a view grouped by timetz, reopens the store, and
// checks that the column types, keys and the view's groups came back and
// that the view is still maintained. Values order by their UTC
// equivalents, then by offset (10:00+02 before 09:00+01), and
// 23:59:59.999 rounds to 24:00:00 in timetz(2), as in PostgreSQL.
func TestTimeTZSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := rockstream.Open(rockstream.Options{Storage: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"CREATE TABLE tz (at timetz(2) PRIMARY KEY, local timetz)",
		"INSERT INTO tz VALUES ('10:00+02', '10:00:00.5-05:30'), ('09:00+01', NULL), ('23:59:59.999+14', '10:00:00.5-05:30')",
		"CREATE MATERIALIZED VIEW by_local AS SELECT local, count(*) AS n FROM tz GROUP BY local",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = rockstream.Open(rockstream.Options{Storage: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read := func(q string) string { t.Helper(); return rowsText(t, db, q) }
	if got, want := read("SELECT at, local FROM tz ORDER BY at"), "10:00:00+02|10:00:00.5-05:30\n09:00:00+01|NULL\n24:00:00+14|10:00:00.5-05:30"; got != want {
		t.Errorf("table after reopening:\n got %q\nwant %q", got, want)
	}
	if got, want := read("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'tz'::regclass AND attnum > 0 ORDER BY attnum"), "time(2) with time zone\ntime with time zone"; got != want {
		t.Errorf("column types after reopening: got %q, want %q", got, want)
	}
	if _, err := db.Exec(ctx, "INSERT INTO tz VALUES ('08:00+00', '11:00+02')"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO tz VALUES ('10:00:00.001+02', NULL)"); err == nil || !strings.Contains(err.Error(), "23505") && !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("a duplicate key after rounding to timetz(2): %v", err)
	}
	if _, err := db.Exec(ctx, "DELETE FROM tz WHERE at = '24:00+14'"); err != nil {
		t.Fatal(err)
	}
	if got, want := read("SELECT local, n FROM by_local ORDER BY local"), "11:00:00+02|1\n10:00:00.5-05:30|1\nNULL|1"; got != want {
		t.Errorf("view after reopening:\n got %q\nwant %q", got, want)
	}
}
