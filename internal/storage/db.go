package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
)

// FormatMajorVersion is the Pebble on-disk format every database is
// created with (and an older one is upgraded to). It is set explicitly:
// Pebble's default is its oldest format, which lacks checksummed table
// footers and write-ahead-log sync markers, both of which fail-closed
// start-up relies on. Raising it is a one-way on-disk migration.
const FormatMajorVersion = pebble.FormatValueSeparation

// DefaultCacheBytes is the block cache size when Options.CacheBytes is 0.
const DefaultCacheBytes = 64 << 20

// Durability says when Commit returns relative to the disk.
type Durability uint8

const (
	// Sync makes Commit fsync the write-ahead log before it returns: a
	// committed batch survives a machine crash.
	Sync Durability = iota
	// Relaxed skips the fsync. Commits stay atomic and ordered, but a crash
	// can lose the most recent committed batches (whole batches, never part
	// of one), and an I/O error can surface on a later Commit than the one
	// whose data it lost. For benchmarks and tests only.
	Relaxed
)

// String returns "sync" or "relaxed".
func (d Durability) String() string {
	if d == Relaxed {
		return "relaxed"
	}
	return "sync"
}

// Options configures Open.
type Options struct {
	// Dir is the database directory. It is created when missing, unless
	// MustExist or ReadOnly is set.
	Dir string
	// FS is the file system; nil means the operating system's. Tests pass
	// vfs.NewMem() or a fault-injecting wrapper.
	FS vfs.FS
	// Durability is Sync (the default) or Relaxed.
	Durability Durability
	// CacheBytes bounds the block cache, the part of the data kept in
	// memory; 0 means DefaultCacheBytes.
	CacheBytes int64
	// Logger receives Pebble's log lines and storage events; nil means
	// slog.Default().
	Logger *slog.Logger
	// EpochKey is the key whose value (8 bytes, big-endian) is the last
	// committed epoch. The identity file records it with every durable
	// commit, and Open refuses a store that holds an older epoch than the
	// file records. nil: only Pebble's sequence numbers are cross-checked.
	EpochKey []byte
	// MustExist makes Open refuse a directory that does not hold a store
	// instead of creating one.
	MustExist bool
	// ReserveBytes is the free space below which Commit refuses writes
	// with errs.DiskFull, leaving Pebble room to flush and compact; 0
	// means a twentieth of the file system, at least 16 MiB and at most
	// 256 MiB.
	ReserveBytes int64
	// ReadOnly opens the store for reading only, changing nothing in the
	// directory (not even what a read-write open's recovery would: the
	// write-ahead log is replayed into memory). It implies MustExist.
	// Writes and Commit fail.
	ReadOnly bool

	// disableCompactions turns off background compactions, so that tests
	// see exactly the tables their flushes made.
	disableCompactions bool
}

