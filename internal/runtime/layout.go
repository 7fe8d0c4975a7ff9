package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// The store's layout version (docs/format/storage.md, "Layout versions")
// says how its keys are laid out, so that the layout is never guessed:
//
//   - 1, never written: keys without buckets, as stores were written
//     before the version was recorded. A store with a frontier and no
//     version has layout 1.
//   - 2: table rows, view contents, change logs and operator state carry
//     the bucket of their routing key right after the object id.
//   - 3: a change-log key holds a record of entries (changerecord.go)
//     instead of one entry; the keys are those of layout 2.
//
// Open migrates a layout 1 or 2 store to layout 3 before it reads
// anything else, in one atomic commit, and refuses a store whose layout
// is newer than this build's. Invariant: once Open returns, every object's keys
// are in the current layout and the store records it.

// storeLayout is the layout this build writes.
const storeLayout = 3

var metaLayout = []byte{nsMeta, 'l', 'a', 'y', 'o', 'u', 't'}

// writeLayout records the current layout.
func writeLayout(st state.Store) error {
	return st.Set(metaLayout, binary.BigEndian.AppendUint64(nil, storeLayout))
}

// checkLayout returns the store's layout version; 0 for an empty store
// (no frontier, nothing committed).
func checkLayout(r state.Reader) (uint64, error) {
	v, ok, err := readUint64(r, metaLayout)
	if err != nil || ok {
		if ok && v > storeLayout {
			return 0, errs.Newf(errs.FeatureNotSupported, "the store has layout version %d, newer than the version %d this build reads: open it with the build that wrote it or a newer one", v, storeLayout)
		}
		if ok && v < 2 {
			return 0, errs.Newf(errs.DataCorrupted, "the store records layout version %d, which no build writes; the store is damaged: restore it from a checkpoint", v)
		}
		return v, err
	}
	if _, ok, err := readUint64(r, metaFrontier); err != nil || !ok {
		return 0, err
	}
	return 1, nil
}

// upgradeLayout brings st to the current layout. A layout 2 store's
// change-log entries become one-entry records under the same keys
// (relogChangeLog). A layout 1 store's table rows, view contents and
// change logs (as records) are rekeyed for the objects of cat (recovered
// from st, which reads no rows), each view's routing is recorded in its
// catalog record and every view's operator state is recomputed
// (rebuildOperatorState). The rewrite, with the new version, is committed
// in one batch, and is checked row by row: a stored key that is not the
// key its row has in layout 1, or a value that does not decode, stops it
// with nothing changed.
func upgradeLayout(st Store, cat *catalog) error {
	v, err := checkLayout(st)
	if err != nil || v == 0 || v == storeLayout {
		return err
	}
	if v == 2 {
		return relogChangeLogs(st, cat)
	}
	type kv struct{ k, v []byte }
	var dels [][]byte
	var sets []kv
	var recs []*object
	for _, o := range cat.byName {
		if o.system != nil || (o.kind != sql.Table && o.kind != sql.MaterializedView) {
			continue
		}
		if o.kind == sql.MaterializedView && o.route != o.derivedRoute {
			// Layout 1 records say nothing of routing: the view gets the
			// routing its plan gets, recorded from now on.
			o.route = o.derivedRoute
			recs = append(recs, o)
		}
		if err := rekeyRows(st, o, func(old, k, v []byte) {
			dels = append(dels, old)
			sets = append(sets, kv{k, v})
		}); err != nil {
			return fmt.Errorf("upgrading the rows of %s %s to layout %d: %w", o.kindName(), o.name, storeLayout, err)
		}
		if o.kind != sql.MaterializedView {
			continue
		}
		if err := rekeyChangeLog(st, o, func(old, k, v []byte) {
			dels = append(dels, old)
			sets = append(sets, kv{k, v})
		}); err != nil {
			return fmt.Errorf("upgrading the change log of %s %s to layout %d: %w", o.kindName(), o.name, storeLayout, err)
		}
	}
	// An old key may equal another entry's new one: every deletion goes
	// before the first write.
	ov := state.NewOverlay(st)
	for _, k := range dels {
		if err := ov.Delete(k); err != nil {
			st.Abort()
			return err
		}
	}
	for _, e := range sets {
		if err := ov.Set(e.k, e.v); err != nil {
			st.Abort()
			return err
		}
	}
	if err := rebuildOperatorState(ov, cat); err != nil {
		st.Abort()
		return err
	}
	return commitUpgrade(st, ov, func() error {
		for _, o := range recs {
			if err := writeCatalogRecord(st, o, cat.recordSchema(o)); err != nil {
				return err
			}
		}
		return nil
	})
}

// commitUpgrade commits an upgrade's rewrite ov into st, then what more
// writes (when not nil) and the current layout version, and commits st's
// batch; after any failure st's batch is aborted and the store is
// unchanged.
func commitUpgrade(st Store, ov *state.Overlay, more func() error) error {
	err := ov.Commit()
	if err == nil && more != nil {
		err = more()
	}
	if err == nil {
		err = writeLayout(st)
	}
	if err != nil {
		st.Abort()
		return err
	}
	return st.Commit()
}

