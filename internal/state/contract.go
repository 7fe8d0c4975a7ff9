package state

// This file lists the store implementations the engine uses. Bodies marked
// "not yet implemented" are filled in by the state work.

// NewMemory returns an empty in-memory Store (an ordered tree).
func NewMemory() Store { panic("not yet implemented") }

// Overlay is a Store that buffers writes over a parent Store.
type Overlay struct {
	parent Store
}

// NewOverlay returns an empty overlay over parent.
func NewOverlay(parent Store) *Overlay { panic("not yet implemented") }

// Commit applies the overlay's writes to its parent and empties it.
func (o *Overlay) Commit() error { panic("not yet implemented") }

// Discard drops the overlay's writes.
func (o *Overlay) Discard() { panic("not yet implemented") }
