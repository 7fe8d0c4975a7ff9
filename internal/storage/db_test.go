package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/state/statetest"
)

// quietLogger drops log lines; tests that look at logs make their own.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openMem opens a DB in a fresh in-memory file system.
func openMem(t statetest.T) *DB {
	t.Helper()
	return openAt(t, vfs.NewMem(), "db", Sync)
}

func openAt(t statetest.T, fs vfs.FS, dir string, dur Durability) *DB {
	t.Helper()
	db, err := Open(Options{Dir: dir, FS: fs, Durability: dur, Logger: quietLogger(), CacheBytes: 8 << 20})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// autoCommit commits every write at once: with it a DB has exactly the
// read-your-writes behaviour of state.Memory, which the shared suite
// checks.
type autoCommit struct{ *DB }

func (a autoCommit) Set(k, v []byte) error {
	if err := a.DB.Set(k, v); err != nil {
		return err
	}
	return a.DB.Commit()
}

func (a autoCommit) Delete(k []byte) error {
	if err := a.DB.Delete(k); err != nil {
		return err
	}
	return a.DB.Commit()
}

func TestStoreSuite(t *testing.T) {
	backends := []statetest.Backend{
		{
			Name: "db-autocommit",
			Open: func(t statetest.T) (state.Store, func() error) {
				return autoCommit{openMem(t)}, nil
			},
			// A write goes to the pending batch (here committed at once);
			// a running Scan reads its own point in time and never sees it.
			WriteInScanAllowed: true,
		},
		{
			// The engine's shape: an epoch's overlay over the DB, committed
			// into the pending batch, then the batch committed.
			Name: "overlay-over-db",
			Open: func(t statetest.T) (state.Store, func() error) {
				db := openMem(t)
				return statetest.OverlayBackend(db, db.Commit)
			},
		},
		{
			Name: "overlay-over-filled-db",
			Open: func(t statetest.T) (state.Store, func() error) {
				db := openMem(t)
				return statetest.ShadowingOverlay(t, db, db.Commit)
			},
		},
	}
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) { statetest.Run(t, b) })
	}
}

func TestStoreModel(t *testing.T) {
	statetest.RunModel(t, func(t statetest.T) (state.Store, func() error) {
		db := openMem(t)
		return db, db.Commit
	})
}

// kvs pairs up keys and values.
func kvs(kv ...string) []statetest.KV {
	var out []statetest.KV
	for i := 0; i < len(kv); i += 2 {
		out = append(out, statetest.KV{K: kv[i], V: kv[i+1]})
	}
	return out
}

func get(t *testing.T, r state.Reader, k string) (string, bool) {
	t.Helper()
	v, ok, err := r.Get([]byte(k))
	if err != nil {
		t.Fatalf("Get(%q): %v", k, err)
	}
	return string(v), ok
}

func set(t *testing.T, db *DB, k, v string) {
	t.Helper()
	if err := db.Set([]byte(k), []byte(v)); err != nil {
		t.Fatal(err)
	}
}

