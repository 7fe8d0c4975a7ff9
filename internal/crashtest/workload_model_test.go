package crashtest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
)

// TestWorkloadModel runs the workload without crashes, on an in-memory
// instance and on a durable one that is closed and reopened, and applies
// the crash test's checks: the model of what each writer owns agrees with
// the engine, so a mismatch after a kill is the crash's doing.
func TestWorkloadModel(t *testing.T) {
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "durable"
		}
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			opts := rockstream.Options{}
			if durable {
				opts = rockstream.Options{Storage: filepath.Join(root, "db"), CacheBytes: 8 << 20}
			}
			db, err := rockstream.Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			j, err := openJournal(filepath.Join(root, "journal"))
			if err != nil {
				t.Fatal(err)
			}
			defer j.close()
			ctx := context.Background()
			if err := createSchema(ctx, db, nil); err != nil {
				t.Fatal(err)
			}
			if err := j.append(record{T: recReady, Run: 1}, false); err != nil {
				t.Fatal(err)
			}
			var parts [slots]*partition
			for w := range parts {
				parts[w] = newPartition()
			}
			wctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			if err := runWorkload(wctx, db, j, parts, uint64(time.Now().UnixNano()), 1); err != nil {
				t.Fatal(err)
			}
			v := newVerifier(root)
			if durable {
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				err = v.check(ctx)
			} else {
				err = v.checkDB(ctx, db)
				db.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.stats.doubtApplied+v.stats.doubtLost > 0 {
				t.Fatalf("a workload that stopped cleanly left %d transactions in doubt", v.stats.doubtApplied+v.stats.doubtLost)
			}
			if v.stats.acked < 20 {
				t.Fatalf("only %d transactions committed in a second", v.stats.acked)
			}
			t.Logf("%d transactions acknowledged, %d rolled back or failed as intended, %d epochs", v.stats.acked, v.stats.nacked, v.epoch)
		})
	}
}
