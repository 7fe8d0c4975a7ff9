package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/rockstream/rockstream/internal/errs"
)

// The checkpoint bucket layout, under the URL's prefix (see
// docs/format/storage.md):
//
//	latest                              pointer to the newest checkpoint (JSON)
//	sst/<sha256><ext>                   immutable files (tables), shared by checkpoints
//	checkpoints/<id>/manifest.json      one checkpoint's manifest
//	checkpoints/<id>/files/<name>       its other files (MANIFEST, OPTIONS, WAL, markers)
const (
	latestKey         = "latest"
	sharedPrefix      = "sst/"
	checkpointsPrefix = "checkpoints/"

	// ManifestFormat and ManifestVersion identify a checkpoint manifest.
	ManifestFormat  = "rockstream-checkpoint"
	ManifestVersion = 1

	// restoreMarker is present in a directory while a restore fills it;
	// Open refuses such a directory.
	restoreMarker = "RESTORE-IN-PROGRESS"
	// scratchDirName is the directory inside a database directory where
	// checkpoints are assembled before upload; Pebble ignores it.
	scratchDirName          = "auxiliary"
	checkpointScratchPrefix = "checkpoint-"

	// transferConcurrency is how many files move at once.
	transferConcurrency = 4
)

// Manifest describes one checkpoint: every file needed to restore the
// database, with its size and SHA-256.
type Manifest struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	// PebbleFormat is the Pebble format major version of the files.
	PebbleFormat uint64 `json:"pebble_format"`
	// Store is the id of the store the checkpoint copies (hex); Epoch is
	// the epoch it holds (the value of Options.EpochKey; 0 when unknown).
	Store string `json:"store,omitempty"`
	Epoch uint64 `json:"epoch,omitempty"`
	// Meta is the caller's metadata, such as the frontier epoch the
	// checkpoint holds.
	Meta  map[string]string `json:"meta,omitempty"`
	Files []ManifestFile    `json:"files"`
	// Uploaded counts the files this checkpoint sent; UploadedTables those
	// of them that are tables, and ReusedTables the tables that earlier
	// checkpoints had already sent. They are informative; restore does not
	// need them.
	Uploaded       TransferStats `json:"uploaded"`
	UploadedTables TransferStats `json:"uploaded_tables"`
	ReusedTables   TransferStats `json:"reused_tables"`
}

// ManifestFile is one file of a checkpoint.
type ManifestFile struct {
	// Name is the file's name in the database directory.
	Name string `json:"name"`
	// Key is the object holding it, relative to the checkpoint URL.
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Shared marks an immutable file stored under a content-addressed key
	// that other checkpoints share.
	Shared bool `json:"shared,omitempty"`
}

// TransferStats counts files and bytes.
type TransferStats struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

func (s *TransferStats) add(f ManifestFile) {
	s.Files++
	s.Bytes += f.Size
}

// latestPointer is the content of the latest object.
type latestPointer struct {
	ID       string `json:"id"`
	Manifest string `json:"manifest"`
	// SHA256 is the digest of the manifest's bytes, so that a damaged
	// manifest is detected before any of it is trusted.
	SHA256 string `json:"sha256"`
}

// fileDigest is a file's size and hex SHA-256.
type fileDigest struct {
	size   int64
	sha256 string
}

