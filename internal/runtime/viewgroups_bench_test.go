package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkConcurrentViews measures a small INSERT into a table (with a
// primary key) read by two grouped views, on one worker and on two with
// the concurrent paths taken however small the write (the views of a
// group stepping at once, the table's rows written beside them), for
// writes of 1 to 256 rows: where the hand-offs start to pay for
// themselves, which sets viewsMinRows and besideMinRows. ns/op is wall
// time, cpu-ns/op the process's CPU time.
//
//	go test -run XXX -bench BenchmarkConcurrentViews -benchtime 2000x ./internal/runtime
func BenchmarkConcurrentViews(b *testing.B) {
	for _, rows := range []int{1, 16, 64, 256} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("rows=%d/workers=%d", rows, workers), func(b *testing.B) {
				defer func(v, w int) { viewsMinRows, besideMinRows = v, w }(viewsMinRows, besideMinRows)
				viewsMinRows, besideMinRows = 1, 1
				ctx := context.Background()
				e, err := Open(NewMemoryStore(), Options{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				s := e.NewSession()
				for _, q := range []string{
					"CREATE TABLE t (id bigint PRIMARY KEY, g int, v bigint)",
					"CREATE MATERIALIZED VIEW a AS SELECT g, count(*), sum(v), max(v) FROM t GROUP BY g",
					"CREATE MATERIALIZED VIEW b AS SELECT g % 7 AS m, sum(v) FROM t GROUP BY g % 7",
				} {
					if _, err := s.Exec(ctx, q, nil); err != nil {
						b.Fatal(err)
					}
				}
				stmts := make([]string, b.N)
				for i := range stmts {
					vals := make([]string, rows)
					for j := range vals {
						id := i*rows + j
						vals[j] = fmt.Sprintf("(%d, %d, %d)", id, id%100, id%1000)
					}
					stmts[i] = "INSERT INTO t VALUES " + strings.Join(vals, ", ")
				}
				execTimed(b, s, stmts)
			})
		}
	}
}
