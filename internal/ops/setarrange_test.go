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

// TestJoinSetInputsLikeGeneral steps two joins over the same changes to
// two tables with primary keys — one join told its inputs are sets, one
// not — and checks that every step's output and the whole state they
// leave are the same: inserts, deletes, updates moving rows between join
// keys, many rows under one join key, and unconsolidated batches that
// insert and delete one row in one step, in either order.
func TestJoinSetInputsLikeGeneral(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	mk := func(set bool) *Join {
		j := NewJoin(Prefix{Circuit: []byte("j")}, []plan.Expr{ref(1, types.Int4)}, []plan.Expr{ref(0, types.Int4)}, nil, nil, 3, 2)
		j.SetInputs(set, set)
		return j
	}
	general, set := mk(false), mk(true)
	stGeneral, stSet := state.NewMemory(), state.NewMemory()
	// The tables: left (id PRIMARY KEY, k, x), right (k PRIMARY KEY, y).
	left := map[int64][3]int64{}
	right := map[int64]int64{}
	row3 := func(r [3]int64) zset.Row { return zset.Row{i4(r[0]), i4(r[1]), i4(r[2])} }
	row2 := func(k, y int64) zset.Row { return zset.Row{i4(k), i4(y)} }
	nextID := int64(0)
	for step := 0; step < 300; step++ {
		var dl, dr zset.Batch
		for n := rng.IntN(40); n > 0; n-- {
			switch op := rng.IntN(10); {
			case op < 4: // insert a new left row
				r := [3]int64{nextID, int64(rng.IntN(8)), int64(rng.IntN(3))}
				nextID++
				left[r[0]] = r
				dl = append(dl, zset.Entry{Row: row3(r), Weight: 1})
			case op < 6 && len(left) > 0: // delete or update a left row
				for id, r := range left {
					dl = append(dl, zset.Entry{Row: row3(r), Weight: -1})
					if op == 5 {
						r[1], r[2] = int64(rng.IntN(8)), int64(rng.IntN(3))
						left[id] = r
						dl = append(dl, zset.Entry{Row: row3(r), Weight: 1})
					} else {
						delete(left, id)
					}
					break
				}
			case op == 6: // a row inserted and deleted in the step
				r := [3]int64{nextID, int64(rng.IntN(8)), 0}
				nextID++
				dl = append(dl, zset.Entry{Row: row3(r), Weight: 1}, zset.Entry{Row: row3(r), Weight: -1})
			case op == 7 && len(left) > 0: // a row deleted and put back
				for _, r := range left {
					dl = append(dl, zset.Entry{Row: row3(r), Weight: -1}, zset.Entry{Row: row3(r), Weight: 1})
					break
				}
			default: // the right side: set or remove a key's row
				k := int64(rng.IntN(8))
				if y, ok := right[k]; ok {
					dr = append(dr, zset.Entry{Row: row2(k, y), Weight: -1})
					delete(right, k)
				}
				if rng.IntN(3) > 0 {
					y := int64(rng.IntN(5))
					right[k] = y
					dr = append(dr, zset.Entry{Row: row2(k, y), Weight: 1})
				}
			}
		}
		rng.Shuffle(len(dl), func(a, b int) { dl[a], dl[b] = dl[b], dl[a] })
		outG, err := general.Step(ctx, stGeneral, []zset.Batch{dl, dr})
		if err != nil {
			t.Fatal(err)
		}
		outS, err := set.Step(ctx, stSet, []zset.Batch{dl, dr})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(outG) != fmt.Sprint(outS) {
			t.Fatalf("step %d: the set join emitted\n%v\nthe general one\n%v", step, outS, outG)
		}
	}
	dump := func(st state.Store) string {
		var sb []byte
		if err := st.Scan(nil, nil, func(k, v []byte) bool {
			sb = fmt.Appendf(sb, "%x=%x\n", k, v)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return string(sb)
	}
	if g, s := dump(stGeneral), dump(stSet); g != s {
		t.Fatalf("the states differ:\nset join:\n%s\ngeneral join:\n%s", s, g)
	}
}
