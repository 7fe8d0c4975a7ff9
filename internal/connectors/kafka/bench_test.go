package kafka

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkSourceToView measures Kafka → table → aggregate view: the
// records per second a source applies (each b.N is 10,000 CSV records
// produced beforehand into 4 partitions) and, after that, the latency from
// a record's acknowledged produce to its visibility in the view (p50 and
// p99 over 200 records produced one at a time).
func BenchmarkSourceToView(b *testing.B) {
	h := newHarness(b, 4, "bench")
	h.exec("CREATE TABLE ev (id bigint, grp int, val int)")
	h.exec("CREATE MATERIALIZED VIEW agg AS SELECT grp, count(*) AS n, sum(val) AS total FROM ev GROUP BY grp")
	const perIter = 10000
	total := 0
	for i := 0; i < b.N; i++ {
		var recs []*kgo.Record
		for j := 0; j < perIter; j++ {
			id := total + j
			recs = append(recs, &kgo.Record{Topic: "bench", Partition: int32(id % 4), Value: fmt.Appendf(nil, "%d,%d,%d", id, id%100, id%1000)})
		}
		if err := h.prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
		total += perIter
	}
	count := func() int {
		r := h.exec("SELECT coalesce(sum(n), 0)::int8 FROM agg")
		n := int(r.Rows[0][0].Int())
		return n
	}
	b.ResetTimer()
	start := time.Now()
	h.exec("CREATE SOURCE bench_in FROM KAFKA (brokers = 'BROKERS', topic = 'bench', format = 'csv') INTO ev")
	for count() < total {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(total)/elapsed.Seconds(), "records/s")

	var lat []time.Duration
	for i := 0; i < 200; i++ {
		id := total + i
		rec := &kgo.Record{Topic: "bench", Partition: int32(id % 4), Value: fmt.Appendf(nil, "%d,%d,%d", id, id%100, id%1000)}
		if err := h.prod.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			b.Fatal(err)
		}
		sent := time.Now()
		for count() < id+1 {
			time.Sleep(100 * time.Microsecond)
		}
		lat = append(lat, time.Since(sent))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
