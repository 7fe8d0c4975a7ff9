package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"gocloud.dev/blob"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
)

// importScratchPrefix names the directory under auxiliary/ where an
// import downloads its tables before ingesting them; Open removes
// leftovers.
const importScratchPrefix = "import-"

// importHook, when set (by tests), is called at each stage of an import:
// "downloaded" (and checked), "prepared", "ingested".
var importHook func(stage string)

// ImportBuckets replaces, in db, exactly the buckets of the export id at
// url (one ExportBuckets wrote) with the export's contents: every key of
// those buckets in every bucketed key space is deleted and the export's
// keys take their place. The rest of the store is unchanged, but for two
// metadata entries: each append-only table's counter becomes at least the
// exporter's, and the views' stored row counts are dropped (readers then
// count, and the next change stores the count again).
//
// manifestSHA256, when not "", is the digest of the manifest's bytes
// (BucketManifest.SHA256) it must have. The export must be of a store of
// the same layout version and the same catalog; another is refused
// without a change. Every file is checked against the manifest's size and
// SHA-256 and then read whole (every block's checksum, every key inside
// the buckets, range deletions exactly covering them) before anything is
// written: a damaged, truncated or foreign file is an error naming it,
// with the store unchanged.
//
// The replacement is atomic: the tables are ingested by one Pebble ingest
// (one MANIFEST record) whose range deletions and keys take effect
// together. Before it, one synced commit raises the counters and drops the
// row counts, which is correct on its own. A crash at any point leaves the
// store with the buckets' old contents or the new ones, whole; it opens
// normally (Open removes the leftover downloads) and the import can be
// run again.
//
// No engine may have db open while it runs: an engine keeps state of the
// store's buckets in memory (change-log positions, row counts). The
// store's frontier is not changed; the manifest's Epoch says which epoch
// the imported buckets hold.
func ImportBuckets(ctx context.Context, db *DB, url, id, manifestSHA256 string, progress Progress) (_ *BucketManifest, err error) {
	if progress == nil {
		progress = NoProgress{}
	}
	if err := db.writable(); err != nil {
		return nil, err
	}
	defer db.exit()
	if n := db.Pending(); n > 0 {
		return nil, errs.Newf(errs.PrerequisiteState, "storage: %s has %d uncommitted writes; commit or abort them before importing buckets", db.dir, n)
	}
	bucket, err := openBucket(ctx, url, false)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	m, err := readBucketManifest(ctx, bucket, url, id, manifestSHA256)
	if err != nil {
		return nil, err
	}
	set, err := bucketSetOf(m.Buckets)
	if err != nil {
		return nil, corrupted(err, "storage: bucket export manifest %s is invalid", m.Key)
	}
	expected, own, err := db.checkImportable(m, set)
	if err != nil {
		return nil, err
	}
	if err := db.space.check(m.Bytes); err != nil {
		return nil, err
	}

	scratch := db.fs.PathJoin(db.dir, scratchDirName, importScratchPrefix+m.ID)
	if err := db.fs.RemoveAll(scratch); err != nil {
		return nil, wrapf(errs.IOError, err, "storage: removing %s", scratch)
	}
	if err := db.fs.MkdirAll(scratch, 0o755); err != nil {
		return nil, wrapf(errs.IOError, err, "storage: creating %s", scratch)
	}
	defer func() {
		if rerr := db.fs.RemoveAll(scratch); rerr != nil {
			db.log.Warn("storage could not remove an import's downloads", "path", scratch, "err", rerr)
		}
	}()
	files := make([]ManifestFile, len(m.Files))
	for i, f := range m.Files {
		files[i] = ManifestFile{Name: f.Name, Key: f.Key, Size: f.Size, SHA256: f.SHA256}
	}
	sp := &serialProgress{p: progress}
	sp.Start("import buckets "+m.ID, len(files), m.Bytes)
	defer func() { sp.Done(err) }()
	// Each table is checked as soon as it is downloaded, while others
	// download.
	paths := make([]string, len(m.Files))
	cov := &coverage{covered: make([]bool, len(expected))}
	err = transfer(ctx, files, func(ctx context.Context, f ManifestFile) error {
		if err := download(ctx, bucket, db.fs, scratch, f, "bucket export", sp); err != nil {
			return err
		}
		i := slices.IndexFunc(m.Files, func(bf BucketFile) bool { return bf.Name == f.Name })
		paths[i] = db.fs.PathJoin(scratch, f.Name)
		return db.checkImportFile(paths[i], m.Files[i], expected, cov)
	})
	if err != nil {
		return nil, withURL(err, url)
	}
	for i, ok := range cov.covered {
		if !ok {
			return nil, corrupted(nil, "storage: bucket export %s does not clear the range [%x, %x) of its buckets; the export is damaged or not of this catalog",
				m.ID, expected[i].start, expected[i].end)
		}
	}
	if importHook != nil {
		importHook("downloaded")
	}
	if err := db.prepareImport(m, own); err != nil {
		return nil, err
	}
	if importHook != nil {
		importHook("prepared")
	}
	if err := db.ingest(ctx, paths); err != nil {
		return nil, err
	}
	if importHook != nil {
		importHook("ingested")
	}
	db.log.Info("storage buckets imported", "url", url, "id", m.ID, "buckets", len(m.Buckets),
		"files", len(m.Files), "keys", m.Keys, "bytes", m.Bytes, "epoch", m.Epoch)
	return m, nil
}

