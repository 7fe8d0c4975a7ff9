package ops

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Operator is one node of an incremental circuit.
type Operator interface {
	// Step consumes this epoch's consolidated input deltas, one per input
	// in order, reads and writes the operator's state in st, and returns
	// the consolidated output delta. A step whose loops may run long looks
	// at ctx every checkInterval units of work and, once ctx is done,
	// returns ctx.Err() unwrapped; st then holds part of the step's
	// writes, which the caller discards as after any error. ctx carries
	// nothing else: an operator's result never depends on it.
	Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error)
}

// appendWeight appends w as a varint.
func appendWeight(dst []byte, w int64) []byte { return binary.AppendVarint(dst, w) }

// readWeight reads a weight written by appendWeight from the front of b.
func readWeight(b []byte) (int64, []byte, error) {
	w, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, corrupt("weight")
	}
	return w, b[n:], nil
}

func corrupt(what string) error {
	return errs.Newf(errs.Internal, "corrupt operator state: bad %s", what)
}

func negativeCount(what string) error {
	return errs.Newf(errs.Internal, "%s count went negative: a delta deleted rows that were never inserted", what)
}

// withSuffix returns prefix followed by suffix, in a new slice.
func withSuffix(prefix []byte, suffix ...byte) []byte {
	k := make([]byte, 0, len(prefix)+len(suffix))
	return append(append(k, prefix...), suffix...)
}

// addWeightAt adds w to the weight stored under key, deleting the entry
// when the weight reaches zero. buf is scratch space, returned for reuse.
//
// A positive w cannot bring a count to zero or below, so it is written as
// a weight merge (state.MergeWeight: the count is a varint weight with an
// empty payload) without reading the stored count: into an overlay the
// sum with the parent's count is made when the overlay commits. A
// negative w reads the count, to delete the entry at zero and to refuse a
// negative one.
func addWeightAt(st state.Store, key []byte, w int64, buf []byte) ([]byte, error) {
	var h state.Hint
	return addWeightHinted(st, key, w, buf, &h)
}

// addWeightHinted is addWeightAt through a state.Hint, for runs of
// sorted keys.
func addWeightHinted(st state.Store, key []byte, w int64, buf []byte, h *state.Hint) ([]byte, error) {
	if w > 0 {
		buf = appendWeight(buf[:0], w)
		return buf, state.MergeWeight(st, key, buf, h)
	}
	v, ok, err := state.GetHinted(st, key, h)
	if err != nil {
		return buf, err
	}
	var cur int64
	if ok {
		if cur, _, err = readWeight(v); err != nil {
			return buf, err
		}
	}
	if cur, err = zset.AddWeight(cur, w); err != nil {
		return buf, err
	}
	if cur == 0 {
		return buf, state.DeleteHinted(st, key, h)
	}
	buf = appendWeight(buf[:0], cur)
	return buf, state.SetHinted(st, key, buf, h)
}

// keyRef locates one row's encoded key in a shared buffer, for sorting
// rows by key without moving the rows themselves.
type keyRef struct {
	off, end uint32
	idx      int32 // the row's position in its batch
}

// sortKeyRefs sorts refs by key, ties in batch order (a stable sort).
func sortKeyRefs(refs []keyRef, keys []byte) {
	slices.SortFunc(refs, func(x, y keyRef) int { return compareKeyRefs(keys, x, y) })
}

// compareKeyRefs orders refs by key, ties in batch order.
func compareKeyRefs(keys []byte, x, y keyRef) int {
	if c := bytes.Compare(keys[x.off:x.end], keys[y.off:y.end]); c != 0 {
		return c
	}
	return cmp.Compare(x.idx, y.idx)
}

