package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// execFixed runs stmt on every shard at once with the fixed values v and
// returns each shard's error.
func (c *shardCluster) execFixed(stmt string, v StatementValues) []error {
	ctx, cancel := context.WithTimeout(WithStatementValues(context.Background(), v), time.Minute)
	defer cancel()
	errList := make([]error, len(c.sessions))
	var wg sync.WaitGroup
	for i, s := range c.sessions {
		wg.Go(func() { _, errList[i] = s.Exec(ctx, stmt, nil) })
	}
	wg.Wait()
	return errList
}

// singleRows returns the rows of query q on the single node s, printed
// as PostgreSQL prints them, sorted.
func singleRows(t testing.TB, s *Session, q string) []string {
	t.Helper()
	res, err := s.Exec(context.Background(), q, nil)
	if err != nil {
		t.Fatalf("single node: %s: %v", q, err)
	}
	one := resultLines(res)
	slices.Sort(one)
	return one
}

// sameAsSingle fails t unless got, the shards' rows of q after
// statement after, are the single node's.
func sameAsSingle(t testing.TB, single *Session, after, q string, got []string) {
	t.Helper()
	if one := singleRows(t, single, q); !slices.Equal(got, one) {
		t.Fatalf("after %q, %s differs from the single node:\nshards:\n  %s\nsingle node:\n  %s",
			after, q, strings.Join(got, "\n  "), strings.Join(one, "\n  "))
	}
}

// valuesOf is n VALUES rows, row i (from 1) format with i.
func valuesOf(n int, format string) string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(format, i+1)
	}
	return strings.Join(rows, ", ")
}

