package ops

import (
	"context"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// DefaultMaxIterations bounds the iterations of a recursive query's loop
// in one step unless the query sets its own limit.
const DefaultMaxIterations = 10000

// Body is the recursive term of a WITH RECURSIVE query as an incremental
// circuit: its inputs are pseudo relations (the working table and the
// side inputs, the parts of the recursive term that do not read the
// working table), and each Step maps their deltas to the delta of the
// term's output, keeping its own state (the working table and the side
// inputs arranged by join key). The differentiation pass builds it from a
// plan whose path from the working table to the output holds only
// filters, projections and inner joins, so that its output is linear in
// the working table: Step with a working-table delta d and no other
// change returns Step(d) evaluated over the current side inputs.
//
// On several workers (Exchange), every worker's instance of the body steps
// together, over its part of the deltas, and the body's output is the sum
// of theirs.
type Body interface {
	Step(ctx context.Context, st state.Store, deltas map[string]zset.Batch, x Exchange) (zset.Batch, error)
}

// Exchange is how the instances of an operator on the workers of one
// parallel step work together. Every instance makes the same calls in the
// same order (the calls are barriers: each returns once every worker has
// made it), and passes the same Exchange to its Body.
type Exchange interface {
	// Any reports whether any worker passed true.
	Any(local bool) (bool, error)
	// Max returns the largest value the workers passed.
	Max(local int64) (int64, error)
	// ByRow sends every row of b to the worker owning the bucket of the
	// whole row and returns, consolidated, the rows this worker gets.
	ByRow(b zset.Batch) (zset.Batch, error)
}

// Serial is the Exchange of a step on one worker.
var Serial Exchange = serial{}

type serial struct{}

func (serial) Any(local bool) (bool, error)           { return local, nil }
func (serial) Max(local int64) (int64, error)         { return local, nil }
func (serial) ByRow(b zset.Batch) (zset.Batch, error) { return b, nil }

// ParallelOperator is an operator whose instances on the workers of a step
// run together: its input is routed by the bucket of the whole row, and
// StepOn is one instance's part of the step, working with the others
// through x. Step is StepOn with Serial.
type ParallelOperator interface {
	Operator
	StepOn(ctx context.Context, st state.Store, in []zset.Batch, x Exchange) (zset.Batch, error)
}

// FixpointSpec describes a recursive query to NewFixpoint.
type FixpointSpec struct {
	// Name is the WITH query's name, for messages.
	Name string
	// Body is the recursive term. For UNION ALL recursion its working
	// table rows, and its output rows, end with an extra int8 column: the
	// iteration that derived the row (0 for the non-recursive term), which
	// the body carries through unchanged.
	Body Body
	// Working names the working table among Body's relations.
	Working string
	// Sides name Body's side inputs: the operator's input i+1 is the delta
	// of Sides[i]; input 0 is the delta of the non-recursive term.
	Sides []string
	// MaxIterations bounds the loop of one step; 0 means
	// DefaultMaxIterations.
	MaxIterations int
}

// NewFixpoint returns the operator maintaining the least fixpoint
// r = base ∪ step(r) of a recursive query: with distinct (UNION) by
// delete-and-rederive over derivation counts (fixpoint_set.go), without it
// (UNION ALL) by iterating over the deltas of each iteration
// (bagFixpoint, below). It is a ParallelOperator: on several workers its
// instances iterate together. Its state lives under prefix: the body's under
// prefix|'b' (the caller builds the body with that prefix), its own under
// prefix|'d'.
func NewFixpoint(prefix Prefix, spec FixpointSpec, distinct bool) ParallelOperator {
	if spec.MaxIterations <= 0 {
		spec.MaxIterations = DefaultMaxIterations
	}
	if distinct {
		return &setFixpoint{spec: spec, prefix: prefix.With('d').expand()}
	}
	return &bagFixpoint{spec: spec}
}

// BodyPrefix is the state prefix of the body of the fixpoint whose
// operator prefix is prefix: the body's operators keep their state in the
// buckets of their own keys, each under prefix | 'b' | its number.
func BodyPrefix(prefix Prefix) Prefix { return prefix.With('b') }

// iterationLimit is the error of a recursive query that does not converge
// within its iteration limit.
func iterationLimit(spec FixpointSpec, hint string) error {
	return errs.Newf(errs.ProgramLimitExceeded,
		"recursive query %q did not reach a fixpoint within %d iterations (rockstream.max_recursion_iterations): %s",
		spec.Name, spec.MaxIterations, hint)
}

// sideDeltas returns the side inputs' deltas by relation name, keeping
// only the entries keep accepts, or nil when none remain.
func sideDeltas(spec FixpointSpec, in []zset.Batch, keep func(w int64) bool) map[string]zset.Batch {
	var m map[string]zset.Batch
	for i, name := range spec.Sides {
		var d zset.Batch
		for _, e := range in[1+i] {
			if keep(e.Weight) {
				d = append(d, e)
			}
		}
		if len(d) > 0 {
			if m == nil {
				m = map[string]zset.Batch{}
			}
			m[name] = d
		}
	}
	return m
}

func anyWeight(int64) bool { return true }

// bagFixpoint maintains a UNION ALL recursion, the multiset
// W0 + W1 + W2 + ... with W0 = base and Wk = step(Wk−1), where step is
// linear in its working table. Rows carry the iteration k that derived
// them as an extra column inside the body, so the body's arrangements
// hold each Wk apart: this is the nested circuit of DBSP with timestamps
// (epoch, iteration), with the iteration as data. Per step, with changed
// inputs:
//
//	ΔW0 = Δbase
//	ΔWk = step'(ΔWk−1) + (step' − step)(Wk−1)
//
// where step' reads the side inputs after the change. The second term,
// for every k at once, is the body's output when only the side inputs
// change (its arrangements still hold the old W); the first is the body's
// output for the working-table delta ΔWk−1 alone. Iteration k is final
// once both are known, so the loop ends when ΔWk is empty and no later
// iteration has pending changes. The output is Σ ΔWk without the
// iteration column. Cost: O(changed rows × join fan-out) per iteration,
// over as many iterations as the deepest changed derivation; state: the
// body's arrangements, which hold every derived row once per iteration
// deriving it.
type bagFixpoint struct {
	spec FixpointSpec
	rows rowAlloc
}

// derive runs the body over deltas and returns its output, each row on
// the worker owning its bucket: each worker's share of the output is then
// the exact partition of the whole, consolidated.
func derive(ctx context.Context, st state.Store, spec FixpointSpec, deltas map[string]zset.Batch, x Exchange) (zset.Batch, error) {
	out, err := spec.Body.Step(ctx, st, deltas, x)
	if err != nil {
		return nil, err
	}
	return x.ByRow(out)
}

// Step implements Operator.
func (f *bagFixpoint) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	f.rows.bind(ctx)
	return f.StepOn(ctx, st, in, Serial)
}

