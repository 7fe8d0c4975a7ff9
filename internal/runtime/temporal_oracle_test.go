package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// The temporal oracle tests maintain views with temporal filters under a
// clock the test moves, through inserts, deletes, updates, clock advances
// and a restart, and after every step compare each view with its query
// in PostgreSQL with now() replaced by the epoch's time as a literal.

// testClock is a clock a test sets.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// temporalViews read now() (or current_timestamp) in temporal filters.
var temporalViews = []string{
	`SELECT id, v FROM ev WHERE ts > now() - interval '1 hour'`,
	`SELECT id FROM ev WHERE ts + interval '30 minutes' >= now() AND ts <= now()`,
	`SELECT id, v FROM ev WHERE ts BETWEEN now() - interval '2 hours' AND now() + interval '10 minutes'`,
	`SELECT count(*) AS n, sum(v) AS s FROM ev WHERE ts > now() - interval '1 hour'`,
	`SELECT v, count(*) AS n FROM ev WHERE now() < ts + interval '90 minutes' AND v IS NOT NULL GROUP BY v`,
	`SELECT id FROM ev WHERE d >= now() - interval '1 day'`,
	`SELECT id FROM ev WHERE d + 1 > now()`,
	`SELECT id FROM ev WHERE lt < now() - interval '1 month' AND lt >= now() - interval '1 mon 1 day'`,
	`SELECT id FROM ev WHERE lt > now() - interval '1 day 2 hours'`,
	`SELECT e.id, f.v FROM ev e JOIN ev f ON e.id = f.v AND f.ts > now() - interval '40 minutes'`,
	`SELECT id, count(*) AS n FROM ev GROUP BY id HAVING max(ts) > now() - interval '45 minutes'`,
	`SELECT id FROM ev WHERE current_timestamp < ts + interval '1 day' AND v > 1`,
	`SELECT DISTINCT v FROM ev WHERE ts < now() AND ts > now() - interval '3 hours'`,
	`SELECT id FROM (SELECT id, ts + interval '20 minutes' AS te FROM ev) s WHERE te > now()`,
	`SELECT id FROM ev WHERE ts > now() - interval '1 hour' AND ts > now() - interval '2 hours' AND ts <= now() + interval '1 hour'`,
	`SELECT id FROM ev WHERE EXISTS (SELECT 1 FROM ev f WHERE f.v = ev.id AND f.ts > now() - interval '1 hour')`,
}

func TestTemporalFiltersMatchPostgres(t *testing.T) {
	for _, zone := range []string{"UTC", "America/New_York"} {
		t.Run(strings.ReplaceAll(zone, "/", "_"), func(t *testing.T) { runTemporalOracle(t, zone) })
	}
}

