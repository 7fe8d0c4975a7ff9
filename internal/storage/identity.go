package storage

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// The identity file (see docs/format/storage.md) is RockStream's own
// record, outside Pebble's files, of which store a directory holds and how
// far its durable commits reach. Open cross-checks it against what
// Pebble's files hold, so that losing a file Pebble depends on (the
// current-manifest marker, a write-ahead log) is refused instead of being
// read as a new, shorter or empty database.
//
// The file has three 512-byte sectors: a header written once when the
// store is created, and two slots that commits overwrite in turn. Each is
// checksummed and lies in its own sector, so a write torn by a crash
// damages at most the slot being written; the other slot holds the
// previous claim.
const (
	// IdentityFile is the identity file's name in a database directory.
	IdentityFile = "STORE-IDENTITY"

	identityVersion = 1
	sectorSize      = 512
	identitySize    = 3 * sectorSize
	headerLen       = 36
	slotLen         = 36
)

var (
	identityMagic = [4]byte{'R', 'S', 'I', 'D'}
	slotMagic     = [4]byte{'R', 'S', 'E', 'P'}
)

// StoreID is a store's identity: 16 random bytes chosen when it is
// created, kept by its checkpoints and restores.
type StoreID [16]byte

// String returns the id in hex.
func (id StoreID) String() string { return hex.EncodeToString(id[:]) }

// Claim is what the identity file says is durable: every commit up to the
// Pebble sequence number Seq (exclusive), which brought the store to
// Epoch. It never says more than is durable: it is written only after the
// commit it describes is.
type Claim struct {
	// Epoch is the last committed epoch (the value of Options.EpochKey);
	// 0 when none is known.
	Epoch uint64
	// Seq is Pebble's visible sequence number after the last durable
	// commit: every committed write has a smaller one.
	Seq uint64
}

// Identity is the content of an identity file.
type Identity struct {
	ID      StoreID
	Created time.Time
	// Claim is the newest valid slot's claim.
	Claim Claim
	// generation numbers the slot writes; the newest valid slot has the
	// highest.
	generation uint64
}

func newIdentity(claim Claim) (*Identity, error) {
	var id StoreID
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	return &Identity{ID: id, Created: time.Now().UTC().Truncate(time.Microsecond), Claim: claim, generation: 1}, nil
}

func encodeHeader(dst []byte, id *Identity) {
	copy(dst[0:4], identityMagic[:])
	binary.BigEndian.PutUint16(dst[4:6], identityVersion)
	binary.BigEndian.PutUint16(dst[6:8], 0)
	copy(dst[8:24], id.ID[:])
	binary.BigEndian.PutUint64(dst[24:32], uint64(id.Created.UnixNano()))
	binary.BigEndian.PutUint32(dst[32:36], crc32.Checksum(dst[0:32], castagnoli))
}

func encodeSlot(dst []byte, generation uint64, c Claim) {
	copy(dst[0:4], slotMagic[:])
	binary.BigEndian.PutUint64(dst[4:12], generation)
	binary.BigEndian.PutUint64(dst[12:20], c.Epoch)
	binary.BigEndian.PutUint64(dst[20:28], c.Seq)
	binary.BigEndian.PutUint32(dst[28:32], 0)
	binary.BigEndian.PutUint32(dst[32:36], crc32.Checksum(dst[0:32], castagnoli))
}

// slotOffset is where the slot written by a generation lies.
func slotOffset(generation uint64) int64 { return sectorSize * int64(1+generation%2) }

// encodeIdentity returns a whole identity file whose two slots hold the
// claim (generations g-1 and g).
func encodeIdentity(id *Identity) []byte {
	b := make([]byte, identitySize)
	encodeHeader(b, id)
	for _, g := range []uint64{id.generation - 1, id.generation} {
		off := slotOffset(g)
		encodeSlot(b[off:off+slotLen], g, id.Claim)
	}
	return b
}

// decodeIdentity parses an identity file. Errors say which part is bad.
func decodeIdentity(b []byte) (*Identity, error) {
	if len(b) != identitySize {
		return nil, fmt.Errorf("it has %d bytes, want %d", len(b), identitySize)
	}
	if [4]byte(b[0:4]) != identityMagic {
		return nil, fmt.Errorf("its header does not start with %q", identityMagic[:])
	}
	if crc32.Checksum(b[0:32], castagnoli) != binary.BigEndian.Uint32(b[32:36]) {
		return nil, errors.New("its header fails its checksum")
	}
	if v := binary.BigEndian.Uint16(b[4:6]); v != identityVersion {
		return nil, fmt.Errorf("%w: it has format version %d; this build reads version %d", errIdentityVersion, v, identityVersion)
	}
	id := &Identity{Created: time.Unix(0, int64(binary.BigEndian.Uint64(b[24:32]))).UTC()}
	copy(id.ID[:], b[8:24])
	found := false
	for i := 1; i <= 2; i++ {
		s := b[i*sectorSize : i*sectorSize+slotLen]
		if [4]byte(s[0:4]) != slotMagic || crc32.Checksum(s[0:32], castagnoli) != binary.BigEndian.Uint32(s[32:36]) {
			continue
		}
		g := binary.BigEndian.Uint64(s[4:12])
		if slotOffset(g) != int64(i*sectorSize) {
			continue
		}
		if !found || g > id.generation {
			id.generation = g
			id.Claim = Claim{Epoch: binary.BigEndian.Uint64(s[12:20]), Seq: binary.BigEndian.Uint64(s[20:28])}
			found = true
		}
	}
	if !found {
		return nil, errors.New("both of its epoch records fail their checksums")
	}
	return id, nil
}

