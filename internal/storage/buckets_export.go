package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"gocloud.dev/blob"

	"github.com/rockstream/rockstream/internal/errs"
)

// A bucket export copies every key of a set of buckets, in every bucketed
// key space, into Pebble tables under buckets/<id>/ of an object-store
// location, with a manifest (docs/format/cluster-objects.md):
//
//	buckets/<id>/manifest.json          the export's manifest, written last
//	buckets/<id>/<group>-<n>.sst        its tables, in key order
//
// Each table holds, for each range of its part of the key space, a range
// deletion of the whole range followed by the range's keys, so that
// ingesting the tables replaces exactly those ranges, atomically.
const (
	bucketsPrefix = "buckets/"

	// BucketManifestFormat and BucketManifestVersion identify a bucket
	// export's manifest.
	BucketManifestFormat  = "rockstream-buckets"
	BucketManifestVersion = 1

	// exportFileBytes is the size past which an export starts a new table.
	exportFileBytes = 64 << 20
)

// BucketManifest describes one bucket export.
type BucketManifest struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	// Store is the id of the exported store (hex); Epoch the epoch its
	// copy holds (the frontier of the snapshot it was read from).
	Store string `json:"store"`
	Epoch uint64 `json:"epoch"`
	// Layout is the store's layout version, Catalog the SHA-256 of its
	// catalog records: an import needs both equal in the receiving store.
	Layout  uint64 `json:"layout"`
	Catalog string `json:"catalog"`
	// TableFormat is the Pebble table format of the files.
	TableFormat string `json:"table_format"`
	// Buckets are the exported buckets, ascending.
	Buckets []int `json:"buckets"`
	// Append is the exporter's next seq of each append-only table, by the
	// hex of the table id's uvarint (the `append/<id>` metadata keys).
	Append map[string]uint64 `json:"append,omitempty"`
	Files  []BucketFile      `json:"files"`
	// Ranges, Keys and Bytes total the files' (informative).
	Ranges int   `json:"ranges"`
	Keys   int64 `json:"keys"`
	Bytes  int64 `json:"bytes"`

	// Key is the manifest's object key and SHA256 the digest of its
	// bytes, which an import may be given to check them against; neither
	// is stored in the manifest.
	Key    string `json:"-"`
	SHA256 string `json:"-"`
}