// isShared reports whether a database file is immutable once written, so
// that one upload serves every checkpoint that contains it.
func isShared(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// CreateCheckpoint uploads a consistent copy of db's committed data to url
// (file:///path or s3://bucket/prefix) and makes it the latest checkpoint
// there. Tables already in the bucket, from earlier checkpoints of this or
// another database, are not sent again. meta is stored in the manifest
// (the frontier epoch, say). progress may be nil.
//
// The copy is taken after flushing the memtable, so that almost all data
// is in shareable tables; writes committed while it runs are not in it.
func CreateCheckpoint(ctx context.Context, db *DB, url string, meta map[string]string, progress Progress) (_ *Manifest, err error) {
	if progress == nil {
		progress = NoProgress{}
	}
	if err := db.writable(); err != nil {
		return nil, err
	}
	defer db.exit()
	db.checkpointMu.Lock()
	defer db.checkpointMu.Unlock()
	bucket, id, err := openUpload(ctx, url)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	// The copy is assembled in the directory, which needs space.
	if err := db.space.check(0); err != nil {
		return nil, err
	}
	if err := db.Flush(); err != nil {
		return nil, err
	}
	scratch := db.fs.PathJoin(db.dir, scratchDirName)
	if err := db.fs.MkdirAll(scratch, 0o755); err != nil {
		return nil, wrapf(errs.IOError, err, "storage: creating %s", scratch)
	}
	tmp := db.fs.PathJoin(scratch, checkpointScratchPrefix+id)
	fatal, err := db.guard(func() error { return db.db.Checkpoint(tmp, pebble.WithFlushedWAL()) })
	if fatal {
		return nil, db.stop("taking a checkpoint", err)
	}
	if err != nil {
		return nil, wrapf(errs.IOError, err, "storage: taking a checkpoint of %s", db.dir)
	}
	defer func() {
		if rerr := db.fs.RemoveAll(tmp); rerr != nil {
			db.log.Warn("storage could not remove checkpoint scratch directory", "path", tmp, "err", rerr)
		}
	}()

	// Check the copy as Open checks a store (Pebble's checks of the
	// MANIFEST and log, every block of every table), so that damage is
	// never uploaded, and give it an identity file claiming what it holds.
	obs, err := db.verifyCopy(tmp)
	if err != nil {
		return nil, err
	}
	m := &Manifest{
		Format:       ManifestFormat,
		Version:      ManifestVersion,
		ID:           id,
		Created:      time.Now().UTC(),
		PebbleFormat: uint64(db.db.FormatMajorVersion()),
		Store:        db.identity.ID.String(),
		Epoch:        obs.claim.Epoch,
		Meta:         meta,
	}
	if m.Files, err = db.describeFiles(tmp, id); err != nil {
		return nil, err
	}

	// Tables the latest checkpoint lists are in the bucket; others may be
	// there too, from older checkpoints or other databases.
	known := map[string]bool{}
	if prev, err := readLatest(ctx, bucket); err == nil {
		for _, f := range prev.Files {
			known[f.Key] = f.Shared
		}
	} else if !isNotFound(err) {
		db.log.Warn("storage could not read the previous checkpoint manifest; checking each table in the bucket", "url", url, "err", err)
	}
	var uploads []ManifestFile
	for _, f := range m.Files {
		if f.Shared {
			exists := known[f.Key]
			if !exists {
				if exists, err = bucket.Exists(ctx, f.Key); err != nil {
					return nil, wrapf(errs.IOError, err, "storage: checking for %s in %s", f.Key, url)
				}
			}
			if exists {
				m.ReusedTables.add(f)
				continue
			}
			m.UploadedTables.add(f)
		}
		m.Uploaded.add(f)
		uploads = append(uploads, f)
	}

	sp := &serialProgress{p: progress}
	sp.Start("upload checkpoint "+id, m.Uploaded.Files, m.Uploaded.Bytes)
	defer func() { sp.Done(err) }()
	err = transfer(ctx, uploads, func(ctx context.Context, f ManifestFile) error {
		return upload(ctx, bucket, db.fs, db.fs.PathJoin(tmp, f.Name), f, sp)
	})
	if err != nil {
		return nil, withURL(err, url)
	}

	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	manifestKey := checkpointsPrefix + id + "/manifest.json"
	if err := bucket.WriteAll(ctx, manifestKey, body, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return nil, wrapf(errs.IOError, err, "storage: writing %s to %s", manifestKey, url)
	}
	sum := sha256.Sum256(body)
	ptr, err := json.Marshal(latestPointer{ID: id, Manifest: manifestKey, SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return nil, err
	}
	if err := bucket.WriteAll(ctx, latestKey, append(ptr, '\n'), &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return nil, wrapf(errs.IOError, err, "storage: writing %s to %s", latestKey, url)
	}
	db.log.Info("storage checkpoint created", "url", url, "id", id,
		"files", len(m.Files), "uploaded_files", m.Uploaded.Files, "uploaded_bytes", m.Uploaded.Bytes,
		"reused_tables", m.ReusedTables.Files)
	return m, nil
}

// verifyCopy checks the checkpoint copy in dir read-only, as Open checks
// a store, and writes its identity file: db's identity, claiming what the
// copy holds.
func (d *DB) verifyCopy(dir string) (observed, error) {
	popts := d.popts.Clone()
	popts.EventListener = nil
	pdb, obs, err := verifyOpen(dir, d.fs, popts, d.epochKey, nil, func() string { return "" })
	if err != nil {
		return obs, fmt.Errorf("storage: the checkpoint copy of %s failed its check, so nothing was uploaded: %w", d.dir, err)
	}
	if err := closeQuietly(pdb); err != nil {
		return obs, err
	}
	id := d.identity
	id.Claim, id.generation = obs.claim, 1
	if err := writeIdentity(d.fs, dir, &id); err != nil {
		return obs, err
	}
	return obs, nil
}

// openUpload opens the location url to write an upload into, creating a
// missing file:// directory, and returns a new id for the upload.
func openUpload(ctx context.Context, url string) (*blob.Bucket, string, error) {
	id, err := newCheckpointID(time.Now())
	if err != nil {
		return nil, "", err
	}
	bucket, err := openBucket(ctx, url, true)
	if err != nil {
		return nil, "", err
	}
	return bucket, id, nil
}

// newCheckpointID returns an identifier that sorts by creation time.
func newCheckpointID(now time.Time) (string, error) {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	return now.UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(r[:]), nil
}

// describeFiles lists the files of the checkpoint in dir with their sizes,
// digests and object keys. Digests of tables are cached by name: a table
// never changes once written and its name is never reused.
func (d *DB) describeFiles(dir, id string) ([]ManifestFile, error) {
	names, err := d.fs.List(dir)
	if err != nil {
		return nil, wrapf(errs.IOError, err, "storage: listing %s", dir)
	}
	slices.Sort(names)
	d.mu.Lock()
	cached := d.mu.digests
	d.mu.Unlock()
	next := map[string]fileDigest{}
	var files []ManifestFile
	for _, name := range names {
		path := d.fs.PathJoin(dir, name)
		info, err := d.fs.Stat(path)
		if err != nil {
			return nil, wrapf(errs.IOError, err, "storage: reading %s", path)
		}
		if info.IsDir() {
			return nil, errs.Newf(errs.Internal, "storage: unexpected directory %s in a checkpoint", path)
		}
		f := ManifestFile{Name: name, Size: info.Size(), Shared: isShared(name)}
		dg, ok := cached[name]
		if !ok || !f.Shared || dg.size != f.Size {
			if dg, err = digestFile(d.fs, path); err != nil {
				return nil, err
			}
		}
		if dg.size != f.Size {
			return nil, errs.Newf(errs.Internal, "storage: %s changed size while it was read", path)
		}
		f.SHA256 = dg.sha256
		if f.Shared {
			next[name] = dg
			f.Key = sharedPrefix + f.SHA256 + filepath.Ext(name)
		} else {
			f.Key = checkpointsPrefix + id + "/files/" + name
		}
		files = append(files, f)
	}
	d.mu.Lock()
	d.mu.digests = next
	d.mu.Unlock()
	return files, nil
}

func digestFile(fs vfs.FS, path string) (fileDigest, error) {
	f, err := fs.Open(path)
	if err != nil {
		return fileDigest{}, wrapf(errs.IOError, err, "storage: opening %s", path)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fileDigest{}, wrapf(errs.IOError, err, "storage: reading %s", path)
	}
	return fileDigest{size: n, sha256: hex.EncodeToString(h.Sum(nil))}, nil
}

// upload copies the file at path to f.Key, checking on the way that it
// still has the size and digest the manifest will list.
func upload(ctx context.Context, bucket *blob.Bucket, fs vfs.FS, path string, f ManifestFile, p Progress) error {
	src, err := fs.Open(path)
	if err != nil {
		return wrapf(errs.IOError, err, "storage: opening %s", path)
	}
	defer src.Close()
	// Cancelling the writer's context aborts the upload: no object is
	// created.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := bucket.NewWriter(wctx, f.Key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return wrapf(errs.IOError, err, "storage: uploading %s to %s", f.Name, f.Key)
	}
	h := sha256.New()
	n, err := io.Copy(w, io.TeeReader(&progressReader{r: src, p: p}, h))
	if err == nil && (n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256) {
		err = errs.Newf(errs.Internal, "storage: %s changed while it was uploaded", path)
	}
	if err != nil {
		cancel()
		_ = w.Close()
		return wrapf(errs.IOError, err, "storage: uploading %s to %s", f.Name, f.Key)
	}
	if err := w.Close(); err != nil {
		return wrapf(errs.IOError, err, "storage: uploading %s to %s", f.Name, f.Key)
	}
	p.Advance(1, 0)
	return nil
}

// progressReader reports the bytes read through it.
type progressReader struct {
	r io.Reader
	p Progress
}

func (r *progressReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.p.Advance(0, int64(n))
	}
	return n, err
}