// readBucketManifest reads and checks the manifest of export id.
func readBucketManifest(ctx context.Context, bucket *blob.Bucket, url, id, want string) (*BucketManifest, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, errs.Newf(errs.InvalidParameterValue, "storage: %q is not a bucket export id", id)
	}
	key := bucketsPrefix + id + "/manifest.json"
	body, err := bucket.ReadAll(ctx, key)
	if err != nil {
		if isNotFound(err) {
			return nil, errs.Newf(errs.UndefinedObject, "storage: there is no bucket export %s at %s (no %s)", id, url, key)
		}
		return nil, wrapf(errs.IOError, err, "storage: reading %s from %s", key, url)
	}
	sum := sha256.Sum256(body)
	if want != "" && hex.EncodeToString(sum[:]) != want {
		return nil, corrupted(nil, "storage: bucket export manifest %s has SHA-256 %x, but %s was expected", key, sum, want)
	}
	var m BucketManifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, corrupted(err, "storage: bucket export manifest %s does not decode", key)
	}
	m.Key, m.SHA256 = key, hex.EncodeToString(sum[:])
	if m.Format != BucketManifestFormat {
		return nil, corrupted(nil, "storage: %s is not a bucket export manifest (format %q)", key, m.Format)
	}
	if m.Version != BucketManifestVersion {
		return nil, errs.Newf(errs.FeatureNotSupported,
			"storage: bucket export manifest %s has version %d; this build reads version %d: import it with a matching rockstream", key, m.Version, BucketManifestVersion)
	}
	if m.ID != id {
		return nil, corrupted(nil, "storage: bucket export manifest %s names export %q", key, m.ID)
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if f.Name == "" || path.Base(f.Name) != f.Name || strings.HasPrefix(f.Name, ".") || !strings.HasSuffix(f.Name, ".sst") ||
			seen[f.Name] || f.Key != bucketsPrefix+id+"/"+f.Name || f.Size <= 0 || len(f.SHA256) != 2*sha256.Size {
			return nil, corrupted(nil, "storage: bucket export manifest %s lists an invalid file %q", key, f.Name)
		}
		seen[f.Name] = true
	}
	return &m, nil
}

// checkImportable refuses an export of another layout, catalog or table
// format than db's, and returns the ranges the import replaces and db's
// shape.
func (d *DB) checkImportable(m *BucketManifest, set BucketSet) ([]keyRange, storeShape, error) {
	snap := d.db.NewSnapshot()
	own, err := readShape(snap)
	_ = snap.Close()
	if err != nil {
		return nil, own, err
	}
	if own.layout != m.Layout {
		return nil, own, errs.Newf(errs.FeatureNotSupported,
			"storage: bucket export %s is of layout version %d and %s has layout version %d; open both stores with the same rockstream (which upgrades older layouts) and export again",
			m.ID, m.Layout, d.dir, own.layout)
	}
	if own.catalog != m.Catalog {
		return nil, own, errs.Newf(errs.PrerequisiteState,
			"storage: bucket export %s is of a store with another catalog (SHA-256 %s; %s has %s); bring the catalogs to the same revision (apply the same DDL) or restore a checkpoint of the exporting store, then import again",
			m.ID, m.Catalog, d.dir, own.catalog)
	}
	tf, err := sstable.ParseTableFormatString(m.TableFormat)
	if err != nil {
		return nil, own, corrupted(err, "storage: bucket export manifest %s names an unknown table format %q", m.Key, m.TableFormat)
	}
	if tf > d.db.TableFormat() {
		return nil, own, errs.Newf(errs.FeatureNotSupported,
			"storage: bucket export %s has tables of format %s, newer than %s reads (%s); import it with the rockstream that wrote it",
			m.ID, tf, d.dir, d.db.TableFormat())
	}
	return bucketRanges(own.ids, set), own, nil
}

// coverage marks the ranges of an import that a table deletes.
type coverage struct {
	mu      sync.Mutex
	covered []bool
}

// mark marks range i, and reports false if it was marked already.
func (c *coverage) mark(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.covered[i] {
		return false
	}
	c.covered[i] = true
	return true
}

