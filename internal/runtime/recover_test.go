package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestRecovery reopens an engine on the store of a closed one: the
// catalog, the epoch and every view come back without recomputation, and
// maintenance continues where it stopped.
func TestRecovery(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	e1, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e1.NewSession()
	run := func(s *Session, sql string) string {
		t.Helper()
		res, err := s.Exec(ctx, sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return formatRows(res)
	}
	run(s, "CREATE TABLE t (k int PRIMARY KEY, g text NOT NULL DEFAULT 'none', v numeric(8,2))")
	run(s, "CREATE TABLE u (g text, label text)")
	run(s, "CREATE VIEW tu AS SELECT t.g, label, v FROM t JOIN u ON t.g = u.g")
	run(s, "CREATE MATERIALIZED VIEW sums AS SELECT g, sum(v) AS s, count(*) AS n FROM t GROUP BY g")
	run(s, "CREATE MATERIALIZED VIEW labels AS SELECT label, max(v) AS m FROM tu GROUP BY label")
	run(s, "CREATE TABLE dropped (a int)")
	run(s, "DROP TABLE dropped")
	run(s, "INSERT INTO t VALUES (1, 'a', 1.5), (2, 'a', 2), (3, 'b', 7)")
	run(s, "INSERT INTO t (k, v) VALUES (4, 1)")
	run(s, "INSERT INTO u VALUES ('a', 'A'), ('b', 'B')")
	before := run(s, "SELECT * FROM sums ORDER BY g") + run(s, "SELECT * FROM labels ORDER BY label")
	epoch := e1.Epoch()
	s.Close()
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}

	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e2.Close()
	if e2.Epoch() != epoch {
		t.Fatalf("epoch after reopen = %d, want %d", e2.Epoch(), epoch)
	}
	s2 := e2.NewSession()
	after := run(s2, "SELECT * FROM sums ORDER BY g") + run(s2, "SELECT * FROM labels ORDER BY label")
	if after != before {
		t.Fatalf("views changed across reopen:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Defaults, keys and views work on: the recovered circuits keep
	// maintaining the stored state.
	run(s2, "INSERT INTO t (k, v) VALUES (5, 10)")
	if _, err := s2.Exec(ctx, "INSERT INTO t VALUES (1, 'x', 0)", nil); err == nil || !strings.Contains(err.Error(), "t_pkey") {
		t.Fatalf("primary key not enforced after reopen: %v", err)
	}
	run(s2, "DELETE FROM u WHERE g = 'b'")
	run(s2, "UPDATE t SET v = v + 1 WHERE g = 'a'")
	if got := run(s2, "SELECT * FROM sums ORDER BY g"); got != "a|5.50|2\nb|7.00|1\nnone|11.00|2\n" {
		t.Fatalf("sums after reopen and writes:\n%s", got)
	}
	if got := run(s2, "SELECT * FROM labels"); got != "A|3.00\n" {
		t.Fatalf("labels after reopen and writes:\n%s", got)
	}
	if err := e2.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	// The epoch a materialized view was created at survives: reading it
	// before then still fails; at it, it succeeds.
	if _, err := s2.Exec(ctx, "SELECT * FROM sums AS OF EPOCH 3", nil); errs.SQLState(err) != "22023" || !strings.Contains(err.Error(), "created at epoch 4") {
		t.Fatalf("sums AS OF EPOCH 3 after reopen: %v", err)
	}
	if got := run(s2, "SELECT count(*) FROM sums AS OF EPOCH 4"); got != "0\n" {
		t.Fatalf("sums AS OF EPOCH 4 after reopen: %q", got)
	}
	// A dropped object's id is not reused.
	run(s2, "CREATE TABLE fresh (a int)")
	e2.mu.RLock()
	id := e2.mu.cat.lookup("fresh").id
	e2.mu.RUnlock()
	if id != 7 {
		t.Fatalf("new table got id %d, want 7 (ids 1-6 were used)", id)
	}
}

// TestAsOfEpoch reads a view as it was after earlier epochs.
func TestAsOfEpoch(t *testing.T) {
	ctx := context.Background()
	e := OpenMemory()
	defer e.Close()
	s := e.NewSession()
	for _, q := range []string{
		"CREATE TABLE t (a int)",
		"CREATE MATERIALIZED VIEW c AS SELECT count(*) AS n, sum(a) AS s FROM t",
		"INSERT INTO t VALUES (1)",
		"INSERT INTO t VALUES (2), (3)",
		"DELETE FROM t WHERE a = 1",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"2": "0|NULL\n", "3": "1|1\n", "4": "3|6\n", "5": "2|5\n"}
	for epoch, w := range want {
		res, err := s.Exec(ctx, "SELECT n, s FROM c AS OF EPOCH "+epoch, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatRows(res); got != w {
			t.Errorf("AS OF EPOCH %s = %q, want %q", epoch, got, w)
		}
	}
	if _, err := s.Exec(ctx, "SELECT * FROM c AS OF EPOCH 9", nil); err == nil {
		t.Error("AS OF a future epoch succeeded")
	}
	if _, err := s.Exec(ctx, "SELECT * FROM t AS OF EPOCH 3", nil); err == nil {
		t.Error("AS OF over a table succeeded")
	}
	// Before the epoch that created the view (and at epoch 0, before
	// anything) it did not exist: an error, not an empty view.
	for _, epoch := range []string{"0", "1"} {
		_, err := s.Exec(ctx, "SELECT count(*) FROM c AS OF EPOCH "+epoch, nil)
		if errs.SQLState(err) != "22023" || !strings.Contains(err.Error(), "did not exist at epoch "+epoch+" (it was created at epoch 2)") {
			t.Errorf("AS OF EPOCH %s, before the view: %v", epoch, err)
		}
	}
	ch, frontier, err := e.Changes("c", 3)
	if err != nil {
		t.Fatal(err)
	}
	if frontier != 5 || len(ch) != 4 {
		t.Fatalf("Changes after 3: frontier %d, %d changes %v", frontier, len(ch), ch)
	}
}

func formatRows(res *Result) string { return res.RowsText() }

// TestOperationIDs retries a DDL statement with the same operation id, as
// a client does when the answer to the first attempt was lost: the retry
// answers as the first did and creates nothing twice, and the catalog
// revision advances once per committed DDL, across a reopen.
func TestOperationIDs(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	e, _ := Open(st, Options{})
	s := e.NewSession()
	for i := 0; i < 2; i++ {
		if _, err := s.Exec(ctx, "SET rockstream.operation_id = 'op-1'", nil); err != nil {
			t.Fatal(err)
		}
		res, err := s.Exec(ctx, "CREATE TABLE t (a int)", nil)
		if err != nil || res.Tag != "CREATE TABLE" {
			t.Fatalf("attempt %d: %v %v", i, res, err)
		}
	}
	if _, err := s.Exec(ctx, "CREATE TABLE t (a int)", nil); errs.SQLState(err) != "42P07" {
		t.Fatalf("the same DDL without an operation id: %v", err)
	}
	e.mu.RLock()
	rev := e.mu.cat.revision
	e.mu.RUnlock()
	if rev != 1 {
		t.Fatalf("revision = %d, want 1", rev)
	}
	e.Close()
	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if e2.mu.cat.revision != 1 {
		t.Fatalf("revision after reopen = %d, want 1", e2.mu.cat.revision)
	}
}
