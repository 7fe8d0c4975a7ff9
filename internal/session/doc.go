// Package session holds the state of one SQL session that does not
// depend on the engine: its open transaction's state (block or
// autocommit, failed, access mode) and its savepoints' names, its
// settings (SET, RESET, SET LOCAL and what a transaction block must undo
// of them), the settings' definitions and checks, its cursors by name,
// and its SQL-level prepared statements by name. The runtime's Session
// keeps one of each and runs statements against the engine with them;
// what a transaction wrote, its savepoints' layers and the write token
// are the runtime's. This package does no I/O, takes no lock and starts
// no goroutine: a session is used by one goroutine at a time.
//
// Invariants:
//   - A failed transaction stays failed until it ends or returns to a
//     savepoint (Txn.Recover); a read-only transaction becomes read-write
//     only before its first query and outside savepoints, and one that
//     declared a SUBSCRIBE cursor never writes.
//   - A setting's value is the value SET, else its default; a value is
//     stored only after the setting's check accepted it (Settings.Set),
//     or by a caller that checked it (Settings.Put).
//   - A transaction block's changes to settings are undone when it ends:
//     all of them when it rolls back, those of SET LOCAL when it commits
//     (Settings.EndBlock). Returning to a savepoint (Settings.Restore)
//     restores the values and which of them SET LOCAL changed.
//   - A cursor name names at most one open cursor; every open cursor is
//     closed exactly once, by Close, CloseExcept or CloseAll.
//   - A prepared statement's name names at most one statement.
//   - A savepoint name finds the latest savepoint of that name.
//
// Errors carry PostgreSQL's SQLSTATEs: 25001 for a read-write change
// refused; 22023 for a value a setting's check refuses; 42704, 3B001,
// 34000 and 26000 for a setting, savepoint, cursor and prepared
// statement that does not exist; 42P03 and 42P05 for a duplicate cursor
// and prepared statement.
package session
