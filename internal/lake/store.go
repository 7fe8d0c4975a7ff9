package lake

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
)

// firstOID is where table OIDs start, PostgreSQL's FirstNormalObjectId.
const firstOID = 16384

// Store is the catalog database: table definitions and row versions in
// one Pebble database (internal/storage), with a revision per commit.
//
// Reads name the revision they read at and see exactly the versions live
// at it. Commit is the single writer: commits are serialized by mu, each
// is one storage batch, applied atomically and fsynced, and the revision
// moves only after the batch is durable.
type Store struct {
	db  *storage.DB
	log *slog.Logger

	// rev is the last committed revision, readable without mu.
	rev atomic.Uint64

	mu struct {
		sync.Mutex
		// tables holds every table version, live or ended, by OID.
		tables map[uint32][]tableVersion
		// live indexes the live tables by schema and name.
		live map[string]*Table
		// nextOID is the OID the next created table gets.
		nextOID uint32
		// schemas are the user schemas by name (schemas.go).
		schemas map[string]uint32
		// dead are the ended row versions and dropped tables not yet
		// removed (gc.go).
		dead       []deadVersion
		deadTables []tableVersion
	}
	// snaps counts the open transactions' snapshots by revision (gc.go).
	snaps snapshotSet
	// tids hands out row version ids per table; guarded by tidMu.
	tidMu sync.Mutex
	tids  map[uint32]int64
	// locks are the primary keys open transactions have inserted.
	locks keyLocks
}

type tableVersion struct {
	def        *Table
	begin, end uint64
}

// OpenStore opens the catalog database in dir.
func OpenStore(dir string, durability storage.Durability, log *slog.Logger) (*Store, error) {
	return openStore(dir, durability, log, nil)
}

