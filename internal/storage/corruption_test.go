package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// fillDisk creates a database on disk with committed data flushed to
// tables (and a little more left in the write-ahead log), closes it, and
// returns its directory.
func fillDisk(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(Options{Dir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		set(t, db, fmt.Sprintf("key%05d", i), strings.Repeat("v", 50)+fmt.Sprint(i))
		if i%500 == 499 {
			commit(t, db)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	set(t, db, "in-wal", "1")
	commit(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// filesWith returns the names in dir that start with prefix and end with
// suffix.
func filesWith(t *testing.T, dir, prefix, suffix string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), suffix) {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatalf("no file %s*%s in %s", prefix, suffix, dir)
	}
	return out
}

// flipByte inverts one byte of a file at offset off (negative: from the
// end).
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantCorrupted checks that err is a DataCorrupted error whose message
// names the file and says what to do.
func wantCorrupted(t *testing.T, err error, file string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error: damaged data was accepted")
	}
	if errs.CodeOf(err) != errs.DataCorrupted || errs.SQLState(err) != "XX001" {
		t.Fatalf("error %q has code %q, want %q", err, errs.CodeOf(err), errs.DataCorrupted)
	}
	msg := err.Error()
	for _, s := range []string{file, "restore", "rockstream doctor"} {
		if !strings.Contains(msg, s) {
			t.Fatalf("error %q does not mention %q", msg, s)
		}
	}
}

func TestOpenRefusesCorruptManifest(t *testing.T) {
	dir := fillDisk(t)
	manifest := filesWith(t, dir, "MANIFEST-", "")
	for _, m := range manifest {
		flipByte(t, filepath.Join(dir, m), 20)
	}
	_, err := Open(Options{Dir: dir, Logger: quietLogger()})
	wantCorrupted(t, err, "MANIFEST")
	t.Log(err)
}

func TestOpenRefusesTruncatedTable(t *testing.T) {
	dir := fillDisk(t)
	sst := filesWith(t, dir, "", ".sst")[0]
	path := filepath.Join(dir, sst)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, info.Size()-10); err != nil {
		t.Fatal(err)
	}
	_, err = Open(Options{Dir: dir, Logger: quietLogger()})
	wantCorrupted(t, err, strings.TrimSuffix(sst, ".sst"))
	t.Log(err)
}

func TestOpenRefusesMissingTable(t *testing.T) {
	dir := fillDisk(t)
	sst := filesWith(t, dir, "", ".sst")[0]
	if err := os.Remove(filepath.Join(dir, sst)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(Options{Dir: dir, Logger: quietLogger()})
	wantCorrupted(t, err, strings.TrimSuffix(sst, ".sst"))
	t.Log(err)
}

func TestOpenRefusesDamagedTableFooter(t *testing.T) {
	dir := fillDisk(t)
	sst := filesWith(t, dir, "", ".sst")[0]
	flipByte(t, filepath.Join(dir, sst), -20)
	_, err := Open(Options{Dir: dir, Logger: quietLogger()})
	wantCorrupted(t, err, strings.TrimSuffix(sst, ".sst"))
	t.Log(err)
}

// A bit flip inside a data block is refused at Open, which checks every
// block of every table, also by a read-only open.
func TestOpenRefusesDamagedDataBlock(t *testing.T) {
	dir := fillDisk(t)
	sst := filesWith(t, dir, "", ".sst")[0]
	flipByte(t, filepath.Join(dir, sst), 100)
	before := hashDir(t, dir)
	for _, ro := range []bool{false, true} {
		_, err := Open(Options{Dir: dir, Logger: quietLogger(), ReadOnly: ro})
		wantCorrupted(t, err, sst)
		t.Log(err)
	}
	if after := hashDir(t, dir); !maps.Equal(before, after) {
		t.Fatalf("the refused directory changed:\nbefore %v\nafter  %v", before, after)
	}
}

// Damage that appears while the store is open (the disk goes bad) is
// found by the read that meets it, which fails with DataCorrupted instead
// of returning the damaged data, and by Verify.
func TestDamageWhileOpen(t *testing.T) {
	dir := fillDisk(t)
	db, err := Open(Options{Dir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sst := filesWith(t, dir, "", ".sst")[0]
	flipByte(t, filepath.Join(dir, sst), 100)
	n := 0
	err = db.Scan(nil, nil, func(k, v []byte) bool { n++; return true })
	wantCorrupted(t, err, strings.TrimSuffix(sst, ".sst"))
	if _, _, err := db.Get([]byte("key00000")); err == nil {
		t.Fatal("Get of a key in the damaged block succeeded")
	}
	wantCorrupted(t, db.Verify(), sst)
}

func TestOpenRefusesInterruptedRestore(t *testing.T) {
	dir := fillDisk(t)
	if err := os.WriteFile(filepath.Join(dir, restoreMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(Options{Dir: dir, Logger: quietLogger()})
	if errs.CodeOf(err) != errs.DataCorrupted || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Open = %v", err)
	}
}

// fillWAL creates a database on disk whose data is all in its
// write-ahead log (about 140 KiB: several 32 KiB log blocks), 300 epochs
// of 10 keys, closes it and returns its directory and the log's path.
func fillWAL(t *testing.T) (dir, wal string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "db")
	db, err := Open(Options{Dir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for e := range 300 {
		for i := range 10 {
			set(t, db, fmt.Sprintf("e%03d-%d", e, i), strings.Repeat("v", 35))
		}
		commit(t, db)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	logs := filesWith(t, dir, "", ".log")
	// The live log is the newest; older ones are kept for recycling.
	return dir, filepath.Join(dir, logs[len(logs)-1])
}

func TestOpenRefusesDamagedWAL(t *testing.T) {
	for _, off := range []int64{12, 1000, 40000, 70000} {
		dir, wal := fillWAL(t)
		flipByte(t, wal, off)
		db, err := Open(Options{Dir: dir, Logger: quietLogger()})
		if err == nil {
			db.Close()
			t.Fatalf("offset %d: Open accepted a damaged write-ahead log", off)
		}
		wantCorrupted(t, err, filepath.Base(wal))
		if off == 12 {
			t.Log(err)
		}
	}
}

// Damage in the last 32 KiB block of the write-ahead log cannot be told
// from a write torn by a crash (no later record vouches for it), so Pebble
// ends recovery there. The identity file records how far the durable
// commits reach, so Open refuses the store instead of serving it without
// the lost epochs, and leaves it as it was.
func TestOpenRefusesDamagedWALTail(t *testing.T) {
	dir, wal := fillWAL(t)
	info, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, wal, info.Size()-3000)
	before := hashDir(t, dir)
	_, err = Open(Options{Dir: dir, Logger: quietLogger()})
	wantCorrupted(t, err, filepath.Base(wal))
	if !strings.Contains(err.Error(), "lost acknowledged commits") {
		t.Fatalf("error does not say what was lost: %v", err)
	}
	t.Log(err)
	if after := hashDir(t, dir); !maps.Equal(before, after) {
		t.Fatalf("the refused directory changed:\nbefore %v\nafter  %v", before, after)
	}
}

// Without the identity file (a store written by an earlier version, or
// one whose owner removed the file to accept the loss) the same damage
// loses whole epochs at the end, never part of one.
func TestDamagedWALTailWithoutIdentityLosesWholeEpochs(t *testing.T) {
	dir, wal := fillWAL(t)
	if err := os.Remove(filepath.Join(dir, IdentityFile)); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, wal, info.Size()-3000)
	db, err := Open(Options{Dir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	perEpoch := map[string]int{}
	if err := db.Scan(nil, nil, func(k, v []byte) bool {
		perEpoch[string(k[:4])]++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	epochs := len(perEpoch)
	if epochs == 0 || epochs == 300 {
		t.Fatalf("%d epochs survived", epochs)
	}
	for e := range epochs {
		if n := perEpoch[fmt.Sprintf("e%03d", e)]; n != 10 {
			t.Fatalf("epoch %d has %d of its 10 keys (of %d epochs kept)", e, n, epochs)
		}
	}
	t.Logf("%d of 300 epochs kept", epochs)
	if _, err := os.Stat(filepath.Join(dir, IdentityFile)); err != nil {
		t.Fatalf("the identity file was not recreated: %v", err)
	}
}

// hashDir returns the SHA-256 of every file under dir, by path.
func hashDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[path] = hex.EncodeToString(sum[:8])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
