package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// memRows is a looked-up relation (id, v) keyed by id, held outside the
// store: the test writes each step's delta to it before the step, as the
// runtime writes a relation's rows before its readers step.
type memRows map[int64]map[string]zset.Entry

func (m memRows) Rows(_ state.Reader, key []types.Value, fn func(zset.Row, int64) error) error {
	for _, e := range m[key[0].Int()] {
		if err := fn(e.Row, e.Weight); err != nil {
			return err
		}
	}
	return nil
}

func (m memRows) apply(b zset.Batch) {
	for _, e := range b {
		id := e.Row[0].Int()
		if m[id] == nil {
			m[id] = map[string]zset.Entry{}
		}
		k := string(zset.EncodeRow(nil, e.Row))
		old := m[id][k]
		old.Row = e.Row
		old.Weight += e.Weight
		if old.Weight == 0 {
			delete(m[id], k)
		} else {
			m[id][k] = old
		}
	}
}

// lookupOuterModel computes the join from scratch: preserved rows (k, x)
// against looked-up rows (id, v) on k = id, residual v > x when res.
func lookupOuterModel(kind plan.JoinKind, res bool, p map[string]zset.Entry, q memRows) zset.Batch {
	var out zset.Batch
	for _, r := range p {
		var m int64
		for _, s := range q[r.Row[0].Int()] {
			if r.Row[0].IsNull() || res && !(s.Row[1].Int() > r.Row[1].Int()) {
				continue
			}
			m += s.Weight
			switch kind {
			case plan.LeftJoin:
				out = append(out, zset.Entry{Row: zset.Row{r.Row[0], r.Row[1], s.Row[0], s.Row[1]}, Weight: r.Weight * s.Weight})
			case plan.RightJoin:
				out = append(out, zset.Entry{Row: zset.Row{s.Row[0], s.Row[1], r.Row[0], r.Row[1]}, Weight: r.Weight * s.Weight})
			}
		}
		switch {
		case kind == plan.LeftJoin && m == 0:
			out = append(out, zset.Entry{Row: zset.Row{r.Row[0], r.Row[1], types.Null, types.Null}, Weight: r.Weight})
		case kind == plan.RightJoin && m == 0:
			out = append(out, zset.Entry{Row: zset.Row{types.Null, types.Null, r.Row[0], r.Row[1]}, Weight: r.Weight})
		case kind == plan.SemiJoin && m > 0, kind == plan.AntiJoin && m == 0:
			out = append(out, r)
		case kind == plan.MarkJoin:
			out = append(out, zset.Entry{Row: zset.Row{r.Row[0], r.Row[1], types.MakeBool(m > 0)}, Weight: r.Weight})
		}
	}
	return out
}

// TestLookupOuterJoinMatchesModel runs random steps changing both inputs,
// alone and together, with NULL keys, duplicate preserved rows and
// several looked-up rows per key, and checks after each step that the
// accumulated output equals the join computed from scratch.
func TestLookupOuterJoinMatchesModel(t *testing.T) {
	gt, err := types.ResolveBinary(">", types.Of(types.Int4), types.Of(types.Int4))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []plan.JoinKind{plan.LeftJoin, plan.RightJoin, plan.SemiJoin, plan.AntiJoin, plan.MarkJoin} {
		for _, res := range []bool{false, true} {
			t.Run(fmt.Sprintf("kind=%d/residual=%v", kind, res), func(t *testing.T) {
				// Preserved (k, x), looked-up (id, v); a RIGHT join has them
				// the other way round.
				pk, qk := plan.Expr(ref(0, types.Int4)), plan.Expr(ref(0, types.Int4))
				var residual plan.Expr
				if res {
					v, x := ref(3, types.Int4), ref(1, types.Int4)
					if kind == plan.RightJoin {
						v, x = ref(1, types.Int4), ref(3, types.Int4)
					}
					residual = &plan.BinOp{Op: gt, Left: v, Right: x}
				}
				lk, rk := pk, qk
				if kind == plan.RightJoin {
					lk, rk = qk, pk
				}
				q := memRows{}
				j := NewLookupOuterJoin(Prefix{Op: []byte{1}}, kind, []plan.Expr{lk}, []plan.Expr{rk}, residual, 2, 2, false, q, []int{0}, nil, nil)
				st := state.NewMemory()
				rng := rand.New(rand.NewPCG(uint64(kind), 1))
				p := map[string]zset.Entry{}
				var out zset.Batch
				for step := range 300 {
					var dp, dq zset.Batch
					if rng.IntN(3) > 0 {
						for range 1 + rng.IntN(3) {
							k := i4(int64(rng.IntN(4)))
							if rng.IntN(8) == 0 {
								k = types.Null
							}
							row := zset.Row{k, i4(int64(rng.IntN(3)))}
							enc := string(zset.EncodeRow(nil, row))
							w := int64(1)
							if p[enc].Weight > 0 && rng.IntN(2) == 0 {
								w = -1
							}
							p[enc] = zset.Entry{Row: row, Weight: p[enc].Weight + w}
							if p[enc].Weight == 0 {
								delete(p, enc)
							}
							dp = append(dp, zset.Entry{Row: row, Weight: w})
						}
					}
					if rng.IntN(3) > 0 {
						id := int64(rng.IntN(4))
						row := zset.Row{i4(id), i4(int64(rng.IntN(3)))}
						w := int64(1)
						if e, ok := q[id][string(zset.EncodeRow(nil, row))]; ok && e.Weight > 0 && rng.IntN(2) == 0 {
							w = -1
						}
						dq = zset.Batch{{Row: row, Weight: w}}
					}
					dp, dq = consolidate(t, dp), consolidate(t, dq)
					q.apply(dq)
					in := []zset.Batch{dp, dq}
					if kind == plan.RightJoin {
						in = []zset.Batch{dq, dp}
					}
					d, err := j.Step(context.Background(), st, in)
					if err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
					out = consolidate(t, append(out, d...))
					if got, want := fmt.Sprint(out), fmt.Sprint(consolidate(t, lookupOuterModel(kind, res, p, q))); got != want {
						t.Fatalf("step %d (Δp %v, Δq %v):\n got %s\nwant %s", step, dp, dq, got, want)
					}
				}
			})
		}
	}
}

// TestLookupOuterJoinRejectsInconsistentDelta checks that a looked-up
// delta the stored rows do not hold (an insertion of a row they lack)
// fails the step instead of giving a wrong answer.
func TestLookupOuterJoinRejectsInconsistentDelta(t *testing.T) {
	q := memRows{}
	j := NewLookupOuterJoin(Prefix{Op: []byte{1}}, plan.LeftJoin, []plan.Expr{ref(0, types.Int4)}, []plan.Expr{ref(0, types.Int4)}, nil, 2, 2, false, q, []int{0}, nil, nil)
	st := state.NewMemory()
	p := zset.Batch{{Row: zset.Row{i4(1), i4(0)}, Weight: 1}}
	if _, err := j.Step(context.Background(), st, []zset.Batch{p, nil}); err != nil {
		t.Fatal(err)
	}
	// The delta says a row was inserted, but the stored rows do not have it.
	_, err := j.Step(context.Background(), st, []zset.Batch{nil, {{Row: zset.Row{i4(1), i4(5)}, Weight: 1}}})
	if err == nil {
		t.Fatal("want an error for a looked-up delta the stored rows contradict")
	}
}
