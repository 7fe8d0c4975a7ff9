package storage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/rockstream/rockstream/internal/s3test"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/state/statetest"
)

// location is a checkpoint URL under test.
type location struct {
	name string
	url  string
}

// fileLocation returns a file:// location in a temporary directory.
func fileLocation(t *testing.T) location {
	return location{"file", "file://" + filepath.Join(t.TempDir(), "bucket") + "/shard-1"}
}

// s3Location starts an in-memory S3 server on loopback, points the
// ROCKSTREAM_OBJECT_STORE_* variables at it and returns an s3:// location.
func s3Location(t *testing.T) location {
	s3test.Start(t, "backups")
	t.Setenv(EnvObjectStoreRegion, "eu-west-1")
	return location{"s3", "s3://backups/rockstream/shard-1"}
}

// writeEpochs commits epochs [from, to) of 50 keys each (some overwriting
// or deleting earlier ones) and flushes them into a table.
func writeEpochs(t *testing.T, db *DB, from, to int) {
	t.Helper()
	for e := from; e < to; e++ {
		for i := range 50 {
			set(t, db, fmt.Sprintf("k%03d-%02d", e, i), fmt.Sprintf("value %d of epoch %d %s", i, e, strings.Repeat("z", 40)))
		}
		if e > 0 {
			set(t, db, fmt.Sprintf("k%03d-00", e-1), "overwritten")
			if err := db.Delete([]byte(fmt.Sprintf("k%03d-01", e-1))); err != nil {
				t.Fatal(err)
			}
		}
		set(t, db, "frontier", fmt.Sprint(e))
		commit(t, db)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
}

func contents(t *testing.T, r state.Reader) []statetest.KV {
	t.Helper()
	return statetest.ScanAll(t, r, nil, nil, false)
}

func tableKeys(m *Manifest) []string {
	var out []string
	for _, f := range m.Files {
		if f.Shared {
			out = append(out, f.Key)
		}
	}
	return out
}

func TestCheckpointRoundTrip(t *testing.T) {
	for _, mk := range []func(*testing.T) location{fileLocation, s3Location} {
		loc := mk(t)
		t.Run(loc.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(Options{Dir: "db", FS: vfs.NewMem(), Logger: quietLogger(), disableCompactions: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			writeEpochs(t, db, 0, 10)
			m1, err := CreateCheckpoint(ctx, db, loc.url, map[string]string{"epoch": "9"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tables1 := tableKeys(m1)
			if len(tables1) == 0 || m1.UploadedTables.Files != len(tables1) || m1.ReusedTables.Files != 0 {
				t.Fatalf("first checkpoint: %d tables, uploaded %+v, reused %+v", len(tables1), m1.UploadedTables, m1.ReusedTables)
			}

			// More data, some of it left in the memtable: the checkpoint
			// flushes it.
			writeEpochs(t, db, 10, 20)
			set(t, db, "unflushed", "yes")
			commit(t, db)
			var lines bytes.Buffer
			m2, err := CreateCheckpoint(ctx, db, loc.url, map[string]string{"epoch": "20"}, NewLineProgress(&lines))
			if err != nil {
				t.Fatal(err)
			}
			tables2 := tableKeys(m2)
			var fresh, reused int
			for _, k := range tables2 {
				if slices.Contains(tables1, k) {
					reused++
				} else {
					fresh++
				}
			}
			if fresh == 0 || reused == 0 {
				t.Fatalf("second checkpoint has %d new and %d old tables; the test needs both", fresh, reused)
			}
			if m2.UploadedTables.Files != fresh || m2.ReusedTables.Files != reused {
				t.Fatalf("second checkpoint uploaded %d tables and reused %d; want %d and %d",
					m2.UploadedTables.Files, m2.ReusedTables.Files, fresh, reused)
			}
			// Every other file is sent with every checkpoint.
			if want := len(m2.Files) - reused; m2.Uploaded.Files != want {
				t.Fatalf("second checkpoint uploaded %d files, want %d", m2.Uploaded.Files, want)
			}
			if !strings.Contains(lines.String(), "upload checkpoint "+m2.ID) || !strings.Contains(lines.String(), "done") {
				t.Fatalf("progress lines:\n%s", lines.String())
			}
			t.Logf("checkpoint 1: %d files, %d tables uploaded; checkpoint 2: %d files, %d tables uploaded, %d reused",
				len(m1.Files), m1.UploadedTables.Files, len(m2.Files), m2.UploadedTables.Files, m2.ReusedTables.Files)
			want := contents(t, db)

			latest, err := ReadLatestManifest(ctx, loc.url)
			if err != nil {
				t.Fatal(err)
			}
			if latest.ID != m2.ID || latest.Meta["epoch"] != "20" {
				t.Fatalf("latest manifest = %s %v, want %s", latest.ID, latest.Meta, m2.ID)
			}

			dir := filepath.Join(t.TempDir(), "restored")
			var bar bytes.Buffer
			if err := RestoreCheckpoint(ctx, loc.url, dir, NewBarProgress(&bar)); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(bar.String(), "100%") || !strings.Contains(bar.String(), "\r") {
				t.Fatalf("progress bar output: %q", bar.String())
			}
			restored, err := Open(Options{Dir: dir, Logger: quietLogger(), disableCompactions: true})
			if err != nil {
				t.Fatal(err)
			}
			defer restored.Close()
			if got := contents(t, restored); !slices.Equal(got, want) {
				t.Fatalf("restored database has %d keys, the original %d", len(got), len(want))
			}
			if v, _ := get(t, restored, "unflushed"); v != "yes" {
				t.Fatal("restored database lacks the last commit")
			}

			// A database restored from the bucket shares its tables: its own
			// checkpoint there sends none of them again.
			m3, err := CreateCheckpoint(ctx, restored, loc.url, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if m3.ReusedTables.Files < len(tables2) {
				t.Fatalf("checkpoint of the restored database reused %d tables, want at least %d", m3.ReusedTables.Files, len(tables2))
			}

			// Restoring needs an empty directory.
			err = RestoreCheckpoint(ctx, loc.url, dir, nil)
			if errs.CodeOf(err) != errs.InvalidParameterValue {
				t.Fatalf("restore into a non-empty directory = %v", err)
			}
		})
	}
}

// damage replaces the object key at url with a copy whose byte at off is
// inverted.
func damage(t *testing.T, url, key string, off int) {
	t.Helper()
	ctx := context.Background()
	b, err := openBucket(ctx, url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data[off] ^= 0xff
	if err := b.WriteAll(ctx, key, data, nil); err != nil {
		t.Fatal(err)
	}
}

func removeObject(t *testing.T, url, key string) {
	t.Helper()
	ctx := context.Background()
	b, err := openBucket(ctx, url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
}

// wantFailedRestore restores url into a new directory, expects a
// DataCorrupted error mentioning want, and checks the directory was left
// empty and does not open as a database by accident.
func wantFailedRestore(t *testing.T, url string, want string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "restored")
	var lines bytes.Buffer
	err := RestoreCheckpoint(context.Background(), url, dir, NewLineProgress(&lines))
	if err == nil {
		t.Fatal("restore of a damaged checkpoint succeeded")
	}
	if errs.CodeOf(err) != errs.DataCorrupted || !strings.Contains(err.Error(), want) {
		t.Fatalf("restore error %q (code %s) does not name %q", err, errs.CodeOf(err), want)
	}
	t.Log(err)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("failed restore left %s behind (%v)", dir, err)
	}
}

func TestRestoreFailsClosed(t *testing.T) {
	for _, mk := range []func(*testing.T) location{fileLocation, s3Location} {
		loc := mk(t)
		t.Run(loc.name, func(t *testing.T) {
			ctx := context.Background()
			db := openMem(t)
			writeEpochs(t, db, 0, 5)
			m, err := CreateCheckpoint(ctx, db, loc.url, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var table, other ManifestFile
			for _, f := range m.Files {
				if f.Shared && table.Key == "" {
					table = f
				}
				if strings.HasPrefix(f.Name, "MANIFEST-") {
					other = f
				}
			}

			// A flipped byte in a table.
			damage(t, loc.url, table.Key, int(table.Size/2))
			wantFailedRestore(t, loc.url, table.Name)
			damage(t, loc.url, table.Key, int(table.Size/2)) // undo
			if err := RestoreCheckpoint(ctx, loc.url, filepath.Join(t.TempDir(), "ok"), nil); err != nil {
				t.Fatalf("restore after repair: %v", err)
			}

			// A flipped byte in a per-checkpoint file.
			damage(t, loc.url, other.Key, 3)
			wantFailedRestore(t, loc.url, other.Name)
			damage(t, loc.url, other.Key, 3)

			// A flipped byte in the manifest itself.
			manifestKey := checkpointsPrefix + m.ID + "/manifest.json"
			damage(t, loc.url, manifestKey, 40)
			wantFailedRestore(t, loc.url, "manifest.json")
			damage(t, loc.url, manifestKey, 40)

			// A missing table.
			removeObject(t, loc.url, table.Key)
			wantFailedRestore(t, loc.url, table.Name)
		})
	}
}

func TestCheckpointErrors(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	for _, url := range []string{"ftp://host/x", "file://relative/path", "s3:///prefix-without-bucket", "::"} {
		if _, err := CreateCheckpoint(ctx, db, url, nil, nil); errs.CodeOf(err) != errs.InvalidParameterValue {
			t.Errorf("CreateCheckpoint(%q) = %v", url, err)
		}
	}
	empty := fileLocation(t)
	if err := RestoreCheckpoint(ctx, empty.url, filepath.Join(t.TempDir(), "x"), nil); errs.CodeOf(err) != errs.UndefinedObject {
		t.Errorf("restore from an empty location = %v", err)
	}
	t.Setenv(EnvObjectStoreAccessKeyID, "only-the-id")
	t.Setenv(EnvObjectStoreSecretAccessKey, "")
	if _, err := CreateCheckpoint(ctx, db, "s3://bucket/x", nil, nil); errs.CodeOf(err) != errs.InvalidParameterValue {
		t.Errorf("half the credentials = %v", err)
	}
}

// A checkpoint of a database in a fault-free in-memory file system leaves
// no scratch copy behind.
func TestCheckpointCleansScratch(t *testing.T) {
	fs := vfs.NewMem()
	db := openAt(t, fs, "db", Sync)
	writeEpochs(t, db, 0, 2)
	if _, err := CreateCheckpoint(context.Background(), db, fileLocation(t).url, nil, nil); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List(fs.PathJoin("db", scratchDirName))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Fatalf("scratch directory holds %v", names)
	}
	// A copy left by a crash is removed at the next Open.
	if err := fs.MkdirAll(fs.PathJoin("db", scratchDirName, checkpointScratchPrefix+"stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	openAt(t, fs, "db", Sync)
	if names, _ := fs.List(fs.PathJoin("db", scratchDirName)); len(names) != 0 {
		t.Fatalf("stale checkpoint copy survived Open: %v", names)
	}
}
