package runtime

import (
	"context"
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// An unmaterialized table (CREATE TABLE ... APPEND ONLY WITH
// (materialized = false)) is an append-only table without a primary key
// whose rows are not stored: each statement's insertions flow into the
// views that read the table, in the same epoch, as any table's do, and
// nothing is written under the table's rows prefix. The invariants:
//
//   - Nothing reads the table's rows: an ad-hoc read of it (SELECT,
//     COPY TO, a plain view over it, INSERT ... SELECT from it) fails with
//     0A000 (readRelationOn and readKeyRanges refuse it), so no answer is
//     ever computed from the rows it does not have.
//   - A materialized view over it is exact only if it saw every row the
//     table took: the count of rows taken is kept in the metadata
//     (unstored/<id uvarint>, u64be), and creating a materialized view
//     over the table once the count is not 0 fails with 55000; over a
//     table that has taken nothing the backfill reads nothing.
//   - The operators of a view over it (join arrangements, aggregates) keep
//     their own state as over any table; that is the view's state, not
//     the table's rows.
//
// The option is in the CREATE TABLE text of the catalog record, so a
// restart replays it.

// unstoredKey is where the count of rows an unmaterialized table has
// taken is kept.
func unstoredKey(id uint64) []byte {
	return binary.AppendUvarint(append([]byte{nsMeta}, "unstored/"...), id)
}

// checkUnstored validates an unmaterialized table's declaration: it must
// be append-only (a change could not retract a row it does not keep) and
// have no primary key (the key check reads the stored rows).
func checkUnstored(o *object) error {
	if !o.unstored {
		return nil
	}
	if !o.appendOnly {
		return errs.Newf(errs.InvalidParameterValue,
			"table %q with materialized = false must be append-only: CREATE TABLE ... APPEND ONLY WITH (materialized = false)", o.name)
	}
	if len(o.pk) > 0 {
		return errs.Newf(errs.FeatureNotSupported,
			"table %q with materialized = false cannot have a primary key: enforcing the key needs the stored rows", o.name)
	}
	return nil
}

// unstoredReadError is the error of a read of an unmaterialized table's
// rows.
func unstoredReadError(o *object) error {
	return errs.Newf(errs.FeatureNotSupported,
		"cannot read table %q: it keeps no rows (materialized = false); read a materialized view over it instead", o.name)
}

// writeUnstored takes delta, the insertions of one statement, into o's
// views without storing them, and counts them.
func writeUnstored(ctx context.Context, st state.Store, w *epochWrite, o *object, delta zset.Batch) error {
	if len(delta) == 0 {
		return nil
	}
	var n uint64
	for _, e := range delta {
		if e.Weight <= 0 {
			return errs.Newf(errs.Internal, "internal error: a change of weight %d to append-only table %q", e.Weight, o.name)
		}
		n += uint64(e.Weight)
	}
	if err := checkFinal(st, o, delta); err != nil {
		return err
	}
	key := unstoredKey(o.id)
	taken, _, err := readUint64(st, key)
	if err != nil {
		return err
	}
	if err := st.Set(key, binary.BigEndian.AppendUint64(nil, taken+n)); err != nil {
		return err
	}
	return tableWritten(ctx, st, w, o, delta)
}

// sourceRows returns the rows of src, an input of a circuit being
// created, as st holds them: an unmaterialized table that has taken no
// rows has none, and one that has taken some cannot start a circuit.
func sourceRows(ctx context.Context, st state.Reader, src *object, view string) (zset.Batch, error) {
	if !src.unstored {
		return readRelation(ctx, st, src)
	}
	taken, _, err := readUint64(st, unstoredKey(src.id))
	if err != nil || taken == 0 {
		return nil, err
	}
	return nil, errs.Newf(errs.PrerequisiteState,
		"cannot create materialized view %q over table %q: the table keeps no rows (materialized = false) and has taken %d already, so the view could not start from them; create the views over such a table before it takes rows",
		view, src.name, taken)
}

// readsUnstored reports whether view v's circuit reads an unmaterialized
// table.
func readsUnstored(cat *catalog, v *object) bool {
	if v.circuit == nil {
		return false
	}
	for _, r := range v.circuit.Relations() {
		if src := cat.lookup(r); src != nil && src.unstored {
			return true
		}
	}
	return false
}
