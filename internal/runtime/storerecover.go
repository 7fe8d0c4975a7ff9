package runtime

// recoverer is a store that can reopen itself after a failed commit
// stopped it (storage.DB): TryRecover returns nil once the store works
// again, holding exactly the epochs it had committed before the failure.
type recoverer interface {
	TryRecover() error
}

// recoverStore lifts the refusal of writes that a failed commit set
// (failCommit) once the store has recovered from the failure: the store
// then holds exactly the epochs committed before it, which are the
// engine's, so writing can go on from the engine's state. The caller holds
// the write token, so no commit runs meanwhile.
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
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mu.failed = nil
	return nil
}
