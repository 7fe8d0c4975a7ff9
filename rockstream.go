// Package rockstream is RockStream's embedded Go API: open an instance,
// run SQL against it, and read tables and materialized views, with no
// network in between. The CLI, the tests and Go programs use it.
//
//	db, err := rockstream.Open(rockstream.Options{})
//	defer db.Close()
//	_, err = db.Exec(ctx, "CREATE TABLE t (a int)")
//	res, err := db.Query(ctx, "SELECT * FROM t")
//
// A DB runs every statement of one Session in order. Each statement outside
// a transaction block is its own transaction; BEGIN ... COMMIT groups
// statements into one transaction, which commits as one epoch across every
// view; and the statements of one string passed to Exec are one
// transaction, as a PostgreSQL server runs one query string.
//
// A statement that fails returns an *Error, which carries PostgreSQL's
// SQLSTATE, message, detail, hint and position; tell one failure from
// another with errors.As:
//
//	var e *rockstream.Error
//	if errors.As(err, &e) && e.SQLState == "23505" {
//		// unique violation: the key is already there
//	}
package rockstream

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/errs"
	// The Kafka source and sink and the PostgreSQL source register
	// themselves.
	_ "github.com/rockstream/rockstream/internal/connectors/kafka"
	_ "github.com/rockstream/rockstream/internal/connectors/pgcdc"
	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/sql/split"
	"github.com/rockstream/rockstream/internal/types"
)

// Options configures an instance.
type Options struct {
	// Storage is the directory of a durable instance; empty means in
	// memory. A durable instance recovers its tables and views from the
	// directory when opened, without recomputing the views.
	Storage string
	// Relaxed skips the fsync of each epoch. A crash may then lose the
	// last epochs acknowledged; use it for benchmarks only.
	Relaxed bool
	// CacheBytes bounds the storage's block cache, the in-memory working
	// set of a durable instance; 0 means 256 MiB.
	CacheBytes int64
	// ChangeLogRetention is how many epochs of view changes are kept for
	// AS OF EPOCH reads; 0 means 100,000.
	ChangeLogRetention uint64
	// Logger receives the storage's log; nil logs warnings and errors to
	// standard error.
	Logger *slog.Logger
	// Workers is how many workers run the views' circuits and ad-hoc
	// queries in parallel; 0 means the number of cores. Results are the
	// same for any number.
	Workers int
	// ParallelMinRows is the smallest change, in rows, that a view's step
	// splits between the workers (smaller ones run on one, which is
	// cheaper); 0 means 100,000.
	ParallelMinRows int
	// Clock gives the time now() reads, and the time the views' temporal
	// filters follow; nil means the system clock. An instance with a
	// clock of its own keeps no timer for its temporal filters: the
	// program calls Tick after moving the clock.
	Clock func() time.Time
	// TempDir is where queries spill sorts and operator state past
	// work_mem, in a directory of the instance's own made there; empty
	// means <Storage>/tmp, or the system's temporary directory for an
	// in-memory instance.
	TempDir string
}

// Column describes one result column.
type Column struct {
	Name string
	// TypeName is the column's type as PostgreSQL's format_type prints it.
	TypeName string
	// TypeOID is the PostgreSQL type OID.
	TypeOID uint32
}

// Result is the outcome of one statement.
type Result struct {
	// Columns is nil for a statement that returns no rows (CREATE, INSERT
	// without RETURNING, ...), and non-nil (possibly empty) otherwise.
	Columns []Column
	// Rows holds each row's values in PostgreSQL's text output format; a
	// nil pointer is NULL.
	Rows [][]*string
	// Tag is the PostgreSQL command tag: "SELECT 3", "INSERT 0 1",
	// "CREATE TABLE", ...
	Tag string
}

// SplitStatements splits a script into its statements, as psql does,
// using PostgreSQL's lexer so that semicolons in strings and comments do not
// split. Each statement keeps its terminating semicolon (so that errors at
// it are reported as PostgreSQL reports them) and loses leading -- comments
// and whitespace, as psql does; text with no tokens other than comments is
// dropped. A
// script the lexer cannot read (an unterminated string) is returned whole,
// so that running it reports the error.
func SplitStatements(script string) ([]string, error) {
	var out []string
	for _, st := range split.Statements(script) {
		out = append(out, st.Text)
	}
	return out, nil
}

// DB is an open RockStream instance. It is safe for concurrent use.
type DB struct {
	eng *runtime.Engine
	// connectors runs the instance's sources and sinks
	// (docs/connectors.md).
	connectors *connectors.Manager
	// stmts keeps the statements run with arguments (args.go).
	stmts stmtCache
}

// Open opens an instance and starts running its sources and sinks.
func Open(opts Options) (*DB, error) {
	eng, err := instance.Open(instance.Options(opts))
	if err != nil {
		return nil, err
	}
	return &DB{eng: eng, connectors: connectors.Start(eng, connectors.Options{})}, nil
}

// Close releases the instance. A durable instance's committed state is
// already on disk; Close waits for writes in flight.
func (db *DB) Close() error {
	cerr := db.connectors.Close()
	return errors.Join(cerr, db.eng.Close())
}

// Tick runs an epoch at the clock's current time if the temporal filters
// of the views have changes due by then (docs/sql.md, "Temporal
// filters"); the instance does so by itself when they fall due, by the
// clock it was opened with. A program with its own clock (Options.Clock)
// calls Tick after moving it, to see the views as of the new time.
func (db *DB) Tick(ctx context.Context) error { return db.eng.Tick(ctx) }