// checkImportFile reads the downloaded table at path whole: every point
// key must be a set inside expected, and every range deletion one of
// expected, which it marks in cov.
func (d *DB) checkImportFile(path string, f BucketFile, expected []keyRange, cov *coverage) (err error) {
	damaged := func(cause error, format string, args ...any) error {
		return corrupted(cause, "storage: bucket export file %s (object %s) %s; the export is damaged or not of this catalog",
			f.Name, f.Key, fmt.Sprintf(format, args...))
	}
	file, err := d.fs.Open(path)
	if err != nil {
		return wrapf(errs.IOError, err, "storage: opening %s", path)
	}
	readable, err := sstable.NewSimpleReadable(file)
	if err != nil {
		_ = file.Close()
		return wrapf(errs.IOError, err, "storage: opening %s", path)
	}
	r, err := sstable.NewReader(context.Background(), readable, d.pebbleDefaults().MakeReaderOptions())
	if err != nil {
		_ = readable.Close()
		return damaged(err, "is not a readable table")
	}
	defer func() {
		if cerr := r.Close(); cerr != nil && err == nil {
			err = damaged(cerr, "could not be read")
		}
	}()
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.TableBlobContext{})
	if err != nil {
		return damaged(err, "could not be read")
	}
	var keys int64
	for kv := it.First(); kv != nil; kv = it.Next() {
		k := kv.K.UserKey
		if kv.Kind() != pebble.InternalKeyKindSet {
			_ = it.Close()
			return damaged(nil, "holds a %s of key %x, not a set", kv.Kind(), k)
		}
		if findRange(expected, k) < 0 {
			_ = it.Close()
			return damaged(nil, "holds the key %x, outside the buckets it exports", k)
		}
		if _, _, err := kv.Value(nil); err != nil {
			_ = it.Close()
			return damaged(err, "could not be read")
		}
		keys++
	}
	if err := errorsJoinClose(it.Error(), it.Close()); err != nil {
		return damaged(err, "could not be read")
	}
	if keys != f.Keys {
		return damaged(nil, "holds %d keys where the manifest says %d", keys, f.Keys)
	}
	rit, err := r.NewRawRangeDelIter(context.Background(), sstable.NoFragmentTransforms, sstable.NoReadEnv)
	if err != nil {
		return damaged(err, "could not be read")
	}
	if rit == nil {
		return damaged(nil, "holds no range deletions")
	}
	defer rit.Close()
	ranges := 0
	span, err := rit.First()
	for ; span != nil && err == nil; span, err = rit.Next() {
		i := findRange(expected, span.Start)
		if i < 0 || !bytes.Equal(expected[i].start, span.Start) || !bytes.Equal(expected[i].end, span.End) || !cov.mark(i) {
			return damaged(nil, "deletes the range [%x, %x), which is not one range of its buckets or another table's", span.Start, span.End)
		}
		ranges++
	}
	if err != nil {
		return damaged(err, "could not be read")
	}
	if ranges != f.Ranges {
		return damaged(nil, "holds %d range deletions where the manifest says %d", ranges, f.Ranges)
	}
	return nil
}

// errorsJoinClose returns the first of an iterator's error and its
// Close's.
func errorsJoinClose(iterErr, closeErr error) error {
	if iterErr != nil {
		return iterErr
	}
	return closeErr
}

// prepareImport commits, synced, what must hold before the buckets'
// contents change: each append-only table's counter at least the
// exporter's, so that no later write reuses a seq of an imported row, and
// no stored view row count (they would count the old buckets).
func (d *DB) prepareImport(m *BucketManifest, own storeShape) error {
	b := d.db.NewBatch()
	defer b.Close()
	for suffix, next := range m.Append {
		raw, err := hex.DecodeString(suffix)
		if err != nil {
			return corrupted(err, "storage: bucket export manifest %s has an invalid append counter %q", m.Key, suffix)
		}
		if next <= own.appendNext[suffix] {
			continue
		}
		key := append(append([]byte(nil), metaAppendPref...), raw...)
		if err := b.Set(key, binary.BigEndian.AppendUint64(nil, next), nil); err != nil {
			return err
		}
	}
	if err := b.DeleteRange(metaViewRows, state.PrefixEnd(metaViewRows), nil); err != nil {
		return err
	}
	return d.commitOwn(b, "preparing a bucket import")
}

// commitOwn applies a batch of the DB's own, synced whatever the DB's
// durability, and records it in the identity file.
func (d *DB) commitOwn(b *pebble.Batch, op string) error {
	claim, fatal, err := d.applyWith(b, pebble.Sync, 0, false)
	if fatal {
		return d.stop(op, err)
	}
	if err != nil {
		return wrapf(errs.IOError, err, "storage: %s in %s failed; nothing was applied", op, d.dir)
	}
	return d.recordClaim(claim)
}

// ingest ingests the tables at paths in one Pebble ingest, then commits a
// synced batch after it, which makes the ingest the acknowledged state
// (the snapshot that a stopped DB serves reads from, the identity file's
// claim).
func (d *DB) ingest(ctx context.Context, paths []string) error {
	d.ack.commit.Lock()
	fatal, err := d.guard(func() error { return d.db.Ingest(ctx, paths) })
	d.iters.invalidate(!d.wedged())
	d.ack.commit.Unlock()
	if fatal {
		return d.stop("ingesting imported buckets", err)
	}
	if err != nil {
		return wrapf(errs.IOError, err, "storage: ingesting imported buckets into %s", d.dir)
	}
	b := d.db.NewBatch()
	defer b.Close()
	layout, _, err := readU64(d.db, metaLayoutKey)
	if err != nil {
		return err
	}
	if err := b.Set(metaLayoutKey, binary.BigEndian.AppendUint64(nil, layout), nil); err != nil {
		return err
	}
	return d.commitOwn(b, "recording a bucket import")
}