// DB is a Pebble database behind the state.Store interface. Reads see
// committed data; writes are pending until Commit (see the package
// documentation).
//
// Reads, Snapshot and Metrics are safe for concurrent use, also while
// another goroutine writes or commits. Writes and Commit are safe for
// concurrent use too, but the pending batch is shared: one writer (the
// shard's actor) is expected, and concurrent commits apply in the order
// they reach Pebble. Close must not run concurrently with other methods.
type DB struct {
	db        *pebble.DB
	dir       string
	fs        vfs.FS
	writeOpts *pebble.WriteOptions
	log       *slog.Logger
	epochKey  []byte
	readOnly  bool
	// popts are the options the database was opened with.
	popts *pebble.Options

	// identity is the store's identity as Open found or created it.
	identity Identity
	// ident keeps the identity file's claim current; nil when read-only.
	ident *identityWriter
	// opened is what Open's checks found.
	opened observed
	// space refuses commits while the disk is full; nil when read-only.
	space *spaceGuard
	// bgErrors limits the log lines of repeated background errors.
	bgErrors logLimiter

	closed atomic.Bool
	// failed is the error that stopped the DB; Recover clears it.
	// failedAt is when it was set (Unix nanoseconds).
	failed   atomic.Pointer[codedError]
	failedAt atomic.Int64
	// cache is the block cache, shared by the Pebble instances Recover
	// opens.
	cache *pebble.Cache
	// lock is the directory lock, held across the Pebble instances; nil
	// when read-only.
	lock *pebble.Lock
	// inst is the current Pebble instance (db's); nil when read-only.
	inst atomic.Pointer[pebbleInstance]
	// inflight counts the calls using db (see enter); swapping is set
	// while Recover replaces it.
	inflight atomic.Int64
	swapping atomic.Bool
	recov    recovery
	// recoveries counts the recoveries without a restart.
	recoveries atomic.Int64
	// lastBgError is when Pebble last reported a failed background job
	// (Unix nanoseconds); its retries are slowed down for a while after.
	lastBgError atomic.Int64
	// lastCorrupt is the path of the last file Pebble found corrupted,
	// named in read errors.
	lastCorrupt atomic.Pointer[string]

	// ack is the snapshot at the last acknowledged commit, which reads
	// of the DB stopped by a failed write are served from (stopped.go).
	ack acknowledged

	// checkpointMu serializes CreateCheckpoint calls on this DB.
	checkpointMu sync.Mutex

	// iters are the iterators Scan keeps between reads (iterpool.go).
	iters iterPool

	mu struct {
		sync.Mutex
		// pending holds the writes since the last Commit or Abort; nil
		// when there are none.
		pending *pebble.Batch
		// pendingEpoch is the epoch the pending batch writes under
		// epochKey, when hasPendingEpoch.
		pendingEpoch    uint64
		hasPendingEpoch bool
		// committed is the claim of the last commit applied; with Relaxed
		// durability it is recorded in the identity file at the next sync.
		committed Claim
		// uncertain is the claim the files reach if the batch of a Commit
		// whose log fsync failed is there (uncertain.go); zero when there
		// is none.
		uncertain Claim
		// snapshots are the open snapshots, closed by Close.
		snapshots map[*Snapshot]struct{}
		// digests caches the SHA-256 of immutable files (tables), by name,
		// for checkpoints.
		digests map[string]fileDigest
	}
}

var _ state.Store = (*DB)(nil)

// Open opens the store in opts.Dir, creating it when the directory is
// missing or empty (unless opts.MustExist or opts.ReadOnly).
//
// Before Pebble may change anything, Open checks the directory read-only:
// Pebble's own checks (MANIFEST and write-ahead-log checksums, every table
// present with its size), every block of every live table, and the
// identity file's claim against what the files hold. It refuses a
// directory that holds Pebble files but no current-manifest marker, a
// store that holds fewer commits or an older epoch than its identity file
// records (a missing, truncated or damaged write-ahead log), damaged
// tables, and a directory holding an interrupted restore. Those errors
// carry errs.DataCorrupted, name the file and say how to recover; the
// directory is left as it was.
//
// A store without an identity file was written by an earlier version: it
// is opened once it has passed every other check, and the identity file is
// created then.
func Open(opts Options) (*DB, error) {
	if opts.Dir == "" {
		return nil, errs.New(errs.Internal, "storage: no database directory given")
	}
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "storage", "dir", opts.Dir)
	cacheBytes := opts.CacheBytes
	if cacheBytes <= 0 {
		cacheBytes = DefaultCacheBytes
	}
	cache := pebble.NewCache(cacheBytes)
	opened := false
	defer func() {
		if !opened {
			cache.Unref()
		}
	}()

	d := &DB{dir: opts.Dir, fs: fs, log: log, writeOpts: pebble.Sync, readOnly: opts.ReadOnly, cache: cache}
	d.bgErrors.every = 30 * time.Second
	d.recov.log.every = 30 * time.Second
	if opts.EpochKey != nil {
		d.epochKey = append([]byte(nil), opts.EpochKey...)
	}
	if opts.Durability == Relaxed {
		d.writeOpts = pebble.NoSync
	}
	popts := &pebble.Options{
		FS:                 fs,
		Cache:              cache,
		FormatMajorVersion: FormatMajorVersion,
		Merger:             weightMerger,
		Logger:             pebbleLogger{l: log},
		EventListener: &pebble.EventListener{
			BackgroundError: func(err error) {
				d.lastBgError.Store(time.Now().UnixNano())
				if isNoSpace(err) && d.space != nil {
					d.space.noteENOSPC()
				}
				// Pebble retries failed flushes and compactions; one line
				// per interval says it goes on.
				if ok, n := d.bgErrors.allow(); ok {
					log.Error("storage background error", "err", causeText(err), "suppressed", n)
				}
			},
			DataCorruption: func(info pebble.DataCorruptionInfo) {
				path := info.Path
				d.lastCorrupt.Store(&path)
				log.Error("storage found corrupted data", "file", info.Path, "err", causeText(info.Details))
			},
			DiskSlow: func(info pebble.DiskSlowInfo) {
				log.Warn("storage disk is slow", "info", info.String())
			},
		},
	}
	popts.DisableAutomaticCompactions = opts.disableCompactions
	for i := range popts.Levels {
		// Point reads of keys that are absent (most probes of an
		// arrangement) skip a table on its bloom filter.
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	d.popts = popts

	isNew, id, err := inspectDir(fs, opts.Dir, opts.MustExist || opts.ReadOnly)
	if err != nil {
		return nil, err
	}
	d.mu.snapshots = map[*Snapshot]struct{}{}
	d.mu.digests = map[string]fileDigest{}
	if !isNew {
		pdb, obs, err := verifyOpen(opts.Dir, fs, popts, d.epochKey, id, d.lastCorruptPath)
		if err != nil {
			return nil, err
		}
		d.opened = obs
		if opts.ReadOnly {
			d.db = pdb
			if id != nil {
				d.identity = *id
			}
			log.Debug("storage opened read-only", "tables", obs.tables, "seq", obs.claim.Seq, "epoch", obs.claim.Epoch)
			opened = true
			return d, nil
		}
		if err := closeQuietly(pdb); err != nil {
			return nil, err
		}
	} else if err := fs.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, wrapf(errs.IOError, err, "storage: creating %s", opts.Dir)
	}
	if err := ratchetFormat(opts.Dir, fs, popts); err != nil {
		return nil, openError(opts.Dir, withWALNames(fs, opts.Dir, err))
	}
	lock, err := pebble.LockDirectory(opts.Dir, fs)
	if err != nil {
		return nil, openError(opts.Dir, err)
	}
	d.lock = lock
	pdb, inst, err := d.openInstance(true)
	if err != nil {
		if inst != nil {
			_ = lock.Close() // the stuck open's reference
		}
		return nil, errors.Join(err, lock.Close())
	}
	d.db = pdb
	d.inst.Store(inst)
	d.space = &spaceGuard{fs: fs, dir: opts.Dir, reserve: opts.ReserveBytes, log: log}
	if err := d.openIdentity(id, isNew); err != nil {
		return nil, errors.Join(err, d.closePebble(), lock.Close())
	}
	opened = true
	d.removeCheckpointScratch()
	log.Debug("storage opened", "durability", opts.Durability.String(), "cache_bytes", cacheBytes,
		"store", d.identity.ID.String(), "epoch", d.identity.Claim.Epoch, "tables", d.opened.tables)
	return d, nil
}

