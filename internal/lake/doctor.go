package lake

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/rockstream/rockstream/internal/storage"
)

// IsLake says whether db holds a RockLake catalog (it has a revision).
func IsLake(db *storage.DB) (bool, error) {
	_, ok, err := db.Get(metaKey("rev"))
	return ok, err
}

// Report is what Check found in a lake directory.
type Report struct {
	Revision uint64
	// Tables counts the live tables; Versions every stored row version,
	// Live those visible at Revision.
	Tables, Versions, Live int
	// Snapshots counts the live rows of ducklake_snapshot, the DuckLake
	// snapshots; LatestSnapshot is the highest snapshot_id among them
	// (-1 when there are none, or no ducklake_snapshot table).
	Snapshots      int
	LatestSnapshot int64
	Problems       []string
}

// Check reads every record of a lake and verifies it: envelopes and
// payloads decode, every key has its namespace's shape, every row
// version belongs to a known table and decodes against its definition,
// no version begins after the revision, and the primary key index holds
// exactly the live rows' keys. It writes nothing.
func Check(db *storage.DB) (*Report, error) {
	s := &Store{db: db, log: slog.New(slog.NewTextHandler(io.Discard, nil)), tids: map[uint32]int64{}}
	s.mu.tables = map[uint32][]tableVersion{}
	s.mu.live = map[string]*Table{}
	s.mu.schemas = map[string]uint32{}
	s.mu.nextOID = firstOID
	if err := s.load(); err != nil {
		return nil, err
	}
	rep := &Report{Revision: s.Rev(), LatestSnapshot: -1}
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	// The epoch key repeats the revision for the identity file; lakes
	// written before it existed lack it until their next commit.
	if v, ok, err := db.Get(epochKey); err != nil {
		return nil, err
	} else if ok && (len(v) != 8 || binary.BigEndian.Uint64(v) != rep.Revision) {
		problem("the epoch key %q holds %x, not the revision %d", epochKey, v, rep.Revision)
	}
	if t := s.lookup("public", "ducklake_snapshot"); t != nil {
		if c := t.col("snapshot_id"); c >= 0 {
			err := s.scan(t, rep.Revision, func(r storedRow) error {
				rep.Snapshots++
				if v := r.vals[c]; !v.Null && v.I > rep.LatestSnapshot {
					rep.LatestSnapshot = v.I
				}
				return nil
			})
			if err != nil {
				problem("ducklake_snapshot: %v", err)
			}
		}
	}
	defs := map[uint32]*Table{}
	for oid, vs := range s.mu.tables {
		for _, v := range vs {
			if v.begin > rep.Revision || (v.end != liveEnd && v.end > rep.Revision) {
				problem("table %d (%s) has versions beyond revision %d", oid, v.def.Name, rep.Revision)
			}
			if v.end == liveEnd {
				rep.Tables++
				if _, ok := s.mu.schemas[v.def.Schema]; !ok && v.def.Schema != "public" {
					problem("table %d (%s) is in schema %q, which does not exist", oid, v.def.Name, v.def.Schema)
				}
			}
		}
		defs[oid] = vs[len(vs)-1].def
		if oid >= s.mu.nextOID {
			problem("table OID %d is not below the next OID %d", oid, s.mu.nextOID)
		}
	}
	// Live primary keys as the rows say, to compare with the index; the
	// table_id index entries every version must have.
	wantPK := map[string]int64{}
	wantIndex := map[string]string{}
	err := db.Scan([]byte{nsRow}, []byte{nsRow + 1}, func(k, v []byte) bool {
		oid, tid, begin, end, err := rowKeyParts(k)
		if err != nil {
			problem("%v", err)
			return true
		}
		rep.Versions++
		t := defs[oid]
		if t == nil {
			problem("row %s of unknown table %d", tidText(tid), oid)
			return true
		}
		vals, err := decodeRow(v, t.Cols)
		if err != nil {
			problem("table %s row %s: %v", t.Name, tidText(tid), err)
			return true
		}
		if begin > rep.Revision || (end != liveEnd && end > rep.Revision) || begin >= end {
			problem("table %s row %s has version range [%d, %d) beyond revision %d", t.Name, tidText(tid), begin, end, rep.Revision)
		}
		if c := indexedColumn(t); c >= 0 && !vals[c].Null {
			wantIndex[string(indexKey(oid, c, vals[c].I, tid, begin))] = fmt.Sprintf("table %s row %s", t.Name, tidText(tid))
		}
		if int64(tid) > s.tids[oid] {
			problem("table %s row %s is past its tid counter %s", t.Name, tidText(tid), tidText(s.tids[oid]))
		}
		if end == liveEnd {
			rep.Live++
			if len(t.PK) > 0 {
				pk, err := pkKey(oid, pkVals(t, vals))
				if err != nil {
					problem("table %s row %s: %v", t.Name, tidText(tid), err)
				} else if other, dup := wantPK[string(pk)]; dup {
					problem("table %s: rows %s and %s share a primary key", t.Name, tidText(other), tidText(tid))
				} else {
					wantPK[string(pk)] = tid
				}
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	err = db.Scan([]byte{nsPK}, []byte{nsPK + 1}, func(k, v []byte) bool {
		tid, _, err := decodePKEntry(v)
		if err != nil {
			problem("%v", err)
			return true
		}
		want, ok := wantPK[string(k)]
		switch {
		case !ok:
			problem("primary key entry %x names no live row", k)
		case want != tid:
			problem("primary key entry %x names row %s, the live row is %s", k, tidText(tid), tidText(want))
		}
		delete(wantPK, string(k))
		return true
	})
	if err != nil {
		return nil, err
	}
	err = db.Scan([]byte{nsIndex}, []byte{nsIndex + 1}, func(k, v []byte) bool {
		if kind, _, _, err := storage.DecodeRecord(v); err != nil || kind != recIndex {
			problem("index entry %x is damaged", k)
		} else if _, ok := wantIndex[string(k)]; !ok {
			problem("index entry %x names no row version", k)
		}
		delete(wantIndex, string(k))
		return true
	})
	if err != nil {
		return nil, err
	}
	var missing []string
	for k, tid := range wantPK {
		missing = append(missing, fmt.Sprintf("live row %s has no primary key entry %x", tidText(tid), k))
	}
	for k, row := range wantIndex {
		missing = append(missing, fmt.Sprintf("%s has no table_id index entry %x", row, k))
	}
	sort.Strings(missing)
	rep.Problems = append(rep.Problems, missing...)
	return rep, nil
}