func runTemporalOracle(t *testing.T, zone string) {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "temporal"))
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	if _, err := pgc.Exec(ctx, "SET jit = off; SET TimeZone = '"+zone+"'").ReadAll(); err != nil {
		t.Fatal(err)
	}
	// Near the start of daylight saving time in New York (2026-03-08).
	base := time.Date(2026, 3, 7, 18, 0, 0, 0, time.UTC)
	clk := &testClock{t: base}
	st := NewMemoryStore()
	eng, err := Open(st, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { eng.Close() }()
	s := eng.NewSession()
	exec := func(q string) {
		t.Helper()
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("SET TimeZone = '" + zone + "'")
	mustBoth(t, s, pgc, "CREATE TABLE ev (id int, ts timestamptz, d date, lt timestamp, v int)")
	var names []string
	views := slices.Clone(temporalViews)
	for i, q := range temporalViews {
		name := fmt.Sprintf("tv%d", i)
		exec("CREATE MATERIALIZED VIEW " + name + " AS " + q)
		names = append(names, name)
	}
	// changes counts the views' contents that changed between checks,
	// for the log and to make sure the clock moved rows.
	changes, byClock := 0, 0
	last := make([][]string, len(temporalViews)+1)
	check := func(what string) {
		t.Helper()
		at := "'" + clk.Now().UTC().Format("2006-01-02 15:04:05.999999") + "+00'::timestamptz"
		o := &joinOracle{t: t, s: s, pg: pgc}
		var queries []string
		for _, q := range views {
			q = strings.ReplaceAll(q, "now()", at)
			queries = append(queries, strings.ReplaceAll(q, "current_timestamp", at))
		}
		want, err := o.theirs(queries)
		if err != nil {
			t.Fatalf("PostgreSQL: %v", err)
		}
		for i, name := range names {
			if got := o.ours("SELECT * FROM " + name); !slices.Equal(got, want[i]) {
				t.Fatalf("after %s (clock %s): %s differs from PostgreSQL\nRockStream:\n  %s\nPostgreSQL:\n  %s",
					what, clk.Now().UTC().Format(time.RFC3339), views[i], strings.Join(got, "\n  "), strings.Join(want[i], "\n  "))
			}
			if !slices.Equal(last[i], want[i]) {
				changes++
				if strings.HasPrefix(what, "advancing") {
					byClock++
				}
			}
			last[i] = want[i]
		}
		if err := eng.VerifyViews(); err != nil {
			t.Fatalf("after %s: %v", what, err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 15))
	val := func(k int) string {
		if rng.IntN(10) == 0 {
			return "NULL"
		}
		at := clk.Now().Add(time.Duration(rng.IntN(48)-24) * 10 * time.Minute)
		switch k {
		case 0:
			return "'" + at.UTC().Format("2006-01-02 15:04:05") + "+00'"
		case 1:
			return "'" + at.Format("2006-01-02") + "'"
		default:
			return "'" + at.AddDate(0, -1, 0).Add(time.Duration(rng.IntN(5)-2)*24*time.Hour).UTC().Format("2006-01-02 15:04:05") + "'"
		}
	}
	row := func() string {
		return fmt.Sprintf("(%d, %s, %s, %s, %d)", rng.IntN(6), val(0), val(1), val(2), rng.IntN(6))
	}
	check("creating the views")
	advances := []time.Duration{7 * time.Minute, 25 * time.Minute, time.Hour, 3 * time.Hour, 26 * time.Hour}
	steps := 120
	if testing.Short() {
		steps = 40
	}
	for i := 0; i < steps; i++ {
		if i == steps/4 {
			// A view created later, in an epoch whose time reaches the
			// other views too.
			clk.advance(50 * time.Minute)
			q := `SELECT id, v FROM ev WHERE ts <= now() - interval '20 minutes' AND ts > now() - interval '1 day'`
			exec("CREATE MATERIALIZED VIEW late AS " + q)
			views, names = append(views, q), append(names, "late")
			check("creating a view 50 minutes later")
		}
		var stmt string
		switch n := rng.IntN(10); {
		case n < 3:
			clk.advance(advances[rng.IntN(len(advances))])
			if err := eng.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			check("advancing the clock")
			continue
		case n < 6:
			stmt = "INSERT INTO ev VALUES " + row() + ", " + row()
		case n < 8:
			stmt = fmt.Sprintf("DELETE FROM ev WHERE id = %d", rng.IntN(6))
		default:
			stmt = fmt.Sprintf("UPDATE ev SET ts = %s, v = %d WHERE id = %d", val(0), rng.IntN(6), rng.IntN(6))
		}
		if rng.IntN(4) == 0 {
			// The clock moves and a statement comes before any tick:
			// its epoch takes the due changes too.
			clk.advance(advances[rng.IntN(2)])
		}
		if _, err := pgc.Exec(ctx, stmt).ReadAll(); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", stmt, err)
		}
		res, err := s.Exec(ctx, stmt, nil)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if strings.HasSuffix(res.Tag, " 0") {
			// A statement that changed nothing makes no epoch: the
			// views stand at the last one's time until the next.
			if err := eng.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}
		check(stmt)
		if i == steps/2 {
			s.Close()
			if err := eng.Close(); err != nil {
				t.Fatal(err)
			}
			clk.advance(time.Hour)
			if eng, err = Open(st, Options{Clock: clk.Now}); err != nil {
				t.Fatalf("reopen: %v", err)
			}
			s = eng.NewSession()
			exec("SET TimeZone = '" + zone + "'")
			if err := eng.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			check("restarting an hour later")
		}
	}
	t.Logf("%d view changes, %d of them by the clock alone", changes, byClock)
	if byClock < 20 {
		t.Fatalf("only %d view changes came from the clock", byClock)
	}
}

// TestTemporalFilterRefused: uses of now() in a view that cannot follow
// the clock fail at CREATE with 0A000.
func TestTemporalFilterRefused(t *testing.T) {
	ctx := context.Background()
	s := OpenMemory().NewSession()
	if _, err := s.Exec(ctx, "CREATE TABLE ev (id int, ts timestamptz)", nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT id, now() AS at FROM ev`,
		`SELECT id FROM ev WHERE ts > now() - interval '1 hour' OR id = 1`,
		`SELECT id FROM ev WHERE NOT (ts > now())`,
		`SELECT id FROM ev WHERE ts = now()`,
		`SELECT id FROM ev WHERE ts > date_trunc('hour', now())`,
		`SELECT id FROM ev WHERE ts > now() - id * interval '1 minute'`,
		`SELECT id FROM ev WHERE extract(hour FROM now()) = 3`,
		`SELECT count(*) FILTER (WHERE ts > now()) FROM ev`,
		`SELECT a.id FROM ev a JOIN ev b ON a.ts > now() - (b.ts - a.ts)`,
		`SELECT id FROM ev WHERE ts > localtimestamp`,
	} {
		_, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW v AS "+q, nil)
		if errs.CodeOf(err) != errs.FeatureNotSupported {
			t.Errorf("%s: got %v, want 0A000", q, err)
		}
	}
	// EXPLAIN INCREMENTAL shows the temporal filter, gathered on one
	// worker, above the ordinary conjuncts.
	if _, err := s.Exec(ctx, "CREATE MATERIALIZED VIEW recent AS SELECT id FROM ev WHERE ts > now() - interval '1 hour' AND id > 0", nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.Exec(ctx, "EXPLAIN INCREMENTAL recent", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "project [ev.id]  state=none\n" +
		"  temporal filter (ev.ts > (now() - '01:00:00'::interval))  state=schedule(time,row→weight)\n" +
		"    exchange  gather (one worker)\n" +
		"      filter (ev.id > 0)  state=none\n" +
		"        scan ev  state=none\n"
	if got := formatRows(res); got != want {
		t.Errorf("EXPLAIN INCREMENTAL:\n%s\nwant:\n%s", got, want)
	}
}
