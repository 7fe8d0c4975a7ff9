package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// bucketKey is a key of a bucketed space: ns | id uvarint | bucket | rest.
func bucketKey(ns byte, id uint64, b uint8, rest string) []byte {
	k := binary.AppendUvarint([]byte{ns}, id)
	return append(append(k, b), rest...)
}

// catalogIDs are the objects of the test catalog; 300 has a two-byte
// uvarint, which sorts before 2 in key order.
var catalogIDs = []uint64{2, 7, 300}

// writeCatalog writes the test catalog and the metadata every store of
// the engine holds.
func writeCatalog(t *testing.T, db *DB) {
	t.Helper()
	for _, id := range catalogIDs {
		set(t, db, string(binary.BigEndian.AppendUint64([]byte{0x00}, id)), fmt.Sprintf("record of %d", id))
	}
	setU64(t, db, metaLayoutKey, 2)
	commit(t, db)
}

func setU64(t *testing.T, db *DB, key []byte, v uint64) {
	t.Helper()
	if err := db.Set(key, binary.BigEndian.AppendUint64(nil, v)); err != nil {
		t.Fatal(err)
	}
}

// fillBuckets writes tag-valued keys in every bucketed space, object and
// bucket of buckets, and the frontier.
func fillBuckets(t *testing.T, db *DB, buckets []int, tag string, epoch uint64) {
	t.Helper()
	for _, ns := range bucketedSpaces {
		for _, id := range catalogIDs {
			for _, b := range buckets {
				for i := range 3 {
					set(t, db, string(bucketKey(ns, id, uint8(b), fmt.Sprintf("k%d", i))), fmt.Sprintf("%s %x/%d/%d/%d", tag, ns, id, b, i))
				}
			}
		}
	}
	setU64(t, db, metaFrontier, epoch)
	commit(t, db)
}