// rebuildOperatorState replaces the operator state of every materialized
// view of cat with the state its circuit, as this build makes it, keeps
// over the current contents of its inputs. A layout 1 store's operator
// state was written by circuits whose operators were numbered as the
// build that wrote it numbered them (an aggregate without GROUP BY, a
// top-k without PARTITION BY and a recursive query are now several
// operators), so it is not read, only recomputed: views in creation
// order, each from relations that are already up to date. A view whose
// recomputation differs from its stored contents stops the upgrade with
// nothing changed.
func rebuildOperatorState(st state.Store, cat *catalog) error {
	ctx := context.Background()
	for _, o := range cat.matviewsInOrder() {
		if err := deletePrefix(st, relPrefix(nsOpState, o.id)); err != nil {
			return err
		}
		deltas := map[string]zset.Batch{}
		for _, r := range o.circuit.Relations() {
			src := cat.lookup(r)
			if src == nil {
				return errs.Newf(errs.Internal, "internal error: view %s reads unknown relation %q", o.name, r)
			}
			var err error
			if deltas[r], err = readRelation(ctx, st, src); err != nil {
				return err
			}
		}
		out, err := o.circuit.Step(ctx, st, deltas)
		if err != nil {
			return fmt.Errorf("upgrading materialized view %s to layout %d: recomputing its state: %w", o.name, storeLayout, err)
		}
		got, err := readRelation(ctx, st, o)
		if err != nil {
			return err
		}
		diff, err := zset.Consolidate(append(append(zset.Batch(nil), got...), negate(out)...))
		if err != nil {
			return err
		}
		if len(diff) > 0 {
			return errs.Newf(errs.DataCorrupted, "upgrading materialized view %s to layout %d: its stored contents differ from its recomputation in %d rows; restore a checkpoint written by the build that wrote this store", o.name, storeLayout, len(diff))
		}
	}
	return nil
}

// rekeyRows calls fn with each of o's stored rows in layout 1: its old
// key, its key in the current layout and its value.
func rekeyRows(r state.Reader, o *object, fn func(old, k, v []byte)) error {
	prefix := o.rowsPrefix()
	keyOf, orderOf := o.keyOf(), o.orderKeyOf()
	arrival := o.storesInArrivalOrder()
	var derr error
	var order, scratch []byte
	err := r.Scan(prefix, state.PrefixEnd(prefix), func(k, v []byte) bool {
		e, err := decodeStored(v)
		if err != nil {
			derr = fmt.Errorf("key %x: %w", k, err)
			return false
		}
		var nk []byte
		if arrival {
			if len(k) != len(prefix)+8 {
				derr = errs.Newf(errs.DataCorrupted, "key %x is not an arrival-order key of layout 1", k)
				return false
			}
			var b int
			b, scratch = rowBucket(e.Row, scratch)
			nk = append(append(append([]byte(nil), prefix...), byte(b)), k[len(prefix):]...)
		} else {
			if order = orderOf(order, prefix, e.Row); !bytes.Equal(order, k) {
				derr = errs.Newf(errs.DataCorrupted, "key %x is not the layout 1 key of its row %v", k, e.Row)
				return false
			}
			nk = keyOf(nil, prefix, e.Row)
		}
		fn(append([]byte(nil), k...), nk, append([]byte(nil), v...))
		return true
	})
	if err == nil {
		err = derr
	}
	return err
}

// rekeyChangeLog calls fn with each entry of o's change log in layout 1
// (prefix | epoch | seq): its old key, its key in the current layout
// (prefix | bucket | epoch | seq) and its value there, a one-entry record.
func rekeyChangeLog(r state.Reader, o *object, fn func(old, k, v []byte)) error {
	prefix := relPrefix(nsChangeLog, o.id)
	var scratch []byte
	return oldLogEntries(r, o, 1, func(k []byte, row zset.Row, rec []byte) {
		var b int
		b, scratch = o.viewRowBucket(row, scratch)
		nk := append(append(append([]byte(nil), prefix...), byte(b)), k[len(prefix):]...)
		fn(append([]byte(nil), k...), nk, rec)
	})
}

// oldLogEntries calls fn with each entry of o's change log as layout 1
// or 2 stored it, one key per entry: its key, its row and its value as a
// one-entry record. A key of another length than the layout's, or a
// value that does not decode, stops it with an error.
func oldLogEntries(r state.Reader, o *object, layout uint64, fn func(k []byte, row zset.Row, rec []byte)) error {
	prefix := relPrefix(nsChangeLog, o.id)
	keyLen := len(prefix) + 16 // epoch | seq
	if layout == 2 {
		keyLen++ // bucket
	}
	var derr error
	err := r.Scan(prefix, state.PrefixEnd(prefix), func(k, v []byte) bool {
		if len(k) != keyLen {
			derr = errs.Newf(errs.DataCorrupted, "key %x is not a change-log key of layout %d", k, layout)
			return false
		}
		row, rec, err := logRecordOf(v)
		if err != nil {
			derr = fmt.Errorf("key %x: %w", k, err)
			return false
		}
		fn(k, row, rec)
		return true
	})
	if err == nil {
		err = derr
	}
	return err
}

// relogChangeLogs upgrades a layout 2 store to layout 3: every
// change-log entry of the views of cat becomes a one-entry record under
// its key, committed with the new version in one batch. An entry that
// does not decode, or a key that is not an entry's, stops it with nothing
// changed.
func relogChangeLogs(st Store, cat *catalog) error {
	ov := state.NewOverlay(st)
	for _, o := range cat.matviewsInOrder() {
		var keys, recs [][]byte
		if err := oldLogEntries(st, o, 2, func(k []byte, _ zset.Row, rec []byte) {
			keys, recs = append(keys, bytes.Clone(k)), append(recs, rec)
		}); err != nil {
			ov.Discard()
			return fmt.Errorf("upgrading the change log of %s %s to layout %d: %w", o.kindName(), o.name, storeLayout, err)
		}
		for i, k := range keys {
			if err := ov.Set(k, recs[i]); err != nil {
				ov.Discard()
				return err
			}
		}
	}
	return commitUpgrade(st, ov, nil)
}