func (d *DB) lastCorruptPath() string {
	if p := d.lastCorrupt.Load(); p != nil {
		return *p
	}
	return ""
}

// inspectDir looks at dir before Pebble does and decides whether it is a
// new store (missing or empty: isNew), an existing one (with its identity
// file, nil for a store written before identity files existed), or a
// directory to refuse.
func inspectDir(fs vfs.FS, dir string, mustExist bool) (isNew bool, id *Identity, err error) {
	names, err := fs.List(dir)
	if errors.Is(err, os.ErrNotExist) {
		if mustExist {
			return false, nil, errNoStore(dir, "there is no such directory")
		}
		return true, nil, nil
	}
	if err != nil {
		if info, serr := fs.Stat(dir); serr == nil && !info.IsDir() {
			return false, nil, errNoStore(dir, "it is not a directory")
		}
		return false, nil, wrapf(errs.IOError, err, "storage: reading %s", dir)
	}
	if slices.Contains(names, restoreMarker) {
		return false, nil, errs.Newf(errs.DataCorrupted,
			"storage: %s holds an interrupted checkpoint restore (%s is present); delete the directory and run the restore again",
			dir, restoreMarker)
	}
	if id, err = readIdentity(fs, dir); err != nil {
		return false, nil, err
	}
	desc, err := pebble.Peek(dir, fs)
	if err != nil {
		return false, nil, openError(dir, err)
	}
	if desc.Exists {
		return false, id, nil
	}
	var data []string
	for _, n := range names {
		if isPebbleFile(n) {
			data = append(data, n)
		}
	}
	slices.Sort(data)
	switch {
	case id != nil:
		return false, nil, corrupted(nil,
			"storage: %s holds store %s (its %s says so, with epoch %d durable), but Pebble's current-manifest marker (marker.manifest.*) is missing, so its MANIFEST and data cannot be found",
			dir, id.ID, IdentityFile, id.Claim.Epoch)
	case len(data) > 0:
		return false, nil, corrupted(nil,
			"storage: %s holds database files (%s) but no current-manifest marker (marker.manifest.*), so they cannot be opened; it is not a new store",
			dir, strings.Join(firstN(data, 4), ", "))
	case mustExist:
		return false, nil, errNoStore(dir, "it holds no database files")
	}
	return true, nil, nil
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(slices.Clip(s[:n]), "...")
	}
	return s
}

