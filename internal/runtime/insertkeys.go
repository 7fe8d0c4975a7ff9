package runtime

import (
	"bytes"
	"context"

	"github.com/cespare/xxhash/v2"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// insertNewKeys inserts rows into a table with a primary key, without ON
// CONFLICT: every key must be new, to the table and to the statement.
// The first row, in order, whose key an earlier row or a stored row holds
// fails the statement with 23505, as in PostgreSQL. Each key is encoded
// once, into one buffer, read once and written once, and the rows go to
// the views as the table's delta without a consolidation of their own
// (the views' circuits consolidate what they take in).
func insertNewKeys(ctx context.Context, st state.Store, w *epochWrite, o *object, rows []zset.Row) error {
	if len(rows) == 0 {
		return nil
	}
	if err := chargeEpochRows(ctx, rows, tableRowWrites); err != nil {
		return err
	}
	if par := w.cat.parallelism(); splitWrites(par, len(rows)) {
		return insertNewKeysOn(ctx, st, w, o, rows, par.Workers)
	}
	delta := rowsAsInsertions(make(zset.Batch, len(rows)), rows)
	return writeBesideViews(ctx, st, w, o, delta, func(st state.Store) error {
		bad, err := writeNewKeys(st, o, rows)
		if err == nil && bad >= 0 {
			err = o.uniqueViolation(rows[bad])
		}
		return err
	}, func(st state.Reader) error { return checkFinal(st, o, delta) })
}

// writeNewKeys writes rows, whose keys must be new, into st, and returns
// -1; or, writing nothing, the index of the first row whose key an
// earlier row or a stored row holds.
//
// The stored keys are looked up and written bucket by bucket
// (keysByBucket), through one hint: a table's keys of one bucket are one
// range of the store, so consecutive operations land near each other,
// where a hint finds them without a descent from the root. Rows in key
// order (a loader's increasing ids) stay in order within their bucket.
//
// Rows in increasing key order (a bulk load by ascending id) are distinct
// by that order alone: their keys are compared with the previous row's,
// past the bucket byte, and only from the first row out of order on are
// the keys hashed to find repeats (a map of a million keys cost a cache
// miss per row).
func writeNewKeys(st state.Store, o *object, rows []zset.Row) (int, error) {
	keyOf, prefix := o.keyOf(), o.rowsPrefix()
	buf := make([]byte, 0, len(rows)*(len(prefix)+12))
	ends := make([]int, len(rows))
	key := func(i int) []byte {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		return buf[start:ends[i]]
	}
	// Rows from the first that repeats an earlier row's key on are not
	// looked up: that row fails the statement unless an earlier one's key
	// is stored.
	skip := len(prefix) + 1 // the key's order past its bucket is the primary key's
	ordered := true
	var seen keySet
	var k []byte
	checked := len(rows)
	for i, r := range rows {
		k = keyOf(k, prefix, r)
		if ordered && i > 0 && bytes.Compare(k[skip:], key(i - 1)[skip:]) <= 0 {
			ordered = false
			seen = newKeySet(len(rows), key)
			for j := range i {
				seen.add(j, key(j)) // distinct, being in order
			}
		}
		if !ordered && !seen.add(i, k) {
			checked = i
			break
		}
		buf = append(buf, k...)
		ends[i] = len(buf)
	}
	order := keysByBucket(checked, len(prefix), key)
	var hint state.Hint
	bad := checked
	for _, i := range order {
		if _, found, err := state.GetHinted(st, key(int(i)), &hint); err != nil {
			return -1, err
		} else if found {
			bad = min(bad, int(i))
		}
	}
	if bad < len(rows) {
		return bad, nil
	}
	var val []byte
	for _, i := range order {
		val = encodeStored(val, 1, rows[i])
		if err := state.SetHinted(st, key(int(i)), val, &hint); err != nil {
			return -1, err
		}
	}
	return -1, nil
}

// keysByBucket returns the indexes 0..n-1 of keys whose bucket byte is at
// position at (key(i) gives the i-th), ordered by bucket and, within a
// bucket, by index: a counting sort, linear in n.
func keysByBucket(n, at int, key func(i int) []byte) []int32 {
	var starts [257]int32
	for i := range n {
		starts[int(key(i)[at])+1]++
	}
	for b := 1; b < len(starts); b++ {
		starts[b] += starts[b-1]
	}
	order := make([]int32, n)
	for i := range n {
		b := key(i)[at]
		order[starts[b]] = int32(i)
		starts[b]++
	}
	return order
}

// keySet finds repeated keys among a batch's rows: it holds each row's
// index by the hash of its key, the keys being key(i); keys of equal hash
// but different bytes (rare) go to collided.
type keySet struct {
	key      func(i int) []byte
	byHash   map[uint64]int32
	collided map[string]bool
}

func newKeySet(n int, key func(i int) []byte) keySet {
	return keySet{key: key, byHash: make(map[uint64]int32, n)}
}

// add adds k as row i's key and reports whether no earlier row had it.
func (s *keySet) add(i int, k []byte) bool {
	h := xxhash.Sum64(k)
	j, seen := s.byHash[h]
	switch {
	case !seen:
		s.byHash[h] = int32(i)
		return true
	case bytes.Equal(s.key(int(j)), k) || s.collided[string(k)]:
		return false
	}
	if s.collided == nil {
		s.collided = map[string]bool{}
	}
	s.collided[string(k)] = true
	return true
}

// rowsAsInsertions fills delta (of len(rows)) with one insertion per row.
func rowsAsInsertions(delta zset.Batch, rows []zset.Row) zset.Batch {
	for i, r := range rows {
		delta[i] = zset.Entry{Row: r, Weight: 1}
	}
	return delta
}
