package runtime

import (
	"context"
	"encoding/binary"
	"runtime/debug"
	"sync"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Large table writes split by bucket. A write of at least
// Options.ParallelMinRows rows to a table, on more than one worker, is
// split between the workers by the bucket of each row's routing key (the
// primary key, else the whole row; keys.go): worker i of n reads and
// writes the rows of the buckets it owns (zset.BucketOwner) into an
// overlay of its own over the statement's, and the overlays, whose keys
// lie in disjoint ranges (prefix | bucket | ...), are then committed into
// the statement's, so the epoch still commits as one batch. The views
// then take the table's delta with its split (diff.Circuit.StepRouted):
// a view whose first exchange is keyed like the table's routing key
// steps without moving any of the table's rows between workers.
//
// Invariants:
//   - The store written is the same, byte for byte, for any number of
//     workers: a row's stored key and value do not depend on who writes
//     it, and rows of one key (one bucket) are written by one worker, in
//     the delta's order.
//   - A part keeps the order its rows have in the delta.
//   - The workers only read the store below their overlays, concurrently,
//     while nothing writes it.
//   - A failed write leaves nothing: every overlay is discarded.

// routeKey returns o's routing columns: its primary key's, else its
// leading routed columns (a materialized view's), else nil (the whole
// row).
func (o *object) routeKey() []int {
	switch {
	case len(o.pk) > 0:
		return o.pk
	case o.route > 0 && o.route < len(o.cols):
		key := make([]int, o.route)
		for i := range key {
			key[i] = i
		}
		return key
	}
	return nil
}

// splitRows returns the bucket of each row's routing key key (nil: the
// whole row), of count rows.
func splitRows(rows func(i int) zset.Row, count int, key []int) []uint8 {
	buckets := make([]uint8, count)
	var buf []byte
	for i := range count {
		r := rows(i)
		buf = buf[:0]
		if key == nil {
			buf = zset.EncodeKey(buf, r...)
		}
		for _, c := range key {
			buf = zset.EncodeKey(buf, r[c])
		}
		buckets[i] = uint8(zset.Bucket(buf))
	}
	return buckets
}

// owner is the worker of n owning bucket b.
func owner(b uint8, n int) int { return zset.BucketOwner(int(b), n) }

// splitDelta splits delta between n workers by its rows' routing key
// key, keeping their order.
func splitDelta(delta zset.Batch, key []int, n int) []zset.Batch {
	buckets := splitRows(func(i int) zset.Row { return delta[i].Row }, len(delta), key)
	counts := make([]int, n)
	for _, b := range buckets {
		counts[owner(b, n)]++
	}
	parts := make([]zset.Batch, n)
	for i := range parts {
		parts[i] = make(zset.Batch, 0, counts[i])
	}
	for i, b := range buckets {
		w := owner(b, n)
		parts[w] = append(parts[w], delta[i])
	}
	return parts
}

// splitWrites reports whether a write of rows rows to a table splits
// between par's workers.
func splitWrites(par diff.Parallelism, rows int) bool {
	return par.Workers > 1 && rows >= max(par.MinRows, 1)
}

// writeOnWorkers runs write(i, ov) for each of n workers, ov an overlay
// of st of worker i's own, in parallel, and then commits the overlays
// into st in worker order. When a worker fails, nothing is committed and
// the error of the lowest failing worker is returned (pick may choose
// another: it gets every worker's error and returns the one to report).
func writeOnWorkers(st state.Store, n int, write func(i int, ov state.Store) error, pick func(errs []error) error) error {
	ovs := make([]*state.Overlay, n)
	failed := make([]error, n)
	for i := range ovs {
		ovs[i] = state.NewOverlay(st)
	}
	run := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				failed[i] = errs.Newf(errs.Internal, "internal error in worker %d: %v\n%s", i, r, debug.Stack())
			}
		}()
		failed[i] = write(i, ovs[i])
	}
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); run(i) }()
	}
	run(0)
	wg.Wait()
	var err error
	if pick != nil {
		err = pick(failed)
	} else {
		for _, e := range failed {
			if e != nil {
				err = e
				break
			}
		}
	}
	if err != nil {
		for _, ov := range ovs {
			ov.Discard()
		}
		return err
	}
	for _, ov := range ovs {
		if err := ov.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// viewWriteMinRows is the smallest view output whose rows and change-log
// entries are written split between the workers (applyDeltaSplit,
// logChangesOn), when the step that made it was split: below it, the
// goroutine and the overlay a worker's share costs are more than the
// share. A variable so that tests can split every write.
var viewWriteMinRows = 1024

// viewWriters is how many workers write a view's output of rows rows,
// from a step on par: all of par's when the step was split and the
// output is large enough, else one.
func viewWriters(par diff.Parallelism, rows int) int {
	if par.Workers > 1 && rows >= max(par.MinRows, viewWriteMinRows) {
		return par.Workers
	}
	return 1
}

// applyDeltaSplit is applyDelta split between n workers by the bucket in
// each row's stored key (the byte after prefix): a key's changes are all
// one worker's, in their order in delta, so the rows stored are the same
// for any n. On failure the error is the lowest failing worker's, which
// may name another row than one worker would; applyDelta fails only on
// a weight out of range, an internal error.
func applyDeltaSplit(st state.Store, prefix []byte, delta zset.Batch, keyOf func(dst, prefix []byte, row zset.Row) []byte, n int) error {
	if n <= 1 {
		return applyDelta(st, prefix, delta, keyOf)
	}
	owners := make([]uint8, len(delta))
	counts := make([]int, n)
	var k []byte
	for i, e := range delta {
		k = keyOf(k, prefix, e.Row)
		w := owner(k[len(prefix)], n)
		owners[i] = uint8(w)
		counts[w]++
	}
	parts := make([]zset.Batch, n)
	for i := range parts {
		parts[i] = make(zset.Batch, 0, counts[i])
	}
	for i, e := range delta {
		parts[owners[i]] = append(parts[owners[i]], e)
	}
	return writeOnWorkers(st, n, func(i int, ov state.Store) error {
		return applyDelta(ov, prefix, parts[i], keyOf)
	}, nil)
}

// firstBucketOf is the first bucket worker i of n owns (zset.BucketOwner);
// n for i gives zset.Buckets, the end of the last worker's.
func firstBucketOf(i, n int) int { return (i*zset.Buckets + n - 1) / n }

// applyDeltaOn is applyDelta of o's consolidated delta, split between
// par's workers when it is large. It returns the split (nil when the
// write was not split).
func applyDeltaOn(st state.Store, o *object, delta zset.Batch, par diff.Parallelism) ([]zset.Batch, error) {
	if !splitWrites(par, len(delta)) {
		return nil, applyDelta(st, o.rowsPrefix(), delta, o.keyOf())
	}
	parts := splitDelta(delta, o.routeKey(), par.Workers)
	prefix := o.rowsPrefix()
	err := writeOnWorkers(st, par.Workers, func(i int, ov state.Store) error {
		return applyDelta(ov, prefix, parts[i], o.keyOf())
	}, nil)
	if err != nil {
		return nil, err
	}
	return parts, nil
}

// tableWrittenSplit is tableWritten for a delta written split into parts
// (nil: not split), which the views take with it.
func tableWrittenSplit(ctx context.Context, st state.Store, w *epochWrite, o *object, delta zset.Batch, parts []zset.Batch) error {
	if parts == nil || w.deferViews {
		return tableWritten(ctx, st, w, o, delta)
	}
	if err := indexWritten(st, w.cat, o, delta); err != nil {
		return err
	}
	if err := advanceWatermark(st, o, delta); err != nil {
		return err
	}
	routed := map[string]diff.Routed{o.name: {Key: o.routeKey(), Parts: parts}}
	return propagateTableDelta(ctx, st, w, o, delta, routed)
}

// insertNewKeysOn is insertNewKeys split between n workers: each checks
// and writes the rows of the keys it owns (a key's rows are all one
// worker's), and the first row in order that repeats a key fails the
// statement, as on one worker.
func insertNewKeysOn(ctx context.Context, st state.Store, w *epochWrite, o *object, rows []zset.Row, n int) error {
	buckets := splitRows(func(i int) zset.Row { return rows[i] }, len(rows), o.pk)
	at := make([][]int32, n) // the index in rows of each part's rows
	parts := make([][]zset.Row, n)
	sizes := make([]int, n)
	for _, b := range buckets {
		sizes[owner(b, n)]++
	}
	for w, size := range sizes { // sized once: grown row by row, the parts were copied over and over
		at[w], parts[w] = make([]int32, 0, size), make([]zset.Row, 0, size)
	}
	for i, b := range buckets {
		w := owner(b, n)
		at[w] = append(at[w], int32(i))
		parts[w] = append(parts[w], rows[i])
	}
	bad := make([]int, n)
	err := writeOnWorkers(st, n, func(i int, ov state.Store) error {
		b, err := writeNewKeys(ov, o, parts[i])
		if err == nil && b >= 0 {
			bad[i] = int(at[i][b])
			return errDuplicateKey
		}
		return err
	}, func(failed []error) error {
		first := -1
		for i, err := range failed {
			switch {
			case err == errDuplicateKey:
				if first < 0 || bad[i] < first {
					first = bad[i]
				}
			case err != nil:
				return err
			}
		}
		if first >= 0 {
			return o.uniqueViolation(rows[first])
		}
		return nil
	})
	if err != nil {
		return err
	}
	delta := rowsAsInsertions(make(zset.Batch, len(rows)), rows)
	if err := checkFinal(st, o, delta); err != nil {
		return err
	}
	split := make([]zset.Batch, n)
	for i, p := range parts {
		split[i] = rowsAsInsertions(make(zset.Batch, len(p)), p)
	}
	return tableWrittenSplit(ctx, st, w, o, delta, split)
}

// errDuplicateKey is a worker's report that one of its rows repeats a
// key; insertNewKeysOn reports the first such row of all the workers'.
var errDuplicateKey = errs.New(errs.UniqueViolation, "duplicate key")

// appendRowsOn is appendRows split between par's workers when delta is
// large: row i of delta gets sequence number next+i wherever it is
// written, so the keys are those appendRows writes. It returns the
// split (nil when the write was not split).
func appendRowsOn(st state.Store, o *object, delta zset.Batch, par diff.Parallelism) ([]zset.Batch, error) {
	if !splitWrites(par, len(delta)) {
		return nil, appendRows(st, o, delta)
	}
	for _, e := range delta {
		if e.Weight <= 0 {
			return nil, errs.Newf(errs.Internal, "internal error: a change of weight %d to append-only table %q", e.Weight, o.name)
		}
	}
	seqKey := appendSeqKey(o.id)
	next, _, err := readUint64(st, seqKey)
	if err != nil {
		return nil, err
	}
	n := par.Workers
	buckets := splitRows(func(i int) zset.Row { return delta[i].Row }, len(delta), nil)
	at := make([][]int32, n)
	parts := make([]zset.Batch, n)
	for i, b := range buckets {
		w := owner(b, n)
		at[w] = append(at[w], int32(i))
		parts[w] = append(parts[w], delta[i])
	}
	prefix := o.rowsPrefix()
	err = writeOnWorkers(st, n, func(w int, ov state.Store) error {
		key := make([]byte, 0, len(prefix)+9)
		var val []byte
		for j, e := range parts[w] {
			i := at[w][j]
			key = binary.BigEndian.AppendUint64(append(append(key[:0], prefix...), buckets[i]), next+uint64(i))
			val = encodeStored(val, e.Weight, e.Row)
			if err := ov.Set(key, val); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return parts, st.Set(seqKey, binary.BigEndian.AppendUint64(nil, next+uint64(len(delta))))
}
