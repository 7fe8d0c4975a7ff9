package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestMessageCanceledRollsBack cancels a statement in the middle of a
// message: the message's earlier writes roll back with it, and the write
// token it held is free for the next writer.
func TestMessageCanceledRollsBack(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	mustExecAll(t, s, "CREATE TABLE t (a int)", "CREATE MATERIALIZED VIEW n AS SELECT count(*) AS n FROM t",
		"SET rockstream.max_recursion_iterations = 100000000")
	stmts, bad := ParseMessage("INSERT INTO t VALUES (1); " + endlessRecursion + "; INSERT INTO t VALUES (2)")
	if bad != nil {
		t.Fatal(bad.SyntaxError())
	}
	ctx := context.Background()
	s.BeginMessage(len(stmts) > 1)
	if _, err := s.ExecStatement(ctx, stmts[0], nil); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.ExecStatement(cctx, stmts[1], nil); errs.SQLState(err) != "57014" {
		t.Fatalf("canceled statement: got %v, want 57014", err)
	}
	if err := s.EndMessage(ctx); err != nil {
		t.Fatalf("end of a failed message: %v", err)
	}
	if s.TxnStatus() != 'I' {
		t.Fatalf("status %c after the message, want I", s.TxnStatus())
	}
	other := eng.NewSession()
	defer other.Close()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := other.Exec(wctx, "INSERT INTO t VALUES (3)", nil); err != nil {
		t.Fatalf("a writer after the message: %v", err)
	}
	if got := query(t, other, "SELECT * FROM n"); got != "1\n" {
		t.Fatalf("count after the canceled message: %q, want 1", got)
	}
}

// TestConcurrentMessages runs messages of several statements from many
// sessions at once, every other one failing at its end: the failed ones
// leave nothing, the others everything, and every view equals its query.
func TestConcurrentMessages(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	mustExecAll(t, eng.NewSession(), "CREATE TABLE t (s int, i int, PRIMARY KEY (s, i))",
		"CREATE MATERIALIZED VIEW per_s AS SELECT s, count(*) AS n, sum(i) AS total FROM t GROUP BY s")
	const sessions, messages = 8, 20
	var wg sync.WaitGroup
	errc := make(chan error, sessions)
	for sn := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := eng.NewSession()
			defer s.Close()
			for m := range messages {
				text := fmt.Sprintf("INSERT INTO t VALUES (%d, %d); SELECT count(*) FROM per_s; INSERT INTO t VALUES (%d, %d)", sn, 2*m, sn, 2*m+1)
				if m%2 == 1 {
					text += "; SELECT 1/0"
				}
				out := execMessage(s, text)
				if failed := m%2 == 1; failed != strings.Contains(out, "error (22012)") || strings.Count(out, "error") > 1 {
					errc <- fmt.Errorf("session %d message %d: %s", sn, m, out)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	s := eng.NewSession()
	defer s.Close()
	if got, want := query(t, s, "SELECT count(*), sum(n) FROM per_s"), fmt.Sprintf("%d|%d\n", sessions, sessions*messages); got != want {
		t.Errorf("per_s: got %q, want %q", got, want)
	}
	if err := eng.VerifyViews(); err != nil {
		t.Error(err)
	}
}

// query runs q in s and returns its rows, one line each, values separated
// by |.
func query(t *testing.T, s *Session, q string) string {
	t.Helper()
	res, err := s.Exec(context.Background(), q, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return formatRows(res)
}
