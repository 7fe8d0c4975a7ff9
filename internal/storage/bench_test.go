package storage

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/rockstream/rockstream/internal/proccpu"
)

// benchKey writes the key of row i of relation rel: a namespace byte, the
// relation, the row number, like the engine's row keys.
func benchKey(dst []byte, rel, i uint64) []byte {
	dst = append(dst[:0], 0x01)
	dst = binary.AppendUvarint(dst, rel)
	return binary.BigEndian.AppendUint64(dst, i)
}

func openBench(b *testing.B, dur Durability) *DB {
	b.Helper()
	db, err := Open(Options{Dir: filepath.Join(b.TempDir(), "db"), Durability: dur, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// BenchmarkCommit commits epochs of 1,000 small writes (11-byte keys,
// 32-byte values) to a database on disk. One op is one epoch.
func BenchmarkCommit(b *testing.B) {
	for _, dur := range []Durability{Sync, Relaxed} {
		b.Run(dur.String(), func(b *testing.B) {
			db := openBench(b, dur)
			var key []byte
			val := make([]byte, 32)
			var n uint64
			for b.Loop() {
				for range 1000 {
					key = benchKey(key, 7, n%1_000_000)
					binary.BigEndian.PutUint64(val, n)
					n++
					if err := db.Set(key, val); err != nil {
						b.Fatal(err)
					}
				}
				if err := db.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "writes/s")
		})
	}
}

// BenchmarkCommitOne commits epochs of one write each with Relaxed
// durability: the cost of a commit itself, beyond its writes (the
// snapshot at the acknowledged commit that a stopped DB reads among it).
func BenchmarkCommitOne(b *testing.B) {
	db := openBench(b, Relaxed)
	var key []byte
	val := make([]byte, 32)
	var n uint64
	for b.Loop() {
		key = benchKey(key, 7, n%1_000_000)
		n++
		if err := db.Set(key, val); err != nil {
			b.Fatal(err)
		}
		if err := db.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// fillBench commits n rows of relation 7, flushes them to tables and
// compacts them, so that no background compaction competes with the
// measurement.
func fillBench(b *testing.B, db *DB, n uint64) {
	b.Helper()
	var key []byte
	val := make([]byte, 32)
	for i := range n {
		key = benchKey(key, 7, i)
		binary.BigEndian.PutUint64(val, i)
		if err := db.Set(key, val); err != nil {
			b.Fatal(err)
		}
		if i%10_000 == 9_999 {
			if err := db.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := db.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := db.db.Compact(b.Context(), []byte{0x00}, []byte{0xff}, false); err != nil {
		b.Fatal(err)
	}
}

const benchRows = 200_000

// BenchmarkGet reads random present keys from 200,000 rows in tables (the
// block cache warm after the first reads).
func BenchmarkGet(b *testing.B) {
	db := openBench(b, Relaxed)
	fillBench(b, db, benchRows)
	rng := rand.New(rand.NewPCG(1, 2))
	var key []byte
	for b.Loop() {
		key = benchKey(key, 7, rng.Uint64N(benchRows))
		if _, ok, err := db.Get(key); err != nil || !ok {
			b.Fatalf("Get: %v %v", ok, err)
		}
	}
}

// BenchmarkGetAbsent probes keys that are not there, the common case of
// an arrangement lookup; bloom filters answer most of them.
func BenchmarkGetAbsent(b *testing.B) {
	db := openBench(b, Relaxed)
	fillBench(b, db, benchRows)
	rng := rand.New(rand.NewPCG(1, 2))
	var key []byte
	for b.Loop() {
		key = benchKey(key, 8, rng.Uint64N(benchRows))
		if _, ok, err := db.Get(key); err != nil || ok {
			b.Fatalf("Get: %v %v", ok, err)
		}
	}
}

// BenchmarkScanPrefix scans 100 consecutive rows at a random place: a
// prefix scan of one group of an arrangement.
func BenchmarkScanPrefix(b *testing.B) {
	db := openBench(b, Relaxed)
	fillBench(b, db, benchRows)
	rng := rand.New(rand.NewPCG(1, 2))
	var lo, hi []byte
	for b.Loop() {
		start := rng.Uint64N(benchRows - 100)
		lo = benchKey(lo, 7, start)
		hi = benchKey(hi, 7, start+100)
		n := 0
		if err := db.Scan(lo, hi, func(k, v []byte) bool { n++; return true }); err != nil || n != 100 {
			b.Fatalf("Scan: %d rows, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.N)*100/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkScanRewritten scans a relation of 100 rows each rewritten
// 2,000 times in separate commits, all still in the memtable: the shape
// of a small aggregate view under a stream of single-row writes, which
// every reader of the view scans. One op is one scan of the 100 rows.
func BenchmarkScanRewritten(b *testing.B) {
	db := openBench(b, Relaxed)
	var key []byte
	val := make([]byte, 32)
	for v := range uint64(2000) {
		for i := range uint64(100) {
			key = benchKey(key, 7, i)
			binary.BigEndian.PutUint64(val, v)
			if err := db.Set(key, val); err != nil {
				b.Fatal(err)
			}
		}
		if err := db.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	benchScanRelation(b, db, 100)
}

// BenchmarkScanReplaced scans a relation of one row replaced by another
// (a delete and a new key) in each of 5,000 commits: the shape of a
// view keyed by its whole row, such as SELECT count(*), under a stream of
// writes. One op is one scan.
func BenchmarkScanReplaced(b *testing.B) {
	db := openBench(b, Relaxed)
	var key []byte
	val := make([]byte, 32)
	for v := range uint64(5000) {
		if v > 0 {
			if err := db.Delete(benchKey(key, 7, v-1)); err != nil {
				b.Fatal(err)
			}
		}
		if err := db.Set(benchKey(key, 7, v), val); err != nil {
			b.Fatal(err)
		}
		if err := db.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	benchScanRelation(b, db, 1)
}

// benchScanRelation scans relation 7 once per op, expecting want rows.
func benchScanRelation(b *testing.B, db *DB, want int) {
	lo, hi := benchKey(nil, 7, 0), benchKey(nil, 8, 0)
	for b.Loop() {
		n := 0
		if err := db.Scan(lo, hi, func(k, v []byte) bool { n++; return true }); err != nil {
			b.Fatal(err)
		}
		if n != want {
			b.Fatalf("scanned %d rows, want %d", n, want)
		}
	}
}

// BenchmarkScanPoint scans one row at a random place, [key, key+1): the
// read of a point SELECT by key. Reads kept iterators between Scans
// while nothing commits (iterpool.go); one op is one Scan, cpu-ns/op
// the process's CPU time per Scan (steadier than the time on a shared
// machine).
func BenchmarkScanPoint(b *testing.B) {
	db := openBench(b, Relaxed)
	fillBench(b, db, benchRows)
	rng := rand.New(rand.NewPCG(1, 2))
	var lo, hi []byte
	cpu := proccpu.Used()
	defer func() { b.ReportMetric(float64(proccpu.Used()-cpu)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		i := rng.Uint64N(benchRows)
		lo = benchKey(lo, 7, i)
		hi = append(append(hi[:0], lo...), 0)
		n := 0
		if err := db.Scan(lo, hi, func(k, v []byte) bool { n++; return true }); err != nil || n != 1 {
			b.Fatalf("Scan: %d rows, %v", n, err)
		}
	}
}
