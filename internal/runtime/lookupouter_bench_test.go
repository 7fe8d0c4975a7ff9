package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/state"
)

// lookupOuterBenchViews are the views of BenchmarkLookupOuterJoinDelta.
var lookupOuterBenchViews = map[string]string{
	"left": "SELECT f.id, f.amount, d.name FROM fact f LEFT JOIN dim d ON f.dim_id = d.id",
	"anti": "SELECT f.id, f.amount FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.id = f.dim_id)",
}

var lookupOuterBenchEngines = map[string]*lookupBenchEngine{}

// lookupOuterBenchMoves counts, by engine, the dim moves made so far.
var lookupOuterBenchMoves = map[string]int{}

// lookupOuterBenchFacts is the fact rows present when the view is
// created.
const lookupOuterBenchFacts = 20_000

func lookupOuterBenchSetup(b *testing.B, view string, lookups bool) *lookupBenchEngine {
	name := fmt.Sprintf("%s/%v", view, lookups)
	if e, ok := lookupOuterBenchEngines[name]; ok {
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
	// Fact rows referencing ids up to twice dim's: half of them have no
	// dim row.
	exec(fmt.Sprintf("INSERT INTO fact SELECT g, 1 + (g * 7919) %% %d, g %% 100 FROM generate_series(1, %d) g", 2*rows, lookupOuterBenchFacts))
	start := time.Now()
	exec("CREATE MATERIALIZED VIEW v AS " + lookupOuterBenchViews[view])
	e := &lookupBenchEngine{eng: eng, backfill: time.Since(start), nextFact: lookupOuterBenchFacts + 1}
	prefix := relPrefix(nsOpState, eng.mu.cat.lookup("v").id)
	if err := eng.mu.store.Scan(prefix, state.PrefixEnd(prefix), func(k, v []byte) bool {
		e.stateKeys++
		e.bytes += len(k) + len(v)
		return true
	}); err != nil {
		b.Fatal(err)
	}
	lookupOuterBenchEngines[name] = e
	return e
}

// BenchmarkLookupOuterJoinDelta maintains a LEFT JOIN and a NOT EXISTS
// view of fact against a dim table of lookupBenchDimRows rows, on dim's
// primary key, with the join reading dim by key (lookup) and with dim
// arranged (arranged). Per op it either inserts 1,000 fact rows (fact)
// or moves 1,000 dim rows to keys that had none (dim), which flips the
// fact rows of those keys between matched and not; dim's size must be a
// multiple of 1,000. It reports the view's operator state after its creation
// (state-keys, state-MB), the creation's time (backfill-s), and per op
// the CPU time of the process (cpu-ns/op).
func BenchmarkLookupOuterJoinDelta(b *testing.B) {
	for _, view := range []string{"left", "anti"} {
		for _, change := range []string{"fact", "dim"} {
			for _, lookups := range []bool{true, false} {
				mode := "lookup"
				if !lookups {
					mode = "arranged"
				}
				b.Run(view+"/"+change+"/"+mode, func(b *testing.B) {
					e := lookupOuterBenchSetup(b, view, lookups)
					s := e.eng.NewSession()
					rows := lookupBenchDimRows()
					stmts := make([]string, 0, b.N)
					vals := make([]string, 1000)
					for range b.N {
						if change == "fact" {
							for j := range vals {
								id := e.nextFact
								e.nextFact++
								vals[j] = fmt.Sprintf("(%d, %d, %d)", id, 1+(id*7919)%(2*rows), id%100)
							}
							stmts = append(stmts, "INSERT INTO fact VALUES "+strings.Join(vals, ", "))
							continue
						}
						// 1,000 keys move from the lower half of the
						// ids fact references to the upper one, and
						// back once every key has moved.
						k := lookupOuterBenchMoves[view+"/"+mode]
						lookupOuterBenchMoves[view+"/"+mode]++
						lo, from, by := 1+(k*1000)%rows, 0, rows
						if (k*1000/rows)%2 == 1 {
							from, by = rows, -rows
						}
						stmts = append(stmts, fmt.Sprintf("UPDATE dim SET id = id + %d, name = name || 'x' WHERE id BETWEEN %d AND %d",
							by, lo+from, lo+from+999))
					}
					execTimed(b, s, stmts)
					b.ReportMetric(float64(e.stateKeys), "state-keys")
					b.ReportMetric(float64(e.bytes)/1e6, "state-MB")
					b.ReportMetric(e.backfill.Seconds(), "backfill-s")
				})
			}
		}
	}
}
