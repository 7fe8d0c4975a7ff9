package spill

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/tidwall/btree"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/state"
)

// itemBytes is what the governor counts per key held in memory beside
// its key and value bytes (the tree's node share and the slice headers).
const itemBytes = 64

// errWriteInScan is returned for a write made by a scan callback into the
// store being scanned.
var errWriteInScan = errors.New("spill: write during a scan of the same store")

// errClosed is returned by a Store used after its statement ended.
var errClosed = errs.New(errs.QueryCanceled, "canceling statement: its temporary files are gone")

// item is one key held in memory: its value, or, once the store has
// spilled, a deletion hiding the key on disk.
type item struct {
	key, value []byte
	deleted    bool
}

func itemLess(a, b item) bool { return bytes.Compare(a.key, b.key) < 0 }

func (it item) size() int64 { return int64(len(it.key)+len(it.value)) + itemBytes }

// Store is a query's operator state that moves to disk past its budget:
// writes are held in an ordered tree in memory, charged to the
// statement's account, until they pass the budget; then they are written
// to a Pebble instance in the statement's directory (opened at the first
// spill) and the tree starts empty again. Reads merge the tree over the
// disk, the tree's writes (and deletions) winning.
//
// Like state.Memory, any number of goroutines may read a Store at once
// while none writes it; a write needs exclusive access, and a Scan
// callback must not write to the Store being scanned. Values returned by
// Get stay valid.
type Store struct {
	stmt     *Statement
	acct     *memgov.Account
	budget   int64
	mem      *btree.BTreeG[item]
	memBytes int64
	disk     *pebble.DB
	dir      string
	scanning atomic.Int32
	closed   bool
}

var _ state.Store = (*Store)(nil)

// NewStore returns an empty Store spilling into stmt's directory past
// budget bytes (at least MinBudget), charging what it holds in memory to
// acct (nil: nothing).
func NewStore(stmt *Statement, acct *memgov.Account, budget int64) *Store {
	s := &Store{stmt: stmt, acct: acct, budget: max(budget, MinBudget),
		mem: btree.NewBTreeGOptions(itemLess, btree.Options{NoLocks: true})}
	stmt.track(s)
	return s
}

// MinBudget is the least budget of a Store: PostgreSQL's least work_mem.
const MinBudget = 64 << 10

// MemBytes returns what the store holds in memory, as charged.
func (s *Store) MemBytes() int64 { return s.memBytes }

// Spilled reports whether the store has written to disk.
func (s *Store) Spilled() bool { return s.disk != nil }

// Get implements state.Reader.
func (s *Store) Get(key []byte) ([]byte, bool, error) {
	if s.closed {
		return nil, false, errClosed
	}
	if it, ok := s.mem.Get(item{key: key}); ok {
		if it.deleted {
			return nil, false, nil
		}
		return it.value, true, nil
	}
	if s.disk == nil {
		return nil, false, nil
	}
	v, closer, err := s.disk.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, diskError(err)
	}
	v = bytes.Clone(v)
	return v, true, closer.Close()
}

// Set implements state.Writer.
func (s *Store) Set(key, value []byte) error {
	if s.scanning.Load() > 0 {
		return errWriteInScan
	}
	kv := make([]byte, len(key)+len(value))
	copy(kv, key)
	copy(kv[len(key):], value)
	return s.put(item{key: kv[:len(key):len(key)], value: kv[len(key):]})
}

// Delete implements state.Writer.
func (s *Store) Delete(key []byte) error {
	if s.scanning.Load() > 0 {
		return errWriteInScan
	}
	if s.disk == nil {
		if old, ok := s.mem.Delete(item{key: key}); ok {
			s.grow(-old.size())
		}
		return nil
	}
	return s.put(item{key: bytes.Clone(key), deleted: true})
}

func (s *Store) put(it item) error {
	n := it.size()
	if old, ok := s.mem.Set(it); ok {
		n -= old.size()
	}
	s.grow(n)
	if s.memBytes > s.budget {
		return s.flush()
	}
	return nil
}

func (s *Store) grow(n int64) {
	s.memBytes += n
	s.acct.Charge(n)
}

// flush moves the writes held in memory to disk in one batch.
func (s *Store) flush() error {
	if s.closed {
		return errClosed
	}
	if s.disk == nil {
		dir, err := s.stmt.newPath("state")
		if err != nil {
			return err
		}
		db, err := openDisk(dir)
		if err != nil {
			return err
		}
		s.disk, s.dir = db, dir
	}
	b := s.disk.NewBatch()
	var err error
	written := int64(0)
	s.mem.Scan(func(it item) bool {
		if it.deleted {
			err = b.Delete(it.key, nil)
		} else {
			err = b.Set(it.key, it.value, nil)
		}
		written += int64(len(it.key) + len(it.value))
		return err == nil
	})
	if err == nil {
		err = s.stmt.wrote(written)
	}
	if err == nil {
		err = b.Commit(pebble.NoSync)
	}
	if cerr := b.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return diskError(err)
	}
	noteSpill(written)
	s.mem.Clear()
	s.grow(-s.memBytes)
	return nil
}

