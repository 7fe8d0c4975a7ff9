package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// Statements that would run for minutes, each stopped by its context.
// The deadlines below are generous for a loaded machine; the stop
// latency is logged.
const (
	// endlessRecursion is a UNION ALL recursion that never reaches a
	// fixpoint; with the iteration limit at its maximum it runs for hours.
	endlessRecursion = `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r`
	// hugeJoin is a three-way cross join of big (cancelSetup) whose last
	// join evaluates its condition over 125 million pairs and keeps none.
	hugeJoin = `SELECT count(*) FROM big a, big b, big c WHERE a.x + b.x + c.x < 0`
	// stopWithin bounds how long after its context ends a statement may
	// take to return.
	stopWithin = 5 * time.Second
)

// cancelSetup creates big, 500 rows, and a view over it.
func cancelSetup(t *testing.T, eng *Engine) {
	t.Helper()
	var values strings.Builder
	for i := 1; i <= 500; i++ {
		if i > 1 {
			values.WriteString(", ")
		}
		fmt.Fprintf(&values, "(%d, %d)", i, i%7)
	}
	mustExecAll(t, eng.NewSession(),
		`CREATE TABLE big (x int PRIMARY KEY, g int)`,
		`INSERT INTO big VALUES `+values.String(),
		`CREATE MATERIALIZED VIEW per_group AS SELECT g, count(*) AS n, sum(x) AS s FROM big GROUP BY g`,
	)
}

// mustExecAll runs stmts in s, each of which must succeed.
func mustExecAll(t *testing.T, s *Session, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		mustExec(t, s, q)
	}
}

// runUntil runs query in s under ctx and returns its error and how long
// after ctx ended it returned.
func runUntil(t *testing.T, ctx context.Context, s *Session, query string) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	_, err := s.Exec(ctx, query, nil)
	returned := time.Now()
	<-ctx.Done()
	lag := returned.Sub(start)
	if dl, ok := ctx.Deadline(); ok {
		lag = returned.Sub(dl)
	}
	return err, lag
}

// cancelAfter returns a context canceled with cause after d.
func cancelAfter(d time.Duration, cause error) (context.Context, func() time.Time) {
	ctx, cancel := context.WithCancelCause(context.Background())
	at := make(chan time.Time, 1)
	timer := time.AfterFunc(d, func() {
		at <- time.Now()
		cancel(cause)
	})
	return ctx, func() time.Time {
		timer.Stop()
		cancel(nil)
		select {
		case t := <-at:
			return t
		default:
			return time.Now()
		}
	}
}

func checkCanceled(t *testing.T, err error, message string) {
	t.Helper()
	if err == nil {
		t.Fatal("the statement succeeded; want it canceled")
	}
	if got := errs.SQLState(err); got != "57014" {
		t.Fatalf("SQLSTATE %s (%v), want 57014", got, err)
	}
	if err.Error() != message {
		t.Fatalf("message %q, want %q", err.Error(), message)
	}
}

func TestCancelStopsLongQueries(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	cancelSetup(t, eng)
	for _, q := range []string{endlessRecursion, hugeJoin} {
		t.Run("cancel/"+q[:20], func(t *testing.T) {
			s := eng.NewSession()
			mustExec(t, s, `SET rockstream.max_recursion_iterations = 100000000`)
			ctx, stop := cancelAfter(100*time.Millisecond, ErrCanceledByUser)
			start := time.Now()
			_, err := s.Exec(ctx, q, nil)
			returned := time.Now()
			canceledAt := stop()
			checkCanceled(t, err, "canceling statement due to user request")
			if !errors.Is(err, context.Canceled) {
				t.Errorf("errors.Is(%v, context.Canceled) is false", err)
			}
			lag := returned.Sub(canceledAt)
			t.Logf("ran %v, stopped %v after the cancel", returned.Sub(start), lag)
			if lag > stopWithin {
				t.Errorf("stopped %v after the cancel", lag)
			}
			checkUsable(t, s)
		})
		t.Run("deadline/"+q[:20], func(t *testing.T) {
			s := eng.NewSession()
			mustExec(t, s, `SET rockstream.max_recursion_iterations = 100000000`)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			err, lag := runUntil(t, ctx, s, q)
			checkCanceled(t, err, "canceling statement due to statement timeout")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(%v, context.DeadlineExceeded) is false", err)
			}
			t.Logf("stopped %v after the deadline", lag)
			if lag > stopWithin {
				t.Errorf("stopped %v after the deadline", lag)
			}
			checkUsable(t, s)
		})
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// checkUsable runs a statement that needs the session's state to be sound.
func checkUsable(t *testing.T, s *Session) {
	t.Helper()
	res := mustExec(t, s, `SELECT count(*) FROM big`)
	if got := rowLine(res.Rows[0], nil); got != "500\n" {
		t.Fatalf("count after the cancel: %s, want 500", got)
	}
	if s.InTransaction() {
		t.Fatal("a transaction block is open after an autocommit statement")
	}
}

// TestCancelCause: an *errs.Error given as the cause is what the
// statement reports, and a deadline's cause says statement timeout.
func TestCancelCause(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	cancelSetup(t, eng)
	s := eng.NewSession()
	mustExec(t, s, `SET rockstream.max_recursion_iterations = 100000000`)

	shutdown := errs.New(errs.AdminShutdown, "terminating connection due to administrator command")
	ctx, stop := cancelAfter(50*time.Millisecond, shutdown)
	_, err := s.Exec(ctx, endlessRecursion, nil)
	stop()
	if errs.SQLState(err) != "57P01" || err.Error() != shutdown.Error() {
		t.Fatalf("got %v (%s), want the shutdown cause", err, errs.SQLState(err))
	}

	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, ErrStatementTimeout)
	defer cancel()
	_, err = s.Exec(ctx, endlessRecursion, nil)
	checkCanceled(t, err, "canceling statement due to statement timeout")

	// Canceled before it starts: no work at all.
	ctx, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = s.Exec(ctx, `SELECT 1`, nil)
	checkCanceled(t, err, "canceling statement due to user request")
	checkUsable(t, s)
}

