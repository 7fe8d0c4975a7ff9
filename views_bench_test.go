//go:build unix

package rockstream_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/viewbench"
)

// The benchmarks of this file maintain one materialized view each under a
// stream of changes prepared before the timer starts; see package
// viewbench for the metrics. Run them with
//
//	go test -run XXX -bench 'BenchmarkView|BenchmarkInsertGroupedView' -benchtime 200x .

// BenchmarkInsertGroupedView measures end-to-end ingestion: each
// transaction inserts 100 rows, with one INSERT statement, into a table
// read by a grouped aggregate view (100 groups) and a view joining it with
// a 100-row dimension table, on 1, 2 and 4 workers (with the default
// threshold for splitting a step: a transaction's step is not split, but
// the two views step concurrently on more than one worker).
func BenchmarkInsertGroupedView(b *testing.B) {
	for _, w := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) { benchmarkInsertGroupedView(b, w) })
	}
}

func benchmarkInsertGroupedView(b *testing.B, workers int) {
	const perTxn = 100
	setup := []string{
		"CREATE TABLE orders (id bigint, store int, amount bigint)",
		"CREATE TABLE stores (store int, region text)",
		"CREATE MATERIALIZED VIEW by_store AS SELECT store, count(*), sum(amount), max(amount) FROM orders GROUP BY store",
		"CREATE MATERIALIZED VIEW by_region AS SELECT region, sum(amount) FROM orders JOIN stores USING (store) GROUP BY region",
		"INSERT INTO stores VALUES " + valuesList(100, func(s int) string { return fmt.Sprintf("(%d, 'r%d')", s, s%7) }),
	}
	next := 0
	viewbench.Run(b, viewbench.Workload{
		Setup: setup,
		Next: func() viewbench.Txn {
			ins := "INSERT INTO orders VALUES " + valuesList(perTxn, func(int) string {
				id := next
				next++
				return fmt.Sprintf("(%d,%d,%d)", id, id%100, id%1000)
			})
			return viewbench.Txn{Statements: []string{ins}, Units: perTxn}
		},
		Workers:        workers,
		DefaultMinRows: true,
	})
}

// valuesList writes n rows of VALUES: row(i) gives the text of row i.
func valuesList(n int, row func(i int) string) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(row(i))
	}
	return sb.String()
}

// idList writes ids as a comma-separated list.
func idList(ids []int) string {
	return valuesList(len(ids), func(i int) string { return fmt.Sprint(ids[i]) })
}

// BenchmarkViewTopK maintains the top 10 rows by value of each of 1,000
// groups (ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC) <= 10). Each
// transaction inserts 50 rows, each the new first of its group, and
// deletes 50 rows, each the current first of another group, which pulls
// that group's 11th row into its top 10. Groups hold about 30 rows.
func BenchmarkViewTopK(b *testing.B) {
	const groups, perGroup, half = 1000, 30, 50
	// live[g] holds group g's row ids in ascending order of value; v is
	// the id, so later rows rank first.
	live := make([][]int, groups)
	nextID := 0
	insert := func(n int, group func(j int) int) string {
		return "INSERT INTO topk_t VALUES " + valuesList(n, func(j int) string {
			g, id := group(j), nextID
			nextID++
			live[g] = append(live[g], id)
			return fmt.Sprintf("(%d,%d,%d)", id, g, id)
		})
	}
	setup := []string{
		"CREATE TABLE topk_t (id bigint PRIMARY KEY, g int, v bigint)",
		`CREATE MATERIALIZED VIEW topk AS SELECT g, id, v FROM (
		   SELECT g, id, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC) AS rn FROM topk_t) s
		 WHERE rn <= 10`,
	}
	for range perGroup {
		setup = append(setup, insert(groups, func(g int) int { return g }))
	}
	txn := 0
	viewbench.Run(b, viewbench.Workload{
		Setup:  setup,
		Warmup: 10,
		Next: func() viewbench.Txn {
			base := txn * half
			txn++
			ins := insert(half, func(j int) int { return (base + j) % groups })
			var del []int
			for j := range half {
				g := (base + j + groups/2) % groups
				if n := len(live[g]); n > 11 {
					del = append(del, live[g][n-1])
					live[g] = live[g][:n-1]
				}
			}
			return viewbench.Txn{
				Statements: []string{ins, "DELETE FROM topk_t WHERE id IN (" + idList(del) + ")"},
				Units:      half + len(del),
			}
		},
	})
}

