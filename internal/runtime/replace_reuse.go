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
// parts of the old circuit the new one still has (docs/sql.md, "What a
// replacement recomputes"). An operator of the new circuit takes over the
// state of an old operator with the same state identity
// (diff.Circuit.StateIdentities: a fingerprint of its plan and everything
// below it, its scans named by relation id and column positions and
// types), when both circuits were bound in the same time zone with the
// same recursion limit: the old operator's state is exact for its input
// now, which is the new operator's input too. When the two operators'
// ids (their positions in the circuits) differ, the entries move to the
// new id.

// replaceReuse is what a replacement keeps of the old view's state.
type replaceReuse struct {
	plan *diff.Reuse // nil: nothing is kept
	// from gives, for each kept operator of the new circuit, the id of
	// the old operator whose state it takes over.
	from map[int]int
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
	byIdentity := map[[32]byte]int{} // the lowest old id of each identity
	for _, id := range old.circuit.StatefulOperators() {
		if fp, ok := was[id]; ok {
			if _, dup := byIdentity[fp]; !dup {
				byIdentity[fp] = id
			}
		}
	}
	now := n.circuit.StateIdentities(scanIdentity(base))
	source := func(id int) (int, bool) {
		fp, ok := now[id]
		if !ok {
			return 0, false
		}
		if w, ok := was[id]; ok && w == fp {
			return id, true // in place
		}
		from, ok := byIdentity[fp]
		return from, ok
	}
	p := n.circuit.PlanReuse(func(id int) bool {
		_, ok := source(id)
		return ok
	})
	if len(p.Kept) == 0 {
		return r
	}
	from := map[int]int{}
	for _, id := range p.Kept {
		// Every operator below a seed has its counterpart (its identity
		// follows from the seed's); should one not, nothing is kept.
		src, ok := source(id)
		if !ok {
			return r
		}
		from[id] = src
	}
	r.plan, r.from = p, from
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

// keepState leaves, of view id's operator state, the entries of the
// operators r keeps, each under its new id: in every bucket, the entries
// of a kept operator whose id changed are read, every entry but those of
// the operators kept in place is deleted, and the entries read are
// written under their new ids. It deletes all of it when r keeps nothing.
func (r replaceReuse) keepState(st state.Store, id uint64) error {
	prefix := relPrefix(nsOpState, id)
	if r.plan == nil {
		return deletePrefix(st, prefix)
	}
	var inPlace, moved []int
	for _, k := range r.plan.Kept {
		if r.from[k] == k {
			inPlace = append(inPlace, k)
		} else {
			moved = append(moved, k)
		}
	}
	slices.Sort(inPlace)
	opPrefix := func(bucket []byte, op int) []byte {
		return binary.BigEndian.AppendUint32(slices.Clip(bucket), uint32(op))
	}
	type entry struct{ key, value []byte }
	for b := range zset.Buckets {
		bucket := append(slices.Clip(prefix), byte(b))
		var writes []entry
		for _, k := range moved {
			from, to := opPrefix(bucket, r.from[k]), opPrefix(bucket, k)
			if err := st.Scan(from, state.PrefixEnd(from), func(key, value []byte) bool {
				writes = append(writes, entry{append(slices.Clip(to), key[len(from):]...), slices.Clone(value)})
				return true
			}); err != nil {
				return err
			}
		}
		lo := bucket
		for _, k := range inPlace {
			hi := opPrefix(bucket, k)
			if err := deleteRange(st, lo, hi); err != nil {
				return err
			}
			lo = state.PrefixEnd(hi)
		}
		if err := deleteRange(st, lo, state.PrefixEnd(bucket)); err != nil {
			return err
		}
		for _, e := range writes {
			if err := st.Set(e.key, e.value); err != nil {
				return err
			}
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
