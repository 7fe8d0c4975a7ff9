package lake

import (
	"sort"
	"sync"
)

// Garbage collection of versions. An ended row version is visible only
// to snapshots older than its end; once every open snapshot is at or
// past that revision (and new ones start at the latest), nothing can see
// it again. Each commit then removes, in its own batch, the row keys
// and table_id index entries of such versions, and all the data of
// tables dropped before the horizon. Versions left at a crash or a
// restart are swept when the store opens, when no snapshot is open.

// deadVersion is an ended row version waiting for the horizon.
type deadVersion struct {
	oid        uint32
	tid        int64
	begin, end uint64
	// indexed says the version has a table_id index entry for val.
	indexed bool
	col     int
	val     int64
}

func deadOf(t *Table, tid int64, begin, end uint64, vals []Value) deadVersion {
	d := deadVersion{oid: t.OID, tid: tid, begin: begin, end: end}
	if c := indexedColumn(t); c >= 0 && vals != nil && !vals[c].Null {
		d.indexed, d.col, d.val = true, c, vals[c].I
	}
	return d
}

// snapshotSet counts the open snapshots per revision.
type snapshotSet struct {
	mu struct {
		sync.Mutex
		open map[uint64]int
	}
}

// take registers a snapshot at the latest revision and returns it;
// reading the revision and registering are one step, so that no
// collection can remove what the snapshot needs.
func (s *Store) takeSnapshot() uint64 {
	s.snaps.mu.Lock()
	defer s.snaps.mu.Unlock()
	if s.snaps.mu.open == nil {
		s.snaps.mu.open = map[uint64]int{}
	}
	rev := s.rev.Load()
	s.snaps.mu.open[rev]++
	return rev
}

func (s *Store) dropSnapshot(rev uint64) {
	s.snaps.mu.Lock()
	defer s.snaps.mu.Unlock()
	if s.snaps.mu.open[rev]--; s.snaps.mu.open[rev] <= 0 {
		delete(s.snaps.mu.open, rev)
	}
}

// horizon is the oldest revision an open or future snapshot reads at.
func (s *Store) horizon() uint64 {
	s.snaps.mu.Lock()
	defer s.snaps.mu.Unlock()
	h := s.rev.Load()
	for rev := range s.snaps.mu.open {
		if rev < h {
			h = rev
		}
	}
	return h
}

// collectLocked adds to the pending batch the removal of every dead
// version and dropped table no snapshot can see, and returns which; the
// caller forgets them once the batch is committed. s.mu is held.
func (s *Store) collectLocked() (versions, tables []int, err error) {
	h := s.horizon()
	for i, d := range s.mu.dead {
		if d.end > h {
			continue
		}
		if err := s.db.Delete(rowKey(d.oid, d.tid, d.begin, d.end)); err != nil {
			return nil, nil, err
		}
		if d.indexed {
			if err := s.db.Delete(indexKey(d.oid, d.col, d.val, d.tid, d.begin)); err != nil {
				return nil, nil, err
			}
		}
		versions = append(versions, i)
	}
	for i, tv := range s.mu.deadTables {
		if tv.end > h {
			continue
		}
		oid := tv.def.OID
		for _, p := range [][]byte{rowPrefix(oid), pkPrefix(oid), indexPrefix(oid)} {
			if err := s.db.DeleteRange(p, prefixEnd(p)); err != nil {
				return nil, nil, err
			}
		}
		if err := s.db.Delete(tableKey(oid, tv.begin, tv.end)); err != nil {
			return nil, nil, err
		}
		if err := s.db.Delete(tidCounterKey(oid)); err != nil {
			return nil, nil, err
		}
		tables = append(tables, i)
	}
	return versions, tables, nil
}

// forgetCollectedLocked drops what a committed collection removed.
func (s *Store) forgetCollectedLocked(versions, tables []int) {
	s.mu.dead = without(s.mu.dead, versions)
	for _, i := range tables {
		oid := s.mu.deadTables[i].def.OID
		delete(s.mu.tables, oid)
		s.tidMu.Lock()
		delete(s.tids, oid)
		s.tidMu.Unlock()
	}
	s.mu.deadTables = without(s.mu.deadTables, tables)
}

func without[T any](xs []T, drop []int) []T {
	if len(drop) == 0 {
		return xs
	}
	sort.Ints(drop)
	out := xs[:0]
	j := 0
	for i, x := range xs {
		if j < len(drop) && drop[j] == i {
			j++
			continue
		}
		out = append(out, x)
	}
	return out
}

// sweep removes, when the store opens, every ended version and dropped
// table: no snapshot is open yet.
func (s *Store) sweep() error {
	var dead []deadVersion
	for oid, vs := range s.mu.tables {
		last := vs[len(vs)-1]
		if last.end != liveEnd {
			s.mu.deadTables = append(s.mu.deadTables, last)
			continue
		}
		t := last.def
		var ferr error
		p := rowPrefix(oid)
		err := s.db.Scan(p, prefixEnd(p), func(k, v []byte) bool {
			_, tid, begin, end, err := rowKeyParts(k)
			if err != nil {
				ferr = err
				return false
			}
			if end == liveEnd {
				return true
			}
			var vals []Value
			if indexedColumn(t) >= 0 {
				if vals, err = decodeRow(v, t.Cols); err != nil {
					ferr = err
					return false
				}
			}
			dead = append(dead, deadOf(t, tid, begin, end, vals))
			return true
		})
		if err != nil {
			return err
		}
		if ferr != nil {
			return ferr
		}
	}
	s.mu.dead = dead
	if len(dead) == 0 && len(s.mu.deadTables) == 0 {
		return nil
	}
	versions, tables, err := s.collectLocked()
	if err != nil {
		s.db.Abort()
		return err
	}
	if err := s.db.Commit(); err != nil {
		return err
	}
	s.forgetCollectedLocked(versions, tables)
	return nil
}
