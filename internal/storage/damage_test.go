package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// epochKey is where the damage tests keep the epoch, as the engine does.
var epochKey = []byte("\x04frontier")

// writeStore creates a store on disk as the engine leaves one that was
// stopped without a clean shutdown: 40 epochs flushed to tables, then 60
// more only in the write-ahead log. It returns the directory.
func writeStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(Options{Dir: dir, Logger: quietLogger(), EpochKey: epochKey})
	if err != nil {
		t.Fatal(err)
	}
	for e := 1; e <= 100; e++ {
		for i := range 10 {
			set(t, db, fmt.Sprintf("e%03d-%d", e, i), strings.Repeat("v", 200))
		}
		if err := db.Set(epochKey, binary.BigEndian.AppendUint64(nil, uint64(e))); err != nil {
			t.Fatal(err)
		}
		commit(t, db)
		if e == 40 {
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkAllEpochs checks that db holds epochs 1 to 100, each whole.
func checkAllEpochs(t *testing.T, db *DB) {
	t.Helper()
	perEpoch := map[string]int{}
	if err := db.Scan([]byte("e"), []byte("f"), func(k, v []byte) bool {
		perEpoch[string(k[:4])]++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for e := 1; e <= 100; e++ {
		if n := perEpoch[fmt.Sprintf("e%03d", e)]; n != 10 {
			t.Fatalf("epoch %d has %d of its 10 keys", e, n)
		}
	}
	v, ok, err := db.Get(epochKey)
	if err != nil || !ok || binary.BigEndian.Uint64(v) != 100 {
		t.Fatalf("epoch = %x, %v, %v; want 100", v, ok, err)
	}
}

func lastFile(t *testing.T, dir, prefix, suffix string) string {
	t.Helper()
	f := filesWith(t, dir, prefix, suffix)
	return filepath.Join(dir, f[len(f)-1])
}

// walWithData returns the write-ahead log holding the unflushed epochs:
// the largest one.
func walWithData(t *testing.T, dir string) string {
	t.Helper()
	var best string
	var size int64 = -1
	for _, n := range filesWith(t, dir, "", ".log") {
		info, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > size {
			best, size = filepath.Join(dir, n), info.Size()
		}
	}
	return best
}

func truncateTo(t *testing.T, path string, frac float64) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(float64(info.Size())*frac)); err != nil {
		t.Fatal(err)
	}
}

func flipAt(t *testing.T, path string, frac float64) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, path, int64(float64(info.Size())*frac))
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// TestDamageSuite damages copies of a store in the ways files get lost or
// damaged, and opens each copy read-write and read-only. Every outcome is
// either a refusal (DataCorrupted naming the file, the directory left
// unchanged) or a store holding every acknowledged epoch: never a store
// served with data missing.
func TestDamageSuite(t *testing.T) {
	cases := []struct {
		name string
		// damage changes dir and returns the file the error must name, or
		// "" when nothing acknowledged is lost and the store must open.
		damage func(t *testing.T, dir string) string
	}{
		{"missing manifest marker", func(t *testing.T, dir string) string {
			remove(t, lastFile(t, dir, "marker.manifest.", ""))
			return "marker.manifest"
		}},
		{"missing manifest marker and identity file", func(t *testing.T, dir string) string {
			remove(t, lastFile(t, dir, "marker.manifest.", ""))
			remove(t, filepath.Join(dir, IdentityFile))
			return "marker.manifest"
		}},
		{"missing current MANIFEST", func(t *testing.T, dir string) string {
			m := lastFile(t, dir, "MANIFEST-", "")
			remove(t, m)
			return filepath.Base(m)
		}},
		{"missing write-ahead log with data", func(t *testing.T, dir string) string {
			w := walWithData(t, dir)
			remove(t, w)
			return "write-ahead log"
		}},
		// The older log holds the epochs flushed to tables at epoch 40:
		// Pebble keeps it only to reuse its space, and nothing is lost.
		{"oldest write-ahead log missing", func(t *testing.T, dir string) string {
			remove(t, filepath.Join(dir, filesWith(t, dir, "", ".log")[0]))
			return ""
		}},
		{"every write-ahead log missing", func(t *testing.T, dir string) string {
			for _, n := range filesWith(t, dir, "", ".log") {
				remove(t, filepath.Join(dir, n))
			}
			return "no .log file"
		}},
		{"truncated write-ahead log", func(t *testing.T, dir string) string {
			w := walWithData(t, dir)
			truncateTo(t, w, 0.5)
			return filepath.Base(w)
		}},
		{"write-ahead log damaged at 95%", func(t *testing.T, dir string) string {
			w := walWithData(t, dir)
			flipAt(t, w, 0.95)
			return filepath.Base(w)
		}},
		{"write-ahead log damaged at 30%", func(t *testing.T, dir string) string {
			w := walWithData(t, dir)
			flipAt(t, w, 0.3)
			return filepath.Base(w)
		}},
		{"data block damaged", func(t *testing.T, dir string) string {
			sst := lastFile(t, dir, "", ".sst")
			flipAt(t, sst, 0.3)
			return filepath.Base(sst)
		}},
		{"table missing", func(t *testing.T, dir string) string {
			sst := lastFile(t, dir, "", ".sst")
			remove(t, sst)
			return strings.TrimSuffix(filepath.Base(sst), ".sst")
		}},
		{"identity file header damaged", func(t *testing.T, dir string) string {
			flipByte(t, filepath.Join(dir, IdentityFile), 10)
			return IdentityFile
		}},
		{"identity file's both slots damaged", func(t *testing.T, dir string) string {
			flipByte(t, filepath.Join(dir, IdentityFile), sectorSize+14)
			flipByte(t, filepath.Join(dir, IdentityFile), 2*sectorSize+14)
			return IdentityFile
		}},
		// A torn write of one slot leaves the other, one commit older.
		{"identity file's newer slot damaged", func(t *testing.T, dir string) string {
			id, err := readIdentity(vfs.Default, dir)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, filepath.Join(dir, IdentityFile), slotOffset(id.generation)+14)
			return ""
		}},
		// The identity file written before the last commits (a crash
		// between a commit and the write that records it) claims less than
		// the files hold, which is accepted.
		{"identity file behind the store", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, IdentityFile)
			id, err := readIdentity(vfs.Default, dir)
			if err != nil {
				t.Fatal(err)
			}
			id.Claim.Epoch -= 3
			id.Claim.Seq -= 30
			if err := os.WriteFile(path, encodeIdentity(id), 0o644); err != nil {
				t.Fatal(err)
			}
			return ""
		}},
		// A store written before identity files existed opens, once it
		// passes every other check.
		{"no identity file", func(t *testing.T, dir string) string {
			remove(t, filepath.Join(dir, IdentityFile))
			return ""
		}},
		{"interrupted restore", func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, restoreMarker), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return restoreMarker
		}},
	}
	base := writeStore(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "copy")
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			want := c.damage(t, dir)
			before := hashDir(t, dir)
			for _, ro := range []bool{true, false} {
				db, err := Open(Options{Dir: dir, Logger: quietLogger(), EpochKey: epochKey, ReadOnly: ro})
				if want == "" {
					if err != nil {
						t.Fatalf("read-only %v: %v", ro, err)
					}
					checkAllEpochs(t, db)
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					if ro {
						if after := hashDir(t, dir); !maps.Equal(before, after) {
							t.Fatalf("a read-only open changed the directory:\nbefore %v\nafter  %v", before, after)
						}
					}
					continue
				}
				if err == nil {
					db.Close()
					t.Fatalf("read-only %v: the damaged store opened", ro)
				}
				if errs.CodeOf(err) != errs.DataCorrupted || !strings.Contains(err.Error(), want) {
					t.Fatalf("read-only %v: error %q (code %s) does not name %q", ro, err, errs.CodeOf(err), want)
				}
				if !strings.Contains(err.Error(), "restore") {
					t.Fatalf("error %q does not say how to recover", err)
				}
				if after := hashDir(t, dir); !maps.Equal(before, after) {
					t.Fatalf("read-only %v: the refused directory changed:\nbefore %v\nafter  %v", ro, before, after)
				}
				if !ro {
					t.Log(err)
				}
			}
			if want == "" {
				// Reopened read-write, the store has an identity file
				// claiming everything it holds.
				id, err := readIdentity(vfs.Default, dir)
				if err != nil || id == nil || id.Claim.Epoch != 100 {
					t.Fatalf("identity after reopening: %+v, %v", id, err)
				}
			}
		})
	}
}