// bucketedContents returns every key of the bucketed spaces, as text.
func bucketedContents(t *testing.T, db *DB, keep func(b uint8) bool) string {
	t.Helper()
	var sb strings.Builder
	for _, ns := range bucketedSpaces {
		if err := db.Scan([]byte{ns}, []byte{ns + 1}, func(k, v []byte) bool {
			_, n := binary.Uvarint(k[1:])
			if keep(k[1+n]) {
				fmt.Fprintf(&sb, "%x=%s\n", k, v)
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	return sb.String()
}

func inSet(s BucketSet) func(uint8) bool { return s.Has }

func notInSet(s BucketSet) func(uint8) bool { return func(b uint8) bool { return !s.Has(b) } }

// TestBucketsExportImport moves buckets between two stores of one catalog
// through both kinds of location: the receiver's moved buckets become the
// sender's exactly (stale keys gone), its other buckets stay, the append
// counters rise and the view row counts go.
func TestBucketsExportImport(t *testing.T) {
	for _, loc := range []func(*testing.T) location{fileLocation, s3Location} {
		l := loc(t)
		t.Run(l.name, func(t *testing.T) {
			ctx := context.Background()
			a := openAt(t, vfs.NewMem(), "a", Sync)
			b := openAt(t, vfs.NewMem(), "b", Sync)
			writeCatalog(t, a)
			writeCatalog(t, b)
			all := []int{0, 1, 2, 9, 10, 254, 255}
			fillBuckets(t, a, all, "a", 5)
			fillBuckets(t, b, all, "b-old", 3)
			// A stale key of b in a moved bucket that a does not have.
			set(t, b, string(bucketKey(0x02, 300, 255, "stale")), "stale")
			append7 := append(append([]byte(nil), metaAppendPref...), 7)
			setU64(t, a, append7, 40)
			setU64(t, b, append7, 12)
			setU64(t, b, append(append([]byte(nil), metaViewRows...), 0, 0, 0, 0, 0, 0, 0, 2), 99)
			commit(t, a)
			commit(t, b)

			moved := NewBucketSet(1, 2, 9, 255)
			m, err := ExportBuckets(ctx, a, l.url, moved, nil)
			if err != nil {
				t.Fatal(err)
			}
			if m.Epoch != 5 || m.Layout != 2 || len(m.Files) == 0 || m.Keys != int64(len(bucketedSpaces)*len(catalogIDs)*4*3) {
				t.Fatalf("manifest: epoch %d layout %d files %d keys %d", m.Epoch, m.Layout, len(m.Files), m.Keys)
			}
			bKept := bucketedContents(t, b, notInSet(moved))
			if _, err := ImportBuckets(ctx, b, l.url, m.ID, m.SHA256, nil); err != nil {
				t.Fatal(err)
			}
			if got, want := bucketedContents(t, b, inSet(moved)), bucketedContents(t, a, inSet(moved)); got != want {
				t.Fatalf("moved buckets differ:\n%s\nwant\n%s", got, want)
			}
			if got := bucketedContents(t, b, notInSet(moved)); got != bKept {
				t.Fatalf("other buckets changed:\n%s\nwant\n%s", got, bKept)
			}
			if v, _, _ := b.Get(append7); binary.BigEndian.Uint64(v) != 40 {
				t.Fatalf("append counter %d, want 40", binary.BigEndian.Uint64(v))
			}
			if n := countPrefix(t, b, metaViewRows); n != 0 {
				t.Fatalf("%d view row counts remain", n)
			}
			// The result survives a reopen.
			dir, fs := b.dir, b.fs
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			b2 := openAt(t, fs, dir, Sync)
			if got, want := bucketedContents(t, b2, inSet(moved)), bucketedContents(t, a, inSet(moved)); got != want {
				t.Fatalf("after reopen, moved buckets differ")
			}
		})
	}
}

func countPrefix(t *testing.T, db *DB, prefix []byte) int {
	t.Helper()
	n := 0
	end := append(append([]byte(nil), prefix...), 0xff)
	if err := db.Scan(prefix, end, func(k, v []byte) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBucketsImportRefusals: damaged, truncated and foreign exports are
// refused with a precise error and change nothing.
func TestBucketsImportRefusals(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	url := "file://" + root
	a := openAt(t, vfs.NewMem(), "a", Sync)
	writeCatalog(t, a)
	fillBuckets(t, a, []int{3, 4, 5}, "a", 5)
	moved := NewBucketSet(3, 4)

	fresh := func(t *testing.T) (*DB, string) {
		b := openAt(t, vfs.NewMem(), "b", Sync)
		writeCatalog(t, b)
		fillBuckets(t, b, []int{3, 4, 5}, "b", 2)
		return b, bucketedContents(t, b, func(uint8) bool { return true })
	}
	refused := func(t *testing.T, b *DB, before, id, sha string, code errs.Code, want string) {
		t.Helper()
		_, err := ImportBuckets(ctx, b, url, id, sha, nil)
		if err == nil || errs.CodeOf(err) != code || !strings.Contains(err.Error(), want) {
			t.Fatalf("import: %v (code %s), want %s containing %q", err, errs.CodeOf(err), code, want)
		}
		if got := bucketedContents(t, b, func(uint8) bool { return true }); got != before {
			t.Fatalf("a refused import changed the store")
		}
	}
	export := func(t *testing.T) *BucketManifest {
		m, err := ExportBuckets(ctx, a, url, moved, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	objectPath := func(key string) string { return filepath.Join(root, filepath.FromSlash(key)) }

	t.Run("flipped byte", func(t *testing.T) {
		m := export(t)
		p := objectPath(m.Files[0].Key)
		raw, _ := os.ReadFile(p)
		raw[len(raw)/2] ^= 0x40
		os.WriteFile(p, raw, 0o644)
		b, before := fresh(t)
		refused(t, b, before, m.ID, m.SHA256, errs.DataCorrupted, "failed its check")
	})
	t.Run("truncated", func(t *testing.T) {
		m := export(t)
		p := objectPath(m.Files[0].Key)
		raw, _ := os.ReadFile(p)
		os.WriteFile(p, raw[:len(raw)-10], 0o644)
		b, before := fresh(t)
		refused(t, b, before, m.ID, "", errs.DataCorrupted, fmt.Sprintf("has %d bytes", len(raw)-10))
	})
	t.Run("missing file", func(t *testing.T) {
		m := export(t)
		os.Remove(objectPath(m.Files[0].Key))
		b, before := fresh(t)
		refused(t, b, before, m.ID, "", errs.DataCorrupted, "is missing")
	})
	t.Run("manifest digest", func(t *testing.T) {
		m := export(t)
		b, before := fresh(t)
		refused(t, b, before, m.ID, strings.Repeat("0", 64), errs.DataCorrupted, "was expected")
	})
	t.Run("other catalog", func(t *testing.T) {
		m := export(t)
		b, _ := fresh(t)
		set(t, b, string(binary.BigEndian.AppendUint64([]byte{0x00}, 7)), "another record of 7")
		commit(t, b)
		refused(t, b, bucketedContents(t, b, func(uint8) bool { return true }), m.ID, "", errs.PrerequisiteState, "another catalog")
	})
	t.Run("other layout", func(t *testing.T) {
		m := export(t)
		b, before := fresh(t)
		setU64(t, b, metaLayoutKey, 3)
		commit(t, b)
		refused(t, b, before, m.ID, "", errs.FeatureNotSupported, "layout version 2")
	})
	t.Run("no such export", func(t *testing.T) {
		b, before := fresh(t)
		refused(t, b, before, "20260101T000000.000000000Z-00000000", "", errs.UndefinedObject, "there is no bucket export")
	})
}

// TestBucketsImportCrash crashes the machine at every stage of an import
// (keeping only what was synced) and opens what the disk held: the moved
// buckets hold the old contents or the new ones, whole, never a mix; the
// view row counts are gone from the first commit on; leftovers are
// removed.
func TestBucketsImportCrash(t *testing.T) {
	ctx := context.Background()
	url := "file://" + t.TempDir()
	a := openAt(t, vfs.NewMem(), "a", Sync)
	writeCatalog(t, a)
	fillBuckets(t, a, []int{3, 4, 5, 6}, "a", 5)
	moved := NewBucketSet(4, 5)
	m, err := ExportBuckets(ctx, a, url, moved, nil)
	if err != nil {
		t.Fatal(err)
	}
	newContents := bucketedContents(t, a, inSet(moved))

	mem := vfs.NewCrashableMem()
	b := openAt(t, mem, "b", Sync)
	writeCatalog(t, b)
	fillBuckets(t, b, []int{3, 4, 5, 6}, "b", 2)
	setU64(t, b, append(append([]byte(nil), metaViewRows...), 0, 0, 0, 0, 0, 0, 0, 2), 99)
	commit(t, b)
	oldContents := bucketedContents(t, b, inSet(moved))
	others := bucketedContents(t, b, notInSet(moved))

	crashed := map[string]*vfs.MemFS{}
	importHook = func(stage string) { crashed[stage] = mem.CrashClone(vfs.CrashCloneCfg{}) }
	defer func() { importHook = nil }()
	if _, err := ImportBuckets(ctx, b, url, m.ID, m.SHA256, nil); err != nil {
		t.Fatal(err)
	}
	for stage, want := range map[string]string{"downloaded": oldContents, "prepared": oldContents, "ingested": newContents} {
		fs := crashed[stage]
		if fs == nil {
			t.Fatalf("no crash at %s", stage)
		}
		db := openAt(t, fs, "b", Sync)
		if got := bucketedContents(t, db, inSet(moved)); got != want {
			t.Fatalf("crash at %s: moved buckets hold\n%s\nwant\n%s", stage, got, want)
		}
		if got := bucketedContents(t, db, notInSet(moved)); got != others {
			t.Fatalf("crash at %s: other buckets changed", stage)
		}
		if n := countPrefix(t, db, metaViewRows); (n == 0) != (stage != "downloaded") {
			t.Fatalf("crash at %s: %d view row counts", stage, n)
		}
		if names, _ := fs.List(fs.PathJoin("b", scratchDirName)); len(names) != 0 && !bytes.Contains([]byte(strings.Join(names, " ")), []byte("audit")) {
			t.Fatalf("crash at %s: leftovers %v", stage, names)
		}
	}
}