// BucketFile is one table of a bucket export.
type BucketFile struct {
	// Name is the file's name; Key the object holding it, relative to the
	// location.
	Name   string `json:"name"`
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Ranges is how many range deletions (one per space, object and run
	// of buckets) it holds, Keys how many keys.
	Ranges int   `json:"ranges"`
	Keys   int64 `json:"keys"`
}

// ExportBuckets writes every key of buckets in every bucketed key space
// of db (table rows, view contents, operator state, change logs, index
// entries) as Pebble tables to url (file:///path or s3://bucket/prefix),
// read from one snapshot, with their manifest, and returns the manifest.
// The catalog and the metadata are not exported: the receiving store has
// the same catalog (ImportBuckets checks it); only the append-only tables'
// counters, which the receiver must not fall behind, ride in the
// manifest. Tables are written and uploaded several at a time as they are
// produced, without local files; cancelling ctx stops the export, and an
// export that fails writes no manifest. progress may be nil.
func ExportBuckets(ctx context.Context, db *DB, url string, buckets BucketSet, progress Progress) (_ *BucketManifest, err error) {
	if progress == nil {
		progress = NoProgress{}
	}
	if buckets.Len() == 0 {
		return nil, errs.New(errs.InvalidParameterValue, "storage: no buckets to export")
	}
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.exit()
	bucket, id, err := openUpload(ctx, url)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	snap := db.db.NewSnapshot()
	defer snap.Close()
	sh, err := readShape(snap)
	if err != nil {
		return nil, err
	}
	if sh.layout == 0 {
		return nil, errs.Newf(errs.PrerequisiteState,
			"storage: %s records no layout version, so its buckets cannot be exported; open it with rockstream once (which upgrades it) and export again", db.dir)
	}
	m := &BucketManifest{
		Format:      BucketManifestFormat,
		Version:     BucketManifestVersion,
		ID:          id,
		Created:     time.Now().UTC(),
		Store:       db.identity.ID.String(),
		Epoch:       sh.epoch,
		Layout:      sh.layout,
		Catalog:     sh.catalog,
		TableFormat: db.db.TableFormat().String(),
		Buckets:     buckets.List(),
		Append:      sh.appendNext,
	}
	ranges := bucketRanges(sh.ids, buckets)
	groups := splitRanges(db.db, ranges, transferConcurrency)
	var estimate int64
	for _, g := range groups {
		estimate += g.bytes
	}
	sp := &serialProgress{p: progress}
	sp.Start("export buckets "+id, len(groups), estimate)
	defer func() { sp.Done(err) }()

	wopts := db.pebbleDefaults().MakeWriterOptions(0, db.db.TableFormat())
	files := make([][]BucketFile, len(groups))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for gi, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fs, err := exportGroup(ctx, bucket, snap, wopts, id, gi, g.ranges, sp)
			if err != nil {
				once.Do(func() { first = err; cancel() })
				return
			}
			files[gi] = fs
			sp.Advance(1, 0)
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	if first != nil {
		return nil, withURL(first, url)
	}
	for _, fs := range files {
		for _, f := range fs {
			m.Files = append(m.Files, f)
			m.Ranges += f.Ranges
			m.Keys += f.Keys
			m.Bytes += f.Size
		}
	}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	m.Key = bucketsPrefix + id + "/manifest.json"
	if err := bucket.WriteAll(ctx, m.Key, body, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return nil, wrapf(errs.IOError, err, "storage: writing %s to %s", m.Key, url)
	}
	sum := sha256.Sum256(body)
	m.SHA256 = hex.EncodeToString(sum[:])
	db.log.Info("storage buckets exported", "url", url, "id", id, "buckets", len(m.Buckets),
		"files", len(m.Files), "keys", m.Keys, "bytes", m.Bytes, "epoch", m.Epoch)
	return m, nil
}

// pebbleDefaults returns the DB's Pebble options with Pebble's defaults
// filled in, as the open instance uses them.
func (d *DB) pebbleDefaults() *pebble.Options {
	o := d.popts.Clone()
	o.EnsureDefaults()
	return o
}

// rangeGroup is a contiguous run of an export's ranges, written by one
// goroutine.
type rangeGroup struct {
	ranges []keyRange
	bytes  int64
}

// splitRanges cuts ranges (in key order) into at most n contiguous groups
// of about equal estimated size on disk.
func splitRanges(db *pebble.DB, ranges []keyRange, n int) []rangeGroup {
	sizes := make([]int64, len(ranges))
	var total int64
	for i, r := range ranges {
		if s, err := db.EstimateDiskUsage(r.start, r.end); err == nil {
			sizes[i] = int64(s)
		}
		total += sizes[i]
	}
	per := total/int64(n) + 1
	var out []rangeGroup
	var cur rangeGroup
	for i, r := range ranges {
		cur.ranges = append(cur.ranges, r)
		cur.bytes += sizes[i]
		if cur.bytes >= per && len(out) < n-1 {
			out = append(out, cur)
			cur = rangeGroup{}
		}
	}
	if len(cur.ranges) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

// exportGroup writes the ranges of one group as tables named
// <group>-<n>.sst, starting a new one past exportFileBytes.
func exportGroup(ctx context.Context, bucket *blob.Bucket, snap *pebble.Snapshot, wopts sstable.WriterOptions,
	id string, group int, ranges []keyRange, p Progress) ([]BucketFile, error) {
	var files []BucketFile
	var out *exportFile
	finish := func() error {
		f, err := out.finish()
		out = nil
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	}
	for _, r := range ranges {
		if out == nil {
			name := fmt.Sprintf("%03d-%04d.sst", group, len(files))
			var err error
			if out, err = newExportFile(ctx, bucket, bucketsPrefix+id+"/"+name, name, wopts, p); err != nil {
				return nil, err
			}
		}
		if err := out.writeRange(ctx, snap, r); err != nil {
			out.abort()
			return nil, err
		}
		if out.w.Raw().EstimatedSize() >= exportFileBytes {
			if err := finish(); err != nil {
				return nil, err
			}
		}
	}
	if out != nil {
		if err := finish(); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// exportFile is a table being written straight to an object.
type exportFile struct {
	f      BucketFile
	w      *sstable.Writer
	dst    *hashingWritable
	cancel context.CancelFunc
}

func newExportFile(ctx context.Context, bucket *blob.Bucket, key, name string, wopts sstable.WriterOptions, p Progress) (*exportFile, error) {
	// Cancelling the writer's context aborts the upload: no object is
	// created.
	wctx, cancel := context.WithCancel(ctx)
	bw, err := bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		cancel()
		return nil, wrapf(errs.IOError, err, "storage: uploading %s", key)
	}
	dst := &hashingWritable{w: bw, h: sha256.New(), p: p, cancel: cancel}
	return &exportFile{
		f:      BucketFile{Name: name, Key: key},
		w:      sstable.NewWriter(dst, wopts),
		dst:    dst,
		cancel: cancel,
	}, nil
}

// writeRange writes the range deletion of r and every key in r.
func (e *exportFile) writeRange(ctx context.Context, snap *pebble.Snapshot, r keyRange) error {
	if err := e.w.DeleteRange(r.start, r.end); err != nil {
		return wrapf(errs.IOError, err, "storage: writing %s", e.f.Key)
	}
	e.f.Ranges++
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: r.start, UpperBound: r.end})
	if err != nil {
		return wrapf(errs.IOError, err, "storage: reading the buckets to export")
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			_ = it.Close()
			return ctx.Err()
		}
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return wrapf(errs.IOError, err, "storage: reading the buckets to export")
		}
		if err := e.w.Set(it.Key(), v); err != nil {
			_ = it.Close()
			return wrapf(errs.IOError, err, "storage: writing %s", e.f.Key)
		}
		e.f.Keys++
	}
	if err := it.Error(); err != nil {
		_ = it.Close()
		return wrapf(errs.IOError, err, "storage: reading the buckets to export")
	}
	return it.Close()
}

