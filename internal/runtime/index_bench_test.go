package runtime

import (
	"context"
	"fmt"
	"strconv"
	"testing"
)

// indexEngines holds the engines of the index benchmarks by size, loaded
// once: a benchmark function runs more than once per size.
var indexEngines = map[int]*Engine{}

// indexEngine returns an engine holding big, rows rows keyed by id with
// an index on k (a non-key column, one row per value), and d, 1,000 rows
// whose k values are spread over big's.
func indexEngine(b *testing.B, rows int) *Engine {
	if eng, ok := indexEngines[rows]; ok {
		return eng
	}
	ctx := context.Background()
	eng := OpenMemory()
	s := eng.NewSession()
	run := func(q string) {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	run("CREATE TABLE big (id bigint PRIMARY KEY, k int, w text)")
	const batch = 20000
	for lo := 1; lo <= rows; lo += batch {
		hi := min(lo+batch-1, rows)
		run(fmt.Sprintf("INSERT INTO big SELECT g, (g::bigint * 7919) %% %d, 'w' || g FROM generate_series(%d, %d) g", rows, lo, hi))
	}
	run("CREATE INDEX ON big (k)")
	run("CREATE TABLE d (k int, tag text)")
	run(fmt.Sprintf("INSERT INTO d SELECT (g * 104729) %% %d, 't' || g FROM generate_series(1, 1000) g", rows))
	indexEngines[rows] = eng
	return eng
}

// BenchmarkIndexPointLookup reads the row of one value of an indexed
// non-key column, SELECT ... FROM big WHERE k = $1, on tables of 1,000
// and 1,000,000 rows, and the same read with indexes turned off (a full
// scan), and as a reference the read of one row by the primary key.
func BenchmarkIndexPointLookup(b *testing.B) {
	ctx := context.Background()
	for _, rows := range []int{1000, 1000000} {
		for _, way := range []string{"index", "fullscan", "pkey"} {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, way), func(b *testing.B) {
				s := indexEngine(b, rows).NewSession()
				fullScansOnly.Store(way == "fullscan")
				defer fullScansOnly.Store(false)
				q := "SELECT id, w FROM big WHERE k = $1"
				if way == "pkey" {
					q = "SELECT id, w FROM big WHERE id = $1"
				}
				b.ResetTimer()
				for i := range b.N {
					k := strconv.Itoa((i * 31) % rows)
					if way == "pkey" {
						k = strconv.Itoa(1 + (i*31)%rows)
					}
					res, err := s.Exec(ctx, q, []*string{&k})
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Rows) != 1 {
						b.Fatalf("k %s: %d rows", k, len(res.Rows))
					}
				}
			})
		}
	}
}

// BenchmarkIndexLookupJoin joins d's 1,000 rows with big on big's indexed
// column k, on a big of 1,000,000 rows: by lookups into the index, and
// with indexes turned off (a hash join over all of big).
func BenchmarkIndexLookupJoin(b *testing.B) {
	ctx := context.Background()
	const rows = 1000000
	for _, byIndex := range []bool{true, false} {
		name := "rows=1000000/lookup"
		if !byIndex {
			name = "rows=1000000/fullscan"
		}
		b.Run(name, func(b *testing.B) {
			s := indexEngine(b, rows).NewSession()
			fullScansOnly.Store(!byIndex)
			defer fullScansOnly.Store(false)
			b.ResetTimer()
			for range b.N {
				res, err := s.Exec(ctx, "SELECT count(*), count(DISTINCT big.id) FROM d JOIN big ON big.k = d.k", nil)
				if err != nil {
					b.Fatal(err)
				}
				if got := formatRows(res); got != "1000|1000\n" {
					b.Fatalf("join: %q", got)
				}
			}
		})
	}
}