var errIdentityVersion = errors.New("unsupported identity file version")

// readIdentity reads dir's identity file; it returns nil, nil when there
// is none.
func readIdentity(fs vfs.FS, dir string) (*Identity, error) {
	path := fs.PathJoin(dir, IdentityFile)
	f, err := fs.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, wrapf(errs.IOError, err, "storage: opening %s", path)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, identitySize+1))
	if err != nil {
		return nil, wrapf(errs.IOError, err, "storage: reading %s", path)
	}
	id, err := decodeIdentity(b)
	if errors.Is(err, errIdentityVersion) {
		return nil, errs.Newf(errs.FeatureNotSupported, "storage: %s: %v: open the store with a matching rockstream", path, err)
	}
	if err != nil {
		return nil, corrupted(nil, "storage: the identity file %s is damaged: %v", path, err)
	}
	return id, nil
}

// writeIdentity creates dir's identity file durably: a temporary file,
// synced, renamed into place, and the directory synced.
func writeIdentity(fs vfs.FS, dir string, id *Identity) error {
	path := fs.PathJoin(dir, IdentityFile)
	tmp := path + ".tmp"
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return wrapf(errs.IOError, err, "storage: creating %s", tmp)
	}
	_, err = f.Write(encodeIdentity(id))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = fs.Remove(tmp)
		return wrapf(errs.IOError, err, "storage: writing %s", tmp)
	}
	if err := fs.Rename(tmp, path); err != nil {
		return wrapf(errs.IOError, err, "storage: renaming %s", tmp)
	}
	d, err := fs.OpenDir(dir)
	if err != nil {
		return wrapf(errs.IOError, err, "storage: syncing %s", dir)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return wrapf(errs.IOError, err, "storage: syncing %s", dir)
	}
	return nil
}

// identityWriter keeps an open store's identity file up to date. Record
// overwrites the older slot in place with the new claim (a write into the
// page cache, which a crash of the process does not lose); a background
// goroutine then syncs the file, so that commits do not wait for a second
// fsync. A machine crash can therefore leave the file a few commits
// behind Pebble, never ahead of it: Record is called only once the commit
// it describes is durable, and Open accepts files that hold more than the
// identity file claims.
type identityWriter struct {
	path string
	id   Identity
	kick chan struct{}
	done chan struct{}

	mu struct {
		sync.Mutex
		f   vfs.File
		err error // the first failed write or sync
		buf [slotLen]byte
	}
}

func openIdentityWriter(fs vfs.FS, dir string, id *Identity) (*identityWriter, error) {
	path := fs.PathJoin(dir, IdentityFile)
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, wrapf(errs.IOError, err, "storage: opening %s", path)
	}
	w := &identityWriter{path: path, id: *id, kick: make(chan struct{}, 1), done: make(chan struct{})}
	w.mu.f = f
	go w.syncLoop()
	return w, nil
}

// Record claims c durable, if it is newer than the current claim.
func (w *identityWriter) Record(c Claim) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.mu.err; err != nil {
		return err
	}
	if w.mu.f == nil || c.Seq < w.id.Claim.Seq || c == w.id.Claim {
		return nil
	}
	if c.Epoch < w.id.Claim.Epoch {
		// Commits that do not write the epoch keep the last one.
		c.Epoch = w.id.Claim.Epoch
	}
	g := w.id.generation + 1
	encodeSlot(w.mu.buf[:], g, c)
	if _, err := w.mu.f.WriteAt(w.mu.buf[:], slotOffset(g)); err != nil {
		w.mu.err = wrapf(errs.IOError, err, "storage: writing %s", w.path)
		return w.mu.err
	}
	w.id.generation, w.id.Claim = g, c
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return nil
}

// Claim returns the current claim.
func (w *identityWriter) Claim() Claim {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.id.Claim
}

func (w *identityWriter) syncLoop() {
	defer close(w.done)
	for range w.kick {
		w.mu.Lock()
		f := w.mu.f
		w.mu.Unlock()
		if f == nil {
			return
		}
		if err := f.SyncData(); err != nil {
			w.mu.Lock()
			if w.mu.err == nil {
				w.mu.err = wrapf(errs.IOError, err, "storage: syncing %s", w.path)
			}
			w.mu.Unlock()
		}
	}
}

// Close syncs and closes the file.
func (w *identityWriter) Close() error {
	w.mu.Lock()
	f := w.mu.f
	w.mu.f = nil
	err := w.mu.err
	w.mu.Unlock()
	close(w.kick)
	<-w.done
	if f == nil {
		return err
	}
	if serr := f.Sync(); err == nil && serr != nil {
		err = wrapf(errs.IOError, serr, "storage: syncing %s", w.path)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = wrapf(errs.IOError, cerr, "storage: closing %s", w.path)
	}
	return err
}
