package runtime

import (
	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Lookup joins inside circuits. A materialized view's join whose input
// (either of an inner join's, an outer join's nullable one, a semi- or
// anti-join's subquery) is a table joined on its whole primary key, or a
// materialized view joined on the group key its rows are routed by (its
// first columns, docs/format/storage.md), reads that relation's stored
// rows by key instead of keeping an arrangement of them (diff/lookup.go,
// ops/lookupjoin.go, ops/lookupouter.go): one Get of the table's row, or one prefix scan of
// the view's rows of the key, in the bucket of the key, which is the
// bucket the relation stores them in. This relies on the relation's rows
// being written before its readers step in every epoch (a table's in
// line, never beside the views: lookedUpByView; a view's before the
// views after it step, viewgroups.go), so that the join reads the new
// version. A backfill feeds such a relation no delta (backfill.go).

// disableCircuitLookups, set by benchmarks and tests, builds every view
// with arrangements on both sides of its joins, as before lookups.
var disableCircuitLookups = false

// viewLookups says which relations of cat a view's circuit may read by
// key: tables with a primary key whose rows are stored, scanned with
// every primary-key column (immutable when the table is append-only: it
// takes no UPDATE, DELETE, TRUNCATE or upsert, so a key's row never
// changes, and its primary key admits no second row under a key), and
// views routed by their group key.
func viewLookups(cat *catalog) diff.Lookups {
	if disableCircuitLookups || cat.sharded {
		// In shard mode the stored rows are this member's part only.
		return nil
	}
	return func(scan string) (diff.StoredRelation, bool) {
		o, pos := cat.input(scan)
		if o == nil || o.system != nil {
			return diff.StoredRelation{}, false
		}
		key := o.pk
		switch {
		case o.kind == sql.Table && len(o.pk) > 0 && !o.unstored:
		case o.kind == sql.MaterializedView && o.route > 0 && o.route < len(o.cols):
			key = make([]int, o.route)
			for i := range key {
				key[i] = i
			}
		default:
			return diff.StoredRelation{}, false
		}
		keyCols := make([]int, len(key))
		for k, c := range key {
			keyCols[k] = c
			if pos != nil {
				keyCols[k] = -1
				for i, p := range pos {
					if p == c {
						keyCols[k] = i
						break
					}
				}
				if keyCols[k] < 0 {
					return diff.StoredRelation{}, false
				}
			}
		}
		return diff.StoredRelation{Base: o.name, KeyCols: keyCols,
			Rows:      &storedByKey{prefix: o.rowsPrefix(), pos: pos, scan: o.kind != sql.Table},
			Immutable: o.kind == sql.Table && o.appendOnly}, true
	}
}

// storedByKey reads a relation's stored rows by the key they are stored
// under (ops.StoredRows): a keyed table's row by its primary key, or a
// routed view's rows by its leading columns.
type storedByKey struct {
	prefix []byte
	pos    []int // the scan's columns (nil: all)
	// scan says the key is a prefix of the rows' keys (a view's), not the
	// whole key (a table's primary key).
	scan     bool
	key, end []byte
	err      error
}

// Rows implements ops.StoredRows. It is called by one worker's instance
// of the circuit only (each instance builds its own).
func (t *storedByKey) Rows(st state.Reader, key []types.Value, fn func(row zset.Row, weight int64) error) error {
	k := append(append(t.key[:0], t.prefix...), 0)
	k = zset.EncodeKey(k, key...)
	k[len(t.prefix)] = byte(zset.Bucket(k[len(t.prefix)+1:]))
	t.key = k
	if t.scan {
		t.end = zset.KeyPrefixEnd(t.end[:0], k)
		t.err = nil
		err := st.Scan(k, t.end, func(_, v []byte) bool {
			e, err := decodeStored(v)
			if err == nil {
				err = fn(projectRow(e.Row, t.pos), e.Weight)
			}
			t.err = err
			return err == nil
		})
		if err != nil {
			return err
		}
		return t.err
	}
	v, ok, err := st.Get(k)
	if err != nil || !ok {
		return err
	}
	e, err := decodeStored(v)
	if err != nil {
		return err
	}
	return fn(projectRow(e.Row, t.pos), e.Weight)
}

// projectRow returns row cut to the columns at pos (nil: row itself).
func projectRow(row zset.Row, pos []int) zset.Row {
	if pos == nil {
		return row
	}
	out := make(zset.Row, len(pos))
	for j, p := range pos {
		out[j] = row[p]
	}
	return out
}

// lookedUpByView reports whether a materialized view of c reads table
// name's stored rows by key.
func (c *catalog) lookedUpByView(name string) bool {
	for _, o := range c.byName {
		if o.kind != sql.MaterializedView || o.circuit == nil {
			continue
		}
		for _, r := range o.circuit.Relations() {
			if src, _ := c.input(r); src != nil && src.name == name && o.circuit.LookedUp(r) {
				return true
			}
		}
	}
	return false
}
