package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/rockstream/rockstream/internal/errs"
)

// The epoch input log (docs/format/cluster-objects.md): the sealed input
// of each epoch, one object per epoch, under inputlog/ of an object-store
// location:
//
//	inputlog/<epoch, 20 decimal digits>     one entry, written once
//
// An entry is final once written: Append creates it only if it is absent,
// so that of two appenders of one epoch (an old coordinator and its
// successor) exactly one succeeds and every reader reads what it wrote.
const (
	inputLogPrefix = "inputlog/"
	// inputPartialDir holds, in a file:// location, entries being written
	// before they are linked into place.
	inputPartialDir = ".partial"

	inputEntryMagic   = "RSIL"
	inputEntryVersion = 1
	// InputEntryHeaderSize is the size of an entry's header.
	InputEntryHeaderSize = 40
	// MaxInputPayload bounds an entry's payload: it is written with one
	// request (S3 honours a conditional create on it).
	MaxInputPayload = 1 << 30
)

// InputEntry is one epoch's entry of the input log.
type InputEntry struct {
	Epoch uint64
	// Revision is the bucket assignment's revision the input was sealed
	// under.
	Revision uint64
	// Payload is the sealed input, opaque to the log.
	Payload []byte
}

// EncodeInputEntry appends the encoding of e to dst.
func EncodeInputEntry(dst []byte, e InputEntry) []byte {
	start := len(dst)
	dst = append(dst, inputEntryMagic...)
	dst = binary.BigEndian.AppendUint16(dst, inputEntryVersion)
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, e.Epoch)
	dst = binary.BigEndian.AppendUint64(dst, e.Revision)
	dst = binary.BigEndian.AppendUint64(dst, uint64(len(e.Payload)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(e.Payload, castagnoli))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	return append(dst, e.Payload...)
}

// DecodeInputEntry decodes the entry in raw, named name in errors. A
// damaged entry is an error (errs.DataCorrupted) saying what is wrong; an
// entry of another format version is errs.FeatureNotSupported.
func DecodeInputEntry(name string, raw []byte) (InputEntry, error) {
	bad := func(format string, args ...any) error {
		return corrupted(nil, "storage: input log entry %s is damaged: %s", name, fmt.Sprintf(format, args...))
	}
	if len(raw) < InputEntryHeaderSize {
		return InputEntry{}, bad("it has %d bytes, less than its %d-byte header", len(raw), InputEntryHeaderSize)
	}
	if string(raw[:4]) != inputEntryMagic {
		return InputEntry{}, bad("it begins with %x, not the magic %x", raw[:4], inputEntryMagic)
	}
	if got, want := crc32.Checksum(raw[:36], castagnoli), binary.BigEndian.Uint32(raw[36:40]); got != want {
		return InputEntry{}, bad("its header has CRC32C %08x, but records %08x", got, want)
	}
	if v := binary.BigEndian.Uint16(raw[4:6]); v != inputEntryVersion {
		return InputEntry{}, errs.Newf(errs.FeatureNotSupported,
			"storage: input log entry %s has format version %d; this build reads version %d: read it with a matching rockstream", name, v, inputEntryVersion)
	}
	e := InputEntry{Epoch: binary.BigEndian.Uint64(raw[8:16]), Revision: binary.BigEndian.Uint64(raw[16:24])}
	if n := binary.BigEndian.Uint64(raw[24:32]); n != uint64(len(raw)-InputEntryHeaderSize) {
		return InputEntry{}, bad("its header records a %d-byte payload, but %d bytes follow it", n, len(raw)-InputEntryHeaderSize)
	}
	e.Payload = raw[InputEntryHeaderSize:]
	if got, want := crc32.Checksum(e.Payload, castagnoli), binary.BigEndian.Uint32(raw[32:36]); got != want {
		return InputEntry{}, bad("its payload has CRC32C %08x, but the header records %08x", got, want)
	}
	return e, nil
}

// InputLog is the epoch input log at one object-store location. Its
// methods are safe for concurrent use.
type InputLog struct {
	bucket *blob.Bucket
	url    string
	// dir is the directory of a file:// location, where entries are
	// created by a hard link (which fails if the entry exists, across
	// processes too); "" where the store's conditional create is used.
	dir string
}

// OpenInputLog opens the input log at url (file:///path or
// s3://bucket/prefix); a missing file:// directory is created.
func OpenInputLog(ctx context.Context, rawURL string) (*InputLog, error) {
	b, err := openBucket(ctx, rawURL, true)
	if err != nil {
		return nil, err
	}
	l := &InputLog{bucket: b, url: rawURL}
	if u, err := url.Parse(rawURL); err == nil && u.Scheme == "file" {
		l.dir = filepath.Clean(u.Path)
	}
	return l, nil
}

// NewInputLog returns the input log in bucket (a memblob bucket, say),
// which must support a conditional create (blob.WriterOptions.IfNotExist).
// Closing the log closes the bucket.
func NewInputLog(bucket *blob.Bucket) *InputLog {
	return &InputLog{bucket: bucket, url: "bucket"}
}

// Close closes the log's bucket.
func (l *InputLog) Close() error { return l.bucket.Close() }

func inputKey(epoch uint64) string { return fmt.Sprintf("%s%020d", inputLogPrefix, epoch) }

// parseInputKey returns the epoch of an entry's key; false for any other
// object (a store's temporary file).
func parseInputKey(key string) (uint64, bool) {
	s, ok := strings.CutPrefix(key, inputLogPrefix)
	if !ok || len(s) != 20 {
		return 0, false
	}
	e, err := strconv.ParseUint(s, 10, 64)
	return e, err == nil
}

