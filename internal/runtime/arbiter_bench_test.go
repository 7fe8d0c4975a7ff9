package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/proccpu"
)

// BenchmarkInsertOnConflictPrimaryKey measures INSERT ... ON CONFLICT on
// a primary key: a statement of 1,000 rows, half of them new, into a
// table of 10,000 rows, per DO NOTHING and DO UPDATE; cpu-us/stmt is the
// process's CPU time per statement.
func BenchmarkInsertOnConflictPrimaryKey(b *testing.B) {
	for _, action := range []string{"DO NOTHING", "DO UPDATE SET v = excluded.v + 1"} {
		b.Run(strings.Fields(action)[1], func(b *testing.B) {
			ctx := context.Background()
			s := OpenMemory().NewSession()
			if _, err := s.Exec(ctx, "CREATE TABLE t (k int PRIMARY KEY, v int)", nil); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Exec(ctx, "INSERT INTO t SELECT k, k FROM generate_series(1, 10000) AS k", nil); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := proccpu.Used()
			for i := range b.N {
				var rows []string
				for j := range 1000 {
					rows = append(rows, fmt.Sprintf("(%d, %d)", 9500+j+i*500, j))
				}
				if _, err := s.Exec(ctx, "INSERT INTO t VALUES "+strings.Join(rows, ", ")+" ON CONFLICT (k) "+action, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((proccpu.Used()-cpu0).Microseconds())/float64(b.N), "cpu-us/stmt")
		})
	}
}
