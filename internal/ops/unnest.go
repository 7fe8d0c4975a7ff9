package ops

import (
	"context"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Unnest is unnest(array): each input row, with its weight, becomes one
// row per element of its array — the input's columns, the element and,
// with ordinality, the element's position. A NULL or empty array gives no
// rows.
//
// It is linear and keeps no state: Δout = Unnest(Δin).
//
// With outer set it is LEFT JOIN LATERAL unnest(...) ON on: an input row
// none of whose element rows satisfies on (nil: true) gives one row with
// NULL element (and position) instead.
type Unnest struct {
	array      plan.Expr
	ordinality bool
	outer      bool
	on         plan.Expr
	rows       rowAlloc
}

// NewUnnest returns an Unnest of the array expression over its input row.
func NewUnnest(array plan.Expr, ordinality, outer bool, on plan.Expr) *Unnest {
	return &Unnest{array: array, ordinality: ordinality, outer: outer, on: on}
}

// Step implements Operator.
func (u *Unnest) Step(ctx context.Context, _ state.Store, in []zset.Batch) (zset.Batch, error) {
	u.rows.bind(ctx)
	if len(in[0]) == 0 {
		return nil, nil
	}
	extra := 1
	if u.ordinality {
		extra = 2
	}
	var out zset.Batch
	w := &work{ctx: ctx}
	for _, e := range in[0] {
		if err := w.tick(); err != nil {
			return nil, err
		}
		a, err := u.array.Eval(e.Row)
		if err != nil {
			return nil, err
		}
		width := len(e.Row)
		matched := false
		for i, x := range a.Elems() {
			// An array may be long (generate_series): its elements count
			// as work too.
			if err := w.tick(); err != nil {
				return nil, err
			}
			row := u.rows.alloc(width + extra)
			copy(row, e.Row)
			row[width] = x
			if u.ordinality {
				row[width+1] = types.MakeInt(types.Int8, int64(i+1))
			}
			if u.on != nil {
				ok, err := isTrue(u.on, row)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			matched = true
			out = append(out, zset.Entry{Row: row, Weight: e.Weight})
		}
		if u.outer && !matched {
			row := u.rows.alloc(width + extra) // the unnest columns stay NULL
			copy(row, e.Row)
			out = append(out, zset.Entry{Row: row, Weight: e.Weight})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return zset.Consolidate(out)
}
