package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestUnstoredTable checks an unmaterialized table end to end: its views
// take its rows, nothing is written under its rows prefix, every read of
// its rows and every view that would need them fails with its SQLSTATE
// and changes nothing, and after a reopen it is still unmaterialized and
// its views still exact.
func TestUnstoredTable(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(map[int]string{1: "workers=1", 3: "workers=3"}[workers], func(t *testing.T) { testUnstoredTable(t, workers) })
	}
}

func testUnstoredTable(t *testing.T, workers int) {
	ctx := context.Background()
	st := NewMemoryStore()
	opts := Options{Workers: workers, ParallelMinRows: 1}
	e, err := Open(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	run := func(sql string) string {
		t.Helper()
		s := e.NewSession()
		defer s.Close()
		res, err := s.Exec(ctx, sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return formatRows(res)
	}
	fails := func(sql string, code errs.Code, msg string) {
		t.Helper()
		s := e.NewSession()
		defer s.Close()
		res, err := s.Exec(ctx, sql, nil)
		if err == nil && res.CopyOut != nil {
			_, err = res.CopyOut.Next(ctx)
			res.CopyOut.Close()
		}
		if errs.CodeOf(err) != code || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: got %v, want %s containing %q", sql, err, code, msg)
		}
	}
	fails("CREATE TABLE nope (a int) WITH (materialized = false)", errs.InvalidParameterValue, "must be append-only")
	fails("CREATE TABLE nope (a int PRIMARY KEY) APPEND ONLY WITH (materialized = false)", errs.FeatureNotSupported, "cannot have a primary key")
	fails("CREATE TABLE nope (a int) APPEND ONLY WITH (materialized = 'maybe')", errs.InvalidParameterValue, "materialized")

	run("CREATE TABLE bids (auction int, price int, bidder text) APPEND ONLY WITH (materialized = false)")
	run("CREATE TABLE people (id int PRIMARY KEY, name text)")
	run("INSERT INTO people VALUES (1, 'ann'), (2, 'bob')")
	run("CREATE MATERIALIZED VIEW per_auction AS SELECT auction, count(*) AS n, max(price) AS top FROM bids GROUP BY auction")
	run("CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n FROM bids")
	run("CREATE MATERIALIZED VIEW named AS SELECT p.name, b.price FROM bids b JOIN people p ON p.id = b.auction")
	run("CREATE VIEW plain AS SELECT * FROM bids")
	run("INSERT INTO bids VALUES (1, 10, 'x'), (1, 30, 'y'), (2, 5, 'x')")
	run("INSERT INTO bids VALUES (2, 7, 'z'), (1, 10, 'x')")
	if n := countPrefix(t, e, relPrefix(nsTableRows, e.mu.cat.lookup("bids").id)); n != 0 {
		t.Errorf("%d keys under the rows prefix of an unmaterialized table", n)
	}
	if got := run("SELECT relname, reloptions FROM pg_class WHERE relname = 'bids'"); !strings.Contains(got, "materialized=false") {
		t.Errorf("pg_class.reloptions: %s", got)
	}

	read := "it keeps no rows"
	fails("SELECT * FROM bids", errs.FeatureNotSupported, read)
	fails("SELECT count(*) FROM bids", errs.FeatureNotSupported, read)
	fails("SELECT * FROM plain", errs.FeatureNotSupported, read)
	fails("COPY bids TO STDOUT", errs.FeatureNotSupported, read)
	fails("CREATE TABLE copy AS SELECT * FROM bids", errs.FeatureNotSupported, read)
	fails("INSERT INTO people SELECT auction + 10, bidder FROM bids", errs.FeatureNotSupported, read)
	fails("SELECT * FROM bids AS OF EPOCH 1", errs.FeatureNotSupported, "")
	fails("CREATE MATERIALIZED VIEW late AS SELECT bidder FROM bids", errs.PrerequisiteState, "has taken 5 already")
	fails("CREATE MATERIALIZED VIEW late AS SELECT * FROM plain", errs.PrerequisiteState, "has taken 5 already")
	fails("DELETE FROM bids", errs.WrongObjectType, "append-only")
	fails("UPDATE bids SET price = 0", errs.WrongObjectType, "append-only")
	fails("TRUNCATE bids", errs.WrongObjectType, "append-only")
	if e.mu.cat.lookup("late") != nil || e.mu.cat.lookup("copy") != nil {
		t.Error("a refused statement created a relation")
	}

	check := func(when string) {
		t.Helper()
		if got, want := run("SELECT * FROM per_auction ORDER BY auction"), "1|3|30\n2|2|7\n"; got != want {
			t.Errorf("per_auction %s:\n%s\nwant:\n%s", when, got, want)
		}
		if got, want := run("SELECT * FROM total"), "5\n"; got != want {
			t.Errorf("total %s: %s, want %s", when, got, want)
		}
		if got, want := run("SELECT * FROM named ORDER BY name, price"), "ann|10\nann|10\nann|30\nbob|5\nbob|7\n"; got != want {
			t.Errorf("named %s:\n%s\nwant:\n%s", when, got, want)
		}
	}
	check("after the inserts")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e, err = Open(st, opts); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e.Close()
	check("after reopening")
	fails("SELECT * FROM bids", errs.FeatureNotSupported, read)
	fails("CREATE MATERIALIZED VIEW late AS SELECT bidder FROM bids", errs.PrerequisiteState, "has taken 5 already")
	run("INSERT INTO bids VALUES (3, 1, 'w')")
	if got, want := run("SELECT * FROM total"), "6\n"; got != want {
		t.Errorf("total after an insert after reopening: %s, want %s", got, want)
	}
	if err := e.VerifyViews(); err != nil {
		t.Errorf("VerifyViews: %v", err) // it skips views it cannot recompute
	}

	// Over a table that has taken no rows, a view starts empty; drop and
	// create again resets the count.
	run("CREATE TABLE clicks (page text) APPEND ONLY WITH (materialized = false)")
	run("CREATE MATERIALIZED VIEW pages AS SELECT page, count(*) AS n FROM clicks GROUP BY page")
	run("INSERT INTO clicks VALUES ('a'), ('a'), ('b')")
	if got, want := run("SELECT * FROM pages ORDER BY page"), "a|2\nb|1\n"; got != want {
		t.Errorf("pages:\n%s\nwant:\n%s", got, want)
	}
	run("DROP TABLE clicks CASCADE")
	run("CREATE TABLE clicks (page text) APPEND ONLY WITH (materialized = false)")
	run("CREATE MATERIALIZED VIEW pages AS SELECT page, count(*) AS n FROM clicks GROUP BY page")
}

// countPrefix returns how many keys the engine's store holds under prefix.
func countPrefix(t *testing.T, e *Engine, prefix []byte) int {
	t.Helper()
	keys, _, err := prefixSize(e.mu.store, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return int(keys)
}
