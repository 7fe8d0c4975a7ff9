package runtime

import (
	"github.com/rockstream/rockstream/internal/privilege"
	"github.com/rockstream/rockstream/internal/state"
)

// A statement's privilege check reads the current role's record and, for a
// role that is not a superuser, the graph of all roles and memberships.
// Read from the store on every execution they cost a point read of a
// short statement as much as its own data read; between commits neither
// can change, so a session keeps the last ones it read of the committed
// state and checks every execution against them.
//
// Invariants:
//
//   - A memo holds what readRole (and loadGraph, once a check needed it)
//     returned reading the engine's committed store at epoch, under the
//     engine's read lock.
//   - Roles and memberships change only in an epoch's writes, and
//     commitEpoch advances Engine.mu.epoch in the critical section that
//     makes the writes visible; so while the engine's epoch is the memo's
//     (and no commit failed, leaving the store's state unknown), the memo
//     is what a read would return.
//   - A transaction block's own writes are never memoized: a block that
//     changed roles reads them from its overlay (privView).
type roleMemo struct {
	epoch uint64
	role  string
	rec   *Role
	graph *privilege.Graph // nil until a check needed it
}

// committedRole returns role's record in the committed state, nil when it
// is not stored, from the session's memo when nothing committed since it
// was read. The caller holds the engine's read lock.
func (s *Session) committedRole(role string) (*Role, *roleMemo, error) {
	e := s.eng
	if m := s.roles; m != nil && m.role == role && m.epoch == e.mu.epoch && e.mu.failed == nil {
		return m.rec, m, nil
	}
	rec, err := readRole(e.mu.store, role)
	if err != nil {
		return nil, nil, err
	}
	s.roles = &roleMemo{epoch: e.mu.epoch, role: role, rec: rec}
	return rec, s.roles, nil
}

// graphOf returns the graph of roles r holds, the memo's when m is the
// committed state's memo.
func (m *roleMemo) graphOf(r state.Reader) (*privilege.Graph, error) {
	if m == nil {
		return loadGraph(r)
	}
	if m.graph == nil {
		g, err := loadGraph(r)
		if err != nil {
			return nil, err
		}
		m.graph = g
	}
	return m.graph, nil
}
