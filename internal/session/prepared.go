package session

import "github.com/rockstream/rockstream/internal/errs"

// Prepared are the statements a session prepared with SQL PREPARE, by
// name. They live until DEALLOCATE or the end of the session; the wire
// protocol's prepared statements (Parse) are the gateway's, in a
// namespace of their own. The zero value has none.
type Prepared[P any] struct {
	byName map[string]P
}

// CheckNew fails with 42P05 when a statement called name is prepared.
func (s *Prepared[P]) CheckNew(name string) error {
	if _, ok := s.byName[name]; ok {
		return errs.Newf(errs.DuplicatePrepared, "prepared statement %q already exists", name)
	}
	return nil
}

// Add keeps p as name.
func (s *Prepared[P]) Add(name string, p P) {
	if s.byName == nil {
		s.byName = map[string]P{}
	}
	s.byName[name] = p
}

// Get returns the statement called name, or fails with 26000.
func (s *Prepared[P]) Get(name string) (P, error) {
	p, ok := s.byName[name]
	if !ok {
		return p, errs.Newf(errs.InvalidStatementName, "prepared statement %q does not exist", name)
	}
	return p, nil
}

// Remove forgets the statement called name, or fails with 26000.
func (s *Prepared[P]) Remove(name string) error {
	if _, err := s.Get(name); err != nil {
		return err
	}
	delete(s.byName, name)
	return nil
}

// RemoveAll forgets every statement.
func (s *Prepared[P]) RemoveAll() { s.byName = nil }
