package runtime

import (
	"bytes"
	"context"
	"slices"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Index maintenance. Every change to a relation's stored rows is a delta
// (the table delta a statement writes, the output delta a view's circuit
// stores), and the same delta, applied to the relation's indexes by
// applyDelta with the index's keys, keeps each index's entries equal to
// the rows: an entry's weight is its row's. A large delta is split between
// the workers by the bucket of each entry's index key, each writing its
// buckets into an overlay of its own (writeOnWorkers), so the store is the
// same for any number of workers.

// entryKeyOf returns the function that computes the key of o's row in ix:
// the prefix, the bucket of the index columns' key, that key, then the
// row's identity (identityKey).
func (ix *index) entryKeyOf(o *object) func(dst, prefix []byte, row zset.Row) []byte {
	cols, pk := ix.cols, o.pk
	return func(dst, prefix []byte, row zset.Row) []byte {
		dst = append(append(dst[:0], prefix...), 0)
		for _, c := range cols {
			dst = zset.EncodeKey(dst, row[c])
		}
		dst[len(prefix)] = byte(zset.Bucket(dst[len(prefix)+1:]))
		return identityKey(dst, pk, row)
	}
}

// identityKey appends the identity of a stored row to dst: its primary
// key when the relation has one (pk), else the whole row's key and its
// exact encoding, as its stored key holds them.
func identityKey(dst []byte, pk []int, row zset.Row) []byte {
	if len(pk) > 0 {
		for _, c := range pk {
			dst = zset.EncodeKey(dst, row[c])
		}
		return dst
	}
	dst = zset.EncodeKey(dst, row...)
	return zset.EncodeRow(dst, row)
}

// entryOrderKey returns the function that computes the order key of o's
// row in ix without the prefix: its key without prefix and bucket.
func (ix *index) entryOrderKey(o *object) func(dst []byte, row zset.Row) []byte {
	cols, pk := ix.cols, o.pk
	return func(dst []byte, row zset.Row) []byte {
		dst = dst[:0]
		for _, c := range cols {
			dst = zset.EncodeKey(dst, row[c])
		}
		return identityKey(dst, pk, row)
	}
}

// indexBuckets returns the bucket of each row of delta in ix.
func (ix *index) buckets(delta zset.Batch) []uint8 {
	return splitRows(func(i int) zset.Row { return delta[i].Row }, len(delta), ix.cols)
}

// writeIndex applies delta, a change to o's stored rows, to ix. fresh
// says that none of delta's rows has an entry yet (a build), so entries
// are written without reading them first.
func writeIndex(st state.Store, o *object, ix *index, delta zset.Batch, par diff.Parallelism, fresh bool) error {
	prefix := ix.prefix()
	write := func(st state.Store, part zset.Batch) error {
		keyOf := ix.entryKeyOf(o)
		if !fresh {
			return applyDelta(st, prefix, part, keyOf)
		}
		var kbuf, vbuf []byte
		for _, e := range part {
			if e.Weight <= 0 {
				return errs.Newf(errs.Internal, "internal error: a stored row of weight %d", e.Weight)
			}
			kbuf = keyOf(kbuf, prefix, e.Row)
			vbuf = encodeStored(vbuf, e.Weight, e.Row)
			if err := st.Set(kbuf, vbuf); err != nil {
				return err
			}
		}
		return nil
	}
	if !splitWrites(par, len(delta)) {
		return write(st, delta)
	}
	n := par.Workers
	parts := make([]zset.Batch, n)
	for i, b := range ix.buckets(delta) {
		w := owner(b, n)
		parts[w] = append(parts[w], delta[i])
	}
	return writeOnWorkers(st, n, func(i int, ov state.Store) error { return write(ov, parts[i]) }, nil)
}

// indexWritten applies delta, just applied to o's stored rows, to o's
// indexes in cat.
func indexWritten(st state.Store, cat *catalog, o *object, delta zset.Batch) error {
	if len(cat.indexes) == 0 || len(delta) == 0 {
		return nil
	}
	ixs := cat.indexesOf(o)
	if len(ixs) == 0 {
		return nil
	}
	if o.storesInArrivalOrder() {
		// Appended rows repeat rows already stored; the index sums them.
		var err error
		if delta, err = zset.Consolidate(delta); err != nil {
			return err
		}
	}
	for _, ix := range ixs {
		if err := writeIndex(st, o, ix, delta, cat.parallelism(), false); err != nil {
			return err
		}
		if err := checkUnique(st, o, ix, delta); err != nil {
			return err
		}
	}
	return nil
}

// VerifyIndexes checks that every index holds exactly the entries its
// relation's stored rows give it. It returns an error naming the first
// index that differs.
func (e *Engine) VerifyIndexes() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return verifyIndexes(context.Background(), e.mu.store, e.mu.cat)
}

// verifyIndexes is VerifyIndexes over the catalog cat in r.
func verifyIndexes(ctx context.Context, r state.Reader, cat *catalog) error {
	for _, name := range cat.indexNames() {
		ix := cat.indexes[name]
		o := cat.objectByID(ix.rel)
		if o == nil {
			return errs.Newf(errs.DataCorrupted, "index %s: its relation (id %d) does not exist", ix.name, ix.rel)
		}
		rows, err := readRelation(ctx, r, o)
		if err != nil {
			return err
		}
		if rows, err = zset.Consolidate(rows); err != nil {
			return err
		}
		type kv struct{ k, v []byte }
		want := make([]kv, len(rows))
		keyOf, prefix := ix.entryKeyOf(o), ix.prefix()
		for i, e := range rows {
			want[i] = kv{keyOf(nil, prefix, e.Row), encodeStored(nil, e.Weight, e.Row)}
		}
		slices.SortFunc(want, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
		i := 0
		var bad error
		err = r.Scan(prefix, state.PrefixEnd(prefix), func(k, v []byte) bool {
			switch {
			case i >= len(want) || bytes.Compare(k, want[i].k) < 0:
				bad = errs.Newf(errs.Internal, "index %s holds an entry %x that no row of %s has", ix.name, k, o.name)
			case bytes.Compare(k, want[i].k) > 0:
				bad = errs.Newf(errs.Internal, "index %s lacks the entry %x of a row of %s", ix.name, want[i].k, o.name)
			case !bytes.Equal(v, want[i].v):
				bad = errs.Newf(errs.Internal, "index %s has entry %x with value %x, want %x", ix.name, k, v, want[i].v)
			}
			i++
			return bad == nil
		})
		if err == nil {
			err = bad
		}
		if err == nil && i < len(want) {
			err = errs.Newf(errs.Internal, "index %s lacks %d entries of %s (first: %x)", ix.name, len(want)-i, o.name, want[i].k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
