package runtime

import (
	"context"
	"fmt"
	"strconv"
	"testing"
)

// pointReadEngines holds the engines of BenchmarkPointSelectByKey by size,
// loaded once: the benchmark function runs more than once per size.
var pointReadEngines = map[int]*Engine{}

// pointReadSchema is the table and the view grouped by its key that point
// reads read.
var pointReadSchema = []string{
	"CREATE TABLE t (id bigint PRIMARY KEY, x int)",
	"CREATE MATERIALIZED VIEW v AS SELECT id, count(*) AS n, sum(x) AS s FROM t GROUP BY id",
}

func pointReadEngine(b *testing.B, rows int) *Engine {
	if eng, ok := pointReadEngines[rows]; ok {
		return eng
	}
	ctx := context.Background()
	eng := OpenMemory()
	s := eng.NewSession()
	for _, q := range pointReadSchema {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	const batch = 20000
	for lo := 1; lo <= rows; lo += batch {
		hi := min(lo+batch-1, rows)
		q := fmt.Sprintf("INSERT INTO t SELECT g, g %% 7 FROM generate_series(%d, %d) g", lo, hi)
		if _, err := s.Exec(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	pointReadEngines[rows] = eng
	return eng
}

// BenchmarkPointSelectByKey reads one row of a grouped materialized view
// by its key, SELECT ... FROM v WHERE id = $1, on views of 1,000 and
// 1,000,000 rows, and the same read with reads by key turned off (a full
// scan).
func BenchmarkPointSelectByKey(b *testing.B) {
	ctx := context.Background()
	for _, rows := range []int{1000, 1000000} {
		for _, byKey := range []bool{true, false} {
			name := fmt.Sprintf("rows=%d/key", rows)
			if !byKey {
				name = fmt.Sprintf("rows=%d/fullscan", rows)
			}
			b.Run(name, func(b *testing.B) {
				eng := pointReadEngine(b, rows)
				s := eng.NewSession()
				fullScansOnly.Store(!byKey)
				defer fullScansOnly.Store(false)
				b.ResetTimer()
				for i := range b.N {
					id := strconv.Itoa(1 + (i*7919)%rows)
					res, err := s.Exec(ctx, "SELECT n, s FROM v WHERE id = $1", []*string{&id})
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Rows) != 1 {
						b.Fatalf("id %s: %d rows", id, len(res.Rows))
					}
				}
			})
		}
	}
}
