package diff

import (
	"context"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/proccpu"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// BenchmarkMeshStep measures a step across processes against one worker:
// SELECT k, count(*), sum(v) FROM t GROUP BY k over a 10,000-row delta
// of 2,500 groups, from an empty store, on one in-process worker (Step)
// and on 2 members of a mesh over gRPC on loopback, both in this
// process, each stepping its contiguous half of the delta in its own
// store. cpu-ns/row is the process's CPU time (every member's, the
// exchange's encoding, gRPC and decoding included) per input row;
// sent-B/op the frame bytes the members sent each other.
//
//	go test -run XXX -bench BenchmarkMeshStep ./internal/diff
func BenchmarkMeshStep(b *testing.B) {
	const rows, groups = 10_000, 2_500
	delta := make(zset.Batch, rows)
	for i := range delta {
		n := int64(i)
		delta[i] = zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, n%groups), types.MakeInt(types.Int8, n%7), types.MakeInt(types.Int8, n%1000)}, Weight: 1}
	}
	delta = mustConsolidate(b, delta)
	const text = "aggregate group=(k) aggs=(count(*), sum(v))\n  scan t\n"
	b.Run("one-worker", func(b *testing.B) {
		c := routedCircuitB(b, text)
		deltas := map[string]zset.Batch{"t": delta}
		b.ResetTimer()
		cpu := proccpu.Used()
		for range b.N {
			out, err := c.Step(context.Background(), state.NewMemory(), deltas)
			if err != nil {
				b.Fatal(err)
			}
			if len(out) != groups {
				b.Fatalf("%d rows out", len(out))
			}
		}
		b.ReportMetric(float64((proccpu.Used()-cpu).Nanoseconds())/float64(b.N*rows), "cpu-ns/row")
	})
	const members = 2
	b.Run(fmt.Sprintf("mesh/members=%d", members), func(b *testing.B) {
		cl := newTestCluster(b, members)
		meshes := cl.join(b)
		defer func() {
			for _, m := range meshes {
				m.Close()
			}
		}()
		circuits, peers := make([]*Circuit, members), make([]Peers, members)
		parts := make([]map[string]zset.Batch, members)
		for i := range members {
			circuits[i], peers[i] = routedCircuitB(b, text), meshes[i]
			parts[i] = map[string]zset.Batch{"t": delta[rows*i/members : rows*(i+1)/members]}
		}
		stores := make([]state.Store, members)
		b.ResetTimer()
		cpu := proccpu.Used()
		for n := range b.N {
			for i := range stores {
				stores[i] = state.NewMemory()
			}
			outs, errsOf := stepMembers(context.Background(), circuits, stores, parts, peers, uint64(n+1))
			got := 0
			for i, err := range errsOf {
				if err != nil {
					b.Fatalf("member %d: %v", i, err)
				}
				got += len(outs[i])
			}
			if got != groups {
				b.Fatalf("%d rows out", got)
			}
		}
		b.ReportMetric(float64((proccpu.Used()-cpu).Nanoseconds())/float64(b.N*rows), "cpu-ns/row")
		sent := int64(0)
		for _, m := range meshes {
			sent += m.BytesSent()
		}
		b.ReportMetric(float64(sent)/float64(b.N), "sent-B/op")
	})
}
