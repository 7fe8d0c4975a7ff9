package runtime

import (
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestTruncateInBlocks empties tables inside transaction blocks: what the
// block wrote before TRUNCATE goes too, what it writes after stays, and
// a rolled-back TRUNCATE leaves every row. (Outside blocks TRUNCATE is
// compared with PostgreSQL in internal/oracle/testdata/truncate.sql.)
func TestTruncateInBlocks(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(v) AS s FROM t")
	mustExec(t, s, "INSERT INTO t VALUES (1, 1), (2, 2)")
	count := func(want string) {
		t.Helper()
		if got := rowLine(mustExec(t, s, "SELECT * FROM total").Rows[0], nil); got != want {
			t.Fatalf("total = %q, want %q", got, want)
		}
	}

	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO t VALUES (3, 3)")
	if tag := mustExec(t, s, "TRUNCATE t").Tag; tag != "TRUNCATE TABLE" {
		t.Errorf("tag %q", tag)
	}
	count("0 | NULL\n")
	mustExec(t, s, "INSERT INTO t VALUES (1, 10)")
	mustExec(t, s, "COMMIT")
	count("1 | 10\n")

	mustExec(t, s, "BEGIN")
	mustExec(t, s, "TRUNCATE TABLE t")
	mustExec(t, s, "ROLLBACK")
	count("1 | 10\n")
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestTruncateBehindWatermark: rows behind a table's watermark are final,
// so emptying the table fails as DELETE does, and nothing changes.
func TestTruncateBehindWatermark(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE bids (ts timestamp, price int) WITH (event_time = 'ts', lateness = '1 minute')")
	mustExec(t, s, "INSERT INTO bids VALUES ('2024-01-01 10:00', 1), ('2024-01-01 10:05', 2)")
	_, err := s.Exec(t.Context(), "TRUNCATE bids", nil)
	if code := errs.SQLState(err); code != "55000" {
		t.Fatalf("TRUNCATE behind the watermark: %v (SQLSTATE %s), want 55000", err, code)
	}
	if n := len(mustExec(t, s, "SELECT * FROM bids").Rows); n != 2 {
		t.Fatalf("%d rows left, want 2", n)
	}
}