// ErrInputEntryExists marks an Append of an epoch whose entry holds other
// contents.
var ErrInputEntryExists = errors.New("storage: the input log entry exists")

// Append writes the entry of epoch: its assignment revision rev and
// payload. It is final once written: an entry that exists already is
// never replaced. Appending what the entry holds already succeeds (a
// retry after an answer was lost); anything else fails with
// errs.DuplicateObject, wrapping ErrInputEntryExists, and names the
// revision the entry was written under.
func (l *InputLog) Append(ctx context.Context, epoch, rev uint64, payload []byte) error {
	if len(payload) > MaxInputPayload {
		return errs.Newf(errs.ProgramLimitExceeded, "storage: the input of epoch %d is %d bytes; an input log entry holds at most %d", epoch, len(payload), MaxInputPayload)
	}
	raw := EncodeInputEntry(make([]byte, 0, InputEntryHeaderSize+len(payload)), InputEntry{Epoch: epoch, Revision: rev, Payload: payload})
	key := inputKey(epoch)
	var err error
	if l.dir != "" {
		err = l.linkOnce(key, raw)
	} else {
		err = l.bucket.WriteAll(ctx, key, raw, &blob.WriterOptions{
			ContentType: "application/octet-stream",
			IfNotExist:  true,
			// One request: S3 applies If-None-Match to a single PUT.
			BufferSize: max(len(raw)+1, 5<<20),
		})
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			err = errEntryExists
		}
	}
	if err == nil {
		return nil
	}
	if !errors.Is(err, errEntryExists) {
		return wrapf(errs.IOError, err, "storage: appending epoch %d to the input log at %s", epoch, l.url)
	}
	have, rerr := l.bucket.ReadAll(ctx, key)
	if rerr != nil {
		return wrapf(errs.IOError, rerr, "storage: reading the input log entry of epoch %d at %s", epoch, l.url)
	}
	if bytes.Equal(have, raw) {
		return nil
	}
	what := "other contents"
	if e, derr := DecodeInputEntry(key, have); derr == nil {
		what = fmt.Sprintf("other contents, written under assignment revision %d", e.Revision)
	}
	return &codedError{
		err: errs.Newf(errs.DuplicateObject,
			"storage: the input log at %s holds epoch %d already, with %s; an entry is never replaced: seal the next epoch instead", l.url, epoch, what).(*errs.Error),
		extra: ErrInputEntryExists,
	}
}

// errEntryExists is what a create that found the entry returns.
var errEntryExists = errors.New("entry exists")

// linkOnce creates the file of key with raw in a file:// location: the
// bytes go to a synced file under .partial/, which is then hard-linked to
// its name (failing if the name exists, atomically, whatever other
// process writes) and the directory synced.
func (l *InputLog) linkOnce(key string, raw []byte) error {
	final := filepath.Join(l.dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	partials := filepath.Join(l.dir, inputPartialDir)
	if err := os.MkdirAll(partials, 0o755); err != nil {
		return err
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return err
	}
	tmp := filepath.Join(partials, filepath.Base(final)+"-"+hex.EncodeToString(r[:]))
	if err := writeFileSync(tmp, raw); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, os.ErrExist) {
			return errEntryExists
		}
		return err
	}
	return syncDir(filepath.Dir(final))
}

// Read returns the entry of epoch. A missing entry is errs.UndefinedObject;
// a damaged one errs.DataCorrupted, saying what is wrong.
func (l *InputLog) Read(ctx context.Context, epoch uint64) (InputEntry, error) {
	key := inputKey(epoch)
	raw, err := l.bucket.ReadAll(ctx, key)
	if err != nil {
		if isNotFound(err) {
			return InputEntry{}, errs.Newf(errs.UndefinedObject, "storage: the input log at %s has no entry for epoch %d", l.url, epoch)
		}
		return InputEntry{}, wrapf(errs.IOError, err, "storage: reading the input log entry of epoch %d at %s", epoch, l.url)
	}
	e, err := DecodeInputEntry(key, raw)
	if err != nil {
		return InputEntry{}, err
	}
	if e.Epoch != epoch {
		return InputEntry{}, corrupted(nil, "storage: input log entry %s is damaged: it holds epoch %d", key, e.Epoch)
	}
	return e, nil
}

// epochs calls fn for the epoch of every entry, in ascending order.
func (l *InputLog) epochs(ctx context.Context, fn func(epoch uint64) error) error {
	it := l.bucket.List(&blob.ListOptions{Prefix: inputLogPrefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return wrapf(errs.IOError, err, "storage: listing the input log at %s", l.url)
		}
		if e, ok := parseInputKey(obj.Key); ok && !obj.IsDir {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

// Latest returns the greatest epoch the log holds an entry for; false
// when it holds none. It lists the log, whose length truncation bounds.
func (l *InputLog) Latest(ctx context.Context) (uint64, bool, error) {
	var latest uint64
	found := false
	err := l.epochs(ctx, func(e uint64) error {
		latest, found = max(latest, e), true
		return nil
	})
	return latest, found && err == nil, err
}

// Truncate deletes every entry of an epoch below below (the epoch of a
// checkpoint that no replay needs to go behind), oldest first, and
// returns how many it deleted. An interrupted truncation leaves a suffix
// of the log; running it again finishes it.
func (l *InputLog) Truncate(ctx context.Context, below uint64) (int, error) {
	var old []uint64
	if err := l.epochs(ctx, func(e uint64) error {
		if e < below {
			old = append(old, e)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for i, e := range old {
		if err := l.bucket.Delete(ctx, inputKey(e)); err != nil && !isNotFound(err) {
			return i, wrapf(errs.IOError, err, "storage: deleting the input log entry of epoch %d at %s", e, l.url)
		}
	}
	return len(old), nil
}
