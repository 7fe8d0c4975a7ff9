package ops

import (
	"bytes"
	"context"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Aggregate groups its input and maintains aggregates per group.
//
// State, under the operator's prefix:
//
//	'g' | EncodeKey(group values) → EncodeRow(group values, count(*), fields...)
//
// holds each live group's row count and each aggregate's algebraic state
// (counts, exact sums, the current MIN/MAX, true/false counts; see
// aggSpec.fields). DISTINCT aggregates, MIN and MAX also keep
//
//	'a' | aggregate index | EncodeKey(group values) | EncodeKey(value) | 0x01 | EncodeRow(value) → varint(count)
//
// so that a value's contribution is added when its count becomes positive
// and removed when it returns to zero, and so that the extreme after a
// deletion is the first (MIN) or last (MAX) key of the group. string_agg
// arranges its rows in result order under the same prefix
// (aggordered.go):
//
//	'a' | aggregate index | EncodeKey(group values) | sort key → varint(count)
//
// and the ordered-set aggregates (percentile_cont, percentile_disc, mode)
// their values in WITHIN GROUP order (aggorderedset.go):
//
//	'a' | aggregate index | EncodeKey(group values) | EncodeKey(value) [| EncodeRow(value)] → varint(count)
//
// When the group values may be equal yet written differently (NUMERIC 1.0
// and 1.00), it also counts each group's representations, to show the
// smallest present (see class.go):
//
//	'r' | EncodeKey(group values) | 0x01 | EncodeRow(group values) → varint(count)
//
// Per step, for each group the delta touches: read its state once, fold in
// the delta's rows, and emit −(group, old aggregates) +(group, new ones)
// unless they are identical. A group whose row count reaches zero is
// deleted and only retracted. Without GROUP BY there is exactly one group
// that never disappears: its row is emitted on the first step, even over
// empty input, and its state is written then so later steps know.
type Aggregate struct {
	groupBy     []plan.Expr
	aggs        []aggSpec
	groupPrefix *bucketed
	// repPrefix, when the group values can be equal yet written
	// differently, prefixes the counts of each group's representations.
	repPrefix *bucketed

	// Scratch, reused across steps.
	scratch struct {
		vals   []types.Value
		has    []bool
		keys   []byte
		inputs []aggInput
		refs   []keyRef
		okeys  [][][]byte // per batch row, its sort keys (aggInput.okeys)
		state  zset.Row
	}
	order  keyGrouper // sorts the rows by group key
	rows   rowAlloc
	one    [1]types.Value
	rep    []byte
	oldRep []byte
	key2   []byte
	cls    classScan
	accs   []accum
	part   accum // one partial's state, in a final step (aggpartial.go)
	key    []byte
	arrKey []byte
	endKey []byte
	buf    []byte
	rowBuf zset.Row

	// hint follows a step's reads and writes of the groups' states,
	// which it visits in key order (bucket, then group key): each starts
	// from where the previous one went in every tree of the store's
	// chain, not from the trees' roots.
	hint state.Hint
}

// NewAggregate returns an aggregate keeping its state under prefix. The
// output columns are the groupBy values, then one per aggregate, typed as
// PostgreSQL types them (types.AggregateType).
func NewAggregate(prefix Prefix, groupBy []plan.Expr, aggs []plan.AggCall) (*Aggregate, error) {
	_, byValue := singleRowBucket(groupBy)
	expand := func(p Prefix) *bucketed {
		t := p.expand()
		t.byValue = byValue
		return t
	}
	a := &Aggregate{groupBy: groupBy, groupPrefix: expand(prefix.With('g'))}
	for _, g := range groupBy {
		switch g.Type().ID {
		case types.Numeric, types.Float4, types.Float8, types.Interval, types.Jsonb:
			// Values of these types can be equal yet print differently.
			a.repPrefix = expand(prefix.With('r'))
		}
	}
	off := len(groupBy) + 1
	for i, c := range aggs {
		s, err := newAggSpec(c)
		if err != nil {
			return nil, err
		}
		if s.arranged {
			s.prefix = expand(aggPrefix(prefix, i))
		}
		if s.fn == fnMode {
			s.modePrefix = expand(modePrefix(prefix, i))
		}
		s.off = off
		off += s.fields()
		a.aggs = append(a.aggs, s)
	}
	a.accs = make([]accum, len(aggs))
	a.cls.init()
	return a, nil
}

// ResultTypes returns the aggregates' result types, in order.
func (a *Aggregate) ResultTypes() []types.Type {
	ts := make([]types.Type, len(a.aggs))
	for i := range a.aggs {
		ts[i] = a.aggs[i].result
	}
	return ts
}

// StateNames describes the algebraic state of each aggregate, for EXPLAIN.
func (a *Aggregate) StateNames() []string {
	ns := make([]string, len(a.aggs))
	for i := range a.aggs {
		ns[i] = a.aggs[i].stateName()
	}
	return ns
}

// Arranged reports whether aggregate i keeps a (group, value) arrangement.
func (a *Aggregate) Arranged(i int) bool { return a.aggs[i].arranged }

// InsertOnly declares that every row the aggregate will take is an
// insertion, its input being insert-only (an append-only table through
// filters, projections and inner joins): MIN and MAX then keep the
// current extreme in the group's state instead of an arrangement of every
// value, bit_and and bit_or their running value instead of per-bit counts,
// and a retraction fails as an internal error. It is called
// before the first step, and the same way for every circuit built over
// the aggregate's state.
func (a *Aggregate) InsertOnly() {
	for i := range a.aggs {
		switch s := &a.aggs[i]; {
		case s.call.Distinct:
		case s.fn == fnMin || s.fn == fnMax:
			s.arranged, s.insertOnly = false, true
		case s.fn == fnBitAnd || s.fn == fnBitOr:
			s.insertOnly = true
		}
	}
}

// IsInsertOnly reports whether InsertOnly applies to aggregate i.
func (a *Aggregate) IsInsertOnly(i int) bool { return a.aggs[i].insertOnly }

// aggInput is one delta row, evaluated: its group key and the arguments
// that pass their FILTER and are not NULL.
type aggInput struct {
	key    []byte        // EncodeKey(group values)
	group  []types.Value // group values
	args   []types.Value // one per aggregate
	has    []bool        // args[i] counts (FILTER true, non-NULL)
	weight int64
	// okeys holds, for string_agg, each row's sort key (aggordered.go).
	okeys [][]byte
}

// Step implements Operator.
func (a *Aggregate) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	a.rows.bind(ctx)
	b := in[0]
	global := len(a.groupBy) == 0
	if len(b) == 0 && !global {
		return nil, nil
	}
	defer a.trimScratch()
	a.hint = state.Hint{}
	inputs, err := a.evaluate(ctx, b)
	if err != nil {
		return nil, err
	}
	groups := 0
	for i := range inputs {
		if i == 0 || !bytes.Equal(inputs[i].key, inputs[i-1].key) {
			groups++
		}
	}
	out := make(zset.Batch, 0, 2*groups+1) // at most −old +new per group
	if len(inputs) == 0 {
		// Without GROUP BY the one group must exist after the first step.
		return a.group(ctx, st, nil, nil, nil, out)
	}
	for i, g := 0, 0; i < len(inputs); g++ {
		if err := Interrupted(ctx, g); err != nil {
			return nil, err
		}
		n := i + 1
		for n < len(inputs) && bytes.Equal(inputs[n].key, inputs[i].key) {
			n++
		}
		if out, err = a.group(ctx, st, inputs[i].key, inputs[i:n], nil, out); err != nil {
			return nil, err
		}
		i = n
	}
	return zset.Consolidate(out)
}