// TestNewAndMissingStores: a missing or empty directory is a new store,
// unless the caller needs an existing one; then it is refused, and nothing
// is created.
func TestNewAndMissingStores(t *testing.T) {
	root := t.TempDir()
	for _, o := range []Options{{MustExist: true}, {ReadOnly: true}} {
		o.Dir = filepath.Join(root, "typo")
		o.Logger = quietLogger()
		_, err := Open(o)
		if errs.CodeOf(err) != errs.UndefinedObject || !strings.Contains(err.Error(), "does not hold a RockStream store") {
			t.Fatalf("Open(%+v) = %v", o, err)
		}
		if _, err := os.Stat(o.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("Open created %s", o.Dir)
		}
		empty := filepath.Join(root, "empty")
		if err := os.MkdirAll(empty, 0o755); err != nil {
			t.Fatal(err)
		}
		o.Dir = empty
		if _, err := Open(o); errs.CodeOf(err) != errs.UndefinedObject {
			t.Fatalf("Open(%+v) of an empty directory = %v", o, err)
		}
		if names, _ := os.ReadDir(empty); len(names) != 0 {
			t.Fatalf("Open wrote %v into an empty directory it refused", names)
		}
	}
	dir := filepath.Join(root, "new")
	db, err := Open(Options{Dir: dir, Logger: quietLogger(), EpochKey: epochKey})
	if err != nil {
		t.Fatal(err)
	}
	id := db.Identity()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	read, err := readIdentity(vfs.Default, dir)
	if err != nil || read == nil || read.ID != id.ID || read.Claim.Epoch != 0 {
		t.Fatalf("identity of a new store: %+v, %v (open said %+v)", read, err, id)
	}
	f := filepath.Join(root, "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Dir: f, Logger: quietLogger()}); err == nil {
		t.Fatal("Open of a plain file succeeded")
	}
}

