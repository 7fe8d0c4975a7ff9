package runtime

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// setConfig is set_config(name, value, is_local): SET name TO value, or
// SET LOCAL, with the value taken as one string as PostgreSQL takes it
// (a search_path of 'a, b' is the list a, b); it returns the setting's
// new value.
func (s *Session) setConfig(name, value string, local bool) (string, error) {
	v := &pg.VariableSetStmt{Kind: pg.VariableSetKind_VAR_SET_VALUE, Name: name, IsLocal: local,
		Args: []*pg.Node{pg.MakeAConstStrNode(value, -1)}}
	s.rawSetting = true
	defer func() { s.rawSetting = false }()
	if _, err := s.execSet(v); err != nil {
		return "", err
	}
	return s.Setting(name), nil
}
