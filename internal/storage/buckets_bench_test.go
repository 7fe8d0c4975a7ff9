package storage

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/proccpu"
)

// The bucket-move benchmarks share one store on disk of
// ROCKSTREAM_BENCH_BUCKET_MB megabytes of values (default 64), in rows of
// 8 relations spread over all 256 buckets: 24-byte keys, 200-byte values
// (half random, half repeated, so that they compress about 2:1 as rows
// do). They compare moving half the buckets (export, import) with the
// whole-store checkpoint (upload, restore), all to and from file://
// locations on the same disk. MB/s is of the bytes transferred.
const benchValueBytes = 200

// benchBucketStore builds the store, in a directory removed when b ends.
func benchBucketStore(b *testing.B) *DB {
	b.Helper()
	mb := 64
	if s := os.Getenv("ROCKSTREAM_BENCH_BUCKET_MB"); s != "" {
		var err error
		if mb, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	db := openBench(b, Relaxed)
	if err := fillBucketBench(db, mb<<20); err != nil {
		b.Fatal(err)
	}
	return db
}

// writeBenchCatalog writes the catalog and layout of the benchmark store.
func writeBenchCatalog(db *DB) error {
	for id := uint64(1); id <= 8; id++ {
		if err := db.Set(binary.BigEndian.AppendUint64([]byte{0x00}, id), []byte("relation")); err != nil {
			return err
		}
	}
	if err := db.Set(metaLayoutKey, binary.BigEndian.AppendUint64(nil, 2)); err != nil {
		return err
	}
	return db.Commit()
}

func fillBucketBench(db *DB, bytes int) error {
	if err := writeBenchCatalog(db); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(7, 7))
	val := make([]byte, benchValueBytes)
	var key []byte
	for i := 0; i*benchValueBytes < bytes; i++ {
		id := uint64(1 + i%8)
		bucket := byte(rng.Uint32())
		key = binary.AppendUvarint(append(key[:0], 0x01), id)
		key = append(key, bucket)
		key = binary.BigEndian.AppendUint64(key, rng.Uint64())
		key = binary.BigEndian.AppendUint64(key, uint64(i))
		for j := 0; j < benchValueBytes/2; j += 8 {
			binary.LittleEndian.PutUint64(val[j:], rng.Uint64())
		}
		if err := db.Set(key, val); err != nil {
			return err
		}
		if i%20_000 == 19_999 {
			if err := db.Commit(); err != nil {
				return err
			}
		}
	}
	if err := db.Commit(); err != nil {
		return err
	}
	if err := db.Flush(); err != nil {
		return err
	}
	return db.db.Compact(context.Background(), []byte{0x00}, []byte{0xff}, false)
}

// halfBuckets is the even buckets.
func halfBuckets() BucketSet {
	var s BucketSet
	for b := 0; b < NumBuckets; b += 2 {
		s.Add(uint8(b))
	}
	return s
}

// reportTransfer reports MB/s of bytes per op and the CPU time per op.
func reportTransfer(b *testing.B, bytes int64, cpuStart time.Duration) {
	b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(bytes)/1e6, "MB/op")
	b.ReportMetric((proccpu.Used()-cpuStart).Seconds()/float64(b.N), "cpu-s/op")
}

func BenchmarkBucketMove(b *testing.B) {
	ctx := context.Background()
	db := benchBucketStore(b)
	half := halfBuckets()

	b.Run("export-half", func(b *testing.B) {
		var bytes int64
		cpu := proccpu.Used()
		for b.Loop() {
			m, err := ExportBuckets(ctx, db, "file://"+b.TempDir(), half, nil)
			if err != nil {
				b.Fatal(err)
			}
			bytes = m.Bytes
		}
		reportTransfer(b, bytes, cpu)
	})
	b.Run("import-half", func(b *testing.B) {
		url := "file://" + b.TempDir()
		m, err := ExportBuckets(ctx, db, url, half, nil)
		if err != nil {
			b.Fatal(err)
		}
		var cpu time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			recv, err := Open(Options{Dir: filepath.Join(b.TempDir(), "db"), Logger: quietLogger()})
			if err == nil {
				err = writeBenchCatalog(recv)
			}
			if err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				cpu = proccpu.Used()
			}
			b.StartTimer()
			if _, err := ImportBuckets(ctx, recv, url, m.ID, m.SHA256, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := recv.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		reportTransfer(b, m.Bytes, cpu)
	})
	b.Run("checkpoint-whole", func(b *testing.B) {
		var bytes int64
		cpu := proccpu.Used()
		for b.Loop() {
			m, err := CreateCheckpoint(ctx, db, "file://"+b.TempDir(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			bytes = m.Uploaded.Bytes
		}
		reportTransfer(b, bytes, cpu)
	})
	b.Run("restore-whole", func(b *testing.B) {
		url := "file://" + b.TempDir()
		m, err := CreateCheckpoint(ctx, db, url, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		cpu := proccpu.Used()
		for b.Loop() {
			if err := RestoreCheckpoint(ctx, url, filepath.Join(b.TempDir(), "db"), nil); err != nil {
				b.Fatal(err)
			}
		}
		reportTransfer(b, m.Uploaded.Bytes, cpu)
	})
}
