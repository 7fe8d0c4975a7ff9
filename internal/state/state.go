// Package state defines the ordered key-value store that holds all of
// RockStream's state (table rows, operator arrangements, view contents) and
// an in-memory implementation with transactional overlays.
//
// Invariants:
//   - Keys are compared bytewise; Scan visits keys in ascending order and
//     ScanReverse in descending order.
//   - Byte slices passed to a callback are valid only during that call.
//   - An Overlay buffers writes over a parent store; reads through it see
//     its own writes. Commit applies them to the parent in one step;
//     Discard drops them. Nothing reaches the parent otherwise, which is how
//     a failed statement or epoch changes nothing.
//   - A weight merge (MergeWeight, weight.go) into an Overlay is kept as
//     an operand until Commit adds it to the parent's value; every read
//     through the overlay sees the sum already, so a merge is
//     indistinguishable from a read of the value followed by a Set.
//
// The Pebble store (internal/storage) implements the same interfaces.
package state

// Reader is a read-only ordered key-value view.
type Reader interface {
	// Get returns the value stored under key.
	Get(key []byte) (value []byte, ok bool, err error)
	// Scan calls fn for each key in [lo, hi) in ascending order until fn
	// returns false. A nil hi means no upper bound.
	Scan(lo, hi []byte, fn func(key, value []byte) bool) error
	// ScanReverse is Scan in descending order.
	ScanReverse(lo, hi []byte, fn func(key, value []byte) bool) error
}

// Writer accepts writes.
type Writer interface {
	Set(key, value []byte) error
	Delete(key []byte) error
}

// Store is a readable and writable ordered key-value store.
type Store interface {
	Reader
	Writer
}

// PrefixEnd returns the smallest key greater than every key with the given
// prefix, or nil when there is none (a prefix of all 0xff bytes).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
