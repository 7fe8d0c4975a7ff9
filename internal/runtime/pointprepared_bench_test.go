package runtime

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/types"
)

// BenchmarkPreparedPointSelect is a prepared point read by key of a
// 1,000-row view, executed again and again with a new parameter value, as
// a driver's prepared statement (pgbench -M prepared) runs it:
//
//	go test -run XXX -bench BenchmarkPreparedPointSelect -benchtime 20000x ./internal/runtime
func BenchmarkPreparedPointSelect(b *testing.B) { benchPreparedPointSelect(b, 1000, false) }

// BenchmarkPreparedPointSelectStreamed is BenchmarkPreparedPointSelect as
// the extended protocol's Execute runs it: the result is a stream, read
// to its end.
func BenchmarkPreparedPointSelectStreamed(b *testing.B) { benchPreparedPointSelect(b, 1000, true) }

// benchPreparedPointSelect reads one row by key of a view of rows rows per
// operation through a prepared statement, its result as a stream when
// streamed.
func benchPreparedPointSelect(b *testing.B, rows int, streamed bool) {
	benchPointReadsOn(b, pointReadEngine(b, rows), rows, streamed)
}

// benchPointReadsOn is benchPreparedPointSelect on eng, whose view v
// holds rows rows.
func benchPointReadsOn(b *testing.B, eng *Engine, rows int, streamed bool) {
	ctx := context.Background()
	s := eng.NewSession()
	p, err := s.Prepare("SELECT n, s FROM v WHERE id = $1", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id := types.MakeInt(types.Int8, int64(1+(i*7919)%rows))
		n, err := execPointRead(ctx, s, p, id, streamed)
		if err != nil {
			b.Fatal(err)
		}
		if n != 1 {
			b.Fatalf("id %v: %d rows", id, n)
		}
	}
}

// execPointRead executes p with id and returns how many rows it read.
func execPointRead(ctx context.Context, s *Session, p *Prepared, id types.Value, streamed bool) (int, error) {
	if !streamed {
		res, err := s.ExecPrepared(ctx, p, []types.Value{id})
		if err != nil {
			return 0, err
		}
		return len(res.Rows), nil
	}
	res, err := s.ExecPreparedStreaming(ctx, p, []types.Value{id})
	if err != nil {
		return 0, err
	}
	if res.Stream == nil {
		return 0, errors.New("the result is not a stream")
	}
	n := 0
	for res.Stream.More() {
		got, err := res.Stream.Next(ctx)
		if err != nil {
			return 0, err
		}
		n += len(got)
	}
	return n, nil
}

var pointRead10M = flag.Bool("pointread.10m", false, "BenchmarkPreparedPointSelectSizes also reads a 10,000,000-row view (minutes to load, several GB)")

// BenchmarkPreparedPointSelectSizes is BenchmarkPreparedPointSelect on
// views of 1,000 and 1,000,000 rows, and of 10,000,000 with
// -pointread.10m:
//
//	go test ./internal/runtime -run XXX -bench BenchmarkPreparedPointSelectSizes -benchtime 100000x -pointread.10m
func BenchmarkPreparedPointSelectSizes(b *testing.B) {
	sizes := []int{1000, 1000000}
	if *pointRead10M {
		sizes = append(sizes, 10000000)
	}
	for _, rows := range sizes {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { benchPreparedPointSelect(b, rows, false) })
	}
}
