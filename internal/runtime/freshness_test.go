package runtime

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestLastCommitEpoch follows the epoch each commit reports: the epoch
// holding its writes, and for a transaction that changed nothing the
// frontier when it ended.
func TestLastCommitEpoch(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	run := sqlRunner(t)
	s, other := eng.NewSession(), eng.NewSession()
	defer s.Close()
	defer other.Close()
	step := func(sql string, want uint64) {
		t.Helper()
		run(s, sql)
		if got := s.LastCommitEpoch(); got != want {
			t.Fatalf("after %s: last commit epoch %d, want %d (frontier %d)", sql, got, want, eng.Epoch())
		}
		if got := run(s, "SHOW rockstream.last_commit_epoch"); got != strconv.FormatUint(want, 10)+"\n" {
			t.Fatalf("after %s: SHOW rockstream.last_commit_epoch = %q, want %d", sql, got, want)
		}
	}
	step("SHOW rockstream.frontier", 0) // no commit yet: SET and SHOW commit nothing
	step("CREATE TABLE t (k int PRIMARY KEY, v int)", 1)
	step("INSERT INTO t VALUES (1, 1)", 2)
	step("UPDATE t SET v = 2 WHERE k = 99", 2) // changed nothing: visible at the frontier
	step("BEGIN", 2)
	step("INSERT INTO t VALUES (2, 2)", 2) // not committed yet
	step("COMMIT", 3)
	step("BEGIN", 3)
	step("INSERT INTO t VALUES (3, 3)", 3)
	step("UPDATE t SET v = 30 WHERE k = 3", 3) // the block now holds the write token
	step("COMMIT", 4)
	run(other, "INSERT INTO t VALUES (10, 10)")
	step("SELECT count(*) FROM t", 5) // a read commits at the frontier it read
	run(other, "INSERT INTO t VALUES (11, 11)")
	step("BEGIN", 5)
	step("SELECT count(*) FROM t", 5)
	step("ROLLBACK", 5) // a rollback commits nothing
}

// TestMinEpochWaits: a read with rockstream.min_epoch ahead of the
// frontier waits for the commit that reaches it, and no longer.
func TestMinEpochWaits(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	run := sqlRunner(t)
	writer, reader := eng.NewSession(), eng.NewSession()
	defer writer.Close()
	defer reader.Close()
	run(writer, "CREATE TABLE t (k int)")
	run(reader, "SET rockstream.min_epoch = 2")
	got := make(chan string, 1)
	go func() {
		res, err := reader.Exec(context.Background(), "SELECT count(*) FROM t", nil)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- formatRows(res)
	}()
	select {
	case g := <-got:
		t.Fatalf("the read answered %q before epoch 2 committed", g)
	case <-time.After(100 * time.Millisecond):
	}
	run(writer, "INSERT INTO t VALUES (1)")
	select {
	case g := <-got:
		if g != "1\n" {
			t.Fatalf("the read after epoch 2 answered %q, want 1", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read still waits after epoch 2 committed")
	}

	// Bounded by statement_timeout, with both epochs in the detail.
	run(reader, "SET rockstream.min_epoch = 10")
	run(reader, "SET statement_timeout = '50ms'")
	_, err := reader.Exec(context.Background(), "SELECT count(*) FROM t", nil)
	var e *errs.Error
	if !errors.As(err, &e) || e.SQLState != "57014" || e.Message != "canceling statement due to statement timeout" ||
		e.Detail != "Waiting for epoch 10 (rockstream.min_epoch); the commit frontier is at epoch 2." {
		t.Fatalf("timed-out wait: %#v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the timeout's error does not match the context's: %v", err)
	}

	// A block holding the write token cannot wait: nothing commits.
	run(reader, "SET statement_timeout = 0")
	run(reader, "RESET rockstream.min_epoch")
	run(reader, "BEGIN")
	run(reader, "UPDATE t SET k = 2")
	run(reader, "SET rockstream.min_epoch = 10")
	_, err = reader.Exec(context.Background(), "SELECT count(*) FROM t", nil)
	if !errors.As(err, &e) || e.SQLState != "25001" || !strings.Contains(e.Message, "holds the write lock") {
		t.Fatalf("a wait in a block holding the write token: %v", err)
	}
	run(reader, "ROLLBACK")
	run(reader, "RESET rockstream.min_epoch")

	// A context canceled by the caller stops the wait.
	run(reader, "SET rockstream.min_epoch = 10")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = reader.Exec(ctx, "SELECT 1", nil)
	if !errors.As(err, &e) || e.SQLState != "57014" || e.Message != "canceling statement due to user request" || !strings.Contains(e.Detail, "epoch 10") {
		t.Fatalf("canceled wait: %v", err)
	}
}

// TestMinEpochSetting: rockstream.min_epoch takes a non-negative integer.
func TestMinEpochSetting(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	run := sqlRunner(t)
	s := eng.NewSession()
	defer s.Close()
	for _, bad := range []string{"-1", "1.5", "'x'", "''", "'18446744073709551616'"} {
		_, err := s.Exec(context.Background(), "SET rockstream.min_epoch = "+bad, nil)
		var e *errs.Error
		if !errors.As(err, &e) || e.SQLState != "22023" || !strings.Contains(e.Message, `invalid value for parameter "rockstream.min_epoch"`) {
			t.Errorf("SET rockstream.min_epoch = %s: %v, want 22023", bad, err)
		}
	}
	run(s, "SET rockstream.min_epoch = '007'")
	if got := run(s, "SHOW rockstream.min_epoch"); got != "7\n" {
		t.Errorf("SHOW rockstream.min_epoch = %q", got)
	}
	run(s, "SET rockstream.min_epoch = 0")
	if got := run(s, "SELECT 1"); got != "1\n" {
		t.Errorf("a read with min_epoch 0 = %q", got)
	}
}
