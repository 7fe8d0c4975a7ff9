package runtime

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start, in ms.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkFullScanWorkers reads the whole 1,000,000-row grouped view of
// BenchmarkPointSelectByKey by a filter on a column that is not its key,
// on 1 and 2 workers, with the process's CPU time per read.
func BenchmarkFullScanWorkers(b *testing.B) {
	ctx := context.Background()
	eng := pointReadEngine(b, 1000000)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			saved := eng.opts.Workers
			eng.opts.Workers = w
			defer func() { eng.opts.Workers = saved }()
			s := eng.NewSession()
			b.ResetTimer()
			cpu := processCPU(b)
			defer reportCPU(b, cpu)
			for range b.N {
				res, err := s.Exec(ctx, "SELECT id FROM v WHERE s = 7", nil)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Rows) != 0 {
					b.Fatalf("%d rows", len(res.Rows))
				}
			}
		})
	}
}

// BenchmarkUpdateWorkers updates every row of a 1,000,000-row table with
// no views, UPDATE ... SET x = x + 1 WHERE x >= 0, on 1 and 2 workers,
// with the process's CPU time per statement.
func BenchmarkUpdateWorkers(b *testing.B) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	if _, err := s.Exec(ctx, "CREATE TABLE t (id bigint PRIMARY KEY, x int)", nil); err != nil {
		b.Fatal(err)
	}
	const rows, batch = 1000000, 50000
	for lo := 1; lo <= rows; lo += batch {
		q := fmt.Sprintf("INSERT INTO t SELECT g, g %% 7 FROM generate_series(%d, %d) g", lo, lo+batch-1)
		if _, err := s.Exec(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			saved := eng.opts.Workers
			eng.opts.Workers = w
			defer func() { eng.opts.Workers = saved }()
			b.ResetTimer()
			cpu := processCPU(b)
			defer reportCPU(b, cpu)
			for range b.N {
				res, err := s.Exec(ctx, "UPDATE t SET x = x + 1 WHERE x >= 0", nil)
				if err != nil {
					b.Fatal(err)
				}
				if res.Tag != "UPDATE 1000000" {
					b.Fatal(res.Tag)
				}
			}
		})
	}
}