// openStore is OpenStore on file system fs (nil: the operating
// system's; tests inject faults).
func openStore(dir string, durability storage.Durability, log *slog.Logger, fs vfs.FS) (*Store, error) {
	if log == nil {
		log = slog.Default()
	}
	db, err := storage.Open(storage.Options{Dir: dir, Durability: durability, Logger: log, EpochKey: epochKey, FS: fs})
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, log: log, tids: map[uint32]int64{}}
	s.mu.tables = map[uint32][]tableVersion{}
	s.mu.live = map[string]*Table{}
	s.mu.schemas = map[string]uint32{}
	s.mu.nextOID = firstOID
	if err := s.load(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := s.checkNotEngine(dir); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := s.sweep(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

// load reads the revision, the table directory and the counters; a
// record that fails its check stops the open (fail closed).
func (s *Store) load() error {
	if v, ok, err := s.db.Get(metaKey("rev")); err != nil {
		return err
	} else if ok {
		rev, err := decodeUint("revision", v)
		if err != nil {
			return err
		}
		s.rev.Store(rev)
	}
	if v, ok, err := s.db.Get(metaKey("nextoid")); err != nil {
		return err
	} else if ok {
		n, err := decodeUint("next OID", v)
		if err != nil {
			return err
		}
		s.mu.nextOID = uint32(n)
	}
	var loadErr error
	err := s.db.Scan([]byte{nsTable}, []byte{nsTable + 1}, func(k, v []byte) bool {
		oid, begin, end, err := tableKeyParts(k)
		if err == nil {
			var def *Table
			def, err = decodeTable(oid, v)
			if err == nil {
				s.mu.tables[oid] = append(s.mu.tables[oid], tableVersion{def: def, begin: begin, end: end})
				if end == liveEnd {
					s.mu.live[liveName(def.Schema, def.Name)] = def
				}
			}
		}
		loadErr = err
		return err == nil
	})
	if err != nil {
		return err
	}
	if loadErr != nil {
		return loadErr
	}
	if err := s.loadSchemas(); err != nil {
		return err
	}
	prefix := metaKey("tid/")
	err = s.db.Scan(prefix, prefixEnd(prefix), func(k, v []byte) bool {
		if len(k) != len(prefix)+4 {
			loadErr = fmt.Errorf("%w: tid counter key %x", ErrCorrupted, k)
			return false
		}
		n, err := decodeUint("tid counter", v)
		if err != nil {
			loadErr = err
			return false
		}
		oid := uint32(k[len(prefix)])<<24 | uint32(k[len(prefix)+1])<<16 | uint32(k[len(prefix)+2])<<8 | uint32(k[len(prefix)+3])
		s.tids[oid] = int64(n)
		return true
	})
	if err != nil {
		return err
	}
	return loadErr
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Rev returns the last committed revision.
func (s *Store) Rev() uint64 { return s.rev.Load() }

// DB returns the storage database, for checkpoints and checks.
func (s *Store) DB() *storage.DB { return s.db }

// lookup returns the table named schema.name live at the latest
// revision, or nil.
func (s *Store) lookup(schema, name string) *Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.live[liveName(schema, name)]
}

func liveName(schema, name string) string { return schema + "\x00" + name }

// liveTables returns the tables live at the latest revision, by OID.
func (s *Store) liveTables() []*Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Table
	for _, vs := range s.mu.tables {
		for _, v := range vs {
			if v.end == liveEnd {
				out = append(out, v.def)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// allocOID returns a new table OID; OIDs are never reused.
func (s *Store) allocOID() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	oid := s.mu.nextOID
	s.mu.nextOID++
	return oid
}

// allocTid returns a new row version id for table oid: (0,1), (0,2), ...
// as PostgreSQL numbers the tuples of a table's first page, continuing
// in the next block after offset 65535. Ids are never reused, not even
// those of rolled back transactions.
func (s *Store) allocTid(oid uint32) int64 {
	s.tidMu.Lock()
	defer s.tidMu.Unlock()
	n := s.tids[oid] + 1
	if uint16(n) == 0 {
		n++ // offset 0 is not a valid item pointer
	}
	s.tids[oid] = n
	return n
}

// storedRow is one visible row version.
type storedRow struct {
	tid   int64
	begin uint64
	vals  []Value
}

// scan calls fn with every row version of t visible at rev, in tid order.
func (s *Store) scan(t *Table, rev uint64, fn func(r storedRow) error) error {
	p := rowPrefix(t.OID)
	var ferr error
	err := s.db.Scan(p, prefixEnd(p), func(k, v []byte) bool {
		_, tid, begin, end, err := rowKeyParts(k)
		if err != nil {
			ferr = err
			return false
		}
		if begin > rev || end <= rev {
			return true
		}
		vals, err := decodeRow(v, t.Cols)
		if err != nil {
			ferr = fmt.Errorf("table %s row %s: %w", t.Name, tidText(tid), err)
			return false
		}
		if err := fn(storedRow{tid: tid, begin: begin, vals: vals}); err != nil {
			ferr = err
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	return ferr
}

// scanRaw calls fn with the tid and the stored record of every row
// version of t visible at rev, in tid order, until fn says stop. The
// record is valid only during the call.
func (s *Store) scanRaw(t *Table, rev uint64, fn func(tid int64, rec []byte) (bool, error)) error {
	p := rowPrefix(t.OID)
	var ferr error
	err := s.db.Scan(p, prefixEnd(p), func(k, v []byte) bool {
		_, tid, begin, end, err := rowKeyParts(k)
		if err != nil {
			ferr = err
			return false
		}
		if begin > rev || end <= rev {
			return true
		}
		more, err := fn(tid, v)
		if err != nil {
			ferr = err
			return false
		}
		return more
	})
	if err != nil {
		return err
	}
	return ferr
}

// pkHolder returns the live row version holding key in the latest
// revision, if any.
func (s *Store) pkHolder(key []byte) (tid int64, begin uint64, ok bool, err error) {
	v, ok, err := s.db.Get(key)
	if err != nil || !ok {
		return 0, 0, false, err
	}
	tid, begin, err = decodePKEntry(v)
	return tid, begin, err == nil, err
}

// isLive says whether the row version (oid, tid, begin) is live at the
// latest revision.
func (s *Store) isLive(oid uint32, tid int64, begin uint64) (bool, error) {
	_, ok, err := s.db.Get(rowKey(oid, tid, begin, liveEnd))
	return ok, err
}

// writeSet is what a transaction changes, applied by Commit.
type writeSet struct {
	// inserts are the transaction's new row versions, per table.
	inserts map[uint32][]storedRow
	// deletes are the committed row versions the transaction ends: tid →
	// the version's begin revision.
	deletes map[uint32]map[int64]uint64
	// created are tables the transaction creates; dropped the OIDs it
	// drops.
	created []*Table
	dropped map[uint32]bool
	// schemas are the schemas it creates, with their OIDs.
	schemas map[string]uint32
	// tables are the definitions of every table touched.
	tables map[uint32]*Table
	// ownPK indexes the primary keys of inserts (pkKey, which names the
	// table) to their tids.
	ownPK map[string]int64
}

func newWriteSet() *writeSet {
	return &writeSet{
		inserts: map[uint32][]storedRow{},
		deletes: map[uint32]map[int64]uint64{},
		dropped: map[uint32]bool{},
		tables:  map[uint32]*Table{},
	}
}

func (w *writeSet) empty() bool {
	return len(w.inserts) == 0 && len(w.deletes) == 0 && len(w.created) == 0 && len(w.dropped) == 0 && len(w.schemas) == 0
}

// errCommitConflict is a write to a row version another transaction
// ended first, as PostgreSQL reports it under REPEATABLE READ.
var errCommitConflict = &sqlError{code: codeSerialization, msg: "could not serialize access due to concurrent update"}

// Commit applies w as one atomic, durable batch and returns the new
// revision. It fails, writing nothing, when a row version w ends was
// ended by another commit (40001) or a primary key w inserts is held by
// a live row (23505).
func (s *Store) Commit(w *writeSet) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.empty() {
		return s.rev.Load(), nil
	}
	rev := s.rev.Load() + 1
	db := s.db
	fail := func(err error) (uint64, error) {
		db.Abort()
		return 0, err
	}
	for oid := range w.dropped {
		if !s.liveLocked(oid) {
			return fail(errCommitConflict)
		}
	}
	for _, t := range w.created {
		if other := s.mu.live[liveName(t.Schema, t.Name)]; other != nil && !w.dropped[other.OID] {
			return fail(errorf(codeDuplicateTable, "relation %q already exists", t.Name))
		}
	}
	if err := s.commitSchemasLocked(w); err != nil {
		return fail(err)
	}
	collected, collectedTables, err := s.collectLocked()
	if err != nil {
		return fail(err)
	}
	var newDead []deadVersion
	// End versions first, so that a key deleted and inserted again in
	// the same transaction passes the primary key check.
	freed := map[string]bool{}
	for oid, dels := range w.deletes {
		t := w.tables[oid]
		for tid, begin := range dels {
			old := rowKey(oid, tid, begin, liveEnd)
			v, ok, err := db.Get(old)
			if err != nil {
				return fail(err)
			}
			if !ok {
				return fail(errCommitConflict)
			}
			if err := db.Delete(old); err != nil {
				return fail(err)
			}
			if err := db.Set(rowKey(oid, tid, begin, rev), v); err != nil {
				return fail(err)
			}
			var vals []Value
			if len(t.PK) > 0 || indexedColumn(t) >= 0 {
				if vals, err = decodeRow(v, t.Cols); err != nil {
					return fail(err)
				}
			}
			newDead = append(newDead, deadOf(t, tid, begin, rev, vals))
			if len(t.PK) > 0 {
				k, err := pkKey(oid, pkVals(t, vals))
				if err != nil {
					return fail(err)
				}
				if htid, _, ok, err := s.pkHolder(k); err != nil {
					return fail(err)
				} else if ok && htid == tid {
					if err := db.Delete(k); err != nil {
						return fail(err)
					}
					freed[string(k)] = true
				}
			}
		}
	}
	for oid, rows := range w.inserts {
		t := w.tables[oid]
		for _, r := range rows {
			if len(t.PK) > 0 {
				k, err := pkKey(oid, pkVals(t, r.vals))
				if err != nil {
					return fail(err)
				}
				if !freed[string(k)] {
					if _, _, ok, err := s.pkHolder(k); err != nil {
						return fail(err)
					} else if ok {
						return fail(uniqueViolation(t, r.vals))
					}
				}
				delete(freed, string(k))
				if err := db.Set(k, encodePKEntry(r.tid, rev)); err != nil {
					return fail(err)
				}
			}
			if err := db.Set(rowKey(oid, r.tid, rev, liveEnd), encodeRow(r.vals)); err != nil {
				return fail(err)
			}
			if c := indexedColumn(t); c >= 0 && !r.vals[c].Null {
				if err := db.Set(indexKey(oid, c, r.vals[c].I, r.tid, rev), indexRecord); err != nil {
					return fail(err)
				}
			}
		}
	}
	for oid := range w.dropped {
		vs := s.mu.tables[oid]
		last := vs[len(vs)-1]
		if err := db.Delete(tableKey(oid, last.begin, liveEnd)); err != nil {
			return fail(err)
		}
		if err := db.Set(tableKey(oid, last.begin, rev), encodeTable(last.def)); err != nil {
			return fail(err)
		}
	}
	for _, t := range w.created {
		if w.dropped[t.OID] {
			continue
		}
		if err := db.Set(tableKey(t.OID, rev, liveEnd), encodeTable(t)); err != nil {
			return fail(err)
		}
	}
	s.tidMu.Lock()
	for oid := range w.inserts {
		if err := db.Set(tidCounterKey(oid), encodeUint(uint64(s.tids[oid]))); err != nil {
			s.tidMu.Unlock()
			return fail(err)
		}
	}
	s.tidMu.Unlock()
	if err := db.Set(metaKey("nextoid"), encodeUint(uint64(s.mu.nextOID))); err != nil {
		return fail(err)
	}
	if err := db.Set(metaKey("rev"), encodeUint(rev)); err != nil {
		return fail(err)
	}
	if err := db.Set(epochKey, binary.BigEndian.AppendUint64(nil, rev)); err != nil {
		return fail(err)
	}
	if err := db.Commit(); err != nil {
		return 0, fmt.Errorf("lake: commit of revision %d: %w", rev, err)
	}
	s.forgetCollectedLocked(collected, collectedTables)
	s.mu.dead = append(s.mu.dead, newDead...)
	for oid := range w.dropped {
		vs := s.mu.tables[oid]
		vs[len(vs)-1].end = rev
		delete(s.mu.live, liveName(vs[len(vs)-1].def.Schema, vs[len(vs)-1].def.Name))
		s.mu.deadTables = append(s.mu.deadTables, vs[len(vs)-1])
	}
	for _, t := range w.created {
		if !w.dropped[t.OID] {
			s.mu.tables[t.OID] = append(s.mu.tables[t.OID], tableVersion{def: t, begin: rev, end: liveEnd})
			s.mu.live[liveName(t.Schema, t.Name)] = t
		}
	}
	for name, oid := range w.schemas {
		s.mu.schemas[name] = oid
	}
	s.rev.Store(rev)
	return rev, nil
}

func (s *Store) liveLocked(oid uint32) bool {
	vs := s.mu.tables[oid]
	return len(vs) > 0 && vs[len(vs)-1].end == liveEnd
}

func pkVals(t *Table, vals []Value) []Value {
	out := make([]Value, len(t.PK))
	for i, c := range t.PK {
		out[i] = vals[c]
	}
	return out
}

// uniqueViolation is PostgreSQL's error for a duplicate primary key; its
// message is what makes DuckLake retry a conflicting commit.
func uniqueViolation(t *Table, vals []Value) *sqlError {
	var names, shown bytes.Buffer
	for i, c := range t.PK {
		if i > 0 {
			names.WriteString(", ")
			shown.WriteString(", ")
		}
		names.WriteString(t.Cols[c].Name)
		shown.WriteString(vals[c].Text())
	}
	return &sqlError{
		code:   codeUniqueViolation,
		msg:    fmt.Sprintf("duplicate key value violates unique constraint %q", t.pkName()),
		detail: fmt.Sprintf("Key (%s)=(%s) already exists.", names.String(), shown.String()),
	}
}

// engineLayoutKey is where a RockStream database records its layout
// version (docs/format/storage.md): a directory holding it is the
// engine's, never a lake.
var engineLayoutKey = []byte{0x04, 'l', 'a', 'y', 'o', 'u', 't'}

// checkNotEngine refuses a directory that holds a RockStream database
// instead of a lake, before anything is bootstrapped into it: no revision,
// but the engine's layout or frontier.
func (s *Store) checkNotEngine(dir string) error {
	if _, ok, err := s.db.Get(metaKey("rev")); err != nil || ok {
		return err
	}
	for _, k := range [][]byte{engineLayoutKey, epochKey} {
		if _, ok, err := s.db.Get(k); err != nil {
			return err
		} else if ok {
			return errs.Newf(errs.WrongObjectType, "%s holds a RockStream database, not a RockLake catalog: open it with `rockstream start --storage %s`", dir, dir)
		}
	}
	return nil
}