// storeKeys counts the committed store's keys, and those under prefix.
func storeKeys(t *testing.T, eng *Engine, prefix []byte) (all, under int) {
	t.Helper()
	eng.mu.RLock()
	defer eng.mu.RUnlock()
	if err := eng.mu.store.Scan(nil, []byte{0xff, 0xff, 0xff, 0xff}, func(k, _ []byte) bool {
		all++
		if len(k) >= len(prefix) && string(k[:len(prefix)]) == string(prefix) {
			under++
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return all, under
}

// TestCancelCreateMaterializedView: a backfill stopped halfway leaves no
// view, no catalog entry and no state.
func TestCancelCreateMaterializedView(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	cancelSetup(t, eng)
	eng.mu.RLock()
	id, epoch := eng.mu.cat.nextID, eng.mu.epoch
	eng.mu.RUnlock()
	keysBefore, _ := storeKeys(t, eng, nil)

	s := eng.NewSession()
	ctx, stop := cancelAfter(100*time.Millisecond, ErrCanceledByUser)
	_, err := s.Exec(ctx, `CREATE MATERIALIZED VIEW slow AS `+hugeJoin, nil)
	stop()
	checkCanceled(t, err, "canceling statement due to user request")

	keysAfter, _ := storeKeys(t, eng, nil)
	if keysAfter != keysBefore {
		t.Errorf("the store has %d keys after the canceled CREATE, %d before", keysAfter, keysBefore)
	}
	for _, ns := range []byte{nsOpState, nsTableRows} {
		if _, n := storeKeys(t, eng, relPrefix(ns, id)); n != 0 {
			t.Errorf("%d keys under namespace %#x of the canceled view's id", n, ns)
		}
	}
	if eng.Epoch() != epoch {
		t.Errorf("epoch %d after the canceled CREATE, %d before", eng.Epoch(), epoch)
	}
	if _, err := s.Exec(context.Background(), `SELECT * FROM slow`, nil); errs.SQLState(err) != "42P01" {
		t.Fatalf("reading the canceled view: %v, want 42P01", err)
	}
	// The name is free and the next view works.
	mustExec(t, s, `CREATE MATERIALIZED VIEW slow AS SELECT g, max(x) FROM big GROUP BY g`)
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestCancelInsideBlock: a canceled UPDATE fails its block, and COMMIT
// rolls the whole block back.
func TestCancelInsideBlock(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	cancelSetup(t, eng)
	s := eng.NewSession()
	mustExecAll(t, s, `BEGIN`, `INSERT INTO big VALUES (1000, 1)`, `DELETE FROM big WHERE x = 1`)
	ctx, stop := cancelAfter(100*time.Millisecond, ErrCanceledByUser)
	_, err := s.Exec(ctx, `UPDATE big SET x = x + 10000 WHERE x IN (SELECT a.x FROM big a, big b, big c WHERE a.x + b.x + c.x < 0)`, nil)
	stop()
	checkCanceled(t, err, "canceling statement due to user request")
	if _, err := s.Exec(context.Background(), `SELECT 1`, nil); errs.SQLState(err) != "25P02" {
		t.Fatalf("a statement after the canceled one: %v, want 25P02", err)
	}
	res := mustExec(t, s, `COMMIT`)
	if res.Tag != "ROLLBACK" {
		t.Fatalf("COMMIT of the failed block: %s, want ROLLBACK", res.Tag)
	}
	res = mustExec(t, s, `SELECT count(*), min(x), max(x) FROM big`)
	if got := rowLine(res.Rows[0], nil); got != "500 | 1 | 500\n" {
		t.Fatalf("after the rollback: %s, want 500 | 1 | 500", got)
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestCancelQueuedWrite: an autocommit write canceled while it waits for
// the write token withdraws at once and never runs; the writer holding
// the token is not disturbed.
func TestCancelQueuedWrite(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	cancelSetup(t, eng)
	holder, queued := eng.NewSession(), eng.NewSession()
	// The block's INSERT alone would wait in the block (deferred.go); its
	// DELETE takes the write token.
	mustExecAll(t, holder, `BEGIN`, `INSERT INTO big VALUES (1001, 2)`, `DELETE FROM big WHERE x = -1`)

	ctx, stop := cancelAfter(100*time.Millisecond, ErrCanceledByUser)
	start := time.Now()
	_, err := queued.Exec(ctx, `INSERT INTO big VALUES (1002, 3)`, nil)
	stop()
	checkCanceled(t, err, "canceling statement due to user request")
	if d := time.Since(start); d > stopWithin {
		t.Fatalf("the queued write returned after %v", d)
	}

	mustExec(t, holder, `COMMIT`)
	// The committer has now seen the withdrawn request; a later write
	// goes through it.
	mustExec(t, queued, `INSERT INTO big VALUES (1003, 4)`)
	res := mustExec(t, queued, `SELECT x FROM big WHERE x > 1000 ORDER BY x`)
	if len(res.Rows) != 2 || rowLine(res.Rows[0], nil) != "1001\n" || rowLine(res.Rows[1], nil) != "1003\n" {
		t.Fatalf("rows above 1000: %v, want 1001 and 1003", res.Rows)
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestCancelLeavesOthersAlone: while one session's long statements are
// canceled, another session's reads and writes go on and commit.
func TestCancelLeavesOthersAlone(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	cancelSetup(t, eng)
	done := make(chan error, 1)
	go func() {
		s := eng.NewSession()
		for i := range 3 {
			ctx, stop := cancelAfter(50*time.Millisecond, ErrCanceledByUser)
			q := hugeJoin
			if i == 1 {
				q = `CREATE MATERIALIZED VIEW slow AS ` + hugeJoin
			}
			_, err := s.Exec(ctx, q, nil)
			stop()
			if errs.SQLState(err) != "57014" {
				done <- fmt.Errorf("%s: %v, want 57014", q, err)
				return
			}
		}
		done <- nil
	}()
	other := eng.NewSession()
	for i := range 50 {
		mustExec(t, other, fmt.Sprintf(`INSERT INTO big VALUES (%d, %d)`, 2000+i, i))
		res := mustExec(t, other, `SELECT sum(n) FROM per_group`)
		if got, want := rowLine(res.Rows[0], nil), fmt.Sprintf("%d\n", 501+i); got != want {
			t.Fatalf("after insert %d: sum(n) = %s, want %s", i, got, want)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestCancelCopyFrom: a COPY FROM whose context has ended inserts nothing.
func TestCancelCopyFrom(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	cancelSetup(t, eng)
	s := eng.NewSession()
	res := mustExec(t, s, `COPY big FROM STDIN`)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrStatementTimeout)
	_, err := s.CopyFrom(ctx, res.CopyIn, strings.NewReader("3000\t1\n3001\t2\n"))
	checkCanceled(t, err, "canceling statement due to statement timeout")
	checkUsable(t, s)
}

// TestStatementTimeoutSetting: SET statement_timeout bounds the statements
// of an embedded session, which the gateway does not see.
func TestStatementTimeoutSetting(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	cancelSetup(t, eng)
	s := eng.NewSession()
	mustExecAll(t, s, `SET rockstream.max_recursion_iterations = 100000000`, `SET statement_timeout = '100ms'`)
	start := time.Now()
	_, err := s.Exec(context.Background(), endlessRecursion, nil)
	checkCanceled(t, err, "canceling statement due to statement timeout")
	if d := time.Since(start); d > stopWithin {
		t.Fatalf("stopped after %v", d)
	}
	mustExecAll(t, s, `SET statement_timeout = 0`)
	checkUsable(t, s)
}
