package ops

import (
	"context"
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// setFixpoint maintains a UNION (set) recursion: the least set r with
// base ⊆ r and step(r) ⊆ r, where step is linear in r and monotone in its
// side inputs (filters, projections and inner joins).
//
// State, for every row that is in r or has a derivation:
//
//	prefix(row) | EncodeRow(row) → varint(base count) varint(derivation count) byte(in r)
//
// The base count is the row's weight in the non-recursive term; the
// derivation count is its weight in step(r), r being what the body's
// working table holds. At rest a row is in r exactly when its two counts
// sum to more than zero.
//
// Counting alone cannot delete a row whose derivations go round a cycle
// (a reachability loop keeps supporting itself), so deletes use
// delete-and-rederive:
//
//  1. Apply the base delta and the side inputs' deletions; every row of r
//     that lost a derivation is suspect.
//  2. Over-delete: remove the suspects from r (and from the body's working
//     table), and with them, iteration by iteration, every row of r that
//     loses a derivation as a result. Rows still in the non-recursive
//     term are never suspect: they hold by themselves.
//  3. Re-derive and insert: apply the side inputs' insertions; a row not
//     in r whose counts sum to more than zero (derivable from what is left
//     of r, or newly in the base) enters r, and semi-naive iteration feeds
//     only the rows that just entered through the body, until nothing new
//     enters.
//
// Cost: an insert-only step is semi-naive evaluation, O(new rows × join
// fan-out). A delete costs O(rows derivable from the deleted facts) twice,
// to retract and to re-derive them; rows derived only from facts that stay
// are not touched. State: the counts above, O(|r|), plus the body's
// arrangements of r and of the side inputs.
type setFixpoint struct {
	spec   FixpointSpec
	prefix *bucketed
	facts  map[string]*fact
	enc    []byte // scratch: EncodeKey of a row
	key    []byte
	val    []byte
}

// fact is one row's state during a step.
type fact struct {
	row         zset.Row
	bucket      int // of EncodeKey(row), the key the row is routed by
	base, deriv int64
	in, wasIn   bool
}

func (x *fact) derivable() bool { return x.base+x.deriv > 0 }

// Step implements Operator.
func (f *setFixpoint) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	return f.StepOn(ctx, st, in, Serial)
}

// StepOn implements ParallelOperator. A row's state belongs to the worker
// owning the row's bucket: the base delta comes routed so, and the body's
// output goes through x.ByRow (derive). Every loop condition is agreed
// on by all the workers, so that they iterate together; the rows of an
// iteration are the union of the workers'.
func (f *setFixpoint) StepOn(ctx context.Context, st state.Store, in []zset.Batch, x Exchange) (zset.Batch, error) {
	f.facts = map[string]*fact{}
	defer func() { f.facts = nil }()

	// 1. The base delta and the side inputs' deletions.
	var suspects []*fact
	for _, e := range in[0] {
		x, err := f.fact(st, e.Row)
		if err != nil {
			return nil, err
		}
		if x.base, err = zset.AddWeight(x.base, e.Weight); err != nil {
			return nil, err
		}
		if e.Weight < 0 {
			suspects = append(suspects, x)
		}
	}
	sides := sideDeltas(f.spec, in, func(w int64) bool { return w < 0 })
	changed, err := x.Any(sides != nil)
	if err != nil {
		return nil, err
	}
	if changed {
		out, err := derive(ctx, st, f.spec, sides, x)
		if err != nil {
			return nil, err
		}
		if suspects, err = f.addDerivations(st, out, suspects, true); err != nil {
			return nil, err
		}
	}

	// 2. Over-delete.
	var frontier []*fact
	for _, x := range suspects {
		if x.in && x.base <= 0 {
			x.in = false
			frontier = append(frontier, x)
		}
	}
	for {
		more, err := x.Any(len(frontier) > 0)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err // one look per iteration: the loop may run to its limit
		}
		retract := make(zset.Batch, len(frontier))
		for i, r := range frontier {
			retract[i] = zset.Entry{Row: r.row, Weight: -1}
		}
		out, err := derive(ctx, st, f.spec, map[string]zset.Batch{f.spec.Working: retract}, x)
		if err != nil {
			return nil, err
		}
		lost, err := f.addDerivations(st, out, nil, true)
		if err != nil {
			return nil, err
		}
		frontier = frontier[:0]
		for _, r := range lost {
			if r.in && r.base <= 0 {
				r.in = false
				frontier = append(frontier, r)
			}
		}
	}

	// 3. The side inputs' insertions, re-derivation and semi-naive
	// insertion.
	sides = sideDeltas(f.spec, in, func(w int64) bool { return w > 0 })
	if changed, err = x.Any(sides != nil); err != nil {
		return nil, err
	}
	if changed {
		out, err := derive(ctx, st, f.spec, sides, x)
		if err != nil {
			return nil, err
		}
		if _, err := f.addDerivations(st, out, nil, false); err != nil {
			return nil, err
		}
	}
	var entered []*fact
	for _, r := range f.facts {
		if !r.in && r.derivable() {
			r.in = true
			entered = append(entered, r)
		}
	}
	for iter := 1; ; iter++ {
		more, err := x.Any(len(entered) > 0)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err // one look per iteration: the loop may run to its limit
		}
		if iter > f.spec.MaxIterations {
			return nil, iterationLimit(f.spec, "the recursive term still derives new rows (or the recursion is deeper than that)")
		}
		add := make(zset.Batch, len(entered))
		for i, r := range entered {
			add[i] = zset.Entry{Row: r.row, Weight: 1}
		}
		out, err := derive(ctx, st, f.spec, map[string]zset.Batch{f.spec.Working: add}, x)
		if err != nil {
			return nil, err
		}
		gained, err := f.addDerivations(st, out, nil, false)
		if err != nil {
			return nil, err
		}
		entered = entered[:0]
		for _, r := range gained {
			if !r.in && r.derivable() {
				r.in = true
				entered = append(entered, r)
			}
		}
	}
	return f.finish(st)
}

