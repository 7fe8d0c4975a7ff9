package runtime

import (
	"context"
	"unsafe"

	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A statement's memory is the memory governor's (internal/memgov): every
// statement runs with an account, and what grows with its data charges
// it — here the relation contents an ad-hoc query reads, the state its
// circuit builds, and its result and sort buffers; in internal/ops the
// rows operators emit. A statement the governor stops fails with 53200.

// Sizes charged: a value, an entry of a batch, and what the in-memory
// state tree keeps per key beside the key and value bytes.
const (
	valueBytes      = int64(unsafe.Sizeof(types.Value{}))
	entryBytes      = int64(unsafe.Sizeof(zset.Entry{}))
	stateEntryBytes = 64
)

// openAccount opens the statement's memory account with the session's
// work_mem.
func (s *Session) openAccount(ctx context.Context) (context.Context, *memgov.Account) {
	return memgov.Process().Open(ctx, s.workMem())
}

// workMem returns the session's work_mem in bytes.
func (s *Session) workMem() int64 { return s.resolved().workMem }

// batchBytes estimates the memory of b's entries and rows.
func batchBytes(b zset.Batch) int64 {
	if len(b) == 0 {
		return 0
	}
	return int64(len(b)) * (entryBytes + int64(len(b[0].Row))*valueBytes)
}

// chargedStore is an ad-hoc query's operator state, charging what it
// writes to the statement's account: a join's or aggregate's state there
// grows with the data.
type chargedStore struct {
	state.Store
	acct *memgov.Account
}

// queryState returns the scratch state of an ad-hoc query under ctx: one
// that spills past work_mem when the statement may (spillquery.go).
func queryState(ctx context.Context) state.Store {
	if st := spillingState(ctx); st != nil {
		return st
	}
	if a := memgov.From(ctx); a != nil {
		// One allocation for both: a point read steps its circuit once.
		q := &chargedLazyState{}
		q.charged = chargedStore{Store: &q.lazy, acct: a}
		return &q.charged
	}
	return &lazyState{}
}

// chargedLazyState is a lazyState under a chargedStore, allocated
// together.
type chargedLazyState struct {
	lazy    lazyState
	charged chargedStore
}

// Set implements state.Writer.
func (c *chargedStore) Set(key, value []byte) error {
	c.acct.Charge(int64(len(key)+len(value)) + stateEntryBytes)
	return c.Store.Set(key, value)
}

// copyWriteCopies is how many copies of a row's bytes a COPY keeps until
// its write commits: the decoded row, its encoded key and value, the
// write batch and the store's.
const copyWriteCopies = 4

// copyLineCopies is how many times its line buffer's size a COPY line
// may need while it is read and decoded.
const copyLineCopies = 4

// copyRowBytes estimates what a row read by COPY FROM takes until its
// write commits.
func copyRowBytes(row zset.Row) int64 {
	n := entryBytes + int64(len(row))*valueBytes
	for _, v := range row {
		n += copyWriteCopies * int64(len(v.Str())) // text and bytea; other kinds are small or counted by their values
	}
	return n
}

// lazyState is an ad-hoc query's scratch state that makes its in-memory
// store at the first write: the circuit of a chain of filters and
// projections (a point read's) never writes, and a store never written
// reads as empty.
type lazyState struct{ st state.Store }

// Get implements state.Reader.
func (l *lazyState) Get(key []byte) ([]byte, bool, error) {
	if l.st == nil {
		return nil, false, nil
	}
	return l.st.Get(key)
}

// Scan implements state.Reader.
func (l *lazyState) Scan(lo, hi []byte, fn func(key, value []byte) bool) error {
	if l.st == nil {
		return nil
	}
	return l.st.Scan(lo, hi, fn)
}

// ScanReverse implements state.Reader.
func (l *lazyState) ScanReverse(lo, hi []byte, fn func(key, value []byte) bool) error {
	if l.st == nil {
		return nil
	}
	return l.st.ScanReverse(lo, hi, fn)
}

// Set implements state.Writer.
func (l *lazyState) Set(key, value []byte) error { return l.store().Set(key, value) }

// Delete implements state.Writer.
func (l *lazyState) Delete(key []byte) error { return l.store().Delete(key) }

func (l *lazyState) store() state.Store {
	if l.st == nil {
		l.st = state.NewOverlay(state.NewMemory())
	}
	return l.st
}