// Scan implements state.Reader.
func (s *Store) Scan(lo, hi []byte, fn func(key, value []byte) bool) error {
	return s.scan(lo, hi, false, fn)
}

// ScanReverse implements state.Reader.
func (s *Store) ScanReverse(lo, hi []byte, fn func(key, value []byte) bool) error {
	return s.scan(lo, hi, true, fn)
}

// scan visits [lo, hi) (hi nil: no bound), merging the tree's items over
// the disk's keys, in ascending order or, when reverse, descending.
func (s *Store) scan(lo, hi []byte, reverse bool, fn func(key, value []byte) bool) error {
	if s.closed {
		return errClosed
	}
	s.scanning.Add(1)
	defer s.scanning.Add(-1)
	mi := s.mem.Iter()
	defer mi.Release()
	var memOK bool
	if reverse {
		if hi == nil {
			memOK = mi.Last()
		} else if memOK = mi.Seek(item{key: hi}); memOK {
			memOK = mi.Prev() // the last item below hi
		} else {
			memOK = mi.Last()
		}
	} else {
		memOK = mi.Seek(item{key: lo})
	}
	inRange := func(k []byte) bool {
		if reverse {
			return bytes.Compare(k, lo) >= 0
		}
		return hi == nil || bytes.Compare(k, hi) < 0
	}
	memOK = memOK && inRange(mi.Item().key)
	advanceMem := func() {
		if reverse {
			memOK = mi.Prev()
		} else {
			memOK = mi.Next()
		}
		memOK = memOK && inRange(mi.Item().key)
	}
	var di *pebble.Iterator
	diskOK := false
	if s.disk != nil {
		var err error
		if di, err = s.disk.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi}); err != nil {
			return diskError(err)
		}
		if reverse {
			diskOK = di.Last()
		} else {
			diskOK = di.First()
		}
	}
	advanceDisk := func() {
		if reverse {
			diskOK = di.Prev()
		} else {
			diskOK = di.Next()
		}
	}
	for memOK || diskOK {
		c := 0 // <0: the tree's item comes first; >0: the disk's; 0: same key
		switch {
		case !diskOK:
			c = -1
		case !memOK:
			c = 1
		default:
			c = bytes.Compare(mi.Item().key, di.Key())
			if reverse {
				c = -c
			}
		}
		var more bool
		switch {
		case c > 0:
			v, err := di.ValueAndErr()
			if err != nil {
				return errors.Join(diskError(err), di.Close())
			}
			more = fn(di.Key(), v)
			advanceDisk()
		default:
			it := mi.Item()
			more = it.deleted || fn(it.key, it.value)
			advanceMem()
			if c == 0 {
				advanceDisk()
			}
		}
		if !more {
			break
		}
	}
	if di != nil {
		if err := errors.Join(di.Error(), di.Close()); err != nil {
			return diskError(err)
		}
	}
	return nil
}

// Close returns the store's charge and closes its disk, whose files its
// statement removes. Closing twice does nothing.
func (s *Store) Close() error {
	s.stmt.untrack(s)
	return s.closeDisk()
}

func (s *Store) closeDisk() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.mem.Clear()
	s.grow(-s.memBytes)
	if s.disk == nil {
		return nil
	}
	err := s.disk.Close()
	s.disk = nil
	if rerr := os.RemoveAll(s.dir); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return diskError(err)
	}
	return nil
}

// openDisk opens a Pebble instance for scratch state in dir: no
// write-ahead log, a small cache and memtable.
func openDisk(dir string) (*pebble.DB, error) {
	cache := pebble.NewCache(4 << 20)
	defer cache.Unref()
	opts := &pebble.Options{
		DisableWAL:         true,
		Cache:              cache,
		MemTableSize:       4 << 20,
		FormatMajorVersion: pebble.FormatValueSeparation,
		Logger:             quietLogger{},
	}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, diskError(err)
	}
	return db, nil
}

// diskError is err from the scratch disk, as an I/O error (a full disk
// is 53100).
func diskError(err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	if isNoSpace(err) {
		return errs.Newf(errs.DiskFull, "could not write temporary file: no space left on device")
	}
	return errs.Newf(errs.IOError, "temporary file: %v", err)
}

// quietLogger drops Pebble's informational lines: a scratch instance's
// flushes and compactions are no one's concern.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("spill: pebble: "+format, args...))
}
