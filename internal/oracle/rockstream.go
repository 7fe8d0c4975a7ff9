package oracle

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
)

// StatementTimeout bounds one statement on RockStream; a statement that
// takes longer ends the run (the engine may be deadlocked).
var StatementTimeout = 60 * time.Second

// RockStream runs scripts on an in-memory RockStream instance through the
// embedded API: one session for the script, one observer session.
type RockStream struct {
	db       *rockstream.DB
	script   *rockstream.Session
	observer *rockstream.Session
	// broken is set once a call panicked or timed out: the instance may
	// hold locks or half-applied state, so it is not used again.
	broken error
}

var _ Engine = (*RockStream)(nil)

// OpenRockStream opens a fresh in-memory instance whose circuits step on
// n workers (WorkerOptions).
func OpenRockStream(n int) (r *RockStream, err error) {
	return openRockStream(WorkerOptions(n))
}

// OpenRockStreamAt opens a durable instance on the directory dir, as
// OpenRockStream: a new one when dir is empty or missing, else the one a
// previous engine closed there, with its tables and views (restart
// tests).
func OpenRockStreamAt(dir string, n int) (r *RockStream, err error) {
	opts := WorkerOptions(n)
	opts.Storage, opts.Relaxed = dir, true
	return openRockStream(opts)
}

// WorkerOptions are the options of a test instance on n workers that
// splits every step between them however small (ParallelMinRows 1), so
// that small test data goes through the exchanges too; n = 0 keeps the
// defaults.
func WorkerOptions(n int) rockstream.Options {
	if n == 0 {
		return rockstream.Options{}
	}
	return rockstream.Options{Workers: n, ParallelMinRows: 1}
}

// TestWorkers returns the worker counts the oracle tests run RockStream
// with: the comma-separated list in ROCKSTREAM_TEST_WORKERS (for example
// "1,2,3,8"), by default 1 and 3. Every count must give PostgreSQL's
// answers, and so the same answers as one worker.
func TestWorkers() []int {
	s := os.Getenv("ROCKSTREAM_TEST_WORKERS")
	if s == "" {
		return []int{1, 3}
	}
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			panic(fmt.Sprintf("ROCKSTREAM_TEST_WORKERS=%q: want a list of positive numbers such as 1,2,3,8", s))
		}
		ns = append(ns, n)
	}
	return ns
}

func openRockStream(opts rockstream.Options) (r *RockStream, err error) {
	r = &RockStream{}
	err = r.call(func() error {
		db, err := rockstream.Open(opts)
		if err != nil {
			return err
		}
		r.db = db
		r.script = db.Session()
		r.observer = db.Session()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("opening RockStream: %w", err)
	}
	return r, nil
}

// Name implements Engine.
func (r *RockStream) Name() string { return "rockstream" }

// Exec implements Engine.
func (r *RockStream) Exec(ctx context.Context, sql string) (*Result, error) {
	return r.exec(ctx, r.script, sql)
}

// Observe implements Engine.
func (r *RockStream) Observe(ctx context.Context, sql string) (*Result, error) {
	return r.exec(ctx, r.observer, sql)
}

// Close implements Engine.
func (r *RockStream) Close() error {
	if r.broken != nil || r.db == nil {
		return nil
	}
	return r.call(func() error {
		r.script.Close()
		r.observer.Close()
		return r.db.Close()
	})
}

func (r *RockStream) exec(ctx context.Context, s *rockstream.Session, sql string) (*Result, error) {
	var res *rockstream.Result
	var stmtErr error
	err := r.call(func() error {
		res, stmtErr = s.Exec(ctx, sql)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if stmtErr != nil {
		return nil, &Error{SQLState: errs.SQLState(stmtErr), Message: stmtErr.Error()}
	}
	if res == nil {
		return nil, fmt.Errorf("rockstream returned neither a result nor an error for %q", sql)
	}
	out := &Result{Rows: res.Rows, Tag: res.Tag}
	if res.Columns != nil {
		out.Columns = make([]Column, len(res.Columns))
		for i, c := range res.Columns {
			out.Columns[i] = Column{Name: c.Name, TypeOID: c.TypeOID}
		}
	}
	return out, nil
}

// call runs f, turning a panic or a timeout into an error that ends the
// run and marks the instance broken.
func (r *RockStream) call(f func() error) error {
	if r.broken != nil {
		return fmt.Errorf("rockstream is unusable after an earlier failure: %w", r.broken)
	}
	type outcome struct {
		err      error
		panicked bool
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{fmt.Errorf("rockstream panicked: %v\n%s", p, shortStack()), true}
			}
		}()
		done <- outcome{err: f()}
	}()
	select {
	case o := <-done:
		if o.panicked {
			r.broken = o.err
		}
		return o.err
	case <-time.After(StatementTimeout):
		r.broken = fmt.Errorf("rockstream did not finish a statement within %v", StatementTimeout)
		return r.broken
	}
}

// shortStack returns the panicking goroutine's stack without the frames
// of the recovery machinery, cut to a readable length.
func shortStack() string {
	lines := strings.Split(string(debug.Stack()), "\n")
	// Start at the runtime's panic frame: what precedes it is the
	// recovery machinery.
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") {
			lines = lines[i:]
			break
		}
	}
	if len(lines) > 30 {
		lines = append(lines[:30], "\t...")
	}
	return strings.Join(lines, "\n")
}