// sortKeyRefsInterruptibly is sortKeyRefs for refs of any length, counting
// its work on w so that a canceled step stops within checkInterval units
// of work (refs are then left in some order). It sorts runs of
// checkInterval refs, then merges them pairwise through tmp, which it
// grows as needed and returns for reuse.
func sortKeyRefsInterruptibly(w *work, refs, tmp []keyRef, keys []byte) ([]keyRef, error) {
	const run = checkInterval
	for lo := 0; lo < len(refs); lo += run {
		hi := min(lo+run, len(refs))
		sortKeyRefs(refs[lo:hi], keys)
		if err := w.ticks(hi - lo); err != nil {
			return tmp, err
		}
	}
	if len(refs) <= run {
		return tmp, nil
	}
	tmp = resize(tmp, len(refs))
	src, dst := refs, tmp
	for width := run; width < len(refs); width *= 2 {
		for lo := 0; lo < len(src); lo += 2 * width {
			mid, hi := min(lo+width, len(src)), min(lo+2*width, len(src))
			i, j := lo, mid
			for k := lo; k < hi; k++ {
				if err := w.tick(); err != nil {
					return tmp, err
				}
				if j >= hi || i < mid && compareKeyRefs(keys, src[i], src[j]) <= 0 {
					dst[k] = src[i]
					i++
				} else {
					dst[k] = src[j]
					j++
				}
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &refs[0] {
		copy(refs, src)
	}
	return tmp, nil
}

// rowAlloc hands out rows carved from larger blocks, so that an operator
// emitting many rows allocates once per block rather than once per row.
// The rows it returns belong to the caller.
//
// Each block is charged to the statement's memory account (bind), with
// the entries that will hold its rows, so that the memory governor sees
// an operator's output grow while the operator runs.
type rowAlloc struct {
	block []types.Value
	pos   int
	acct  *memgov.Account
	// rows counts the rows handed out since the last charge.
	rows int64
}

// bind makes the blocks that follow charge ctx's memory account; an
// operator's Step calls it first.
func (r *rowAlloc) bind(ctx context.Context) { r.acct = memgov.From(ctx) }

// Sizes the memory governor charges for: a value, and a batch entry
// (row header and weight) with its share of consolidation's copy.
const (
	valueBytes = int64(unsafe.Sizeof(types.Value{}))
	entryBytes = 2 * int64(unsafe.Sizeof(zset.Entry{}))
)

func (r *rowAlloc) alloc(n int) zset.Row {
	if len(r.block)-r.pos < n {
		r.block, r.pos = make([]types.Value, max(256, n)), 0
		r.acct.Charge(int64(len(r.block))*valueBytes + r.rows*entryBytes)
		r.rows = 0
	}
	r.rows++
	row := r.block[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return row
}

// unalloc takes back the row of n values that alloc just returned, which
// the caller no longer uses, so that the next alloc hands it out again.
func (r *rowAlloc) unalloc(n int) {
	r.pos -= n
	clear(r.block[r.pos : r.pos+n])
}

// checkInterval is how many units of work (rows, pairs, groups) a long
// loop of an operator does between looks at its statement's context:
// rare enough that the look costs nothing measurable, often enough that a
// canceled statement stops within a millisecond or so.
const checkInterval = 1 << 12

// Interrupted returns ctx's error when n, a loop's running count of work,
// is a multiple of checkInterval and ctx is done; otherwise nil. A loop
// that may run long calls it once per unit of work and returns the error
// as it is: the caller discards the step's writes, and the runtime says
// why the statement stopped.
func Interrupted(ctx context.Context, n int) error {
	if n&(checkInterval-1) != 0 {
		return nil
	}
	return ctx.Err()
}

// work counts one step's units of work across nested loops and helpers
// (keys, then pairs of rows under each key), so that the looks at ctx
// stay checkInterval units apart however the work is split.
type work struct {
	ctx context.Context
	n   int
}

// tick counts one unit of work; see interrupted.
func (w *work) tick() error {
	w.n++
	return Interrupted(w.ctx, w.n)
}

// ticks counts n units of work at once, looking at ctx if that passes a
// multiple of checkInterval.
func (w *work) ticks(n int) error {
	before := w.n
	w.n += n
	if before/checkInterval == w.n/checkInterval {
		return nil
	}
	return w.ctx.Err()
}