func commit(t *testing.T, db *DB) {
	t.Helper()
	if err := db.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestPendingWritesInvisibleUntilCommit(t *testing.T) {
	db := openMem(t)
	set(t, db, "a", "1")
	set(t, db, "b", "1")
	commit(t, db)

	set(t, db, "a", "2")
	set(t, db, "c", "2")
	if err := db.Delete([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if db.Pending() != 3 {
		t.Fatalf("Pending = %d, want 3", db.Pending())
	}
	if v, _ := get(t, db, "a"); v != "1" {
		t.Fatalf("pending write visible: a = %q", v)
	}
	if _, ok := get(t, db, "c"); ok {
		t.Fatal("pending write visible: c")
	}
	if _, ok := get(t, db, "b"); !ok {
		t.Fatal("pending delete visible: b")
	}
	if got := statetest.ScanAll(t, db, nil, nil, false); !slices.Equal(got, kvs("a", "1", "b", "1")) {
		t.Fatalf("Scan sees pending writes: %v", got)
	}

	db.Abort()
	if db.Pending() != 0 {
		t.Fatal("Abort left pending writes")
	}
	commit(t, db) // nothing to commit
	if got := statetest.ScanAll(t, db, nil, nil, false); !slices.Equal(got, kvs("a", "1", "b", "1")) {
		t.Fatalf("after Abort: %v", got)
	}

	set(t, db, "a", "3")
	if err := db.Delete([]byte("b")); err != nil {
		t.Fatal(err)
	}
	commit(t, db)
	if got := statetest.ScanAll(t, db, nil, nil, false); !slices.Equal(got, kvs("a", "3")) {
		t.Fatalf("after Commit: %v", got)
	}
}

func TestSnapshotIsolation(t *testing.T) {
	db := openMem(t)
	for i := range 10 {
		set(t, db, fmt.Sprintf("k%02d", i), "old")
	}
	commit(t, db)
	snap, err := db.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()

	// A commit lands in the middle of a scan of the snapshot.
	var seen []statetest.KV
	err = snap.Scan(nil, nil, func(k, v []byte) bool {
		seen = append(seen, statetest.KV{K: string(k), V: string(v)})
		if len(seen) == 3 {
			for i := range 10 {
				set(t, db, fmt.Sprintf("k%02d", i), "new")
			}
			set(t, db, "k99", "new")
			commit(t, db)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 10 {
		t.Fatalf("snapshot scan saw %d keys, want 10", len(seen))
	}
	for _, e := range seen {
		if e.V != "old" {
			t.Fatalf("snapshot saw a later commit: %v", e)
		}
	}
	if v, _ := get(t, snap, "k05"); v != "old" {
		t.Fatalf("snapshot Get = %q", v)
	}
	if v, _ := get(t, db, "k05"); v != "new" {
		t.Fatalf("db Get = %q", v)
	}
	if got := statetest.ScanAll(t, snap, nil, nil, true); len(got) != 10 || got[0].K != "k09" {
		t.Fatalf("snapshot ScanReverse = %v", got)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := snap.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, err := snap.Get([]byte("k00")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close = %v", err)
	}

	// Close closes snapshots still open.
	open, err := db.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := open.Get([]byte("k00")); !errors.Is(err, ErrClosed) {
		t.Fatalf("snapshot Get after db Close = %v", err)
	}
	if err := open.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Get([]byte("k00")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close = %v", err)
	}
	if err := db.Set([]byte("x"), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Set after Close = %v", err)
	}
}

func TestDeleteRange(t *testing.T) {
	db := openMem(t)
	for _, k := range []string{"a", "b", "b1", "b2", "c", "d"} {
		set(t, db, k, k)
	}
	commit(t, db)
	if err := db.DeleteRange([]byte("b"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	// Invisible until Commit, like every other write.
	if got := statetest.ScanAll(t, db, nil, nil, false); len(got) != 6 {
		t.Fatalf("pending DeleteRange visible: %v", got)
	}
	set(t, db, "b3", "later in the batch") // written after the range deletion: survives
	commit(t, db)
	want := kvs("a", "a", "b3", "later in the batch", "c", "c", "d", "d")
	if got := statetest.ScanAll(t, db, nil, nil, false); !slices.Equal(got, want) {
		t.Fatalf("after DeleteRange = %v, want %v", got, want)
	}
	if err := db.DeleteRange([]byte("c"), []byte("a")); err != nil {
		t.Fatalf("empty range: %v", err)
	}
	if err := db.DeleteRange([]byte("c"), nil); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("DeleteRange without upper bound = %v", err)
	}
}

func weight(w int64, payload string) []byte {
	return append(binary.AppendVarint(nil, w), payload...)
}

func decodeWeight(t *testing.T, v string) (int64, string) {
	t.Helper()
	w, n := binary.Varint([]byte(v))
	if n <= 0 {
		t.Fatalf("value %q has no weight", v)
	}
	return w, v[n:]
}

func TestMergeSumsWeights(t *testing.T) {
	fs := vfs.NewMem()
	db := openAt(t, fs, "db", Sync)
	if err := db.Set([]byte("r"), weight(2, "row")); err != nil {
		t.Fatal(err)
	}
	commit(t, db)
	for _, w := range []int64{3, -1, 10} {
		if err := db.Merge([]byte("r"), weight(w, "row")); err != nil {
			t.Fatal(err)
		}
		if err := db.Merge([]byte("fresh"), weight(w, "p")); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := get(t, db, "fresh"); ok {
		t.Fatal("pending merge visible")
	}
	commit(t, db)
	check := func(db *DB) {
		v, _ := get(t, db, "r")
		if w, p := decodeWeight(t, v); w != 14 || p != "row" {
			t.Fatalf("r = %d %q, want 14 row", w, p)
		}
		v, _ = get(t, db, "fresh")
		if w, p := decodeWeight(t, v); w != 12 || p != "p" {
			t.Fatalf("fresh = %d %q, want 12 p", w, p)
		}
	}
	check(db)
	// Through a flush and compaction, and a reopen.
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Merge([]byte("r"), weight(-14, "row")); err != nil {
		t.Fatal(err)
	}
	commit(t, db)
	v, ok := get(t, db, "r")
	if w, _ := decodeWeight(t, v); !ok || w != 0 {
		t.Fatalf("r after cancelling merge = %d %v, want a zero weight", w, ok)
	}
	if err := db.Merge([]byte("r"), weight(14, "row")); err != nil {
		t.Fatal(err)
	}
	commit(t, db)
	if err := db.db.Compact(t.Context(), []byte("a"), []byte("z"), false); err != nil {
		t.Fatal(err)
	}
	check(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	check(openAt(t, fs, "db", Sync))
}

func TestMergeRejectsGarbage(t *testing.T) {
	db := openMem(t)
	if err := db.Merge([]byte("k"), []byte{0x80}); err != nil { // a varint cut short
		t.Fatal(err)
	}
	commit(t, db)
	if _, _, err := db.Get([]byte("k")); err == nil {
		t.Fatal("Get of a malformed merge succeeded")
	}
}

func TestReopenKeepsCommittedOnly(t *testing.T) {
	fs := vfs.NewMem()
	db := openAt(t, fs, "db", Sync)
	set(t, db, "kept", "1")
	commit(t, db)
	set(t, db, "dropped", "1")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, fs, "db", Sync)
	if _, ok := get(t, db, "kept"); !ok {
		t.Fatal("committed key lost")
	}
	if _, ok := get(t, db, "dropped"); ok {
		t.Fatal("pending key survived Close")
	}
}

func TestMetrics(t *testing.T) {
	db := openMem(t)
	for i := range 1000 {
		set(t, db, fmt.Sprintf("key%05d", i), "some value of a few bytes")
	}
	commit(t, db)
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		get(t, db, fmt.Sprintf("key%05d", i*10))
	}
	m := db.Metrics()
	if m.Tables < 1 || m.DiskBytes == 0 || m.CacheHits+m.CacheMisses == 0 {
		t.Fatalf("Metrics = %+v", m)
	}
}

func TestOpenOptions(t *testing.T) {
	if _, err := Open(Options{}); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("Open without a directory = %v", err)
	}
	fs := vfs.NewMem()
	db := openAt(t, fs, "db", Relaxed)
	set(t, db, "a", "1")
	commit(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The merge operator's name is recorded; a database created by this
	// package reopens with it.
	db = openAt(t, fs, "db", Sync)
	if v, _ := get(t, db, "a"); v != "1" {
		t.Fatalf("a = %q", v)
	}
	if got := db.db.FormatMajorVersion(); got != FormatMajorVersion {
		t.Fatalf("format major version %d, want %d", got, FormatMajorVersion)
	}
}

func TestPebbleLogsGoToSlog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	db, err := Open(Options{Dir: "db", FS: vfs.NewMem(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	pebbleLogger{l: log}.Infof("hello %d", 7)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("hello 7")) || !bytes.Contains(buf.Bytes(), []byte("component=storage")) {
		t.Fatalf("log output:\n%s", buf.String())
	}
}

// TestPendingModel checks a DB against a model of committed and pending
// writes under random sets, deletes, range deletions, commits and aborts.
func TestPendingModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		db := openMem(t)
		committed := map[string]string{}
		type op struct {
			k, v   string
			del    bool
			lo, hi string
			rng    bool
		}
		var pending []op
		keyGen := rapid.StringOfN(rapid.RuneFrom([]rune("abc\x00\xff")), 0, 3, -1)
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 7).Draw(t, "op") {
			case 0, 1:
				k, v := keyGen.Draw(t, "k"), rapid.StringN(0, 8, -1).Draw(t, "v")
				if err := db.Set([]byte(k), []byte(v)); err != nil {
					t.Fatal(err)
				}
				pending = append(pending, op{k: k, v: v})
			case 2:
				k := keyGen.Draw(t, "k")
				if err := db.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				pending = append(pending, op{k: k, del: true})
			case 3:
				lo, hi := keyGen.Draw(t, "lo"), keyGen.Draw(t, "hi")
				if err := db.DeleteRange([]byte(lo), []byte(hi)); err != nil {
					t.Fatal(err)
				}
				pending = append(pending, op{lo: lo, hi: hi, rng: true})
			case 4:
				if err := db.Commit(); err != nil {
					t.Fatal(err)
				}
				for _, o := range pending {
					switch {
					case o.rng:
						for k := range maps.Clone(committed) {
							if k >= o.lo && k < o.hi {
								delete(committed, k)
							}
						}
					case o.del:
						delete(committed, o.k)
					default:
						committed[o.k] = o.v
					}
				}
				pending = nil
			case 5:
				db.Abort()
				pending = nil
			case 6, 7:
				var got []string
				if err := db.Scan(nil, nil, func(k, v []byte) bool {
					got = append(got, string(k)+"="+string(v))
					return true
				}); err != nil {
					t.Fatal(err)
				}
				var want []string
				for k, v := range committed {
					want = append(want, k+"="+v)
				}
				sort.Slice(want, func(i, j int) bool {
					return bytes.Compare([]byte(want[i]), []byte(want[j])) < 0
				})
				sort.Slice(got, func(i, j int) bool {
					return bytes.Compare([]byte(got[i]), []byte(got[j])) < 0
				})
				if !slices.Equal(got, want) {
					t.Fatalf("Scan = %q, committed model %q", got, want)
				}
			}
		}
	})
}