// openIdentity creates the identity file of a new store or of one written
// before identity files existed (found is nil), or brings the existing
// one up to what the open store holds, and starts keeping it current.
func (d *DB) openIdentity(found *Identity, isNew bool) error {
	claim := Claim{Seq: visibleSeq(d.db)}
	if d.epochKey != nil {
		v, ok, err := d.get(d.db, d.epochKey)
		if err != nil {
			return err
		}
		if ok && len(v) == 8 {
			claim.Epoch = beUint64(v)
		}
	}
	id := found
	if id == nil {
		var err error
		if id, err = newIdentity(claim); err != nil {
			return err
		}
		if err := writeIdentity(d.fs, d.dir, id); err != nil {
			return err
		}
		if !isNew {
			d.log.Info("storage created the identity file of a store written by an earlier version",
				"file", d.fs.PathJoin(d.dir, IdentityFile), "store", id.ID.String(), "epoch", claim.Epoch)
		}
	}
	w, err := openIdentityWriter(d.fs, d.dir, id)
	if err != nil {
		return err
	}
	if err := w.Record(claim); err != nil {
		return errors.Join(err, w.Close())
	}
	d.ident = w
	d.identity = w.id
	d.mu.committed = w.Claim()
	if d.mu.committed == claim {
		// No commit has run yet: the instance holds exactly claim.
		d.replaceAcknowledged(claim)
	}
	return nil
}

// Identity returns the store's identity and the claim Open started from
// (for a read-only DB, the identity file's claim; its zero value when the
// store has no identity file yet).
func (d *DB) Identity() Identity { return d.identity }

// Observed returns the commit sequence and epoch Open found the store's
// files to hold, and the number and size of the live tables it verified.
func (d *DB) Observed() (c Claim, tables int, bytes uint64) {
	return d.opened.claim, d.opened.tables, d.opened.bytes
}

// ratchetFormat opens and closes a database that is new or in an older
// format, so that the database is at FormatMajorVersion before it is
// opened for use. Pebble creates the write-ahead log of an open before it
// raises the format, so without this the first log of a new database
// would lack the sync markers that tell a damaged log record from a torn
// write: damage there would silently end recovery early instead of
// failing Open.
func ratchetFormat(dir string, fs vfs.FS, opts *pebble.Options) error {
	desc, err := pebble.Peek(dir, fs)
	if err == nil && desc.Exists && desc.FormatMajorVersion >= FormatMajorVersion {
		return nil
	}
	db, err := openPebble(dir, opts.Clone())
	if err != nil {
		return err
	}
	return db.Close()
}

// openPebble is pebble.Open with Pebble's fatal errors turned into errors.
func openPebble(dir string, opts *pebble.Options) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatalError)
			if !ok {
				panic(r)
			}
			db, err = nil, f
		}
	}()
	return pebble.Open(dir, opts)
}

// Verify reads every block of every live table and checks its checksum,
// and checks that the keys of every level are in order: the full check
// `rockstream doctor` runs (Open does the first part). It returns
// errs.DataCorrupted naming the damaged file.
func (d *DB) Verify() error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.exit()
	tables, err := liveTables(d.db)
	if err != nil {
		return d.damaged("listing the tables", err)
	}
	if err := verifyTables(d.fs, d.dir, tables); err != nil {
		return err
	}
	if err := d.db.CheckLevels(nil); err != nil {
		return d.damaged("checking the order of keys in every table", err)
	}
	return nil
}

// damaged returns the error for a failure found while doing op: damage
// (DataCorrupted, naming the file when Pebble reported which) or an I/O
// error.
func (d *DB) damaged(op string, err error) error {
	if !isDamage(err) {
		return wrapf(errs.IOError, err, "storage: %s in %s failed", op, d.dir)
	}
	where := d.dir
	if p := d.lastCorrupt.Load(); p != nil {
		where = *p
	}
	return corrupted(err, "storage: damaged data in %s (found while %s)", where, op)
}