// addDerivations adds the body's output to the derivation counts and
// appends to dst the rows whose count went down (lost) or up (!lost).
func (f *setFixpoint) addDerivations(st state.Store, out zset.Batch, dst []*fact, lost bool) ([]*fact, error) {
	for _, e := range out {
		x, err := f.fact(st, e.Row)
		if err != nil {
			return nil, err
		}
		if x.deriv, err = zset.AddWeight(x.deriv, e.Weight); err != nil {
			return nil, err
		}
		if (e.Weight < 0) == lost {
			dst = append(dst, x)
		}
	}
	return dst, nil
}

// fact returns the state of row, loading it on first use in this step.
func (f *setFixpoint) fact(st state.Store, row zset.Row) (*fact, error) {
	// The map is keyed by the exact row, which fixes the bucket: look it
	// up before hashing.
	plen := f.prefix.plen()
	f.key = zset.EncodeRow(append(f.key[:0], f.prefix.at(0)...), row)
	if x, ok := f.facts[string(f.key[plen:])]; ok {
		return x, nil
	}
	k := string(f.key[plen:])
	f.enc = zset.EncodeKey(f.enc[:0], row...)
	x := &fact{row: row, bucket: zset.Bucket(f.enc)}
	copy(f.key, f.prefix.at(x.bucket))
	v, ok, err := st.Get(f.key)
	if err != nil {
		return nil, err
	}
	if ok {
		var n int
		if x.base, n = binary.Varint(v); n <= 0 {
			return nil, corrupt("recursive base count")
		}
		v = v[n:]
		if x.deriv, n = binary.Varint(v); n <= 0 || len(v) != n+1 {
			return nil, corrupt("recursive derivation count")
		}
		x.in = v[n] == 1
		x.wasIn = x.in
	}
	f.facts[k] = x
	return x, nil
}

// finish writes the touched rows' state back and returns the change of r.
func (f *setFixpoint) finish(st state.Store) (zset.Batch, error) {
	var out zset.Batch
	for k, x := range f.facts {
		if x.base < 0 || x.deriv < 0 {
			return nil, negativeCount("recursive query row")
		}
		if x.in != x.derivable() {
			return nil, corrupt("recursive query state (a row in the result without a derivation)")
		}
		f.key = append(append(f.key[:0], f.prefix.at(x.bucket)...), k...)
		var err error
		if x.base == 0 && x.deriv == 0 {
			err = st.Delete(f.key)
		} else {
			f.val = binary.AppendVarint(f.val[:0], x.base)
			f.val = binary.AppendVarint(f.val, x.deriv)
			flag := byte(0)
			if x.in {
				flag = 1
			}
			err = st.Set(f.key, append(f.val, flag))
		}
		if err != nil {
			return nil, err
		}
		switch {
		case x.in && !x.wasIn:
			out = append(out, zset.Entry{Row: x.row, Weight: 1})
		case !x.in && x.wasIn:
			out = append(out, zset.Entry{Row: x.row, Weight: -1})
		}
	}
	return zset.Consolidate(out)
}
