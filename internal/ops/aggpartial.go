package ops

import (
	"context"
	"math/bits"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// An aggregate without GROUP BY has one group, so its input cannot be
// split between workers by key. When every one of its aggregates has a
// state that merges (Splittable), it runs in two steps instead:
//
//   - a PartialAggregate on every worker, over the rows it holds;
//   - a FinalAggregate on one worker, over what the partials emit,
//     keeping the one group's state exactly as an Aggregate would.
//
// The partial emits rows of one layout, the final's state row with a
// bucket in front:
//
//	(bucket, count(*), fields of aggregate 1, fields of aggregate 2, ...)
//
// A row with a NULL bucket is the state of the worker's delta for the
// algebraic aggregates (counts, exact sums, true/false counts; see
// aggSpec.fields), the count of its rows, and for an insert-only MIN or
// MAX the delta's extreme; the final adds it, times its weight, to the
// group's state. The partial keeps no state for these: the sum of the
// workers' deltas is the delta.
//
// MIN and MAX over input that retracts cannot be merged from deltas: a
// deleted extreme must be replaced by the next value. For them the
// partial keeps, per bucket of the whole input row (zset.Bucket, the
// bucket the exchange before it routes the row by), an Aggregate grouped
// by that bucket: every value with its count, and each bucket's current
// MIN and MAX. A bucket whose extremes change emits −(bucket, old) and
// +(bucket, new), the other fields NULL; the final arranges the buckets'
// extremes (value → count of buckets) and takes the first or the last.
// Both states are keyed by data, never by worker, so a circuit over
// them may step on any number of workers and gives the same result and
// the same state as a single Aggregate's, field for field.

// Splittable reports whether an aggregate without GROUP BY over aggs can
// run as a PartialAggregate per worker and a FinalAggregate: every call
// is a count, a sum, an average, a MIN or MAX, bool_and or bool_or, or
// of the variance family, and none is DISTINCT or ordered.
func Splittable(aggs []plan.AggCall) bool {
	for _, c := range aggs {
		fn, ok := aggFuncs[c.Func]
		if !ok || c.Distinct || len(c.Order) > 0 {
			return false
		}
		switch fn {
		case fnCount, fnSum, fnAvg, fnMin, fnMax, fnBoolAnd, fnBoolOr,
			fnVarSamp, fnVarPop, fnStddevSamp, fnStddevPop:
		default:
			// The ordered, ordered-set, hypothetical-set and bitwise
			// aggregates keep states the partial step does not merge.
			return false
		}
	}
	return true
}

// PartialAggregate is the per-worker step of a split aggregate without
// GROUP BY. State, under its prefix, only for MIN and MAX over input
// that retracts: an Aggregate's state grouped by the input row's bucket.
type PartialAggregate struct {
	a     *Aggregate // the calls over the input; it keeps no state
	ext   *Aggregate // MIN and MAX by bucket; nil when there is none
	extOf []int      // ext's aggregate j is a's aggregate extOf[j]
	width int        // of an output row
}

// NewPartialAggregate returns the partial step of aggs without GROUP BY
// (Splittable), keeping its state under prefix; insertOnly is what
// Aggregate.InsertOnly declares.
func NewPartialAggregate(prefix Prefix, aggs []plan.AggCall, insertOnly bool) (*PartialAggregate, error) {
	a, err := NewAggregate(prefix, nil, aggs)
	if err != nil {
		return nil, err
	}
	if insertOnly {
		a.InsertOnly()
	}
	p := &PartialAggregate{a: a, width: 2}
	var extCalls []plan.AggCall
	for i := range a.aggs {
		s := &a.aggs[i]
		p.width += s.fields()
		if s.arranged {
			extCalls = append(extCalls, s.call)
			p.extOf = append(p.extOf, i)
		}
	}
	if len(extCalls) > 0 {
		if p.ext, err = NewAggregate(prefix, []plan.Expr{&rowBucket{}}, extCalls); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Keyed reports whether the partial keeps state by bucket, its input
// then routed by the bucket of the whole row; otherwise its input may
// stay where it is.
func (p *PartialAggregate) Keyed() bool { return p.ext != nil }

// ByBucket returns the indexes of the calls whose state the partial
// keeps per bucket (MIN and MAX over input that retracts), in order.
func (p *PartialAggregate) ByBucket() []int { return p.extOf }

// Step implements Operator.
func (p *PartialAggregate) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	if len(in[0]) == 0 {
		return nil, nil
	}
	a := p.a
	defer a.trimScratch()
	inputs, err := a.evaluate(ctx, in[0])
	if err != nil {
		return nil, err
	}
	for i := range a.accs {
		a.accs[i].reset()
	}
	var count int64
	for r := range inputs {
		if err := Interrupted(ctx, r); err != nil {
			return nil, err
		}
		x := &inputs[r]
		if err := addCount(&count, x.weight); err != nil {
			return nil, err
		}
		for i := range a.aggs {
			if s := &a.aggs[i]; x.has[i] && !s.arranged {
				if err := s.add(&a.accs[i], x.args[i], x.weight); err != nil {
					return nil, err
				}
			}
		}
	}
	row := make(zset.Row, 0, p.width)
	row = append(row, types.Null, i8(count))
	for i := range a.aggs {
		row = a.aggs[i].store(row, &a.accs[i]) // NULL for an arranged MIN or MAX
	}
	out := zset.Batch{{Row: row, Weight: 1}}
	if p.ext != nil {
		eo, err := p.ext.Step(ctx, st, in)
		if err != nil {
			return nil, err
		}
		for _, e := range eo {
			r := make(zset.Row, p.width)
			r[0] = e.Row[0]
			for j, i := range p.extOf {
				r[a.aggs[i].off+1] = e.Row[1+j]
			}
			out = append(out, zset.Entry{Row: r, Weight: e.Weight})
		}
	}
	return zset.Consolidate(out)
}

// FinalAggregate is the one-worker step of a split aggregate without
// GROUP BY: it folds the partials' rows into the group's state, which is
// the state an Aggregate over the same calls keeps, and emits the one
// output row as the Aggregate does (from the first step on).
type FinalAggregate struct {
	*Aggregate
}

// NewFinalAggregate returns the final step of aggs without GROUP BY
// (Splittable), keeping its state under prefix; insertOnly is what
// Aggregate.InsertOnly declares, the same as for the partial.
func NewFinalAggregate(prefix Prefix, aggs []plan.AggCall, insertOnly bool) (*FinalAggregate, error) {
	a, err := NewAggregate(prefix, nil, aggs)
	if err != nil {
		return nil, err
	}
	if insertOnly {
		a.InsertOnly()
	}
	return &FinalAggregate{a}, nil
}

// Step implements Operator.
func (f *FinalAggregate) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	out, err := f.group(ctx, st, nil, nil, in[0], make(zset.Batch, 0, 2))
	if err != nil {
		return nil, err
	}
	return zset.Consolidate(out)
}

// foldPartials folds a PartialAggregate's rows into the group's row count
// and accumulators (a.accs, loaded from the group's state).
func (a *Aggregate) foldPartials(ctx context.Context, st state.Store, partials zset.Batch, count *int64) error {
	width := 2
	for i := range a.aggs {
		width += a.aggs[i].fields()
	}
	for r, e := range partials {
		if err := Interrupted(ctx, r); err != nil {
			return err
		}
		if len(e.Row) != width {
			return errs.Newf(errs.Internal, "internal error: a partial aggregate row has %d fields, not %d", len(e.Row), width)
		}
		w := e.Weight
		if !e.Row[0].IsNull() { // one bucket's MIN and MAX
			for i := range a.aggs {
				s := &a.aggs[i]
				if v := e.Row[s.off+1]; s.arranged && !v.IsNull() {
					if err := a.arrange(st, s, &a.accs[i], nil, v, w); err != nil {
						return err
					}
				}
			}
			continue
		}
		if err := addProduct(count, e.Row[1].Int(), w); err != nil {
			return err
		}
		for i := range a.aggs {
			s, acc := &a.aggs[i], &a.accs[i]
			fields := e.Row[s.off+1 : s.off+1+s.fields()]
			switch {
			case s.arranged:
			case s.insertOnly:
				if !fields[0].IsNull() {
					if err := s.addExtreme(acc, fields[0], w); err != nil {
						return err
					}
				}
			default:
				if err := s.load(&a.part, fields); err != nil {
					return err
				}
				if err := s.merge(acc, &a.part, w); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// merge adds w times the algebraic state src to dst.
func (s *aggSpec) merge(dst, src *accum, w int64) error {
	switch s.fn {
	case fnCount:
		return addProduct(&dst.n, src.n, w)
	case fnBoolAnd, fnBoolOr:
		if err := addProduct(&dst.t, src.t, w); err != nil {
			return err
		}
		return addProduct(&dst.f, src.f, w)
	}
	if err := addProduct(&dst.n, src.n, w); err != nil {
		return err
	}
	if s.stats() {
		if err := addScaled(&dst.sq, &src.sq, w); err != nil {
			return err
		}
	}
	switch s.acc {
	case accInt:
		p, ok := src.i.mul(w)
		if ok {
			p, ok = dst.i.add(p)
		}
		if !ok {
			return errs.New(errs.NumericOutOfRange, "numeric value out of range")
		}
		dst.i = p
	case accNumeric, accFloat:
		if err := addScaled(&dst.d, &src.d, w); err != nil {
			return err
		}
		for _, sc := range src.scales {
			n, ok := mul128(sc.n, w).int64()
			if !ok {
				return errs.New(errs.NumericOutOfRange, "row count out of range")
			}
			var err error
			if dst.scales, err = addScale(dst.scales, sc.scale, n); err != nil {
				return err
			}
		}
		for _, c := range [...]struct{ d, s *int64 }{{&dst.pinf, &src.pinf}, {&dst.ninf, &src.ninf}, {&dst.nan, &src.nan}} {
			if err := addProduct(c.d, *c.s, w); err != nil {
				return err
			}
		}
	case accInterval:
		for k := range dst.iv {
			sum, ok := int128Of(dst.iv[k]).add(mul128(src.iv[k], w))
			r, fits := sum.int64()
			if !ok || !fits {
				return errs.New(errs.DatetimeOverflow, "interval out of range")
			}
			dst.iv[k] = r
		}
	}
	return nil
}

// addProduct adds x·w to the count *n.
func addProduct(n *int64, x, w int64) error {
	p, ok := mul128(x, w).int64()
	if !ok {
		return errs.New(errs.NumericOutOfRange, "row count out of range")
	}
	return addCount(n, p)
}

// mul returns a·w, or false on overflow.
func (a int128) mul(w int64) (int128, bool) {
	neg := (a.hi < 0) != (w < 0)
	if a.hi < 0 {
		a = a.neg()
	}
	uw := uint64(w)
	if w < 0 {
		uw = -uw
	}
	h1, lo := bits.Mul64(a.lo, uw)
	h2, l2 := bits.Mul64(uint64(a.hi), uw)
	hi, c := bits.Add64(h1, l2, 0)
	if h2 != 0 || c != 0 || hi >= 1<<63 {
		return int128{}, false
	}
	r := int128{hi: int64(hi), lo: lo}
	if neg {
		r = r.neg()
	}
	return r, true
}

// RowBucket returns an expression whose value is the bucket of the whole
// input row (zset.Bucket of its key encoding), the bucket an exchange by
// row routes it by: the group key of a partial aggregate's MIN and MAX,
// the partition of a partial top-k. Each operator needs its own: the
// expression keeps scratch space.
func RowBucket() plan.Expr { return &rowBucket{} }

// rowBucket is RowBucket's expression.
type rowBucket struct {
	buf []byte
}

func (b *rowBucket) Type() types.Type { return types.Of(types.Int4) }

func (b *rowBucket) Eval(row zset.Row) (types.Value, error) {
	b.buf = zset.EncodeKey(b.buf[:0], row...)
	return types.MakeInt(types.Int4, int64(zset.Bucket(b.buf))), nil
}

func (b *rowBucket) String() string { return "bucket" }
