package runtime

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rockstream/rockstream/internal/proccpu"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// BenchmarkViewWrite is the committer's write of a view's output, the
// part of a Nexmark q0 epoch after the circuit's step: each op encodes
// 1,000 new rows (a bid's columns) once (encodeDelta) and adds them to a
// view's rows (applyEncodedDelta) and its change log (logChangesOn) in an
// epoch's overlay, as stepView and logViewDelta do, then commits the overlay
// into the store, which grows by 1,000 rows and 1,000 log entries per op
// from 200,000 of each. cpu-ns/row is the process's CPU time per row.
//
//	go test -run XXX -bench BenchmarkViewWrite -benchtime 300x ./internal/runtime/
func BenchmarkViewWrite(b *testing.B) {
	const batch, preload = 1000, 200
	rng := rand.New(rand.NewPCG(1, 2))
	next := func() zset.Batch {
		out := make(zset.Batch, batch)
		for i := range out {
			out[i] = zset.Entry{Weight: 1, Row: zset.Row{
				types.MakeInt(types.Int8, rng.Int64N(10_000)),
				types.MakeInt(types.Int8, rng.Int64N(100_000)),
				types.MakeInt(types.Int8, rng.Int64N(1_000_000)),
				types.MakeText(fmt.Sprintf("channel-%d", rng.IntN(10))),
				types.MakeInt(types.Int8, rng.Int64()),
			}}
		}
		return out
	}
	v := &object{id: 7}
	prefix := relPrefix(nsViewRows, v.id)
	store := state.NewMemory()
	epoch := uint64(0)
	write := func(delta zset.Batch) {
		epoch++
		ov := state.NewOverlay(store)
		w := &epochWrite{epoch: epoch, ov: ov, logSeq: map[uint64]uint64{}}
		enc := encodeDelta(v, delta)
		if err := applyEncodedDelta(ov, prefix, delta, enc); err != nil {
			b.Fatal(err)
		}
		if err := logChangesOn(ov, w, v, delta, enc, 1); err != nil {
			b.Fatal(err)
		}
		enc.release()
		if err := ov.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	for range preload {
		write(next())
	}
	deltas := make([]zset.Batch, b.N)
	for i := range deltas {
		deltas[i] = next()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := proccpu.Used()
	for i := range b.N {
		write(deltas[i])
	}
	cpu = proccpu.Used() - cpu
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*batch), "cpu-ns/row")
}