// Health returns nil when the DB accepts reads and writes, or the error
// that says why it does not: the disk is full (writes refused, reads
// served), or a failed write stopped it. A stopped DB tries to recover
// first, at most once per interval, so that health checks recover an
// idle server.
func (d *DB) Health() error {
	if d.failed.Load() != nil && !d.closed.Load() {
		d.maybeRecover()
	}
	if f := d.failed.Load(); f != nil {
		return f
	}
	if d.space != nil && d.space.Full() && d.space.check(0) != nil {
		// Measured again: an idle server (one that a load balancer took
		// out of service while the disk was full) sees the space freed.
		return diskFull(nil, "storage: %s is below its free-space reserve; writes are refused until space is freed", d.dir)
	}
	return nil
}

// Degradation says how a DB that does not accept writes is degraded.
type Degradation struct {
	// Problem is Health's error; nil when the DB accepts reads and writes.
	Problem error
	// Since is when the condition began.
	Since time.Time
	// ReadsServed is true while the disk is full (only writes are
	// refused), and while a failed write stopped the DB as long as reads
	// are served at the last acknowledged commit (stopped.go).
	ReadsServed bool
}

// Degraded returns Health's answer with when the condition began and
// whether reads are still served.
func (d *DB) Degraded() Degradation {
	err := d.Health()
	if err == nil {
		return Degradation{}
	}
	if d.failed.Load() != nil {
		return Degradation{Problem: err, Since: time.Unix(0, d.failedAt.Load()), ReadsServed: d.readsServed()}
	}
	g := Degradation{Problem: err, ReadsServed: true}
	if d.space != nil {
		g.Since, _ = d.space.FullSince()
	}
	return g
}

// Dir returns the database directory.
func (d *DB) Dir() string { return d.dir }

// Durability returns how Commit treats the disk.
func (d *DB) Durability() Durability {
	if d.writeOpts.Sync {
		return Sync
	}
	return Relaxed
}

// Err returns the error that stopped the DB after a failed commit, or nil.
func (d *DB) Err() error {
	if f := d.failed.Load(); f != nil {
		return f
	}
	return nil
}

