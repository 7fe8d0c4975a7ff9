package storage_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/types"
)

// bucketSchema is a catalog with every kind of bucketed data: keyed,
// unkeyed and append-only tables, views with GROUP BY, a join, a global
// aggregate and DISTINCT (operator state), indexes, and change logs.
var bucketSchema = []string{
	"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
	"CREATE TABLE bag (a int, b text)",
	"CREATE TABLE clicks (page text, n int) APPEND ONLY",
	"CREATE MATERIALIZED VIEW groups AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g",
	"CREATE MATERIALIZED VIEW joined AS SELECT t.k, bag.b FROM t JOIN bag ON t.g = bag.a",
	"CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(v) AS s FROM t",
	"CREATE MATERIALIZED VIEW pages AS SELECT DISTINCT page FROM clicks",
	"CREATE INDEX ON t (v)",
	"CREATE INDEX ON groups (n)",
}

// bucketData fills the schema's tables over several epochs, with updates
// and deletes, so that change logs hold retractions.
var bucketData = []string{
	"INSERT INTO t SELECT i, i % 37, i FROM generate_series(1, 3000) AS i",
	"INSERT INTO bag SELECT i % 41, 'b' || (i % 7) FROM generate_series(1, 400) AS i",
	"INSERT INTO clicks SELECT 'p' || (i % 53), i FROM generate_series(1, 900) AS i",
	"UPDATE t SET v = v + 1 WHERE k % 3 = 0",
	"DELETE FROM t WHERE k % 10 = 0",
	"DELETE FROM bag WHERE a = 5",
	"INSERT INTO clicks VALUES ('late', 1)",
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openStore(t *testing.T, dir string) *storage.DB {
	t.Helper()
	st, err := storage.Open(storage.Options{Dir: dir, Logger: quiet, EpochKey: runtime.FrontierKey(), CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// engineStore runs stmts in an engine on a new store in dir and closes it.
func engineStore(t *testing.T, dir string, stmts ...[]string) {
	t.Helper()
	eng, err := runtime.Open(openStore(t, dir), runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := eng.NewSession()
	for _, list := range stmts {
		for _, q := range list {
			if _, err := s.Exec(context.Background(), q, nil); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
}

// bucketedKeys returns every key of the bucketed spaces (and its value)
// whose bucket keep accepts, in key order.
func bucketedKeys(t *testing.T, db *storage.DB, keep func(b uint8) bool) []string {
	t.Helper()
	var out []string
	for _, ns := range []byte{0x01, 0x02, 0x03, 0x05, 0x06} {
		if err := db.Scan([]byte{ns}, []byte{ns + 1}, func(k, v []byte) bool {
			_, n := binary.Uvarint(k[1:])
			if keep(k[1+n]) {
				out = append(out, fmt.Sprintf("%x=%x", k, v))
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// relationsText reads every relation of the schema through an engine on
// the store in dir, and count(*) of each view.
func relationsText(t *testing.T, dir string) string {
	t.Helper()
	eng, err := runtime.Open(openStore(t, dir), runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := eng.NewSession()
	var b strings.Builder
	for _, q := range []string{
		"SELECT * FROM t ORDER BY k", "SELECT * FROM bag ORDER BY a, b", "SELECT * FROM clicks ORDER BY page, n",
		"SELECT * FROM groups ORDER BY g", "SELECT * FROM joined ORDER BY k, b", "SELECT * FROM total",
		"SELECT * FROM pages ORDER BY page", "SELECT count(*) FROM groups", "SELECT count(*) FROM joined",
		"SELECT k FROM t WHERE v = 301", "SELECT g FROM groups WHERE n = 73 ORDER BY g",
	} {
		res, err := s.Exec(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		fmt.Fprintf(&b, "%s\n%s", q, res.RowsText())
	}
	return b.String()
}

// TestBucketsEngineStores exports three disjoint bucket sets of an
// engine's store and imports each into a fresh store of the same catalog:
// key by key, their union is the original. Imported one after another into
// one fresh store, the engine reads every table and view as the original.
// Then one set moves from the original into a store with other data.
func TestBucketsEngineStores(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	url := "file://" + filepath.Join(root, "objects")
	origDir := filepath.Join(root, "orig")
	engineStore(t, origDir, bucketSchema, bucketData)
	want := relationsText(t, origDir)

	var sets [3]storage.BucketSet
	for b := range storage.NumBuckets {
		sets[b%3].Add(uint8(b))
	}
	orig := openStore(t, origDir)
	all := bucketedKeys(t, orig, func(uint8) bool { return true })
	if len(all) < 10000 {
		t.Fatalf("the store has only %d bucketed keys", len(all))
	}
	var manifests [3]*storage.BucketManifest
	for i, s := range sets {
		m, err := storage.ExportBuckets(ctx, orig, url, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		manifests[i] = m
	}
	if err := orig.Close(); err != nil {
		t.Fatal(err)
	}

	var union []string
	for i, s := range sets {
		dir := filepath.Join(root, fmt.Sprintf("part%d", i))
		engineStore(t, dir, bucketSchema)
		db := openStore(t, dir)
		if _, err := storage.ImportBuckets(ctx, db, url, manifests[i].ID, manifests[i].SHA256, nil); err != nil {
			t.Fatal(err)
		}
		union = append(union, bucketedKeys(t, db, s.Has)...)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(union)
	if !slices.Equal(union, all) {
		t.Fatalf("the union of the imports has %d keys, the original %d", len(union), len(all))
	}

	whole := filepath.Join(root, "whole")
	engineStore(t, whole, bucketSchema)
	db := openStore(t, whole)
	for _, m := range manifests {
		if _, err := storage.ImportBuckets(ctx, db, url, m.ID, m.SHA256, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := relationsText(t, whole); got != want {
		t.Fatalf("the engine reads the imported store as\n%s\nwant\n%s", got, want)
	}

	// A move into a store with other data: the moved buckets become the
	// original's, the others keep the receiver's, and the sender is as it
	// was.
	other := filepath.Join(root, "other")
	engineStore(t, other, bucketSchema, []string{
		"INSERT INTO t SELECT i, i % 11, -i FROM generate_series(1, 2000) AS i",
		"INSERT INTO bag SELECT i % 3, 'other' FROM generate_series(1, 50) AS i",
	})
	recv := openStore(t, other)
	before := bucketedKeys(t, recv, func(b uint8) bool { return !sets[1].Has(b) })
	if _, err := storage.ImportBuckets(ctx, recv, url, manifests[1].ID, manifests[1].SHA256, nil); err != nil {
		t.Fatal(err)
	}
	if got := bucketedKeys(t, recv, func(b uint8) bool { return !sets[1].Has(b) }); !slices.Equal(got, before) {
		t.Fatalf("the receiver's other buckets changed")
	}
	sender := openStore(t, origDir)
	if got, want := bucketedKeys(t, recv, sets[1].Has), bucketedKeys(t, sender, sets[1].Has); !slices.Equal(got, want) {
		t.Fatalf("the moved buckets: %d keys, the sender's %d", len(got), len(want))
	}
	if got := bucketedKeys(t, sender, func(uint8) bool { return true }); !slices.Equal(got, all) {
		t.Fatalf("the export changed the sender")
	}
	if err := errors.Join(recv.Close(), sender.Close()); err != nil {
		t.Fatal(err)
	}
	// The receiver opens in the engine, and appends to the append-only
	// table (which it had no rows of) do not overwrite an imported row by
	// reusing its seq: the same rows again, in the same order, would get
	// the same seqs and buckets from a counter that was not raised.
	eng, err := runtime.Open(openStore(t, other), runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := eng.NewSession()
	count := func() string {
		res, err := s.Exec(ctx, "SELECT count(*) FROM clicks", nil)
		if err != nil {
			t.Fatal(err)
		}
		return types.Format(res.Rows[0][0], res.Columns[0].Type)
	}
	n0 := count()
	if _, err := s.Exec(ctx, "INSERT INTO clicks SELECT 'p' || (i % 53), i FROM generate_series(1, 900) AS i", nil); err != nil {
		t.Fatal(err)
	}
	var c0 int
	fmt.Sscan(n0, &c0)
	if got := count(); c0 == 0 || got != fmt.Sprint(c0+900) {
		t.Fatalf("clicks has %s rows after 900 appends to %d", got, c0)
	}
}
