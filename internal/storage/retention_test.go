package storage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rockstream/rockstream/internal/errs"
)

// bucketKeys lists every object at url.
func bucketKeys(t *testing.T, url string) []string {
	t.Helper()
	ctx := context.Background()
	b, err := openBucket(ctx, url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var keys []string
	it := b.List(nil)
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			break
		}
		keys = append(keys, obj.Key)
	}
	return keys
}

func TestPruneCheckpoints(t *testing.T) {
	for _, mk := range []func(*testing.T) location{fileLocation, s3Location} {
		loc := mk(t)
		t.Run(loc.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(Options{Dir: "db", FS: vfs.NewMem(), Logger: quietLogger(), disableCompactions: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// Four checkpoints; before the third, everything is compacted
			// into new tables, so that the tables of the first two are
			// listed by no later checkpoint.
			var ms []*Manifest
			for i := range 4 {
				writeEpochs(t, db, 10*i, 10*i+5)
				if i == 2 {
					if err := db.db.Compact(ctx, []byte("a"), []byte("zz"), false); err != nil {
						t.Fatal(err)
					}
				}
				m, err := CreateCheckpoint(ctx, db, loc.url, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				ms = append(ms, m)
			}
			oldOnly := 0
			for _, k := range tableKeys(ms[0]) {
				if !slices.Contains(tableKeys(ms[2]), k) && !slices.Contains(tableKeys(ms[3]), k) {
					oldOnly++
				}
			}
			if oldOnly == 0 {
				t.Fatal("the first checkpoint's tables are all in the later ones; the test needs some that are not")
			}
			// An upload interrupted before its manifest, older than
			// everything kept, and one that may be under way (newer).
			b, err := openBucket(ctx, loc.url, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{
				checkpointsPrefix + "20000101T000000.000000000Z-00000000/files/MANIFEST-000001",
				checkpointsPrefix + "99990101T000000.000000000Z-00000000/files/MANIFEST-000001",
			} {
				if err := b.WriteAll(ctx, key, []byte("partial"), nil); err != nil {
					t.Fatal(err)
				}
			}
			b.Close()

			if _, err := PruneCheckpoints(ctx, loc.url, 0); errs.CodeOf(err) != errs.InvalidParameterValue {
				t.Fatalf("keep 0 = %v", err)
			}
			res, err := PruneCheckpoints(ctx, loc.url, 2)
			if err != nil {
				t.Fatal(err)
			}
			wantKept := []string{ms[2].ID, ms[3].ID}
			wantDeleted := []string{"20000101T000000.000000000Z-00000000", ms[0].ID, ms[1].ID}
			if !slices.Equal(res.Kept, wantKept) || !slices.Equal(res.Deleted, wantDeleted) {
				t.Fatalf("prune kept %v and deleted %v; want %v and %v", res.Kept, res.Deleted, wantKept, wantDeleted)
			}
			t.Logf("prune: %+v (tables only the first checkpoint listed: %d)", res, oldOnly)
			if res.DeletedTables.Files < oldOnly {
				t.Fatalf("prune deleted %d tables; at least %d were listed only by deleted checkpoints", res.DeletedTables.Files, oldOnly)
			}
			// What is left is exactly the kept checkpoints' objects, the
			// pointer, and the upload that may be under way.
			want := map[string]bool{latestKey: true, checkpointsPrefix + "99990101T000000.000000000Z-00000000/files/MANIFEST-000001": true}
			for _, m := range ms[2:] {
				want[checkpointsPrefix+m.ID+"/manifest.json"] = true
				for _, f := range m.Files {
					want[f.Key] = true
				}
			}
			got := bucketKeys(t, loc.url)
			for _, k := range got {
				if !want[k] {
					t.Errorf("object %s is left after pruning", k)
				}
				delete(want, k)
			}
			for k := range want {
				t.Errorf("object %s was deleted, but a kept checkpoint needs it", k)
			}

			// The latest checkpoint still restores, and pruning again
			// changes nothing.
			dir := filepath.Join(t.TempDir(), "restored")
			if err := RestoreCheckpoint(ctx, loc.url, dir, nil); err != nil {
				t.Fatal(err)
			}
			// Both kept checkpoints are listed and restore, each with
			// the data it was taken with.
			list, err := ListCheckpoints(ctx, loc.url)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 || list[0].ID != ms[2].ID || list[0].Latest || !list[1].Latest || list[1].Files != len(ms[3].Files) {
				t.Fatalf("ListCheckpoints: %+v", list)
			}
			older := filepath.Join(t.TempDir(), "older")
			if err := RestoreCheckpointID(ctx, loc.url, ms[2].ID, older, nil); err != nil {
				t.Fatal(err)
			}
			odb, err := Open(Options{Dir: older, Logger: quietLogger(), MustExist: true})
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := get(t, odb, "frontier"); v != "24" {
				t.Fatalf("the older checkpoint restored frontier %q, want 24", v)
			}
			odb.Close()
			if err := RestoreCheckpointID(ctx, loc.url, ms[0].ID, filepath.Join(t.TempDir(), "x"), nil); errs.CodeOf(err) != errs.UndefinedObject {
				t.Fatalf("restore of a pruned checkpoint = %v", err)
			}
			if err := RestoreCheckpointID(ctx, loc.url, "../x", filepath.Join(t.TempDir(), "x"), nil); errs.CodeOf(err) != errs.InvalidParameterValue {
				t.Fatalf("restore of a bad id = %v", err)
			}
			again, err := PruneCheckpoints(ctx, loc.url, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Deleted) != 0 || again.DeletedObjects != 0 {
				t.Fatalf("second prune deleted %v (%d objects)", again.Deleted, again.DeletedObjects)
			}
			// keep 1 leaves only the latest.
			one, err := PruneCheckpoints(ctx, loc.url, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(one.Kept, []string{ms[3].ID}) || !slices.Equal(one.Deleted, []string{ms[2].ID}) {
				t.Fatalf("keep 1 kept %v and deleted %v", one.Kept, one.Deleted)
			}
		})
	}
}

func TestPruneCheckpointsNothingThere(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := PruneCheckpoints(ctx, "file://"+dir, 3); errs.CodeOf(err) != errs.UndefinedObject {
		t.Fatalf("prune of an empty location = %v", err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := PruneCheckpoints(ctx, "file://"+missing, 3); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Fatalf("prune of a missing location = %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("prune created %s", missing)
	}
}