// BenchmarkViewLeftJoinKeyUpdates maintains a LEFT JOIN of 10,000 left
// rows with 5,000 right rows over a key domain of 20,000 while updates move
// join keys: each transaction moves the key of 50 left rows and of 50
// right rows, so rows gain and lose matches and left rows switch between
// matched and NULL-extended.
func BenchmarkViewLeftJoinKeyUpdates(b *testing.B) {
	const left, right, keys, half = 10000, 5000, 20000, 50
	setup := []string{
		"CREATE TABLE lj_l (id bigint PRIMARY KEY, k int, x bigint)",
		"CREATE TABLE lj_r (id bigint PRIMARY KEY, k int, y bigint)",
		"INSERT INTO lj_l VALUES " + valuesList(left, func(i int) string {
			return fmt.Sprintf("(%d,%d,%d)", i, 2*i%keys, i)
		}),
		"INSERT INTO lj_r VALUES " + valuesList(right, func(i int) string {
			return fmt.Sprintf("(%d,%d,%d)", i, 3*i%keys, i)
		}),
		`CREATE MATERIALIZED VIEW lj AS
		 SELECT l.id AS lid, l.x, r.id AS rid, r.y FROM lj_l l LEFT JOIN lj_r r ON l.k = r.k`,
	}
	txn := 0
	ids := func(stride, mod int) []int {
		out := make([]int, half)
		for j := range out {
			out[j] = ((txn*half + j) * stride) % mod
		}
		return out
	}
	viewbench.Run(b, viewbench.Workload{
		Setup:  setup,
		Warmup: 10,
		Next: func() viewbench.Txn {
			l, r := ids(7, left), ids(11, right)
			txn++
			return viewbench.Txn{
				Statements: []string{
					fmt.Sprintf("UPDATE lj_l SET k = (k + 7919) %% %d WHERE id IN (%s)", keys, idList(l)),
					fmt.Sprintf("UPDATE lj_r SET k = (k + 4999) %% %d WHERE id IN (%s)", keys, idList(r)),
				},
				Units: 2 * half,
			}
		},
	})
}

// BenchmarkViewHopAggregate maintains count and sum per key of 100 over
// 10-second windows sliding every 2 seconds (HOP) while rows arrive in
// event-time order, 1 ms apart, in transactions of 1,000, into a table
// declaring a 5-second lateness.
func BenchmarkViewHopAggregate(b *testing.B) {
	const perTxn, keys = 1000, 100
	setup := []string{
		"CREATE TABLE hop_t (id bigint, key int, amount bigint, ts timestamp) WITH (event_time = 'ts', lateness = '5 seconds')",
		`CREATE MATERIALIZED VIEW hop AS
		 SELECT key, window_start, window_end, count(*) AS n, sum(amount) AS total
		 FROM HOP(hop_t, ts, INTERVAL '2 seconds', INTERVAL '10 seconds')
		 GROUP BY key, window_start, window_end`,
	}
	next, start := 0, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	viewbench.Run(b, viewbench.Workload{
		Setup: setup,
		// 20 seconds of event time: windows open and close from here on.
		Warmup: 20,
		Next: func() viewbench.Txn {
			ins := "INSERT INTO hop_t VALUES " + valuesList(perTxn, func(int) string {
				id := next
				next++
				ts := start.Add(time.Duration(id) * time.Millisecond)
				return fmt.Sprintf("(%d,%d,%d,'%s')", id, id%keys, id%997, ts.Format("2006-01-02 15:04:05.000"))
			})
			return viewbench.Txn{Statements: []string{ins}, Units: perTxn}
		},
	})
}
