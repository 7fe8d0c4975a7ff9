package runtime

import (
	"reflect"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/zset"
)

// TestWorkersAndShardsRelations reads rockstream_catalog.workers and
// .shards of engines with one and three workers: the buckets are split
// into contiguous ranges as the exchanges route rows (zset.BucketOwner),
// and every worker applies each committed epoch.
func TestWorkersAndShardsRelations(t *testing.T) {
	for _, tc := range []struct {
		workers      int
		wantW, wantS string
	}{
		{workers: 1,
			wantW: "0|all|0-255|256|serving|2\n",
			wantS: "0|255|0|2|0|0\n"},
		{workers: 3,
			wantW: "0|all|0-85|86|serving|2\n1|all|86-170|85|serving|2\n2|all|171-255|85|serving|2\n",
			wantS: "0|85|0|2|0|0\n86|170|1|2|0|0\n171|255|2|2|0|0\n"},
	} {
		eng, err := Open(NewMemoryStore(), Options{Workers: tc.workers})
		if err != nil {
			t.Fatal(err)
		}
		run := sqlRunner(t)
		s := eng.NewSession()
		run(s, "CREATE TABLE t (k int)")
		run(s, "INSERT INTO t VALUES (1)")
		if got := run(s, "SELECT * FROM rockstream_catalog.workers ORDER BY worker_id"); got != tc.wantW {
			t.Errorf("%d workers: workers =\n%s want\n%s", tc.workers, got, tc.wantW)
		}
		if got := run(s, "SELECT * FROM rockstream_catalog.shards ORDER BY first_bucket"); got != tc.wantS {
			t.Errorf("%d workers: shards =\n%s want\n%s", tc.workers, got, tc.wantS)
		}
		// Each bucket's owner is the worker the exchanges send its rows to.
		for _, w := range eng.Workers() {
			for _, r := range w.Buckets {
				for b := r.First; b <= r.Last; b++ {
					if o := owner(uint8(b), tc.workers); o != w.ID {
						t.Errorf("%d workers: bucket %d listed under worker %d, routed to %d", tc.workers, b, w.ID, o)
					}
				}
			}
		}
		s.Close()
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBucketRanges: every bucket is in exactly one range, ranges are
// contiguous per owner, and workers beyond the number of buckets own
// none.
func TestBucketRanges(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 255, 256, 300} {
		ranges := bucketRanges(n, zset.BucketOwner)
		if len(ranges) != n {
			t.Fatalf("%d workers: %d range lists", n, len(ranges))
		}
		next, owned := 0, 0
		for w, rs := range ranges {
			for _, r := range rs {
				if r.First != next {
					t.Fatalf("%d workers: worker %d's range %v does not follow bucket %d", n, w, r, next-1)
				}
				next = r.Last + 1
				owned++
			}
		}
		if next != zset.Buckets {
			t.Fatalf("%d workers: the ranges end at bucket %d", n, next-1)
		}
		if n <= zset.Buckets && owned != n {
			t.Errorf("%d workers: %d ranges, want one per worker", n, owned)
		}
	}
}

// TestShardsOfLaggingWorkers: a shard's lag is counted against the most
// advanced worker, in epochs and in time between their commits.
func TestShardsOfLaggingWorkers(t *testing.T) {
	t0 := time.Unix(1_000, 0)
	workers := []WorkerInfo{
		{ID: 0, Buckets: []BucketRange{{0, 9}, {20, 29}}, AppliedEpoch: 7, AppliedAt: t0},
		{ID: 1, Buckets: []BucketRange{{10, 19}}, AppliedEpoch: 9, AppliedAt: t0.Add(250 * time.Millisecond)},
		{ID: 2, Buckets: []BucketRange{{30, 255}}, AppliedEpoch: 9, AppliedAt: t0.Add(250 * time.Millisecond)},
	}
	want := []ShardInfo{
		{FirstBucket: 0, LastBucket: 9, Owner: 0, Frontier: 7, LagEpochs: 2, Lag: 250 * time.Millisecond},
		{FirstBucket: 10, LastBucket: 19, Owner: 1, Frontier: 9},
		{FirstBucket: 20, LastBucket: 29, Owner: 0, Frontier: 7, LagEpochs: 2, Lag: 250 * time.Millisecond},
		{FirstBucket: 30, LastBucket: 255, Owner: 2, Frontier: 9},
	}
	if got := shardsOf(workers); !reflect.DeepEqual(got, want) {
		t.Fatalf("shards =\n%+v\nwant\n%+v", got, want)
	}
	if got := workers[0].BucketText(); got != "0-9,20-29" {
		t.Errorf("bucket text %q", got)
	}
	if got := workers[0].BucketCount(); got != 20 {
		t.Errorf("bucket count %d", got)
	}
}