// transfer runs fn for every file, transferConcurrency at a time, and
// returns the first error, cancelling the transfers still running.
func transfer(ctx context.Context, files []ManifestFile, fn func(ctx context.Context, f ManifestFile) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, transferConcurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for _, f := range files {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, f); err != nil {
				once.Do(func() {
					first = err
					cancel()
				})
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// withURL adds the checkpoint URL to an upload error's message.
func withURL(err error, url string) error {
	var ce *codedError
	if errors.As(err, &ce) {
		c := *ce.err
		c.Message += " (checkpoint location " + url + ")"
		return &codedError{err: &c, cause: ce.cause, extra: ce.extra}
	}
	return wrapf(errs.IOError, err, "storage: checkpoint to %s", url)
}

func isNotFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }

// ReadLatestManifest returns the manifest of the latest checkpoint at url,
// verified against the digest the latest pointer holds.
func ReadLatestManifest(ctx context.Context, url string) (*Manifest, error) {
	bucket, err := openBucket(ctx, url, false)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	m, err := readLatest(ctx, bucket)
	if err != nil {
		if isNotFound(err) {
			return nil, errs.Newf(errs.UndefinedObject, "storage: there is no checkpoint at %s", url)
		}
		return nil, withURL(err, url)
	}
	return m, nil
}

// readLatest reads and checks the latest manifest. A missing pointer
// returns an error for which isNotFound is true.
func readLatest(ctx context.Context, bucket *blob.Bucket) (*Manifest, error) {
	raw, err := bucket.ReadAll(ctx, latestKey)
	if err != nil {
		if isNotFound(err) {
			return nil, err
		}
		return nil, wrapf(errs.IOError, err, "storage: reading %s", latestKey)
	}
	var ptr latestPointer
	if err := json.Unmarshal(raw, &ptr); err != nil || ptr.Manifest == "" {
		return nil, corrupted(err, "storage: the checkpoint pointer %q is damaged", latestKey)
	}
	body, err := bucket.ReadAll(ctx, ptr.Manifest)
	if err != nil {
		if isNotFound(err) {
			return nil, corrupted(err, "storage: checkpoint manifest %s, named by %q, is missing", ptr.Manifest, latestKey)
		}
		return nil, wrapf(errs.IOError, err, "storage: reading %s", ptr.Manifest)
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != ptr.SHA256 {
		return nil, corrupted(nil, "storage: checkpoint manifest %s has SHA-256 %x, but %q says %s",
			ptr.Manifest, sum, latestKey, ptr.SHA256)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		return nil, corrupted(err, "storage: checkpoint manifest %s does not decode", ptr.Manifest)
	}
	if m.Format != ManifestFormat {
		return nil, corrupted(nil, "storage: %s is not a checkpoint manifest (format %q)", ptr.Manifest, m.Format)
	}
	if m.Version != ManifestVersion {
		return nil, errs.Newf(errs.FeatureNotSupported,
			"storage: checkpoint manifest %s has version %d; this build reads version %d: restore with a matching rockstream",
			ptr.Manifest, m.Version, ManifestVersion)
	}
	if err := m.check(); err != nil {
		return nil, corrupted(err, "storage: checkpoint manifest %s is invalid", ptr.Manifest)
	}
	return &m, nil
}

// check validates the manifest's file list, so that a restore writes only
// plain file names inside its directory.
func (m *Manifest) check() error {
	seen := map[string]bool{}
	for _, f := range m.Files {
		switch {
		case f.Name == "" || f.Name != filepath.Base(f.Name) || strings.HasPrefix(f.Name, ".") ||
			strings.ContainsAny(f.Name, `/\`) || f.Name == restoreMarker || strings.HasSuffix(f.Name, partialSuffix):
			return fmt.Errorf("file name %q is not allowed", f.Name)
		case seen[f.Name]:
			return fmt.Errorf("file %q is listed twice", f.Name)
		case f.Key == "" || f.Size < 0 || len(f.SHA256) != 2*sha256.Size:
			return fmt.Errorf("file %q has no key, size or SHA-256", f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

// partialSuffix marks a file being downloaded.
const partialSuffix = ".partial"

// RestoreCheckpoint downloads the latest checkpoint at url into dir,
// which must be empty or missing, checking every file's size and SHA-256
// against the manifest. On any failure, a damaged file included, it
// removes what it wrote and returns an error naming the file (DataCorrupted
// for damage); the result opens with Open and holds exactly the
// checkpoint's data. While it runs, dir holds a marker that makes Open
// refuse it. progress may be nil.
func RestoreCheckpoint(ctx context.Context, url, dir string, progress Progress) (err error) {
	return RestoreCheckpointID(ctx, url, "", dir, progress)
}

// RestoreCheckpointID is RestoreCheckpoint of the checkpoint id at url
// (one ListCheckpoints lists); "" is the latest.
func RestoreCheckpointID(ctx context.Context, url, id, dir string, progress Progress) (err error) {
	if progress == nil {
		progress = NoProgress{}
	}
	bucket, err := openBucket(ctx, url, false)
	if err != nil {
		return err
	}
	defer bucket.Close()
	m, err := readCheckpoint(ctx, bucket, url, id)
	if err != nil {
		return err
	}
	created, err := mkdirAllTop(dir)
	if err != nil {
		return wrapf(errs.IOError, err, "storage: creating %s", dir)
	}
	defer func() {
		// A failed restore leaves no directory it created behind.
		if err != nil && created != "" {
			_ = os.RemoveAll(created)
		}
	}()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return wrapf(errs.IOError, err, "storage: reading %s", dir)
	}
	if len(entries) > 0 {
		return errs.Newf(errs.InvalidParameterValue,
			"storage: cannot restore into %s: it is not empty (it holds %s); restore into a new directory", dir, entries[0].Name())
	}
	marker := filepath.Join(dir, restoreMarker)
	if err := writeFileSync(marker, []byte(m.ID+"\n")); err != nil {
		return wrapf(errs.IOError, err, "storage: creating %s", marker)
	}
	if err := syncDir(dir); err != nil {
		return wrapf(errs.IOError, err, "storage: syncing %s", dir)
	}
	defer func() {
		if err == nil {
			return
		}
		// Leave the directory as it was found: empty.
		for _, f := range m.Files {
			_ = os.Remove(filepath.Join(dir, f.Name+partialSuffix))
			_ = os.Remove(filepath.Join(dir, f.Name))
		}
		_ = os.Remove(marker)
	}()

	var total TransferStats
	for _, f := range m.Files {
		total.add(f)
	}
	sp := &serialProgress{p: progress}
	sp.Start("restore checkpoint "+m.ID, total.Files, total.Bytes)
	defer func() { sp.Done(err) }()
	err = transfer(ctx, m.Files, func(ctx context.Context, f ManifestFile) error {
		return download(ctx, bucket, vfs.Default, dir, f, "checkpoint", sp)
	})
	if err != nil {
		return withURL(err, url)
	}
	if err := syncDir(dir); err != nil {
		return wrapf(errs.IOError, err, "storage: syncing %s", dir)
	}
	// Every file matched its digest; check that together they open as a
	// store, as Open will (checkpoints written before copies were checked
	// at creation may hold damage their digests vouch for).
	if err := verifyRestored(dir); err != nil {
		return fmt.Errorf("storage: the checkpoint %s restored from %s is damaged: %w", m.ID, url, err)
	}
	if err := os.Remove(marker); err != nil {
		return wrapf(errs.IOError, err, "storage: removing %s", marker)
	}
	if err := syncDir(dir); err != nil {
		return wrapf(errs.IOError, err, "storage: syncing %s", dir)
	}
	return nil
}

// verifyRestored checks a restored directory read-only.
func verifyRestored(dir string) error {
	id, err := readIdentity(vfs.Default, dir)
	if err != nil {
		return err
	}
	pdb, _, err := verifyOpen(dir, vfs.Default, checkOptions(vfs.Default, slog.New(slog.DiscardHandler)), nil, id, func() string { return "" })
	if err != nil {
		return err
	}
	return closeQuietly(pdb)
}

// mkdirAllTop is os.MkdirAll that returns the topmost directory it
// created ("" when dir existed).
func mkdirAllTop(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	top := ""
	for p := abs; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		top = p
		if filepath.Dir(p) == p {
			break
		}
	}
	return top, os.MkdirAll(abs, 0o755)
}

// download fetches f into dir on fs, verifying its size and digest
// before it takes its final name. what names the thing f belongs to in
// errors ("checkpoint", "bucket export").
func download(ctx context.Context, bucket *blob.Bucket, fs vfs.FS, dir string, f ManifestFile, what string, p Progress) error {
	r, err := bucket.NewReader(ctx, f.Key, nil)
	if err != nil {
		if isNotFound(err) {
			return corrupted(err, "storage: %s file %s (object %s) is missing; the %s is damaged", what, f.Name, f.Key, what)
		}
		return wrapf(errs.IOError, err, "storage: downloading %s (object %s)", f.Name, f.Key)
	}
	defer r.Close()
	partial := fs.PathJoin(dir, f.Name+partialSuffix)
	if _, err := fs.Stat(partial); err == nil {
		return errs.Newf(errs.IOError, "storage: %s exists already", partial)
	}
	out, err := fs.Create(partial, vfs.WriteCategoryUnspecified)
	if err != nil {
		return wrapf(errs.IOError, err, "storage: creating %s", partial)
	}
	// Hash before writing: a vfs.File may modify what it is given.
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(h, out), &progressReader{r: r, p: p})
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return wrapf(errs.IOError, err, "storage: downloading %s (object %s)", f.Name, f.Key)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != f.Size || sum != f.SHA256 {
		return corrupted(nil,
			"storage: %s file %s (object %s) failed its check: it has %d bytes with SHA-256 %s, the manifest says %d bytes with SHA-256 %s; the %s is damaged",
			what, f.Name, f.Key, n, sum, f.Size, f.SHA256, what)
	}
	if err := fs.Rename(partial, fs.PathJoin(dir, f.Name)); err != nil {
		return wrapf(errs.IOError, err, "storage: renaming %s", partial)
	}
	p.Advance(1, 0)
	return nil
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// removeCheckpointScratch deletes checkpoint copies and the downloads of bucket
// imports that a crash left in the scratch directory.
func (d *DB) removeCheckpointScratch() {
	scratch := d.fs.PathJoin(d.dir, scratchDirName)
	names, err := d.fs.List(scratch)
	if err != nil {
		return
	}
	for _, name := range names {
		if strings.HasPrefix(name, checkpointScratchPrefix) || strings.HasPrefix(name, importScratchPrefix) {
			path := d.fs.PathJoin(scratch, name)
			if err := d.fs.RemoveAll(path); err != nil {
				d.log.Warn("storage could not remove a stale checkpoint copy", "path", path, "err", err)
			}
		}
	}
}