// Epoch returns the last committed epoch.
func (db *DB) Epoch() uint64 { return db.eng.Epoch() }

// VerifyViews checks that every materialized view equals its query
// recomputed from scratch, and returns an error naming the first that
// does not.
func (db *DB) VerifyViews() error { return db.eng.VerifyViews() }

// Session returns a new session: a connection's worth of state
// (transaction block, settings).
func (db *DB) Session() *Session { return &Session{s: db.eng.NewSession(), stmts: &db.stmts} }

// Exec runs one or more statements in a fresh session and returns the last
// one's result. args bind $1, $2, ... (single statement only).
func (db *DB) Exec(ctx context.Context, sql string, args ...any) (*Result, error) {
	s := db.Session()
	defer s.Close()
	return s.Exec(ctx, sql, args...)
}

// Query is Exec for a statement that returns rows.
func (db *DB) Query(ctx context.Context, sql string, args ...any) (*Result, error) {
	res, err := db.Exec(ctx, sql, args...)
	if err == nil && res.Columns == nil {
		return nil, publicError(errs.Newf(errs.FeatureNotSupported, "Query runs statements that return rows; run %s with Exec", res.Tag))
	}
	return res, err
}

// Session is one client's sequence of statements. A Session is not safe
// for concurrent use; open one per goroutine.
type Session struct {
	s     *runtime.Session
	stmts *stmtCache
}

// Exec runs one statement (or several, separated by semicolons, returning
// the last result). An error in a transaction block aborts the block, as in
// PostgreSQL. When ctx ends, the running statement stops and fails with
// SQLSTATE 57014, changing nothing ("canceling statement due to statement
// timeout" past ctx's deadline, "... due to user request" otherwise).
//
// Several statements run as PostgreSQL runs them when a client sends them
// in one query string (psql -c, a driver's simple protocol): all are
// parsed before any runs; outside a transaction block they form one
// transaction, which the first error rolls back, and the statements after
// it do not run. BEGIN, COMMIT and ROLLBACK among them open and end blocks
// as they do in PostgreSQL (docs/sql.md, "Transactions"). An error's
// position counts from the start of sql.
func (s *Session) Exec(ctx context.Context, sql string, args ...any) (*Result, error) {
	var res *Result
	err := s.ExecEach(ctx, sql, func(r *Result) error {
		res = r
		return nil
	}, args...)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return &Result{}, nil
	}
	return res, nil
}

// ExecEach is Exec, passing the result of every statement to fn, in order,
// as each one completes. An error fn returns stops the statements there and
// fails them as a statement's error does.
func (s *Session) ExecEach(ctx context.Context, sql string, fn func(*Result) error, args ...any) error {
	return publicError(s.execEach(ctx, sql, fn, args))
}

func (s *Session) execEach(ctx context.Context, sql string, fn func(*Result) error, args []any) error {
	if len(args) > 0 {
		// Parameters belong to a single statement.
		res, err := execArgs(ctx, s.s, s.stmts, sql, args)
		if err == nil {
			err = streamingError(res)
		}
		if err != nil {
			return err
		}
		return fn(publicResult(res, s.s.Zone()))
	}
	stmts, bad := runtime.ParseMessage(sql)
	if bad != nil {
		stmts = []*runtime.Statement{bad}
	}
	s.s.BeginMessage(len(stmts) > 1)
	for _, st := range stmts {
		res, err := s.s.ExecStatement(ctx, st, nil)
		if err == nil {
			if err = streamingError(res); err == nil {
				err = fn(publicResult(res, s.s.Zone()))
			}
		}
		if err != nil {
			s.s.FailTransaction()
			_ = s.s.EndMessage(ctx)
			return st.PositionInMessage(sql, err)
		}
	}
	return s.s.EndMessage(ctx)
}

// Notice is a message to the client that is not an error, such as the
// warning for COMMIT outside a transaction block.
type Notice struct {
	// Severity is WARNING, NOTICE, ...
	Severity string
	SQLState string
	Message  string
}

// OnNotice sets the function that receives the session's notices, as its
// statements raise them; nil discards them.
func (s *Session) OnNotice(fn func(Notice)) {
	if fn == nil {
		s.s.OnNotice(nil)
		return
	}
	s.s.OnNotice(func(n runtime.Notice) { fn(Notice(n)) })
}

// Close ends the session, rolling back an open transaction.
func (s *Session) Close() error {
	s.s.Close()
	return nil
}

// publicResult is a result with its values in PostgreSQL's text format,
// timestamptz values shown in the session time zone zone.
func publicResult(r *runtime.Result, zone types.Zone) *Result {
	out := &Result{Tag: r.Tag}
	if r.Columns == nil {
		return out
	}
	out.Columns = make([]Column, len(r.Columns))
	for i, c := range r.Columns {
		out.Columns[i] = Column{Name: c.Name, TypeName: c.Type.String(), TypeOID: c.Type.OID()}
	}
	out.Rows = make([][]*string, len(r.Rows))
	for i, row := range r.Rows {
		vals := make([]*string, len(row))
		for j, v := range row {
			if !v.IsNull() {
				s := types.FormatZone(v, r.Columns[j].Type, zone)
				vals[j] = &s
			}
		}
		out.Rows[i] = vals
	}
	return out
}
