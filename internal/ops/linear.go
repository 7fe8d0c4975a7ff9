package ops

import (
	"context"
	"math"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The linear operators keep no state: each is its own increment,
// Δop(a) = op(Δa).

// Filter keeps the rows for which Pred is true (not false, not NULL).
type Filter struct {
	Pred plan.Expr
}

// Step implements Operator. A subset of a consolidated batch is
// consolidated, so the output needs no further work.
func (f *Filter) Step(ctx context.Context, _ state.Store, in []zset.Batch) (zset.Batch, error) {
	var out zset.Batch
	for i, e := range in[0] {
		if err := Interrupted(ctx, i); err != nil {
			return nil, err
		}
		ok, err := isTrue(f.Pred, e.Row)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// isTrue evaluates a predicate under SQL's WHERE rule: NULL is not true.
func isTrue(p plan.Expr, row zset.Row) (bool, error) {
	v, err := p.Eval(row)
	if err != nil {
		return false, err
	}
	return !v.IsNull() && v.Bool(), nil
}

// Project computes one expression per output column from each row. Rows
// that become equal are merged by consolidation, unless Loose: then the
// output keeps one entry per input entry, in input order, for a consumer
// that takes unconsolidated input (internal/diff, loose.go).
//
// PassThrough, which the circuit sets when Exprs are the input's columns,
// all of them and in order, and the input comes consolidated, makes the
// output the input batch itself: the rows copied and consolidated again
// would be the same.
type Project struct {
	Exprs       []plan.Expr
	Loose       bool
	PassThrough bool
}

// IsIdentity reports whether exprs, over rows of width columns, are those
// columns in order.
func IsIdentity(exprs []plan.Expr, width int) bool {
	if len(exprs) != width {
		return false
	}
	for i, x := range exprs {
		if c, ok := x.(*plan.ColRef); !ok || c.Index != i {
			return false
		}
	}
	return true
}

// Step implements Operator.
func (p *Project) Step(ctx context.Context, _ state.Store, in []zset.Batch) (zset.Batch, error) {
	b := in[0]
	if len(b) == 0 {
		return nil, nil
	}
	if p.PassThrough {
		return b, nil
	}
	n := len(p.Exprs)
	// One allocation holds every output row's values.
	memgov.Charge(ctx, int64(len(b))*(int64(n)*valueBytes+entryBytes))
	arena := make([]types.Value, len(b)*n)
	out := make(zset.Batch, len(b))
	for i, e := range b {
		if err := Interrupted(ctx, i); err != nil {
			return nil, err
		}
		row := arena[i*n : (i+1)*n : (i+1)*n]
		for j, x := range p.Exprs {
			v, err := x.Eval(e.Row)
			if err != nil {
				return nil, err
			}
			row[j] = v
		}
		out[i] = zset.Entry{Row: row, Weight: e.Weight}
	}
	if p.Loose {
		return out, nil
	}
	return zset.Consolidate(out)
}

// Map applies Fn to every row. Fn must be deterministic and must not keep
// or modify its argument.
type Map struct {
	Fn func(zset.Row) (zset.Row, error)
}

// Step implements Operator.
func (m *Map) Step(ctx context.Context, _ state.Store, in []zset.Batch) (zset.Batch, error) {
	out := make(zset.Batch, 0, len(in[0]))
	for i, e := range in[0] {
		if err := Interrupted(ctx, i); err != nil {
			return nil, err
		}
		r, err := m.Fn(e.Row)
		if err != nil {
			return nil, err
		}
		out = append(out, zset.Entry{Row: r, Weight: e.Weight})
	}
	return zset.Consolidate(out)
}

// Union is UNION ALL: the sum of its inputs, Δ(a+b) = Δa + Δb.
type Union struct{}

// Step implements Operator.
func (Union) Step(_ context.Context, _ state.Store, in []zset.Batch) (zset.Batch, error) {
	n, nonEmpty := 0, 0
	for _, b := range in {
		n += len(b)
		if len(b) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty == 0 {
		return nil, nil
	}
	out := make(zset.Batch, 0, n)
	for _, b := range in {
		out = append(out, b...)
	}
	if nonEmpty == 1 {
		return out, nil // one consolidated input is already the answer
	}
	return zset.Consolidate(out)
}

// Negate flips every weight: Δ(−a) = −Δa.
type Negate struct{}

// Step implements Operator.
func (Negate) Step(_ context.Context, _ state.Store, in []zset.Batch) (zset.Batch, error) {
	out := make(zset.Batch, len(in[0]))
	for i, e := range in[0] {
		if e.Weight == math.MinInt64 {
			return nil, errs.New(errs.NumericOutOfRange, "row weight out of range")
		}
		out[i] = zset.Entry{Row: e.Row, Weight: -e.Weight}
	}
	return out, nil
}