// Get implements state.Reader. The returned value is a copy and stays
// valid.
func (d *DB) Get(key []byte) ([]byte, bool, error) {
	var (
		v  []byte
		ok bool
	)
	err := d.read(func(r pebbleReader) (err error) {
		v, ok, err = d.get(r, key)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return v, ok, nil
}

// Scan implements state.Reader. One Scan reads one point in time: a commit
// that lands during it is not seen.
func (d *DB) Scan(lo, hi []byte, fn func(key, value []byte) bool) error {
	return d.read(func(r pebbleReader) error { return d.scan(d.live(r), lo, hi, false, fn) })
}

// ScanReverse implements state.Reader.
func (d *DB) ScanReverse(lo, hi []byte, fn func(key, value []byte) bool) error {
	return d.read(func(r pebbleReader) error { return d.scan(d.live(r), lo, hi, true, fn) })
}

// pebbleReader is what a DB and a Snapshot read through.
type pebbleReader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

func (d *DB) get(r pebbleReader, key []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, d.damaged("reading a key", err)
	}
	out := append(make([]byte, 0, len(v)), v...)
	if err := closer.Close(); err != nil {
		return nil, false, d.damaged("reading a key", err)
	}
	return out, true, nil
}

func (d *DB) scan(r pebbleReader, lo, hi []byte, reverse bool, fn func(key, value []byte) bool) (err error) {
	if hi != nil && bytes.Compare(lo, hi) >= 0 {
		return nil
	}
	if len(lo) == 0 {
		// The empty key is the smallest; no lower bound says the same, and
		// Pebble's invariant checks (race builds) index an empty seek key.
		lo = nil
	}
	it, gen, err := d.openIter(r, lo, hi)
	if err != nil {
		return d.damaged("scanning", err)
	}
	defer func() {
		if cerr := d.closeIter(r, it, gen, err == nil); cerr != nil && err == nil {
			err = d.damaged("scanning", cerr)
		}
	}()
	var ok bool
	if reverse {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	for ; ok; ok = d.step(it, reverse) {
		v, err := it.ValueAndErr()
		if err != nil {
			return d.damaged("scanning", err)
		}
		k := it.Key()
		if k == nil {
			// Pebble returns the empty key as nil; callers (state.Overlay's
			// merge among them) may take a nil key to mean "no key".
			k = emptyKey
		}
		if !fn(k, v) {
			return nil
		}
	}
	if err := it.Error(); err != nil {
		return d.damaged("scanning", err)
	}
	return nil
}

var emptyKey = []byte{}

// step moves a scan to the next user key in its direction.
//
// Forward, it moves with NextPrefix rather than Next: under the default
// comparer a key's prefix is the whole key, so both reach the next user
// key, but Next steps over every older version of the current key one by
// one while NextPrefix seeks past them. A small view or table whose rows
// are rewritten in every epoch keeps thousands of versions in the
// memtable; BenchmarkScanRewritten reads 100 such rows 2.7x faster.
func (d *DB) step(it *pebble.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.NextPrefix()
}

// errReadOnly is what writes to a DB opened with Options.ReadOnly fail
// with.
var errReadOnly = errs.New(errs.ReadOnlyTransaction, "storage: the database is open read-only")

// writable starts a write (see enter), or returns the error it must fail
// with.
func (d *DB) writable() error {
	if d.readOnly {
		return errReadOnly
	}
	return d.enter()
}

// batchLocked returns the pending batch, creating it. d.mu must be held.
func (d *DB) batchLocked() *pebble.Batch {
	if d.mu.pending == nil {
		d.mu.pending = d.db.NewBatch()
	}
	return d.mu.pending
}

// write adds one operation to the pending batch.
func (d *DB) write(op func(b *pebble.Batch) error) error {
	if err := d.writable(); err != nil {
		return err
	}
	defer d.exit()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := op(d.batchLocked()); err != nil {
		return wrapf(errs.Internal, err, "storage: adding a write to the pending batch")
	}
	return nil
}

// Set implements state.Writer: it adds a write to the pending batch,
// copying key and value.
func (d *DB) Set(key, value []byte) error {
	return d.write(func(b *pebble.Batch) error {
		if d.epochKey != nil && len(value) == 8 && bytes.Equal(key, d.epochKey) {
			d.mu.pendingEpoch, d.mu.hasPendingEpoch = beUint64(value), true
		}
		return b.Set(key, value, nil)
	})
}

// Delete implements state.Writer: it adds a deletion to the pending batch.
func (d *DB) Delete(key []byte) error {
	return d.write(func(b *pebble.Batch) error { return b.Delete(key, nil) })
}

// DeleteRange adds the deletion of every key in [lo, hi) to the pending
// batch: dropping a view's state or trimming a change log costs one write
// however many keys it covers. hi must not be nil.
func (d *DB) DeleteRange(lo, hi []byte) error {
	if hi == nil {
		return errs.New(errs.Internal, "storage: DeleteRange needs an upper bound")
	}
	if bytes.Compare(lo, hi) >= 0 {
		return nil
	}
	return d.write(func(b *pebble.Batch) error { return b.DeleteRange(lo, hi, nil) })
}

// Merge adds a weight merge to the pending batch: operand is a signed
// varint weight followed by a payload, and after Commit the key's value is
// its previous weight plus the operand's, followed by the operand's
// payload (see MergerName). A key whose weights sum to zero keeps a value
// of weight zero until it is deleted.
func (d *DB) Merge(key, operand []byte) error {
	return d.write(func(b *pebble.Batch) error { return b.Merge(key, operand, nil) })
}

// Pending returns the number of writes in the pending batch.
func (d *DB) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.pending == nil {
		return 0
	}
	return int(d.mu.pending.Count())
}

// Commit applies the pending batch atomically and, with Sync durability,
// makes it durable before returning. An empty batch is a no-op. On error
// the batch is dropped; if the error came from Pebble's commit pipeline
// (a failed write-ahead-log write or fsync) the DB is stopped: every later
// write returns the same error, which wraps ErrFailed, until the DB
// recovers (see Recover) or restarts, from the last durable state; reads
// are served at the last acknowledged commit meanwhile, or fail the same
// way when that cannot be done safely (stopped.go).
func (d *DB) Commit() error {
	if err := d.writable(); err != nil {
		d.Abort()
		return err
	}
	defer d.exit()
	d.mu.Lock()
	b := d.mu.pending
	d.mu.pending = nil
	epoch, hasEpoch := d.mu.pendingEpoch, d.mu.hasPendingEpoch
	d.mu.hasPendingEpoch = false
	d.mu.Unlock()
	if b == nil {
		return nil
	}
	n := b.Count()
	if err := d.space.check(int64(b.Len())); err != nil {
		_ = b.Close()
		return err
	}
	claim, fatal, err := d.apply(b, epoch, hasEpoch)
	if err == nil {
		cerr := b.Close()
		if d.writeOpts.Sync {
			if err := d.recordClaim(claim); err != nil {
				return err
			}
		}
		return cerr
	}
	if !fatal {
		_ = b.Close()
		if isNoSpace(err) {
			d.space.noteENOSPC()
			return diskFull(err, "storage: commit of %d writes to %s failed; nothing was applied", n, d.dir)
		}
		return wrapf(errs.IOError, err, "storage: commit of %d writes to %s failed; nothing was applied", n, d.dir)
	}
	// The batch stays with Pebble's broken commit pipeline; it is not
	// closed or reused.
	if inst := d.inst.Load(); inst != nil && inst.logSyncFailed.Load() {
		return d.failUncertain(n, uint64(b.SeqNum())+uint64(n), epoch, hasEpoch, err)
	}
	return d.stop(fmt.Sprintf("commit of %d writes", n), err)
}

// apply applies batch b, writing epoch when hasEpoch, and on success
// returns the claim of its commit, now the acknowledged one, with the
// snapshot of the last acknowledged commit at it (stopped.go). No other
// batch reaches Pebble in between.
func (d *DB) apply(b *pebble.Batch, epoch uint64, hasEpoch bool) (claim Claim, fatal bool, err error) {
	return d.applyWith(b, d.writeOpts, epoch, hasEpoch)
}

// applyWith is apply with the write options wo.
func (d *DB) applyWith(b *pebble.Batch, wo *pebble.WriteOptions, epoch uint64, hasEpoch bool) (claim Claim, fatal bool, err error) {
	d.ack.commit.Lock()
	defer d.ack.commit.Unlock()
	fatal, err = d.guard(func() error { return d.db.Apply(b, wo) })
	// Reads that start from now on must see the batch (iterpool.go).
	d.iters.invalidate(!d.wedged())
	if err != nil {
		return Claim{}, fatal, err
	}
	claim = Claim{Seq: uint64(b.SeqNum()) + uint64(b.Count())}
	d.mu.Lock()
	if !hasEpoch {
		epoch = d.mu.committed.Epoch
	}
	claim.Epoch = epoch
	if claim.Seq > d.mu.committed.Seq {
		d.mu.committed = claim
	}
	d.mu.Unlock()
	d.acknowledge(claim)
	return claim, false, nil
}

// guard runs fn, turning Pebble's fatal path (see pebbleLogger.Fatalf)
// into an error and reporting whether it was taken.
func (d *DB) guard(fn func() error) (fatal bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatalError)
			if !ok {
				panic(r)
			}
			fatal, err = true, f
		}
	}()
	return false, fn()
}

