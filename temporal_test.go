package rockstream_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
)

// TestTemporalFilterDurable follows a view with a temporal filter through
// an embedding program's clock, on a durable instance that is closed and
// reopened: the schedule of the rows' exits survives the restart, and the
// first epoch after it applies what fell due meanwhile.
func TestTemporalFilterDurable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var mu sync.Mutex
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	open := func() *rockstream.DB {
		db, err := rockstream.Open(rockstream.Options{Storage: dir, Relaxed: true, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	for _, s := range []string{
		"CREATE TABLE ev (id int, at timestamptz)",
		"CREATE MATERIALIZED VIEW recent AS SELECT id FROM ev WHERE at > now() - interval '1 hour' AND at <= now()",
		"CREATE MATERIALIZED VIEW counts AS SELECT count(*) AS n FROM recent",
		"INSERT INTO ev VALUES (1, '2026-06-01 11:30:00+00'), (2, '2026-06-01 11:50:00+00'), (3, '2026-06-01 12:20:00+00'), (4, '2026-06-01 10:00:00+00')",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	want := func(db *rockstream.DB, ids, n string) {
		t.Helper()
		if got := rowsText(t, db, "SELECT id FROM recent ORDER BY id"); got != ids {
			t.Errorf("at %s: recent = %q, want %q", clock().Format(time.TimeOnly), got, ids)
		}
		if got := rowsText(t, db, "SELECT n FROM counts"); got != n {
			t.Errorf("at %s: counts = %q, want %q", clock().Format(time.TimeOnly), got, n)
		}
	}
	tick := func(db *rockstream.DB) {
		t.Helper()
		if err := db.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want(db, "1\n2", "2")
	advance(25 * time.Minute) // 12:25: 3 enters
	tick(db)
	want(db, "1\n2\n3", "3")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	advance(30 * time.Minute) // 12:55: 1 and 2 have left
	db = open()
	defer db.Close()
	want(db, "1\n2\n3", "3") // as of the last epoch, until one runs
	tick(db)
	want(db, "3", "1")
	advance(time.Hour)
	if _, err := db.Exec(ctx, "INSERT INTO ev VALUES (5, '2026-06-01 13:50:00+00')"); err != nil {
		t.Fatal(err)
	}
	want(db, "5", "1") // the insert's epoch applied 3's exit too
}

// TestTemporalFilterTimer: with the system clock, a row leaves the view
// when its bound passes, with no statement and no Tick.
func TestTemporalFilterTimer(t *testing.T) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE ev (id int, at timestamptz)",
		"CREATE MATERIALIZED VIEW recent AS SELECT id FROM ev WHERE at + interval '2 seconds' > now()",
		"INSERT INTO ev VALUES (1, now()), (2, now() + interval '1 hour')",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if got := rowsText(t, db, "SELECT id FROM recent ORDER BY id"); got != "1\n2" {
		t.Fatalf("recent = %q right after the insert", got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := rowsText(t, db, "SELECT id FROM recent ORDER BY id")
		if got == "2" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("recent = %q 20 s after the insert, want row 1 gone", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
