package storage

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// diskStore opens a store on disk holding five flushed epochs, epoch key
// included.
func diskStore(t *testing.T) *DB {
	t.Helper()
	db, err := Open(Options{Dir: filepath.Join(t.TempDir(), "db"), Logger: quietLogger(), EpochKey: epochKey, disableCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	writeEpochs(t, db, 0, 5)
	if err := db.Set(epochKey, binary.BigEndian.AppendUint64(nil, 5)); err != nil {
		t.Fatal(err)
	}
	commit(t, db)
	return db
}

// A table damaged on disk is found while the checkpoint copy is checked:
// nothing is uploaded and the location has no checkpoint.
func TestCheckpointRefusesDamagedTable(t *testing.T) {
	ctx := context.Background()
	db := diskStore(t)
	sst := filesWith(t, db.Dir(), "", ".sst")[0]
	flipByte(t, filepath.Join(db.Dir(), sst), 100)
	loc := fileLocation(t)
	_, err := CreateCheckpoint(ctx, db, loc.url, nil, nil)
	if errs.CodeOf(err) != errs.DataCorrupted || !strings.Contains(err.Error(), sst) || !strings.Contains(err.Error(), "nothing was uploaded") {
		t.Fatalf("checkpoint of a damaged table: %v", err)
	}
	t.Log(err)
	if _, err := ReadLatestManifest(ctx, loc.url); errs.CodeOf(err) != errs.UndefinedObject {
		t.Fatalf("the location has a checkpoint after a refused one: %v", err)
	}
	if names, _ := os.ReadDir(filepath.Join(db.Dir(), scratchDirName)); len(names) != 0 {
		t.Fatalf("scratch copy left behind: %v", names)
	}
}

// A checkpoint carries the store's identity, claiming the epoch it holds;
// the restored store opens with it.
func TestCheckpointCarriesIdentity(t *testing.T) {
	ctx := context.Background()
	db := diskStore(t)
	loc := fileLocation(t)
	m, err := CreateCheckpoint(ctx, db, loc.url, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Store != db.Identity().ID.String() || m.Epoch != 5 {
		t.Fatalf("manifest store %q epoch %d, want %s and 5", m.Store, m.Epoch, db.Identity().ID)
	}
	dir := filepath.Join(t.TempDir(), "restored")
	if err := RestoreCheckpoint(ctx, loc.url, dir, nil); err != nil {
		t.Fatal(err)
	}
	id, err := readIdentity(vfs.Default, dir)
	if err != nil || id == nil || id.ID != db.Identity().ID || id.Claim.Epoch != 5 {
		t.Fatalf("restored identity %+v, %v", id, err)
	}
	re, err := Open(Options{Dir: dir, Logger: quietLogger(), EpochKey: epochKey, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if c, _, _ := re.Observed(); c.Epoch != 5 {
		t.Fatalf("restored store holds epoch %d", c.Epoch)
	}
}

// A checkpoint whose table was damaged before it was uploaded (by a build
// that did not check copies) has digests that match the damage; restore
// still refuses it, because it checks that the files open as a store, and
// leaves nothing behind.
func TestRestoreRefusesDamagedCheckpoint(t *testing.T) {
	ctx := context.Background()
	db := diskStore(t)
	loc := fileLocation(t)
	m, err := CreateCheckpoint(ctx, db, loc.url, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openBucket(ctx, loc.url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var name string
	for i, f := range m.Files {
		if !f.Shared {
			continue
		}
		data, err := b.ReadAll(ctx, f.Key)
		if err != nil {
			t.Fatal(err)
		}
		data[100] ^= 0xff
		sum := sha256.Sum256(data)
		f.SHA256 = hex.EncodeToString(sum[:])
		f.Key = sharedPrefix + f.SHA256 + ".sst"
		if err := b.WriteAll(ctx, f.Key, data, nil); err != nil {
			t.Fatal(err)
		}
		m.Files[i], name = f, f.Name
		break
	}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	key := checkpointsPrefix + m.ID + "/manifest.json"
	if err := b.WriteAll(ctx, key, body, nil); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	ptr, _ := json.Marshal(latestPointer{ID: m.ID, Manifest: key, SHA256: hex.EncodeToString(sum[:])})
	if err := b.WriteAll(ctx, latestKey, ptr, nil); err != nil {
		t.Fatal(err)
	}
	wantFailedRestore(t, loc.url, name)
}

// Restoring from a location that does not exist creates neither it nor
// the target directory.
func TestRestoreFromMissingLocation(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "no-such-bucket")
	dst := filepath.Join(root, "a", "b", "restored")
	err := RestoreCheckpoint(context.Background(), "file://"+src, dst, nil)
	if errs.CodeOf(err) != errs.UndefinedObject {
		t.Fatalf("restore from a missing location = %v", err)
	}
	for _, p := range []string{src, filepath.Join(root, "a")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("failed restore created %s", p)
		}
	}
}
