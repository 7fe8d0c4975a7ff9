package runtime

import (
	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Lookup joins inside circuits. A materialized view's inner join whose
// input is a table joined on its whole primary key reads that table's
// stored rows by key instead of keeping an arrangement of them
// (diff/lookup.go, ops/lookupjoin.go): one Get per join key of the other
// input's delta, in the bucket of the key, which is the bucket the table
// stores the row in. This relies on the table's rows being written
// before its views step in every epoch (in line, never beside the views:
// lookedUpByView), so that the join reads the table's new version. A
// backfill feeds such a table no delta (backfill.go).

// disableCircuitLookups, set by benchmarks and tests, builds every view
// with arrangements on both sides of its joins, as before lookups.
var disableCircuitLookups = false

// viewLookups says which relations of cat a view's circuit may read by
// key: tables with a primary key whose rows are stored, scanned with
// every primary-key column.
func viewLookups(cat *catalog) diff.Lookups {
	if disableCircuitLookups {
		return nil
	}
	return func(scan string) (diff.StoredRelation, bool) {
		o, pos := cat.input(scan)
		if o == nil || o.kind != sql.Table || len(o.pk) == 0 || o.unstored || o.system != nil {
			return diff.StoredRelation{}, false
		}
		keyCols := make([]int, len(o.pk))
		for k, c := range o.pk {
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
			Rows: &tableByKey{prefix: o.rowsPrefix(), pos: pos}}, true
	}
}

// tableByKey reads a keyed table's stored row by its primary key
// (ops.StoredRows).
type tableByKey struct {
	prefix []byte
	pos    []int // the scan's columns (nil: all)
	key    []byte
}

// Rows implements ops.StoredRows. It is called by one worker's instance
// of the circuit only (each instance builds its own).
func (t *tableByKey) Rows(st state.Reader, key []types.Value, fn func(row zset.Row, weight int64) error) error {
	k := append(append(t.key[:0], t.prefix...), 0)
	k = zset.EncodeKey(k, key...)
	k[len(t.prefix)] = byte(zset.Bucket(k[len(t.prefix)+1:]))
	t.key = k
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