// evaluate computes every delta row's group key, FILTERs and arguments,
// and returns them sorted by the group key's bucket, then group key (ties
// in batch order).
//
// It runs in two passes so that no record is moved after it is built: the
// first evaluates each row in batch order into flat arrays at the row's
// place (values, flags, the encoded keys), the keys are ordered, and the
// second writes each aggInput once, at its sorted place, pointing into
// those arrays. On a batch of a million rows moving built records into
// sorted order cost a cache miss and a pointer-laden copy per row.
func (a *Aggregate) evaluate(ctx context.Context, b zset.Batch) ([]aggInput, error) {
	if len(b) == 0 {
		return nil, nil
	}
	ng, na := len(a.groupBy), len(a.aggs)
	// Scratch reused from step to step: nothing here outlives the step
	// (output rows and state copy what they keep).
	sc := &a.scratch
	sc.vals = resize(sc.vals, len(b)*(ng+na))
	sc.has = resize(sc.has, len(b)*na)
	clear(sc.has)
	sc.keys = sc.keys[:0]
	sc.refs = resize(sc.refs, len(b))
	if a.keepsOrderKeys() {
		sc.okeys = resize(sc.okeys, len(b))
	}
	vals, has, keys, refs := sc.vals, sc.has, sc.keys, sc.refs
	for i, e := range b {
		if err := Interrupted(ctx, i); err != nil {
			return nil, err
		}
		group := vals[i*(ng+na) : i*(ng+na)+ng : i*(ng+na)+ng]
		args := vals[i*(ng+na)+ng : (i+1)*(ng+na) : (i+1)*(ng+na)]
		has := has[i*na : (i+1)*na : (i+1)*na]
		for j, x := range a.groupBy {
			v, err := x.Eval(e.Row)
			if err != nil {
				return nil, err
			}
			group[j] = v
		}
		// The group's bucket, then its key: groups are visited in the
		// order of their state in the store.
		off := len(keys)
		keys = zset.EncodeKey(append(keys, 0), group...)
		keys[off] = byte(a.groupPrefix.bucketOf(keys[off+1:]))
		refs[i] = keyRef{off: uint32(off), end: uint32(len(keys)), idx: int32(i)}
		for j := range a.aggs {
			c := &a.aggs[j].call
			if c.Filter != nil {
				ok, err := isTrue(c.Filter, e.Row)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			if c.Arg == nil {
				has[j] = true // count(*)
				continue
			}
			v, err := c.Arg.Eval(e.Row)
			if err != nil {
				return nil, err
			}
			s := &a.aggs[j]
			// array_agg keeps NULL inputs as NULL elements; every other
			// aggregate skips them.
			// An ordered-set aggregate counts the rows with NULL
			// values too (aggorderedset.go).
			args[j], has[j] = v, !v.IsNull() || s.fn == fnArrayAgg || s.orderedSet() || s.hypothetical()
			if s.ordered() && has[j] {
				okeys := a.rowOrderKeys(i)
				if okeys[j], err = s.orderedKey(okeys[j][:0], e.Row, v); err != nil {
					return nil, err
				}
			}
			if s.orderedSet() && !v.IsNull() {
				okeys := a.rowOrderKeys(i)
				okeys[j] = s.orderedSetKey(okeys[j][:0], v)
			}
			if s.hypothetical() {
				okeys := a.rowOrderKeys(i)
				if okeys[j], err = s.hypotheticalKey(okeys[j][:0], e.Row); err != nil {
					return nil, err
				}
			}
		}
	}
	sc.keys = keys
	if ng > 0 {
		a.order.order(refs, keys)
	}
	sc.inputs = resize(sc.inputs, len(b))
	inputs := sc.inputs
	for p, r := range refs {
		i := int(r.idx)
		in := aggInput{
			key:    keys[r.off+1 : r.end : r.end],
			group:  vals[i*(ng+na) : i*(ng+na)+ng : i*(ng+na)+ng],
			args:   vals[i*(ng+na)+ng : (i+1)*(ng+na) : (i+1)*(ng+na)],
			has:    has[i*na : (i+1)*na : (i+1)*na],
			weight: b[i].Weight,
		}
		if sc.okeys != nil {
			in.okeys = sc.okeys[i]
		}
		inputs[p] = in
	}
	return inputs, nil
}

// rowOrderKeys returns batch row i's sort keys, one slot per aggregate,
// reusing the slots of an earlier step.
func (a *Aggregate) rowOrderKeys(i int) [][]byte {
	if a.scratch.okeys[i] == nil {
		a.scratch.okeys[i] = make([][]byte, len(a.aggs))
	}
	return a.scratch.okeys[i]
}

// keepsOrderKeys reports whether an aggregate keeps a sort key per row
// (ordered, ordered-set and hypothetical-set aggregates).
func (a *Aggregate) keepsOrderKeys() bool {
	for i := range a.aggs {
		if s := &a.aggs[i]; s.ordered() || s.orderedSet() || s.hypothetical() {
			return true
		}
	}
	return false
}

// keepScratchRows is the most batch rows an aggregate's scratch is kept
// for between steps. The scratch of a larger batch (a bulk COPY's million
// rows) is dropped after its step: kept, its values and records, which
// hold pointers, would be hundreds of megabytes that every later garbage
// collection scans, and would keep the batch's values alive.
const keepScratchRows = 1 << 14

// trimScratch drops the scratch of a batch larger than keepScratchRows.
func (a *Aggregate) trimScratch() {
	sc := &a.scratch
	if cap(sc.inputs) <= keepScratchRows {
		return
	}
	sc.vals, sc.has, sc.keys, sc.inputs, sc.refs, sc.okeys = nil, nil, nil, nil, nil, nil
}

// resize returns s with length n, reusing its storage when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, n+n/4)
}

