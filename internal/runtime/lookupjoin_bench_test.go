package runtime

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/proccpu"
	"github.com/rockstream/rockstream/internal/state"
)

// lookupBenchEngine is one engine of BenchmarkLookupJoinDelta: a dim
// table of dimRows rows, a view joining fact with it, and what building
// the view cost.
type lookupBenchEngine struct {
	eng              *Engine
	backfill         time.Duration
	nextFact         int
	stateKeys, bytes int
}

var lookupBenchEngines = map[bool]*lookupBenchEngine{}

// lookupBenchDimRows is the dim table's size: ROCKSTREAM_BENCH_DIM_ROWS,
// else 1,000,000.
func lookupBenchDimRows() int {
	if n, err := strconv.Atoi(os.Getenv("ROCKSTREAM_BENCH_DIM_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

func lookupBenchSetup(b *testing.B, lookups bool) *lookupBenchEngine {
	if e, ok := lookupBenchEngines[lookups]; ok {
		return e
	}
	defer func(old bool) { disableCircuitLookups = old }(disableCircuitLookups)
	disableCircuitLookups = !lookups
	ctx := context.Background()
	eng := OpenMemory()
	s := eng.NewSession()
	exec := func(q string) {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE dim (id bigint PRIMARY KEY, name text, region int)")
	exec("CREATE TABLE fact (id bigint PRIMARY KEY, dim_id bigint, amount int)")
	rows := lookupBenchDimRows()
	const batch = 50000
	for lo := 1; lo <= rows; lo += batch {
		exec(fmt.Sprintf("INSERT INTO dim SELECT g, 'name ' || g, g %% 50 FROM generate_series(%d, %d) g", lo, min(lo+batch-1, rows)))
	}
	start := time.Now()
	exec("CREATE MATERIALIZED VIEW enriched AS SELECT f.id, f.amount, d.name, d.region FROM fact f JOIN dim d ON f.dim_id = d.id")
	e := &lookupBenchEngine{eng: eng, backfill: time.Since(start), nextFact: 1}
	prefix := relPrefix(nsOpState, eng.mu.cat.lookup("enriched").id)
	if err := eng.mu.store.Scan(prefix, state.PrefixEnd(prefix), func(k, v []byte) bool {
		e.stateKeys++
		e.bytes += len(k) + len(v)
		return true
	}); err != nil {
		b.Fatal(err)
	}
	lookupBenchEngines[lookups] = e
	return e
}

// BenchmarkLookupJoinDelta inserts 1,000 fact rows per op into a table
// joined, in a materialized view, with a dim table of
// lookupBenchDimRows rows on dim's primary key: with the join reading
// dim by key (lookup) and with dim arranged a second time in the view's
// state (arranged). It reports the view's operator state after its
// creation (state-keys, state-MB) and the creation's time (backfill-s),
// and per op the CPU time of the process (cpu-ns/op).
func BenchmarkLookupJoinDelta(b *testing.B) {
	for _, lookups := range []bool{true, false} {
		name := "lookup"
		if !lookups {
			name = "arranged"
		}
		b.Run(name, func(b *testing.B) {
			e := lookupBenchSetup(b, lookups)
			s := e.eng.NewSession()
			rows := lookupBenchDimRows()
			stmts := make([]string, b.N)
			vals := make([]string, 1000)
			for i := range stmts {
				for j := range vals {
					id := e.nextFact
					e.nextFact++
					vals[j] = fmt.Sprintf("(%d, %d, %d)", id, 1+(id*7919)%rows, id%100)
				}
				stmts[i] = "INSERT INTO fact VALUES " + strings.Join(vals, ", ")
			}
			execTimed(b, s, stmts)
			b.ReportMetric(float64(e.stateKeys), "state-keys")
			b.ReportMetric(float64(e.bytes)/1e6, "state-MB")
			b.ReportMetric(e.backfill.Seconds(), "backfill-s")
		})
	}
}

// execTimed runs stmts in s as the benchmark's timed loop, one per op,
// and reports the process's CPU time per op (cpu-ns/op).
func execTimed(b *testing.B, s *Session, stmts []string) {
	ctx := context.Background()
	b.ResetTimer()
	cpu := proccpu.Used()
	for _, q := range stmts {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((proccpu.Used()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
