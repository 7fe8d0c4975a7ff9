package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// readOnlyFS is a file system through which nothing can be changed. Open
// hands a directory to Pebble through it first, so that a directory it
// refuses is never modified: Pebble's own recovery of a read-write open
// deletes files it considers obsolete and writes new ones.
type readOnlyFS struct{ vfs.FS }

// errReadOnlyFS is what a change through a readOnlyFS fails with.
var errReadOnlyFS = errors.New("storage: the directory is being checked read-only")

func (readOnlyFS) Create(string, vfs.DiskWriteCategory) (vfs.File, error) { return nil, errReadOnlyFS }
func (readOnlyFS) Link(string, string) error                              { return errReadOnlyFS }
func (readOnlyFS) OpenReadWrite(string, vfs.DiskWriteCategory, ...vfs.OpenOption) (vfs.File, error) {
	return nil, errReadOnlyFS
}
func (readOnlyFS) Remove(string) error                { return errReadOnlyFS }
func (readOnlyFS) RemoveAll(string) error             { return errReadOnlyFS }
func (readOnlyFS) Rename(string, string) error        { return errReadOnlyFS }
func (readOnlyFS) MkdirAll(string, os.FileMode) error { return errReadOnlyFS }
func (readOnlyFS) ReuseForWrite(string, string, vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, errReadOnlyFS
}

// Lock takes the directory's lock when its lock file exists, so that a
// check does not run beside a server using the directory, and does not
// create the file when it is missing (a copied directory may lack it).
func (fs readOnlyFS) Lock(name string) (io.Closer, error) {
	if _, err := fs.FS.Stat(name); errors.Is(err, os.ErrNotExist) {
		return io.NopCloser(nil), nil
	}
	return fs.FS.Lock(name)
}

func (fs readOnlyFS) Unwrap() vfs.FS { return fs.FS }

// checkOptions are the Pebble options for checking a directory that no
// DB has open.
func checkOptions(fs vfs.FS, log *slog.Logger) *pebble.Options {
	return &pebble.Options{FS: fs, FormatMajorVersion: FormatMajorVersion, Merger: weightMerger, Logger: pebbleLogger{l: log}}
}

// isPebbleFile reports whether a directory entry is one of the files a
// Pebble database keeps its data in.
func isPebbleFile(name string) bool {
	return strings.HasPrefix(name, "MANIFEST-") || strings.HasSuffix(name, ".sst") ||
		strings.HasSuffix(name, ".blob") || strings.HasSuffix(name, ".log")
}

// errNoStore is the error for a directory that does not hold a store
// where one is required.
func errNoStore(dir, why string) error {
	return errs.Newf(errs.UndefinedObject,
		"storage: %s does not hold a RockStream store (%s); check the path, or restore one there with `rockstream checkpoint restore`", dir, why)
}

// observed is what the checks of a directory found in it.
type observed struct {
	claim Claim
	// hasEpoch says whether the epoch key was found.
	hasEpoch bool
	// tables counts the live tables and bytes verified.
	tables int
	bytes  uint64
}

// verifyOpen opens the database in dir read-only through a readOnlyFS,
// checks every block of every live table, reads the visible sequence
// number and the epoch, and cross-checks them with id's claim (when id is
// not nil). It returns the open read-only database, which the caller
// closes.
func verifyOpen(dir string, fs vfs.FS, popts *pebble.Options, epochKey []byte, id *Identity, lastCorrupt func() string) (*pebble.DB, observed, error) {
	var obs observed
	ro := popts.Clone()
	ro.FS = readOnlyFS{fs}
	ro.ReadOnly = true
	pdb, err := openPebble(dir, ro)
	if err != nil {
		return nil, obs, openError(dir, withWALNames(fs, dir, err))
	}
	fail := func(err error) (*pebble.DB, observed, error) {
		return nil, obs, errors.Join(err, closeQuietly(pdb))
	}
	tables, err := liveTables(pdb)
	if err != nil {
		return fail(damagedIn(dir, lastCorrupt(), "opening the tables", err))
	}
	for _, t := range tables {
		obs.tables++
		obs.bytes += t.size
	}
	if err := verifyTables(fs, dir, tables); err != nil {
		return fail(err)
	}
	obs.claim.Seq = visibleSeq(pdb)
	if epochKey != nil {
		v, closer, err := pdb.Get(epochKey)
		switch {
		case errors.Is(err, pebble.ErrNotFound):
		case err != nil:
			return fail(damagedIn(dir, lastCorrupt(), "reading the epoch", err))
		default:
			if len(v) == 8 {
				obs.claim.Epoch = beUint64(v)
				obs.hasEpoch = true
			}
			_ = closer.Close()
		}
	}
	if id != nil {
		if err := crossCheck(fs, dir, id, obs, epochKey != nil); err != nil {
			return fail(err)
		}
	}
	return pdb, obs, nil
}

func beUint64(b []byte) uint64 {
	var x uint64
	for _, c := range b {
		x = x<<8 | uint64(c)
	}
	return x
}

// crossCheck refuses a database that holds less than its identity file
// claims is durable.
func crossCheck(fs vfs.FS, dir string, id *Identity, obs observed, withEpoch bool) error {
	c := id.Claim
	if !withEpoch {
		c.Epoch, obs.claim.Epoch = 0, 0
	}
	if obs.claim.Seq >= c.Seq && obs.claim.Epoch >= c.Epoch {
		return nil
	}
	return corrupted(nil,
		"storage: %s has lost acknowledged commits: %s records %s as durable, but the files hold only %s; %s is missing, truncated or damaged",
		dir, fs.PathJoin(dir, IdentityFile), describeClaim(c), describeClaim(obs.claim), walDescription(fs, dir))
}

