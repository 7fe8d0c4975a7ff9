package diff

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestOperatorsCountRows checks the graph Operators returns (every
// operator after its inputs, the scans naming their relations, one root)
// and that each operator's row count is what it emitted, the same on one
// worker and on four.
func TestOperatorsCountRows(t *testing.T) {
	p := testPlan(t)
	tc := []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Text)}}
	uc := []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Int4)}}
	in := map[string]zset.Batch{
		"t": {{Row: row(t, tc, "1, 'x'"), Weight: 1}, {Row: row(t, tc, "2, 'y'"), Weight: 1}, {Row: row(t, tc, "3, 'y'"), Weight: 1}},
		"u": {{Row: row(t, uc, "1, 7"), Weight: 1}, {Row: row(t, uc, "1, 7"), Weight: 1}, {Row: row(t, uc, "2, 7"), Weight: 1}},
	}
	var counts [][]uint64
	for _, workers := range []int{1, 4} {
		c, err := Build(p, []byte("view/"), false)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range c.Operators() {
			if op.Rows != 0 {
				t.Fatalf("operator %d counts %d rows before any step", op.ID, op.Rows)
			}
		}
		out, err := c.StepParallel(context.Background(), state.NewMemory(), in, Parallelism{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		ops := c.Operators()
		var got []uint64
		roots, scans := 0, map[string]uint64{}
		for i, op := range ops {
			if op.ID != i {
				t.Fatalf("operator %d has id %d", i, op.ID)
			}
			for _, j := range op.Inputs {
				if j >= i {
					t.Fatalf("operator %d (%s) reads operator %d, which comes after it", i, op.Kind, j)
				}
			}
			if len(op.Exchanges) != len(op.Inputs) {
				t.Fatalf("operator %d: %d exchanges for %d inputs", i, len(op.Exchanges), len(op.Inputs))
			}
			if op.Kind == "scan" {
				scans[op.Relation] = op.Rows
			}
			if op.Root {
				roots++
				if op.Rows != uint64(len(out)) {
					t.Errorf("%d workers: the root emitted %d rows, the step returned %d", workers, op.Rows, len(out))
				}
			}
			got = append(got, op.Rows)
		}
		if roots != 1 {
			t.Fatalf("%d roots", roots)
		}
		if scans["t"] != 3 || scans["u"] != 2 { // u's delta is consolidated first
			t.Errorf("%d workers: scans counted %v, want t:3 u:2", workers, scans)
		}
		counts = append(counts, got)
	}
	for i := range counts[0] {
		// Exchanges split rows between workers; what an operator emits
		// in all is the same.
		if counts[0][i] != counts[1][i] {
			t.Errorf("operator %d emitted %d rows on one worker, %d on four", i, counts[0][i], counts[1][i])
		}
	}
}