// stop records that the DB can no longer be written because op failed
// with cause, and returns the error every later write (and every read
// that is refused) returns.
func (d *DB) stop(op string, cause error) error {
	code, prefix := errs.IOError, ""
	if isNoSpace(cause) {
		code, prefix = errs.DiskFull, diskFullMessage+": "
	}
	e := &codedError{
		err: errs.Newf(code,
			"%sstorage: %s to %s failed: %s; the database accepts no writes until it reopens itself (reads are served at the last acknowledged commit meanwhile, unless they fail), which it tries until the condition clears (space is freed, the device works again); if it cannot, restart rockstream to recover the last durable epoch",
			prefix, op, d.dir, causeText(cause)).(*errs.Error),
		cause: cause,
		extra: ErrFailed,
	}
	if inst := d.inst.Load(); inst != nil {
		// Nothing the broken instance still does may change the files.
		inst.fenced.Store(true)
	}
	if d.failed.CompareAndSwap(nil, e) {
		d.failedAt.Store(time.Now().UnixNano())
		d.log.Error("storage failed; database stopped", "op", op, "err", cause)
	}
	if f := d.failed.Load(); f != nil {
		return f
	}
	return e
}

// syncLog makes everything committed so far durable, which with Relaxed
// durability is also where a failed log write from an earlier Commit
// comes to light (and stops the DB).
func (d *DB) syncLog() error {
	d.mu.Lock()
	claim := d.mu.committed
	d.mu.Unlock()
	fatal, err := d.guard(func() error { return d.db.LogData(nil, pebble.Sync) })
	if fatal {
		return d.stop("syncing the write-ahead log", err)
	}
	if err != nil {
		return wrapf(errs.IOError, err, "storage: syncing the write-ahead log of %s", d.dir)
	}
	return d.recordClaim(claim)
}