// group folds one group's delta rows, or the partial aggregates of a
// final step (aggpartial.go), into its state and appends the group's
// output change to out.
func (a *Aggregate) group(ctx context.Context, st state.Store, gkey []byte, rows []aggInput, partials zset.Batch, out zset.Batch) (zset.Batch, error) {
	global := len(a.groupBy) == 0
	ng := len(a.groupBy)
	a.key = append(append(a.key[:0], a.groupPrefix.of(gkey)...), gkey...)
	raw, exists, err := state.GetHinted(st, a.key, &a.hint)
	if err != nil || (exists && len(rows) == 0 && len(partials) == 0) {
		return out, err // no input for an existing group: nothing changes
	}
	var gvals []types.Value
	var count int64
	var old zset.Row
	if exists {
		srow, err := zset.DecodeRowAppend(a.scratch.state[:0], raw)
		if err != nil {
			return nil, err
		}
		a.scratch.state = srow
		if len(srow) < ng+1 {
			return nil, corrupt("aggregate group")
		}
		gvals, count = srow[:ng], srow[ng].Int()
		for i := range a.aggs {
			s := &a.aggs[i]
			if len(srow) < s.off+s.fields() {
				return nil, corrupt("aggregate group")
			}
			if err := s.load(&a.accs[i], srow[s.off:s.off+s.fields()]); err != nil {
				return nil, err
			}
		}
		if count > 0 || global {
			if old, err = a.output(gvals); err != nil {
				return nil, err
			}
		}
	} else {
		for i := range a.accs {
			a.accs[i].reset()
		}
		if len(rows) > 0 {
			gvals = rows[0].group
		}
	}

	if err := a.foldPartials(ctx, st, partials, &count); err != nil {
		return nil, err
	}
	for r := range rows {
		if err := Interrupted(ctx, r+1); err != nil {
			return nil, err
		}
		in := &rows[r]
		if err := addCount(&count, in.weight); err != nil {
			return nil, err
		}
		for i := range a.aggs {
			if !in.has[i] {
				continue
			}
			s, acc := &a.aggs[i], &a.accs[i]
			if s.orderedSet() {
				var okey []byte
				if in.okeys != nil {
					okey = in.okeys[i]
				}
				if err := a.takeOrderedSet(st, s, acc, gkey, in.args[i], okey, in.weight); err != nil {
					return nil, err
				}
				continue
			}
			if s.hypothetical() {
				if err := a.takeHypothetical(st, s, acc, gkey, in.okeys[i], in.weight); err != nil {
					return nil, err
				}
				continue
			}
			if !s.arranged {
				if err := s.add(acc, in.args[i], in.weight); err != nil {
					return nil, err
				}
				continue
			}
			if s.ordered() {
				if err := a.arrangeOrdered(st, s, acc, gkey, in.okeys[i], in.weight); err != nil {
					return nil, err
				}
				continue
			}
			if err := a.arrange(st, s, acc, gkey, in.args[i], in.weight); err != nil {
				return nil, err
			}
		}
	}
	if count < 0 {
		return nil, negativeCount("aggregate group")
	}
	if a.repPrefix != nil && len(rows) > 0 {
		if gvals, err = a.representative(st, gkey, rows, gvals); err != nil {
			return nil, err
		}
	}
	for i := range a.aggs {
		s, acc := &a.aggs[i], &a.accs[i]
		if (s.orderedSet() || s.hypothetical()) && a.repPrefix != nil && len(rows) > 0 {
			// The fraction is evaluated over the group's values, whose
			// representative the rows may have changed.
			acc.dirty = true
		}
		if acc.dirty {
			switch {
			case s.ordered():
				acc.ext, err = a.orderedValue(st, s, gkey)
			case s.orderedSet():
				acc.ext, err = a.orderedSetValue(st, s, gkey, gvals, acc)
			case s.hypothetical():
				acc.ext, err = a.hypotheticalValue(st, s, gkey, gvals, acc)
			default:
				acc.ext, err = a.extreme(st, s, gkey)
			}
			if err != nil {
				return nil, err
			}
		}
	}

	if count == 0 && !global {
		if exists {
			if err := state.DeleteHinted(st, a.key, &a.hint); err != nil {
				return nil, err
			}
		}
		if old != nil {
			out = append(out, zset.Entry{Row: old, Weight: -1})
		}
		return out, nil
	}
	cur, err := a.output(gvals)
	if err != nil {
		return nil, err
	}
	srow := append(append(a.rowBuf[:0], gvals...), i8(count))
	for i := range a.aggs {
		srow = a.aggs[i].store(srow, &a.accs[i])
	}
	a.rowBuf = srow
	a.buf = zset.EncodeRow(a.buf[:0], srow)
	if err := state.SetHinted(st, a.key, a.buf, &a.hint); err != nil {
		return nil, err
	}
	if old != nil && identicalRows(old, cur) {
		return out, nil
	}
	if old != nil {
		out = append(out, zset.Entry{Row: old, Weight: -1})
	}
	return append(out, zset.Entry{Row: cur, Weight: 1}), nil
}

