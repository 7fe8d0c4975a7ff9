package session

import "github.com/rockstream/rockstream/internal/errs"

// Savepoint is one savepoint of a transaction block: its name, and
// what the engine keeps to return to it (its layer).
type Savepoint[L any] struct {
	Name  string
	Layer L
}

// Savepoints are a transaction block's savepoints, oldest first. Names
// may repeat: a name finds the latest savepoint of that name, as in
// PostgreSQL. ROLLBACK TO keeps the savepoint it returns to and drops the
// later ones; RELEASE drops it and the later ones.
type Savepoints[L any] []Savepoint[L]

// Find returns the index of the latest savepoint called name, or fails
// with 3B001.
func (s Savepoints[L]) Find(name string) (int, error) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].Name == name {
			return i, nil
		}
	}
	return 0, errs.Newf(errs.InvalidSavepoint, "savepoint %q does not exist", name)
}