// recordClaim records in the identity file that the commits of claim are
// durable. A failure to write the file stops the DB: without it, a later
// loss of those commits could not be detected.
func (d *DB) recordClaim(c Claim) error {
	if d.ident == nil {
		return nil
	}
	if err := d.ident.Record(c); err != nil {
		return d.stop("recording the durable epoch", err)
	}
	return nil
}

// Abort drops the pending batch.
func (d *DB) Abort() {
	d.mu.Lock()
	b := d.mu.pending
	d.mu.pending = nil
	d.mu.Unlock()
	if b != nil {
		_ = b.Close()
	}
}

// Flush makes everything committed durable and writes the data held in
// memory (the memtable) to tables. Commit does not need it for durability;
// checkpoints call it so that the data they upload is in immutable tables.
func (d *DB) Flush() error {
	if err := d.writable(); err != nil {
		return err
	}
	defer d.exit()
	if err := d.space.check(0); err != nil {
		// Syncing writes a record to the log, and writing tables could
		// fail halfway; neither is safe on a full disk. With Sync
		// durability everything committed is durable in the log already,
		// which the next start replays.
		if d.writeOpts.Sync {
			d.log.Warn("storage not flushed: the disk is full; the next start replays the write-ahead log")
			return nil
		}
		return err
	}
	// Sync first: Pebble cannot rotate a log whose writes failed (it ends
	// the process), and a flush rotates the log.
	if err := d.syncLog(); err != nil {
		return err
	}
	inst := d.inst.Load()
	fatal, err := d.guard(func() error {
		done, err := d.db.AsyncFlush()
		if err != nil {
			return err
		}
		return waitFlushed(done, inst)
	})
	if f := d.failed.Load(); f != nil {
		return f
	}
	if fatal {
		return d.stop("flushing", err)
	}
	if err != nil {
		return wrapf(errs.IOError, err, "storage: flushing %s", d.dir)
	}
	return nil
}

// Close drops the pending batch, closes open snapshots and closes the
// database, after any checkpoint under way has finished. Committed data is
// already durable (with Sync durability). Closing twice is a no-op.
func (d *DB) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	d.mu.Lock()
	b := d.mu.pending
	d.mu.pending = nil
	snaps := d.mu.snapshots
	d.mu.snapshots = nil
	d.mu.Unlock()
	if b != nil && d.failed.Load() == nil {
		_ = b.Close()
	}
	var errList []error
	for s := range snaps {
		errList = append(errList, s.release())
	}
	d.mu.Lock()
	claim := d.mu.committed
	d.mu.Unlock()
	failed := d.failed.Load() != nil
	// A checkpoint under way (an online one, taken while the server
	// serves) finishes before Pebble closes under it.
	d.checkpointMu.Lock()
	defer d.checkpointMu.Unlock()
	if inst := d.inst.Load(); inst != nil {
		d.dropAcknowledged(inst.wedged.Load())
	}
	errList = append(errList, d.closePebble())
	if d.lock != nil {
		errList = append(errList, d.lock.Close())
	}
	d.cache.Unref()
	if d.ident != nil {
		// Closing Pebble synced its write-ahead log: with Relaxed
		// durability the last commits are durable only now.
		if errList[len(errList)-1] == nil && !failed {
			if err := d.ident.Record(claim); err != nil {
				errList = append(errList, err)
			}
		}
		errList = append(errList, d.ident.Close())
	}
	return errors.Join(errList...)
}

// closePebble closes the Pebble database. After a failed commit Pebble's
// commit pipeline is broken and Close may report the same failure again,
// or hit Pebble's fatal path; the files hold what was durable either way.
func (d *DB) closePebble() (err error) {
	if d.db == nil {
		return nil
	}
	if inst := d.inst.Load(); inst != nil && inst.wedged.Load() {
		// A background goroutine stopped inside it: closing would wait for
		// it forever. The files hold what was durable; the directory lock
		// is released with the DB's.
		d.log.Warn("storage closed without closing its stopped instance")
		_ = d.lock.Close()
		return nil
	}
	d.iters.invalidate(true)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatalError)
			if !ok {
				panic(r)
			}
			err = f
		}
	}()
	if err := d.db.Close(); err != nil {
		if d.failed.Load() != nil {
			d.log.Warn("storage closed after a failed commit", "err", err)
			return nil
		}
		return wrapf(errs.IOError, err, "storage: closing %s", d.dir)
	}
	return nil
}

// String describes the DB for logs.
func (d *DB) String() string { return fmt.Sprintf("storage.DB(%s)", d.dir) }
