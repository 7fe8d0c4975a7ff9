package runtime

import "github.com/rockstream/rockstream/internal/state"

// Store is the committed state an engine runs on. Writes made between
// Commit calls are pending: Commit makes them durable and visible
// atomically, Abort drops them.
type Store interface {
	state.Store
	Commit() error
	Abort()
	Close() error
}

// memoryStore is a Store in memory: writes apply at once, so Commit has
// nothing left to do. It embeds the *state.Memory itself so that an
// epoch's overlay commits into the tree without copying its entries.
type memoryStore struct {
	*state.Memory
}

// NewMemoryStore returns an empty in-memory Store.
func NewMemoryStore() Store { return memoryStore{state.NewMemory().(*state.Memory)} }

func (memoryStore) Commit() error { return nil }
func (memoryStore) Abort()        {}
func (memoryStore) Close() error  { return nil }

// FrontierKey returns the key under which a store keeps its last committed
// epoch (8 bytes, big-endian): what storage.Options.EpochKey names, so
// that the storage's identity file records the epoch of every durable
// commit.
func FrontierKey() []byte { return append([]byte(nil), metaFrontier...) }