// TestShardFixedValues runs writes whose rows read the clock and
// random(), in statements and in column defaults, into tables without a
// primary key (routed by the whole row) on three shards and on a single
// node, each statement with the same fixed values everywhere. After
// every statement the union of the shards' rows, each on the shard that
// owns its bucket, equals the single node's: no row is doubled or lost.
func TestShardFixedValues(t *testing.T) {
	c := newShardCluster(t, 3, false)
	single := OpenMemory().NewSession()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	seq := 0
	run := func(stmt string) {
		t.Helper()
		seq++
		v := StatementValues{Timestamp: base.Add(time.Duration(seq) * 1234567 * time.Microsecond), Seed: uint64(seq) * 0x9E3779B97F4A7C15}
		for i, err := range c.execFixed(stmt, v) {
			if err != nil {
				t.Fatalf("%s: shard %d: %v", stmt, i, err)
			}
		}
		if _, err := single.Exec(WithStatementValues(context.Background(), v), stmt, nil); err != nil {
			t.Fatalf("%s: single node: %v", stmt, err)
		}
	}
	// compare checks every relation's rows against the single node's;
	// cols, when not "*", leaves out what a WHERE drew on each shard.
	compare := func(after, cols string) {
		t.Helper()
		for _, rel := range []string{"ev", "stamps", "per_at", "cheap"} {
			q := "SELECT " + cols + " FROM " + rel
			if rel != "ev" {
				q = "SELECT * FROM " + rel
			}
			owned := func(e *Engine) *object { return e.mu.cat.lookup(rel) }
			if cols != "*" {
				if rel != "ev" && rel != "stamps" {
					continue // views over what the shards drew apart
				}
				// Every row on the shard that owns it, as many as on
				// the single node.
				all := c.rows("SELECT * FROM "+rel, owned)
				if n, one := fmt.Sprint(len(all)), singleRows(t, single, "SELECT count(*) FROM "+rel); one[0] != n {
					t.Fatalf("after %q, the shards hold %s rows of %s, the single node %s", after, n, rel, one[0])
				}
				owned = nil // not the stored rows
			}
			sameAsSingle(t, single, after, q, c.rows(q, owned))
		}
	}
	for _, stmt := range []string{
		"CREATE TABLE ev (at timestamptz DEFAULT now(), r float8, note text)",
		"CREATE TABLE stamps (n int, at timestamp DEFAULT localtimestamp, d date DEFAULT current_date, s timestamptz DEFAULT statement_timestamp())",
		"CREATE MATERIALIZED VIEW per_at AS SELECT at, count(*) AS n, sum(r) AS r FROM ev GROUP BY at",
		"CREATE MATERIALIZED VIEW cheap AS SELECT note, r FROM ev WHERE r < 0.5",
	} {
		run(stmt)
	}
	for _, stmt := range []string{
		"INSERT INTO ev (note) VALUES ('a'), ('b'), ('a')",
		"INSERT INTO ev (r, note) VALUES " + valuesOf(300, "(random(), 'x%d')"),
		"INSERT INTO ev VALUES (now() + interval '1 day', random(), 'f'), (current_timestamp, random() * 10, 'g')",
		"INSERT INTO ev (r, note) VALUES (random(), 'h'), (random(), 'h'), (random(), 'h')",
		"INSERT INTO stamps (n) VALUES " + valuesOf(50, "(%d)"),
		"INSERT INTO stamps VALUES (100, localtimestamp, current_date + 1, transaction_timestamp())",
		"UPDATE ev SET at = now() WHERE note = 'a'",
		"UPDATE ev SET at = DEFAULT, note = 'b2' WHERE note = 'b'",
		"UPDATE stamps SET at = localtimestamp - interval '1 hour' WHERE n % 3 = 0",
		"DELETE FROM ev WHERE r > 0.9",
		"INSERT INTO ev (note, r) VALUES " + valuesOf(100, "('y%[1]d', %[1]d * random())"),
	} {
		run(stmt)
		compare(stmt, "*")
	}
	// A prepared INSERT, whose binding is kept between its executions,
	// draws and reads the clock with each execution's values.
	prepare := func(s *Session) *Prepared {
		p, err := s.Prepare("INSERT INTO ev (r, note) VALUES (random(), $1), (random(), $1 || '2')", []types.Type{types.Of(types.Text)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	prepared := make([]*Prepared, len(c.sessions))
	for i, s := range c.sessions {
		prepared[i] = prepare(s)
	}
	onSingle := prepare(single)
	for n := range 4 {
		seq++
		v := StatementValues{Timestamp: base.Add(time.Duration(seq) * time.Minute), Seed: uint64(seq)}
		ctx := WithStatementValues(context.Background(), v)
		note := []types.Value{types.MakeText(fmt.Sprint("p", n))}
		for i, err := range c.each(func(s *Session, e *Engine) error {
			_, err := s.ExecPrepared(ctx, prepared[slices.Index(c.sessions, s)], note)
			return err
		}) {
			if err != nil {
				t.Fatalf("prepared: shard %d: %v", i, err)
			}
		}
		if _, err := single.ExecPrepared(ctx, onSingle, note); err != nil {
			t.Fatalf("prepared: single node: %v", err)
		}
		compare(fmt.Sprint("prepared INSERT ", n), "*")
	}
	// An UPDATE's SET draws random() for each row from the seed and the
	// row's key, wherever the row lives; its WHERE draws on each shard
	// for the shard's rows: the rows stay exactly once, though which
	// ones it picks is the shards' own.
	for _, stmt := range []string{
		"UPDATE ev SET r = random() WHERE note LIKE 'x1%'",
		"UPDATE ev SET r = random() * 2, at = now() + random() * interval '1 hour' WHERE r > 0.5",
	} {
		run(stmt)
		compare(stmt, "*")
	}
	stmt := "UPDATE ev SET note = note || '!' WHERE random() < 0.5"
	run(stmt)
	compare(stmt, "at, r")
}

// TestShardUnfixedValues checks that a shard refuses, with 0A000 naming
// the function, a statement calling a function whose value must be fixed
// when the statement comes without fixed values, and that the functions
// refused everywhere (sequences, serial and identity columns among them)
// stay refused with fixed values.
func TestShardUnfixedValues(t *testing.T) {
	c := newShardCluster(t, 2, false)
	single := OpenMemory().NewSession()
	for _, stmt := range []string{
		"CREATE TABLE ev (at timestamptz DEFAULT now(), r float8, note text)",
		"CREATE TABLE plain (n int, r float8)",
		"INSERT INTO plain VALUES (1, 0.5)",
	} {
		c.must(stmt)
		if _, err := single.Exec(context.Background(), stmt, nil); err != nil {
			t.Fatal(err)
		}
	}
	for stmt, fn := range map[string]string{
		"INSERT INTO ev (note) VALUES ('a')":                 "now()",
		"INSERT INTO ev VALUES (NULL, random(), 'a')":        "random()",
		"INSERT INTO ev VALUES (current_timestamp, 1, 'a')":  "current_timestamp",
		"INSERT INTO plain VALUES (1, length(setseed(0.5)))": "setseed()",
		"UPDATE plain SET r = random()":                      "random()",
		"UPDATE ev SET at = DEFAULT":                         "now()",
		"UPDATE ev SET at = statement_timestamp()":           "statement_timestamp()",
		"DELETE FROM plain WHERE r < random()":               "random()",
		"SELECT now()":                                       "now()",
		"SELECT current_date":                                "current_date",
	} {
		for i, err := range c.execErrs(stmt) {
			if errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), fn) || !strings.Contains(err.Error(), "shard mode") {
				t.Errorf("%s: shard %d: want 0A000 naming %s and shard mode, got %v", stmt, i, fn, err)
			}
		}
		// A single node fixes them itself.
		if _, err := single.Exec(context.Background(), stmt, nil); err != nil {
			t.Errorf("%s: single node: %v", stmt, err)
		}
	}
	for i, err := range c.each(func(s *Session, _ *Engine) error {
		p, err := s.Prepare("INSERT INTO ev (note) VALUES ($1)", nil)
		if err != nil {
			return err
		}
		_, err = s.ExecPrepared(context.Background(), p, []types.Value{types.MakeText("a")})
		return err
	}) {
		if errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), "now()") {
			t.Errorf("prepared INSERT filling DEFAULT now(): shard %d: want 0A000 naming now(), got %v", i, err)
		}
	}
	v := StatementValues{Timestamp: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Seed: 7}
	for _, stmt := range []string{
		"INSERT INTO ev VALUES (clock_timestamp(), 1, 'a')",
		"INSERT INTO ev (note) SELECT gen_random_uuid()::text",
		"SELECT timeofday()",
		"SELECT nextval('q')",
		"CREATE SEQUENCE q",
		"CREATE TABLE ids (id serial, v int)",
		"CREATE TABLE ids (id int GENERATED ALWAYS AS IDENTITY)",
		"CREATE TABLE draws (r float8 DEFAULT random())",
	} {
		for i, err := range c.execFixed(stmt, v) {
			if errs.SQLState(err) != "0A000" {
				t.Errorf("%s: shard %d: want 0A000, got %v", stmt, i, err)
			}
		}
	}
	// Nothing was written, and the shards still step together.
	c.must("INSERT INTO plain VALUES (2, 1.5)")
	if got := c.rows("SELECT * FROM plain", nil); !slices.Equal(got, []string{"1 | 0.5", "2 | 1.5"}) {
		t.Fatalf("plain: %v", got)
	}
	if got := c.rows("SELECT * FROM ev", nil); len(got) != 0 {
		t.Fatalf("ev: %v", got)
	}
}