// finish completes the table and its upload.
func (e *exportFile) finish() (BucketFile, error) {
	defer e.cancel()
	if err := e.w.Close(); err != nil {
		return BucketFile{}, wrapf(errs.IOError, err, "storage: uploading %s", e.f.Key)
	}
	e.f.Size = e.dst.n
	e.f.SHA256 = hex.EncodeToString(e.dst.h.Sum(nil))
	return e.f, nil
}

// abort gives the table up; its object is not created.
func (e *exportFile) abort() {
	e.cancel()
	_ = e.w.Close()
}

// hashingWritable is an objstorage.Writable that uploads what the table
// writer writes, hashing and counting it.
type hashingWritable struct {
	w      *blob.Writer
	h      hash.Hash
	n      int64
	p      Progress
	cancel context.CancelFunc
}

// Write implements objstorage.Writable.
func (w *hashingWritable) Write(p []byte) error {
	w.h.Write(p)
	w.n += int64(len(p))
	w.p.Advance(0, int64(len(p)))
	_, err := w.w.Write(p)
	return err
}

// Finish implements objstorage.Writable.
func (w *hashingWritable) Finish() error { return w.w.Close() }

// Abort implements objstorage.Writable.
func (w *hashingWritable) Abort() {
	w.cancel()
	_ = w.w.Close()
}
