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
// view.
package rockstream

import "context"

// Options configures an instance.
type Options struct {
	// Storage is the directory of a durable instance; empty means in
	// memory.
	Storage string
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

// SplitStatements splits a script into its statements (without trailing
// semicolons), as psql does, using PostgreSQL's lexer so that semicolons in
// strings and comments do not split.
func SplitStatements(script string) ([]string, error) { panic("not yet implemented") }

// DB is an open RockStream instance.
type DB struct{}

// Open opens an instance.
func Open(opts Options) (*DB, error) { panic("not yet implemented") }

// Close releases the instance.
func (db *DB) Close() error { panic("not yet implemented") }

// Session returns a new session: a connection's worth of state
// (transaction block, settings).
func (db *DB) Session() *Session { panic("not yet implemented") }

// Exec runs one or more statements in a fresh session and returns the last
// one's result. args bind $1, $2, ... (single statement only).
func (db *DB) Exec(ctx context.Context, sql string, args ...any) (*Result, error) {
	panic("not yet implemented")
}

// Query is Exec for a statement that returns rows.
func (db *DB) Query(ctx context.Context, sql string, args ...any) (*Result, error) {
	panic("not yet implemented")
}

// Session is one client's sequence of statements.
type Session struct{}

// Exec runs one statement (or several, separated by semicolons, returning
// the last result). An error in a transaction block aborts the block, as in
// PostgreSQL.
func (s *Session) Exec(ctx context.Context, sql string, args ...any) (*Result, error) {
	panic("not yet implemented")
}

// Close ends the session, rolling back an open transaction.
func (s *Session) Close() error { panic("not yet implemented") }
