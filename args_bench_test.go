package rockstream

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/proccpu"
)

// BenchmarkExecArgs inserts one row per Exec with three arguments into a
// table read by a grouped view, binding the arguments as values
// (prepared once, from the statement cache) and, side by side, as the
// text a client would send (parsed, bound and converted on every call):
//
//	go test -run XXX -bench BenchmarkExecArgs -benchtime 20000x .
func BenchmarkExecArgs(b *testing.B) {
	paths := []struct {
		name string
		exec func(ctx context.Context, s *Session, sql string, args []any) error
	}{
		{"values", func(ctx context.Context, s *Session, sql string, args []any) error {
			_, err := execArgs(ctx, s.s, s.stmts, sql, args)
			return err
		}},
		{"text", func(ctx context.Context, s *Session, sql string, args []any) error {
			_, err := execArgsAsText(ctx, s.s, sql, args)
			return err
		}},
	}
	for _, path := range paths {
		b.Run(path.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			for _, sql := range []string{
				"CREATE TABLE orders (id bigint PRIMARY KEY, store int, amount bigint, at timestamptz)",
				"CREATE MATERIALIZED VIEW by_store AS SELECT store, count(*), sum(amount) FROM orders GROUP BY store",
			} {
				if _, err := db.Exec(ctx, sql); err != nil {
					b.Fatal(err)
				}
			}
			s := db.Session()
			defer s.Close()
			at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			const ins = "INSERT INTO orders VALUES ($1, $2, $3, $4)"
			b.ReportAllocs()
			cpu := proccpu.Used()
			b.ResetTimer()
			for i := range b.N {
				if err := path.exec(ctx, s, ins, []any{i, i % 100, i % 1000, at}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(proccpu.Used()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
