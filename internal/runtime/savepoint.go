package runtime

import (
	"context"
	"maps"

	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Savepoints, as PostgreSQL's SAVEPOINT, ROLLBACK TO SAVEPOINT and RELEASE
// SAVEPOINT.
//
// Invariants:
//
//   - A savepoint taken after the block wrote holds the block's write
//     token: the block's writes up to it stay in the overlay that was the
//     epoch's, and the epoch writes into a new overlay over it, the
//     savepoint's layer. A savepoint taken before any write is empty: going
//     back to it forgets every write of the block and returns the token.
//   - ROLLBACK TO discards the layers above the savepoint's parent and
//     restores what the epoch kept beside its writes (table changes not yet
//     carried to views, the catalog, change-log numbering) and the
//     session's settings; it closes the cursors declared since, ends the
//     failed state, and keeps the savepoint (later ones are gone).
//   - RELEASE folds the layers from the top down into the savepoint's
//     parent and forgets the savepoint and the later ones. COMMIT folds
//     them all first. The block's epoch therefore always commits one
//     overlay over the committed state.
//
// A savepoint is what the block keeps to return to: the layer of its
// session.Savepoint, which has its name.
type savepoint struct {
	// parent is the overlay the block wrote into before the savepoint;
	// nil for an empty savepoint.
	parent  *state.Overlay
	pending map[string]zset.Batch
	cat     *catalog
	logSeq  map[uint64]uint64
	// The session's settings and SET LOCAL names, and its cursors, when
	// the savepoint was taken.
	settings session.Mark
	cursors  map[string]bool
}

// setSavepoint runs SAVEPOINT name.
func (s *Session) setSavepoint(ctx context.Context, name string) error {
	t := s.txn
	sp := &savepoint{settings: s.settings.Mark(), cursors: s.cursors.Names()}
	if t.wrote() {
		if t.w == nil {
			if err := s.takeWriteToken(ctx); err != nil {
				return err
			}
		}
		w := t.w
		sp.parent, sp.cat = w.ov, w.cat
		sp.pending, sp.logSeq = maps.Clone(w.pending), maps.Clone(w.logSeq)
		w.ov = state.NewOverlay(w.ov)
	}
	t.savepoints = append(t.savepoints, session.Savepoint[*savepoint]{Name: name, Layer: sp})
	return nil
}

// rollbackTo runs ROLLBACK TO SAVEPOINT name.
func (s *Session) rollbackTo(name string) error {
	t := s.txn
	i, err := t.savepoints.Find(name)
	if err != nil {
		return err
	}
	sp := t.savepoints[i].Layer
	t.savepoints = t.savepoints[:i+1]
	switch {
	case sp.parent == nil:
		t.deferred = nil
		if t.w != nil {
			t.w.ov.Discard()
			t.w = nil
			<-s.eng.writeToken
		}
	default:
		w := t.w
		w.ov = state.NewOverlay(sp.parent)
		w.cat, w.pending, w.logSeq = sp.cat, maps.Clone(sp.pending), maps.Clone(sp.logSeq)
	}
	s.settings.Restore(sp.settings)
	s.cursors.CloseExcept(sp.cursors)
	t.Recover()
	return nil
}

// release runs RELEASE SAVEPOINT name.
func (s *Session) release(name string) error {
	t := s.txn
	i, err := t.savepoints.Find(name)
	if err != nil {
		return err
	}
	if err := s.foldSavepoints(i); err != nil {
		return err
	}
	t.savepoints = t.savepoints[:i]
	return nil
}

// foldSavepoints commits the layers of the savepoints from the latest
// down to the one at index from into their parents.
func (s *Session) foldSavepoints(from int) error {
	t := s.txn
	for j := len(t.savepoints) - 1; j >= from; j-- {
		sp := t.savepoints[j].Layer
		if sp.parent == nil {
			continue
		}
		if err := t.w.ov.Commit(); err != nil {
			return err
		}
		t.w.ov = sp.parent
	}
	return nil
}