// StepOn implements ParallelOperator. Every loop condition is agreed on
// by all the workers, so that they iterate together.
func (f *bagFixpoint) StepOn(ctx context.Context, st state.Store, in []zset.Batch, x Exchange) (zset.Batch, error) {
	// (step' − step)(Wk−1) for every k, from the side inputs' change.
	pending := map[int64]zset.Batch{}
	last := int64(0)
	sides := sideDeltas(f.spec, in, anyWeight)
	changed, err := x.Any(sides != nil)
	if err != nil {
		return nil, err
	}
	if changed {
		out, err := derive(ctx, st, f.spec, sides, x)
		if err != nil {
			return nil, err
		}
		for _, e := range out {
			k := iterationOf(e.Row) + 1
			pending[k] = append(pending[k], f.retag(e, k))
			last = max(last, k)
		}
	}
	if last, err = x.Max(last); err != nil {
		return nil, err
	}
	total := append(zset.Batch(nil), in[0]...)
	prev := make(zset.Batch, len(in[0]))
	for i, e := range in[0] {
		row := f.rows.alloc(len(e.Row) + 1)
		copy(row, e.Row)
		row[len(e.Row)] = types.MakeInt(types.Int8, 0)
		prev[i] = zset.Entry{Row: row, Weight: e.Weight}
	}
	for k := int64(1); ; k++ {
		more, err := x.Any(len(prev) > 0)
		if err != nil {
			return nil, err
		}
		if !more && k > last {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err // one look per iteration: the loop may run to its limit
		}
		var next zset.Batch
		if more {
			out, err := derive(ctx, st, f.spec, map[string]zset.Batch{f.spec.Working: prev}, x)
			if err != nil {
				return nil, err
			}
			next = make(zset.Batch, len(out))
			for i, e := range out {
				next[i] = f.retag(e, k)
			}
		}
		next = append(next, pending[k]...)
		delete(pending, k)
		if next, err = zset.Consolidate(next); err != nil {
			return nil, err
		}
		// Each worker holds its rows' share of the iteration (derive), so
		// this worker's rows are rows of the whole iteration.
		if len(next) > 0 && k > int64(f.spec.MaxIterations) {
			return nil, iterationLimit(f.spec, "the recursion is deeper than that (a UNION ALL recursion over cyclic data never ends)")
		}
		for _, e := range next {
			total = append(total, zset.Entry{Row: e.Row[: len(e.Row)-1 : len(e.Row)-1], Weight: e.Weight})
		}
		prev = next
	}
	return zset.Consolidate(total)
}

// retag returns e with its row's last column (the iteration) set to k, in
// a new row: rows in a batch are never modified.
func (f *bagFixpoint) retag(e zset.Entry, k int64) zset.Entry {
	row := f.rows.alloc(len(e.Row))
	copy(row, e.Row)
	row[len(row)-1] = types.MakeInt(types.Int8, k)
	return zset.Entry{Row: row, Weight: e.Weight}
}

// iterationOf returns the iteration column of a body row.
func iterationOf(row zset.Row) int64 { return row[len(row)-1].Int() }
