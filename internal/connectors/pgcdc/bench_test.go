package pgcdc

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/instance"
)

// BenchmarkBulkUpdate measures CDC throughput: one upstream UPDATE of
// every row of a table of PGCDC_BENCH_ROWS rows (default 100,000) per
// iteration, timed from the UPDATE's start until RockStream has committed
// it (a marker row committed upstream right after it has arrived). The
// engine is durable (Pebble, synced commits). rows/cpu-s divides by the
// CPU time of this process alone (decoding, ingestion, storage), which a
// shared machine measures more steadily than wall time. Run it with
//
//	go test ./internal/connectors/pgcdc -run '^$' -bench BulkUpdate -benchtime 3x
func BenchmarkBulkUpdate(b *testing.B) {
	n := 100000
	if s := os.Getenv("PGCDC_BENCH_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	u := newUpstream(b, "bench_slot")
	const ddl = `CREATE TABLE bulk (id int PRIMARY KEY, v int8, amount numeric(12,2), note text)`
	u.exec(ddl)
	u.exec(`CREATE TABLE marker (id int PRIMARY KEY)`)
	u.exec(fmt.Sprintf(`INSERT INTO bulk SELECT g, 0, g * 1.25, 'row ' || g FROM generate_series(1, %d) g`, n))
	eng, err := instance.Open(instance.Options{Storage: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	r := newRS(b, eng)
	defer r.close()
	r.exec(ddl)
	r.exec(`CREATE TABLE marker (id int PRIMARY KEY)`)
	snapStart := time.Now()
	createSource(u, r, "bench", "bulk, marker")
	waitMarker := func(id int) {
		for {
			if res := r.exec(fmt.Sprintf("SELECT id FROM marker WHERE id = %d", id)); len(res.Rows) == 1 {
				return
			}
			if state, last := r.status("bench"); state == "failed" {
				b.Fatalf("source failed: %s", last)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	u.exec(`INSERT INTO marker VALUES (0)`)
	waitMarker(0)
	b.Logf("snapshot of %d rows and first marker: %v", n, time.Since(snapStart))
	b.ResetTimer()
	cpu0 := cpuTime()
	var upstream time.Duration
	for i := 1; i <= b.N; i++ {
		start := time.Now()
		u.exec(`UPDATE bulk SET v = v + 1, amount = amount + 0.01`)
		upstream += time.Since(start)
		u.exec(fmt.Sprintf(`INSERT INTO marker VALUES (%d)`, i))
		waitMarker(i)
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	elapsed := b.Elapsed()
	b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(upstream.Seconds()/float64(b.N), "upstream-s/op")
	if got := r.exec(fmt.Sprintf("SELECT count(*) FROM bulk WHERE v = %d", b.N)).Rows[0][0].Int(); got != int64(n) {
		b.Fatalf("%d rows have v = %d, want %d", got, b.N, n)
	}
}

// cpuTime is the user and system CPU time this process has used (the
// upstream server's is not included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
