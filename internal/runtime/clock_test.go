package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestClock checks what now() and the other functions of the time read:
// the transaction's start (a block's BEGIN, else the statement's own),
// statement_timestamp() the statement's, one value for every row and
// every statement of a transaction, each execution of a prepared
// statement its own; and that views refuse them.
// The engine's clock advances one second every time it is read.
func TestClock(t *testing.T) {
	ctx := context.Background()
	_, s, query, check := clockedSession(t, 123456789)
	// Each autocommit statement reads the clock once, at its start.
	check("SELECT now(), current_timestamp, transaction_timestamp(), statement_timestamp()",
		"2026-12-01 10:00:01.123456+00|2026-12-01 10:00:01.123456+00|2026-12-01 10:00:01.123456+00|2026-12-01 10:00:01.123456+00\n")
	check("SELECT current_timestamp(0), current_timestamp(3), localtimestamp, localtimestamp(1), current_date",
		"2026-12-01 10:00:02+00|2026-12-01 10:00:02.123+00|2026-12-01 10:00:02.123456|2026-12-01 10:00:02.1|2026-12-01\n")
	check("SELECT pg_typeof(now())::text, pg_typeof(localtimestamp)::text, pg_typeof(current_date)::text",
		"timestamp with time zone|timestamp without time zone|date\n")

	// In a block, every statement reads the BEGIN's time; the statement's
	// own time moves on.
	query("CREATE TABLE ev (id int, at timestamptz, st timestamptz)")
	query("BEGIN")                                                                              // 10:00:05 (the CREATE read 10:00:04)
	query("INSERT INTO ev SELECT g, now(), statement_timestamp() FROM generate_series(1, 3) g") // 10:00:06
	query("INSERT INTO ev VALUES (4, current_timestamp, statement_timestamp())")                // 10:00:07
	check("SELECT now(), statement_timestamp()", "2026-12-01 10:00:05.123456+00|2026-12-01 10:00:08.123456+00\n")
	query("COMMIT")
	check("SELECT id, at, st FROM ev ORDER BY id",
		"1|2026-12-01 10:00:05.123456+00|2026-12-01 10:00:06.123456+00\n"+
			"2|2026-12-01 10:00:05.123456+00|2026-12-01 10:00:06.123456+00\n"+
			"3|2026-12-01 10:00:05.123456+00|2026-12-01 10:00:06.123456+00\n"+
			"4|2026-12-01 10:00:05.123456+00|2026-12-01 10:00:07.123456+00\n")

	// UPDATE and DELETE read it too.
	query("UPDATE ev SET at = now() WHERE id = 1")                             // 10:00:11
	query("DELETE FROM ev WHERE at < now() - interval '5 seconds' AND id = 2") // 10:00:12: 10:00:05 is older
	check("SELECT id, at FROM ev WHERE id <= 2", "1|2026-12-01 10:00:11.123456+00\n")

	// The statements of one message outside a block are one transaction.
	stmts, bad := ParseMessage("INSERT INTO ev VALUES (20, now(), statement_timestamp()); INSERT INTO ev VALUES (21, now(), statement_timestamp())")
	if bad != nil {
		t.Fatal(bad)
	}
	s.BeginMessage(true)
	for _, st := range stmts {
		if _, err := s.ExecStatement(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EndMessage(ctx); err != nil {
		t.Fatal(err)
	}
	check("SELECT count(DISTINCT at), count(DISTINCT st) FROM ev WHERE id >= 20", "1|2\n")

	// A prepared statement reads the clock at every execution.
	for _, q := range []string{"SELECT now()", "INSERT INTO ev VALUES ($1, now(), NULL) RETURNING at"} {
		p, err := s.Prepare(q, nil)
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for i := range 2 {
			var params []types.Value
			if len(p.ParamTypes) > 0 {
				params = []types.Value{types.MakeInt(types.Int4, int64(10+i))}
			}
			res, err := s.ExecPrepared(ctx, p, params)
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, formatRows(res))
		}
		if seen[0] == seen[1] {
			t.Errorf("%s: two executions read the same time %q", q, seen[0])
		}
	}

	// CREATE TABLE AS runs its query once, at the statement's time.
	query("CREATE TABLE stamped AS SELECT id, now() AS at FROM ev WHERE id = 1")
	check("SELECT count(*) FROM stamped WHERE at = (SELECT at FROM ev WHERE id = 1)", "0\n")
	check("SELECT count(*) FROM stamped WHERE at > (SELECT at FROM ev WHERE id = 1)", "1\n")

	// A view is bound once and read later: only a temporal filter
	// (temporal_oracle_test.go) may read the clock.
	for _, q := range []string{
		"CREATE MATERIALIZED VIEW recent AS SELECT id, now() AS at FROM ev WHERE at > now() - interval '1 hour'",
		"CREATE MATERIALIZED VIEW today AS SELECT id FROM ev WHERE at::date = current_date",
		"CREATE VIEW stamped_view AS SELECT id, localtimestamp FROM ev",
	} {
		if _, err := s.Exec(ctx, q, nil); errs.SQLState(err) != "0A000" {
			t.Errorf("%s: got %v, want 0A000", q, err)
		}
	}
}

// TestClockDefaults checks a column DEFAULT that reads the clock: every
// row a statement fills gets the statement's (the transaction's) time,
// in INSERT, INSERT ... SELECT, DEFAULT in VALUES, UPDATE ... SET c =
// DEFAULT and a source's records without the column; and the catalog
// shows the default as written.
func TestClockDefaults(t *testing.T) {
	ctx := context.Background()
	e, _, query, check := clockedSession(t, 0)
	query("CREATE TABLE ev (id int PRIMARY KEY, at timestamptz DEFAULT now(), day date DEFAULT current_date, later timestamptz DEFAULT now() + interval '1 hour')") // 10:00:01
	query("INSERT INTO ev (id) VALUES (1), (2)")                                                                                                                    // 10:00:02
	query("INSERT INTO ev (id) SELECT g FROM generate_series(3, 4) g")                                                                                              // 10:00:03
	query("BEGIN")                                                                                                                                                  // 10:00:04
	query("INSERT INTO ev VALUES (5, DEFAULT, DEFAULT, DEFAULT)")                                                                                                   // 10:00:05
	query("INSERT INTO ev (id, day) VALUES (6, '2000-01-01')")                                                                                                      // 10:00:06
	query("COMMIT")                                                                                                                                                 // 10:00:07
	query("UPDATE ev SET at = DEFAULT, later = DEFAULT WHERE id = 1")                                                                                               // 10:00:08
	if _, err := e.Ingest(ctx, &Ingest{Changes: []RowChange{{Table: "ev", Op: Insert,                                                                               // 10:00:09
		Row: zset.Row{types.MakeInt(types.Int4, 7), types.Null, types.Null, types.Null}, Absent: []bool{false, true, true, true}}}}); err != nil {
		t.Fatal(err)
	}
	check("SELECT id, at, day, later FROM ev ORDER BY id",
		"1|2026-12-01 10:00:08+00|2026-12-01|2026-12-01 11:00:08+00\n"+
			"2|2026-12-01 10:00:02+00|2026-12-01|2026-12-01 11:00:02+00\n"+
			"3|2026-12-01 10:00:03+00|2026-12-01|2026-12-01 11:00:03+00\n"+
			"4|2026-12-01 10:00:03+00|2026-12-01|2026-12-01 11:00:03+00\n"+
			"5|2026-12-01 10:00:04+00|2026-12-01|2026-12-01 11:00:04+00\n"+
			"6|2026-12-01 10:00:04+00|2000-01-01|2026-12-01 11:00:04+00\n"+
			"7|2026-12-01 10:00:09+00|2026-12-01|2026-12-01 11:00:09+00\n")
	check("SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'ev' ORDER BY ordinal_position",
		"id|NULL\nat|now()\nday|current_date\nlater|now() + '1 hour'::interval\n")
}

// clockedSession opens an engine whose clock starts at 2026-12-01
// 10:00:00 and nanos and advances one second every time it is read, and
// returns it, a session, and the session's query (the rows as text) and
// check (the rows against want) of one statement.
func clockedSession(t *testing.T, nanos int) (*Engine, *Session, func(q string) string, func(q, want string)) {
	t.Helper()
	tick := time.Date(2026, 12, 1, 10, 0, 0, nanos, time.UTC)
	e, err := Open(NewMemoryStore(), Options{Clock: func() time.Time {
		tick = tick.Add(time.Second)
		return tick
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := e.NewSession()
	query := func(q string) string {
		t.Helper()
		res, err := s.Exec(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return formatRows(res)
	}
	check := func(q, want string) {
		t.Helper()
		if got := query(q); got != want {
			t.Errorf("%s:\n got %q\nwant %q", q, got, want)
		}
	}
	return e, s, query, check
}