// TestReadOnlyOpen: a read-only open serves the committed data (the
// write-ahead log replayed in memory), refuses writes, and leaves every
// file as it was.
func TestReadOnlyOpen(t *testing.T) {
	dir := writeStore(t)
	before := hashDir(t, dir)
	db, err := Open(Options{Dir: dir, Logger: quietLogger(), EpochKey: epochKey, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	checkAllEpochs(t, db)
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("x"), nil); errs.CodeOf(err) != errs.ReadOnlyTransaction {
		t.Fatalf("Set on a read-only DB = %v", err)
	}
	if err := db.Commit(); errs.CodeOf(err) != errs.ReadOnlyTransaction {
		t.Fatalf("Commit on a read-only DB = %v", err)
	}
	c, tables, _ := db.Observed()
	if c.Epoch != 100 || tables == 0 {
		t.Fatalf("Observed = %+v, %d tables", c, tables)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if after := hashDir(t, dir); !maps.Equal(before, after) {
		t.Fatalf("a read-only open changed the directory:\nbefore %v\nafter  %v", before, after)
	}
}

// TestIdentityClaims checks when the identity file's claim moves: with
// every durable commit under Sync durability, and only at syncs under
// Relaxed durability, so that after a machine crash it never claims more
// than the store kept.
func TestIdentityClaims(t *testing.T) {
	for _, dur := range []Durability{Sync, Relaxed} {
		t.Run(dur.String(), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			db, err := Open(Options{FS: mem, Dir: "db", Logger: quietLogger(), EpochKey: epochKey, Durability: dur})
			if err != nil {
				t.Fatal(err)
			}
			put := func(e uint64) {
				set(t, db, fmt.Sprintf("k%d", e), "v")
				if err := db.Set(epochKey, binary.BigEndian.AppendUint64(nil, e)); err != nil {
					t.Fatal(err)
				}
				commit(t, db)
			}
			for e := uint64(1); e <= 5; e++ {
				put(e)
			}
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
			if c := db.ident.Claim(); c.Epoch != 5 {
				t.Fatalf("claim after a flush: %+v", c)
			}
			for e := uint64(6); e <= 8; e++ {
				put(e)
			}
			want := uint64(8)
			if dur == Relaxed {
				want = 5
			}
			if c := db.ident.Claim(); c.Epoch != want {
				t.Fatalf("claim after unsynced commits: %+v, want epoch %d", c, want)
			}
			crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(1, uint64(dur)))})
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			re, err := Open(Options{FS: crashed, Dir: "db", Logger: quietLogger(), EpochKey: epochKey, Durability: dur})
			if err != nil {
				t.Fatalf("reopening after a crash: %v", err)
			}
			defer re.Close()
			v, _, _ := re.Get(epochKey)
			if e := binary.BigEndian.Uint64(v); e < want {
				t.Fatalf("epoch %d after a crash, want at least %d", e, want)
			}
			// Closing syncs: the claim then covers every commit.
			re2, err := Open(Options{FS: mem, Dir: "db", Logger: quietLogger(), EpochKey: epochKey, Durability: dur})
			if err != nil {
				t.Fatal(err)
			}
			defer re2.Close()
			if c := re2.Identity().Claim; c.Epoch != 8 {
				t.Fatalf("claim after a clean close: %+v", c)
			}
		})
	}
}
