package runtime

import (
	"fmt"
)

// recoverer is a store that can reopen itself after a failed commit
// stopped it (storage.DB): TryRecover returns nil once the store works
// again, holding the epochs it had committed before the failure and, when
// the failed commit's outcome was unknown (a failed fsync of its log),
// possibly that epoch too, whole.
type recoverer interface {
	TryRecover() error
}

// recoverStore lifts the refusal of writes that a failed commit set
// (failCommit) once the store has recovered from the failure. Like a
// restart, it then rebuilds everything the engine derives from the store
// from what the store holds: the catalog and the frontier epoch (the
// failed epoch may be there), the relation cache and the change-log
// index; subscriptions and sinks waiting for an epoch are woken to read
// on from the store's frontier. The caller holds the write token, so no
// commit runs meanwhile.
func (e *Engine) recoverStore() error {
	e.mu.RLock()
	failed, store := e.mu.failed, e.mu.store
	e.mu.RUnlock()
	if failed == nil {
		return nil
	}
	r, ok := store.(recoverer)
	if !ok || r.TryRecover() != nil {
		return failed
	}
	cat, epoch, err := recoverCatalog(store, e.shard != nil)
	if err != nil {
		return fmt.Errorf("%w; after the storage reopened, its catalog could not be read: %v", failed, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.installRecovered(cat, epoch)
	return nil
}

// installRecovered makes cat and epoch, read from the store, the engine's
// committed state. The caller holds e.mu exclusively.
func (e *Engine) installRecovered(cat *catalog, epoch uint64) {
	cat.statusOf = e.connectorStatus
	cat.eng = e
	e.cache.reset()
	e.logs.reset()
	e.mu.cat = cat
	e.mu.epoch = epoch
	e.mu.failed = nil
	e.obs.epoch.Store(epoch)
	close(e.mu.committed)
	e.mu.committed = make(chan struct{})
}