// describeClaim names a claim in messages.
func describeClaim(c Claim) string {
	if c.Epoch == 0 {
		return fmt.Sprintf("commits up to sequence %d", c.Seq)
	}
	return fmt.Sprintf("epoch %d (commits up to sequence %d)", c.Epoch, c.Seq)
}

// walDescription names the write-ahead log files of dir, for messages.
func walDescription(fs vfs.FS, dir string) string {
	logs := walNames(fs, dir)
	if len(logs) == 0 {
		return "the write-ahead log (no .log file is present)"
	}
	return "the write-ahead log (" + strings.Join(logs, ", ") + ")"
}

func walNames(fs vfs.FS, dir string) []string {
	names, err := fs.List(dir)
	if err != nil {
		return nil
	}
	var logs []string
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			logs = append(logs, fs.PathJoin(dir, n))
		}
	}
	slices.Sort(logs)
	return logs
}

// visibleSeq returns the sequence number the next commit to pdb would
// get: a snapshot takes it, and the metrics report the oldest snapshot's.
func visibleSeq(pdb *pebble.DB) uint64 {
	s := pdb.NewSnapshot()
	defer s.Close()
	return uint64(pdb.Metrics().Snapshots.EarliestSeqNum)
}

func closeQuietly(pdb *pebble.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(fatalError); !ok {
				panic(r)
			}
		}
	}()
	_ = pdb.Close()
	return nil
}

// tableFile is a live table's file.
type tableFile struct {
	name string
	size uint64
}

// liveTables returns the physical files of pdb's live tables.
func liveTables(pdb *pebble.DB) ([]tableFile, error) {
	levels, err := pdb.SSTables()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []tableFile
	for _, l := range levels {
		for _, t := range l {
			name := fmt.Sprintf("%06d.sst", uint64(t.BackingSSTNum))
			if !seen[name] {
				seen[name] = true
				out = append(out, tableFile{name: name, size: t.Size})
			}
		}
	}
	slices.SortFunc(out, func(a, b tableFile) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// verifyWorkers is how many tables are checked at once.
const verifyWorkers = 2

// verifyTables reads every block of every table and checks its checksum.
// The error names the first damaged file.
func verifyTables(fs vfs.FS, dir string, tables []tableFile) error {
	errsOut := make([]error, len(tables))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(verifyWorkers, len(tables)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errsOut[i] = verifyTable(fs, fs.PathJoin(dir, tables[i].name))
			}
		}()
	}
	for i := range tables {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errsOut {
		if err != nil {
			return err
		}
	}
	return nil
}

// verifyTable checks every block of the table at path.
func verifyTable(fs vfs.FS, path string) (err error) {
	f, err := fs.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return corrupted(err, "storage: table %s is missing", path)
		}
		return wrapf(errs.IOError, err, "storage: opening %s", path)
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		_ = f.Close()
		return wrapf(errs.IOError, err, "storage: opening %s", path)
	}
	defer func() {
		// The sstable reader panics on some malformed metadata.
		if r := recover(); r != nil {
			err = corrupted(fmt.Errorf("%v", r), "storage: table %s is damaged", path)
		}
	}()
	r, err := sstable.NewReader(context.Background(), readable, sstable.ReaderOptions{Merger: weightMerger})
	if err != nil {
		_ = readable.Close()
		return tableDamage(path, err)
	}
	defer r.Close()
	if err := r.ValidateBlockChecksums(); err != nil {
		return tableDamage(path, err)
	}
	return nil
}

func tableDamage(path string, err error) error {
	if isDamage(err) {
		return corrupted(err, "storage: table %s is damaged", path)
	}
	return wrapf(errs.IOError, err, "storage: reading %s", path)
}

// damagedIn is DB.damaged before there is a DB.
func damagedIn(dir, file, op string, err error) error {
	if !isDamage(err) {
		return wrapf(errs.IOError, err, "storage: %s in %s failed", op, dir)
	}
	where := dir
	if file != "" {
		where = file
	}
	return corrupted(err, "storage: damaged data in %s (found while %s)", where, op)
}

// openError classifies an error from pebble.Open.
func openError(dir string, err error) error {
	if isDamage(err) {
		return corrupted(err, "storage: cannot open %s: its files failed Pebble's checks", dir)
	}
	if errors.Is(err, syscall.EAGAIN) {
		// Pebble's LOCK file is held: another process has the directory
		// open.
		return wrapf(errs.IOError, err, "storage: cannot open %s: another process is using it (a running server?)", dir)
	}
	return wrapf(errs.IOError, err, "storage: cannot open %s", dir)
}

// withWALNames adds the names of the write-ahead log files to an error
// from replaying them, which Pebble does not name.
func withWALNames(fs vfs.FS, dir string, err error) error {
	if !strings.Contains(err.Error(), "replaying WAL") {
		return err
	}
	names, lerr := fs.List(dir)
	if lerr != nil {
		return err
	}
	var logs []string
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			logs = append(logs, n)
		}
	}
	slices.Sort(logs)
	return fmt.Errorf("write-ahead log (%s): %w", strings.Join(logs, ", "), err)
}

// isDamage reports whether an error from opening or reading a database
// says that its files are damaged (as opposed to, say, a permission
// problem or a lock held by another process).
func isDamage(err error) bool {
	if pebble.IsCorruptionError(err) {
		return true
	}
	msg := err.Error()
	// Pebble's consistency check on open reports tables the MANIFEST names
	// that are missing or have the wrong size without a corruption marker.
	for _, s := range []string{"object size mismatch", "no such file or directory", "file does not exist"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
