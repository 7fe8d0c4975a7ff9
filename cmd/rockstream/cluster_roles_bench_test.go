package main

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/proccpu"
)

// BenchmarkClusterProcessesWrites submits the keyed-sum workload's writes
// to a control and 1, 2 or 3 worker processes on loopback: 4 clients, each
// a request of 50 writes at a time, waiting for its acknowledgement. It
// reports acknowledged writes per second of wall time, the CPU time of all
// the cluster's processes per write, and the latency of a request from
// its submission to its acknowledgement (two-phase epoch included).
func BenchmarkClusterProcessesWrites(b *testing.B) {
	for _, workers := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			c := startProcCluster(b)
			var ids []string
			for i := 1; i <= workers; i++ {
				id := fmt.Sprintf("w%d", i)
				c.startWorker(id)
				ids = append(ids, id)
			}
			c.waitSettled(ids, 30*time.Second, false)
			l := &load{http: c.http, acked: map[uint64]bool{}}
			const clients, batch = 4, 50
			cpu := func() time.Duration {
				var sum time.Duration
				for _, s := range append([]*server{c.control}, c.workerList()...) {
					d, err := proccpu.UsedBy(s.cmd.Process.Pid)
					if err != nil {
						b.Fatal(err)
					}
					sum += d
				}
				return sum
			}
			requests := max(1, b.N/batch)
			var mu sync.Mutex
			var latencies []time.Duration
			b.ResetTimer()
			cpu0, start := cpu(), time.Now()
			var wg sync.WaitGroup
			next := make(chan struct{}, requests)
			for range requests {
				next <- struct{}{}
			}
			close(next)
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range next {
						began := time.Now()
						acked, err := l.submit(batch, 30*time.Second)
						if err != nil || len(acked) != batch {
							b.Errorf("request: %d of %d acknowledged, %v", len(acked), batch, err)
							return
						}
						mu.Lock()
						latencies = append(latencies, time.Since(began))
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			elapsed, used := time.Since(start), cpu()-cpu0
			b.StopTimer()
			writes := float64(requests * batch)
			sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
			b.ReportMetric(writes/elapsed.Seconds(), "writes/s")
			b.ReportMetric(float64(used.Microseconds())/writes, "cpu-µs/write")
			if n := len(latencies); n > 0 {
				b.ReportMetric(float64(latencies[n/2].Milliseconds()), "p50-ms")
				b.ReportMetric(float64(latencies[n*99/100].Milliseconds()), "p99-ms")
			}
			st := c.waitSettled(ids, 30*time.Second, true)
			c.checkExactlyOnce(st, l)
		})
	}
}
