package exchange

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// benchBatch is rows of one of two shapes: "scalar" (bigint, integer,
// double, a 16-byte text, timestamptz: every column an exact Arrow type)
// and "mixed" (bigint, numeric, interval, text: two row-encoded columns).
func benchBatch(shape string, rows int) zset.Batch {
	b := make(zset.Batch, rows)
	text := strings.Repeat("abcdefghijklmnop", 4)
	for i := range b {
		var row zset.Row
		switch shape {
		case "scalar":
			row = zset.Row{
				types.MakeInt(types.Int8, int64(i)*7919), types.MakeInt(types.Int4, int64(i%1000)),
				types.MakeFloat8(float64(i) / 3), types.MakeText(text[i%16 : i%16+16]),
				types.MakeTimestampTZ(1_700_000_000_000_000 + int64(i)*1_000_003),
			}
		default:
			row = zset.Row{
				types.MakeInt(types.Int8, int64(i)*7919), types.MakeNumeric(apd.New(int64(i)*101, -2)),
				types.MakeInterval(types.IntervalValue{Months: int32(i % 12), Days: int32(i % 30), Micros: int64(i) * 1000}),
				types.MakeText(text[i%16 : i%16+16]),
			}
		}
		b[i] = zset.Entry{Row: row, Weight: int64(i%3) - 1}
	}
	return b
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCodec compares, per row, the Arrow encoding of a batch
// (EncodeBatch, DecodeBatch) with the row encoding the state store uses
// (zset.EncodeRow and DecodeRow of each row, and a varint weight's worth
// of bytes), on the same rows.
func BenchmarkCodec(b *testing.B) {
	const rows = 10_000
	for _, shape := range []string{"scalar", "mixed"} {
		batch := benchBatch(shape, rows)
		arrowBytes, err := EncodeBatch(nil, batch)
		if err != nil {
			b.Fatal(err)
		}
		var rowBuf []byte
		var offs []int
		for _, e := range batch {
			rowBuf = zset.EncodeRow(rowBuf, e.Row)
			offs = append(offs, len(rowBuf))
		}
		report := func(b *testing.B, size int) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
			b.ReportMetric(float64(size)/rows, "B/row")
			b.ReportMetric(0, "ns/op")
		}
		b.Run(shape+"/arrow/encode", func(b *testing.B) {
			var dst []byte
			for b.Loop() {
				if dst, err = EncodeBatch(dst[:0], batch); err != nil {
					b.Fatal(err)
				}
			}
			report(b, len(arrowBytes))
		})
		b.Run(shape+"/arrow/decode", func(b *testing.B) {
			for b.Loop() {
				if _, err := DecodeBatch(arrowBytes); err != nil {
					b.Fatal(err)
				}
			}
			report(b, len(arrowBytes))
		})
		b.Run(shape+"/row/encode", func(b *testing.B) {
			var dst []byte
			for b.Loop() {
				dst = dst[:0]
				for _, e := range batch {
					dst = zset.EncodeRow(dst, e.Row)
				}
			}
			report(b, len(rowBuf)+rows) // a weight as a one-byte varint
		})
		b.Run(shape+"/row/decode", func(b *testing.B) {
			for b.Loop() {
				out := make(zset.Batch, 0, rows)
				start := 0
				for _, end := range offs {
					row, err := zset.DecodeRow(rowBuf[start:end])
					if err != nil {
						b.Fatal(err)
					}
					out = append(out, zset.Entry{Row: row, Weight: 1})
					start = end
				}
			}
			report(b, len(rowBuf)+rows)
		})
	}
}

// BenchmarkMesh is an all-to-all exchange among 2 and 3 meshes over
// loopback: in each op every member sends each other member a batch of
// 10,000 rows for one key and receives theirs. rows/s counts the rows
// that crossed the network, MB/s their payload bytes; cpu-ns/row is the
// whole process's CPU time (every member's sending and receiving) per
// row crossed.
func BenchmarkMesh(b *testing.B) {
	const rows = 10_000
	for _, shape := range []string{"scalar", "mixed"} {
		batch := benchBatch(shape, rows)
		payload, err := EncodeBatch(nil, batch)
		if err != nil {
			b.Fatal(err)
		}
		for _, members := range []int{2, 3} {
			b.Run(fmt.Sprintf("%s/members=%d", shape, members), func(b *testing.B) {
				nodes := startNodes(b, members, Options{})
				meshes := joinAll(b, nodes, 1)
				ctx := context.Background()
				crossed := members * (members - 1)
				b.SetBytes(int64(crossed * len(payload)))
				cpu0 := cpuTime()
				b.ResetTimer()
				var wg sync.WaitGroup
				errList := make([]error, members)
				for i, m := range meshes {
					wg.Go(func() {
						out := make([]zset.Batch, members)
						for p := range out {
							out[p] = batch
						}
						for n := range b.N {
							if _, err := m.Exchange(ctx, Key{Epoch: uint64(n)}, out); err != nil {
								errList[i] = err
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				cpu := cpuTime() - cpu0
				for _, err := range errList {
					if err != nil {
						b.Fatal(err)
					}
				}
				total := float64(b.N * crossed * rows)
				b.ReportMetric(total/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(cpu.Nanoseconds())/total, "cpu-ns/row")
			})
		}
	}
}
