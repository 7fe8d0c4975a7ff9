package session

import "maps"

// Settings are one session's setting values: those SET in the session,
// over the defaults, and what the open transaction block needs to undo
// its changes to them. The zero value has every setting at its default.
//
// As in PostgreSQL, a block's changes to settings are undone when it
// rolls back, and SET LOCAL lasts until the block ends: BlockChange
// records the values before the block's first change, EndBlock undoes
// the block's changes or those of SET LOCAL.
type Settings struct {
	values map[string]string
	// saved holds the values as they were before the open block first
	// changed one, once it has (blockChanged), and local the names SET
	// LOCAL changed since.
	saved        map[string]string
	blockChanged bool
	local        map[string]bool
	// version counts the changes to values: what a caller derived from
	// the settings at one version (a parsed time zone, work_mem in
	// bytes) holds until it moves.
	version uint64
}

// Version returns the settings' version, which every change of a value
// moves: SET, RESET, the end of a transaction block that changed one,
// and a return to a savepoint.
func (s *Settings) Version() uint64 { return s.version }

// Lookup returns the value SET for name (lower case); ok is false when
// the setting has its default.
func (s *Settings) Lookup(name string) (value string, ok bool) {
	v, ok := s.values[name]
	return v, ok
}

// Get returns the session's value of name (lower case): the value SET,
// or the default.
func (s *Settings) Get(name string) string {
	if v, ok := s.values[name]; ok {
		return v
	}
	return settings[name].def
}

// Put sets name (lower case) to value, which the caller has checked.
func (s *Settings) Put(name, value string) {
	if s.values == nil {
		s.values = map[string]string{}
	}
	s.values[name] = value
	s.version++
}

// Set sets name (lower case) to value, as SET name = value does, after
// the setting's check.
func (s *Settings) Set(name, value string) error {
	if err := Check(name, value); err != nil {
		return err
	}
	s.Put(name, Canonical(name, value))
	return nil
}

// Reset returns name (lower case) to its default.
func (s *Settings) Reset(name string) {
	delete(s.values, name)
	s.version++
}

// ResetAll returns every setting to its default.
func (s *Settings) ResetAll() {
	s.values = nil
	s.version++
}

// BlockChange records, before the open block changes a setting, what is
// needed to undo the block's changes: the values before its first
// change.
func (s *Settings) BlockChange() {
	if !s.blockChanged {
		s.saved, s.blockChanged = maps.Clone(s.values), true
	}
}

// ChangedInBlock records that the open block changed name (lower case),
// with SET LOCAL when local.
func (s *Settings) ChangedInBlock(name string, local bool) {
	if local {
		if s.local == nil {
			s.local = map[string]bool{}
		}
		s.local[name] = true
	} else {
		delete(s.local, name)
	}
}

// EndBlock ends the open transaction block's changes to the settings: a
// rollback undoes them all, a commit those of SET LOCAL.
func (s *Settings) EndBlock(committed bool) {
	saved, local := s.saved, s.local
	s.saved, s.local = nil, nil
	if !s.blockChanged {
		return
	}
	s.blockChanged = false
	s.version++
	if !committed {
		s.values = saved
		return
	}
	for name := range local {
		if v, ok := saved[name]; ok {
			s.Put(name, v)
		} else {
			delete(s.values, name)
		}
	}
}

// Mark is the settings as they were at a point of a transaction block
// (a savepoint), to go back to.
type Mark struct {
	values map[string]string
	local  map[string]bool
}

// Mark returns the settings as they are now.
func (s *Settings) Mark() Mark { return Mark{values: maps.Clone(s.values), local: maps.Clone(s.local)} }

// Restore returns the settings to m: the values, and which of them SET
// LOCAL changed.
func (s *Settings) Restore(m Mark) {
	s.values, s.local = maps.Clone(m.values), maps.Clone(m.local)
	s.version++
}
