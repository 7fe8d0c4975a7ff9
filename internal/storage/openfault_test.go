package storage

import (
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// TestOpenWithFailingDevice opens a store whose log holds commits not yet
// flushed while the device fails its writes: opening replays the log and
// flushes it, and that flush's failure must come back from Open as an
// error, never a hang or a panic of the process; once the device works,
// the store opens with every commit.
func TestOpenWithFailingDevice(t *testing.T) {
	for _, mode := range []int32{faultManifest, faultAll} {
		mem := vfs.NewCrashableMem()
		db, err := Open(Options{FS: mem, Dir: "db", CacheBytes: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		for e := 1; e <= 4; e++ {
			writeEpoch(t, db, e)
			commit(t, db)
		}
		crashed := mem.CrashClone(vfs.CrashCloneCfg{})
		if err := closeWithin(t, db); err != nil {
			t.Fatal(err)
		}
		fault := &deviceFault{}
		fault.mode.Store(mode)
		for i := 0; i < 3; i++ {
			done := make(chan error, 1)
			go func() {
				db, err := Open(Options{FS: errorfs.Wrap(crashed, fault), Dir: "db", CacheBytes: 8 << 20, Logger: slog.New(slog.DiscardHandler)})
				if err == nil {
					err = db.Close()
					t.Errorf("mode %d: Open on a failing device succeeded", mode)
				}
				done <- err
			}()
			select {
			case err := <-done:
				t.Logf("mode %d: %v", mode, err)
			case <-time.After(20 * time.Second):
				t.Fatalf("mode %d: Open on a failing device did not return", mode)
			}
			// Pebble's background work of a failed open must not outlive
			// it and crash the process: give it time to.
			time.Sleep(200 * time.Millisecond)
		}
		fault.mode.Store(faultOff)
		checkEpochs(t, openAt(t, crashed, "db", Sync), 4)
	}
}