// arrange adds w copies of v to an arranged aggregate's counts of
// (group, value class, representation). For a DISTINCT aggregate, a class
// whose count becomes positive adds the contribution of its representative
// (its smallest representation present) once, one whose count returns to
// zero removes it, and a change of representative swaps the two.
func (a *Aggregate) arrange(st state.Store, s *aggSpec, acc *accum, gkey []byte, v types.Value, w int64) error {
	a.arrKey = s.classPrefix(a.arrKey[:0], gkey, v)
	a.one[0] = v
	a.rep = zset.EncodeRow(a.rep[:0], a.one[:])
	if s.fn == fnMin || s.fn == fnMax {
		acc.dirty = true
		a.key2 = append(append(a.key2[:0], a.arrKey...), a.rep...)
		var err error
		a.buf, err = addWeightAt(st, a.key2, w, a.buf)
		return err
	}
	cls := &a.cls
	if err := cls.load(st, a.arrKey); err != nil {
		return err
	}
	oldTotal, first, err := cls.summary()
	if err != nil {
		return err
	}
	a.oldRep = a.oldRep[:0]
	if oldTotal > 0 {
		a.oldRep = append(a.oldRep, cls.rep(first)...)
	}
	if _, err := cls.add(st, a.arrKey, a.rep, w); err != nil {
		return err
	}
	newTotal, first, err := cls.summary()
	if err != nil {
		return err
	}
	var newRep []byte
	if newTotal > 0 {
		newRep = cls.rep(first)
	}
	if oldTotal > 0 && newTotal > 0 && bytes.Equal(a.oldRep, newRep) {
		return nil
	}
	if oldTotal > 0 {
		old, err := decodeValue(a.oldRep)
		if err != nil {
			return err
		}
		if err := s.add(acc, old, -1); err != nil {
			return err
		}
	}
	if newTotal > 0 {
		if !bytes.Equal(newRep, a.rep) {
			if v, err = decodeValue(newRep); err != nil {
				return err
			}
		}
		return s.add(acc, v, 1)
	}
	return nil
}

