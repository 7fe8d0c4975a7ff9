package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// CREATE OR REPLACE MATERIALIZED VIEW keeps the operator state of the
// parts of the old circuit the new one still has (docs/sql.md, "CREATE OR
// REPLACE MATERIALIZED VIEW"). An operator of the new circuit takes over
// the old one's state when both have the same id (its position in the
// circuit) and the same state identity (diff.Circuit.StateIdentities: a
// fingerprint of its plan and everything below it, its scans named by
// relation id and column positions and types), and both circuits were
// bound in the same time zone with the same recursion limit. The old
// state of such an operator is exact for its input now, which is the new
// operator's input too.

// replaceReuse is what a replacement keeps of the old view's state.
type replaceReuse struct {
	plan *diff.Reuse // nil: nothing is kept
	// stateful counts the new circuit's operators that keep state.
	stateful int
}

// planReplaceReuse decides which operators of n's circuit keep the state
// old's circuit left, old being resolved in cat and n in base (cat
// without old).
func planReplaceReuse(cat, base *catalog, old, n *object) replaceReuse {
	r := replaceReuse{stateful: len(n.circuit.StatefulOperators())}
	if old.circuit == nil || old.zone.Name() != n.zone.Name() || old.maxIterations != n.maxIterations {
		return r
	}
	was := old.circuit.StateIdentities(scanIdentity(cat))
	now := n.circuit.StateIdentities(scanIdentity(base))
	p := n.circuit.PlanReuse(func(id int) bool {
		w, ok := was[id]
		return ok && now[id] == w
	})
	if len(p.Kept) > 0 {
		r.plan = p
	}
	return r
}

// scanIdentity names a scanned relation by what its rows are: the id of
// the relation and the positions and types of the columns read.
func scanIdentity(cat *catalog) func(rel string) (string, bool) {
	return func(rel string) (string, bool) {
		o, pos := cat.input(rel)
		if o == nil {
			return "", false
		}
		if pos == nil {
			pos = make([]int, len(o.cols))
			for i := range pos {
				pos[i] = i
			}
		}
		var sb strings.Builder
		sb.WriteString(strconv.FormatUint(o.id, 10))
		for _, p := range pos {
			fmt.Fprintf(&sb, "|%d:%s", p, o.cols[p].Type)
		}
		return sb.String(), true
	}
}

// note is the replacement's NOTICE: how many of the circuit's stateful
// operators kept their state and how many were computed again.
func (r replaceReuse) note(view string) string {
	kept := 0
	if r.plan != nil {
		kept = len(r.plan.Kept)
	}
	return fmt.Sprintf("materialized view %q: %d of %d stateful operators kept their state, %d backfilled",
		view, kept, r.stateful, r.stateful-kept)
}

// dropUnkeptState deletes every operator state entry of view id but those
// of the operators r keeps (all of them when r keeps none).
func (r replaceReuse) dropUnkeptState(st state.Store, id uint64) error {
	prefix := relPrefix(nsOpState, id)
	if r.plan == nil {
		return deletePrefix(st, prefix)
	}
	kept := slices.Clone(r.plan.Kept)
	slices.Sort(kept)
	for b := range zset.Buckets {
		bucket := append(slices.Clip(prefix), byte(b))
		lo := bucket
		for _, k := range kept {
			hi := binary.BigEndian.AppendUint32(slices.Clip(bucket), uint32(k))
			if err := deleteRange(st, lo, hi); err != nil {
				return err
			}
			lo = state.PrefixEnd(hi)
		}
		if err := deleteRange(st, lo, state.PrefixEnd(bucket)); err != nil {
			return err
		}
	}
	return nil
}

// backfillReusing computes n's contents over the state r keeps: the kept
// operators' contents feed the operators that start again, which take
// the whole of the relations only they read.
func backfillReusing(ctx context.Context, st state.Store, cat *catalog, n *object, r replaceReuse) (zset.Batch, error) {
	if r.plan == nil {
		return backfill(ctx, st, cat, n)
	}
	deltas := map[string]zset.Batch{}
	for _, rel := range r.plan.Relations(n.circuit) {
		if n.circuit.LookedUp(rel) {
			continue // read by key from its stored rows
		}
		src, pos := cat.input(rel)
		if src == nil {
			return nil, errs.Newf(errs.Internal, "internal error: circuit reads unknown relation %q", rel)
		}
		rows, err := sourceRows(ctx, st, src, n.name)
		if err != nil {
			return nil, err
		}
		deltas[rel] = projectRows(rows, pos)
	}
	out, err := n.circuit.StepReusing(ctx, st, deltas, r.plan)
	if err == nil {
		err = chargeEpochWrite(ctx, out, viewChangeWrites)
	}
	return out, err
}