// representative counts the rows' representations of the group values
// and returns the smallest one present, the group values the output shows
// (or cur when the group is gone).
func (a *Aggregate) representative(st state.Store, gkey []byte, rows []aggInput, cur []types.Value) ([]types.Value, error) {
	a.key2 = append(append(append(a.key2[:0], a.repPrefix.of(gkey)...), gkey...), repSep)
	cls := &a.cls
	if err := cls.load(st, a.key2); err != nil {
		return nil, err
	}
	for i := range rows {
		a.rep = zset.EncodeRow(a.rep[:0], rows[i].group)
		if _, err := cls.add(st, a.key2, a.rep, rows[i].weight); err != nil {
			return nil, err
		}
	}
	total, first, err := cls.summary()
	if err != nil || total <= 0 {
		return cur, err
	}
	return zset.DecodeRow(cls.rep(first))
}

// decodeValue decodes a one-value row encoding.
func decodeValue(b []byte) (types.Value, error) {
	row, err := zset.DecodeRow(b)
	if err != nil || len(row) != 1 {
		return types.Null, corrupt("aggregate value")
	}
	return row[0], nil
}

// extreme returns the group's smallest (MIN) or largest (MAX) value with a
// positive count, or NULL when there is none. Among equal values it takes
// the first (MIN) or last (MAX) representation by row encoding.
func (a *Aggregate) extreme(st state.Store, s *aggSpec, gkey []byte) (types.Value, error) {
	a.arrKey = append(append(a.arrKey[:0], s.prefix.of(gkey)...), gkey...)
	plen := len(a.arrKey)
	var (
		res     = types.Null
		scanErr error
	)
	fn := func(k, v []byte) bool {
		w, _, err := readWeight(v)
		if err != nil {
			scanErr = err
			return false
		}
		if w <= 0 {
			return true
		}
		// k is prefix | gkey | EncodeKey(value) | repSep | EncodeRow(value).
		_, rest, err := zset.DecodeKeyValue(k[plen:])
		if err != nil || len(rest) == 0 || rest[0] != repSep {
			scanErr = corrupt("min/max key")
			return false
		}
		res, scanErr = decodeValue(rest[1:])
		return false
	}
	var err error
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.arrKey)
	if s.fn == fnMin {
		err = st.Scan(a.arrKey, a.endKey, fn)
	} else {
		err = st.ScanReverse(a.arrKey, a.endKey, fn)
	}
	if err == nil {
		err = scanErr
	}
	return res, err
}

// output returns the group's output row from the current accumulators.
func (a *Aggregate) output(gvals []types.Value) (zset.Row, error) {
	row := a.rows.alloc(len(gvals) + len(a.aggs))
	copy(row, gvals)
	for i := range a.aggs {
		v, err := a.aggs[i].value(&a.accs[i])
		if err != nil {
			return nil, err
		}
		row[len(gvals)+i] = v
	}
	return row, nil
}

func identicalRows(a, b zset.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !identical(a[i], b[i]) {
			return false
		}
	}
	return true
}
