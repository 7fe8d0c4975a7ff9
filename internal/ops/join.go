package ops

import (
	"bytes"
	"context"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Join is the inner equi-join of two inputs with an optional residual
// predicate; with no keys it is a cross join.
//
// State: both inputs arranged by join key,
//
//	prefix(join key) | 'l' or 'r' | EncodeKey(join key) | 0x01 | EncodeRow(row) → varint(weight)
//
// (prefix(k) being the operator's prefix in the bucket of k, Prefix), so
// the rows of one join key are one prefix scan. A cross join's key is
// empty: its arrangements are in the bucket of the empty key. The row part is the
// exact encoding: rows equal under = but written differently (NUMERIC 1.0
// and 1.00) are different rows of a Z-set, and a join passes each through
// as it is. Rows whose key holds a NULL compared with "=" can never match
// and are not arranged.
//
// Delta rule: Δ(a⋈b) = Δa⋈b' + a⋈Δb, with b' = b + Δb. Step applies Δb
// to b's arrangement, probes it with Δa, probes a's arrangement (still
// without Δa) with Δb, then applies Δa; this covers Δa⋈Δb exactly once.
// Weights multiply with overflow checks.
type Join struct {
	// Loose leaves the output unconsolidated, one entry per matching
	// pair, for a consumer that takes unconsolidated input (internal/diff,
	// loose.go). The join itself takes unconsolidated input: it arranges
	// and probes every entry on its own, and weights add.
	Loose bool

	// leftSet and rightSet say that a side's input is a set: every row
	// the side ever holds has weight 1 (a table with a primary key). Its
	// arrangement is then written without reading it first (setarrange.go).
	leftSet, rightSet bool

	leftKeys, rightKeys []plan.Expr
	nullSafe            []bool
	residual            plan.Expr
	leftWidth           int
	rightWidth          int
	leftPrefix          *bucketed
	rightPrefix         *bucketed
	// lookup, when set, is the input read by key from its stored rows
	// instead of an arrangement (lookupjoin.go).
	lookup *lookupSide

	// Scratch, reused across steps.
	keyBuf    []byte // arrangement key or probe prefix
	valBuf    []byte // arrangement value
	endBuf    []byte // probe scan bound
	keyVals   []types.Value
	probes    []probe
	matches   []match
	matchVals []types.Value // the matches' rows, back to back
	rows      rowAlloc
	runKeys   []byte                       // arrangement keys of one join key's rows (arrangeRun)
	runRefs   []keyRef                     // into runKeys
	collect   func(key, value []byte) bool // j.collectMatch, bound once
	scanErr   error
	probeLen  int // length of the prefix being probed
}

// match is one arranged row found by a probe: matchVals[off:end].
type match struct {
	off, end int
	weight   int64
}

// probe is one delta row with its encoded join key (which starts with the
// side's prefix, stripped before use).
type probe struct {
	key    []byte // prefix(join key) | EncodeKey(join key)
	row    zset.Row
	weight int64
}

// NewJoin returns an inner join keeping its arrangements under prefix.
// leftKeys are evaluated over the left input's rows, rightKeys over the
// right's; nullSafe[i] makes pair i match NULL with NULL (IS NOT DISTINCT
// FROM). residual, when not nil, is evaluated over the concatenated row.
// leftWidth and rightWidth are the inputs' column counts.
func NewJoin(prefix Prefix, leftKeys, rightKeys []plan.Expr, nullSafe []bool, residual plan.Expr, leftWidth, rightWidth int) *Join {
	ns := make([]bool, len(leftKeys))
	copy(ns, nullSafe)
	j := &Join{
		leftKeys: leftKeys, rightKeys: rightKeys, nullSafe: ns, residual: residual,
		leftWidth: leftWidth, rightWidth: rightWidth,
		leftPrefix:  prefix.With('l').expand(),
		rightPrefix: prefix.With('r').expand(),
	}
	j.collect = j.collectMatch
	return j
}

// collectMatch is the probe's scan callback: it decodes one arranged row
// (the key after the probed prefix and rowSep) into the matches.
func (j *Join) collectMatch(k, v []byte) bool {
	w, _, err := readWeight(v)
	if err == nil {
		off := len(j.matchVals)
		j.matchVals, err = zset.DecodeRowAppend(j.matchVals, k[j.probeLen+1:])
		j.matches = append(j.matches, match{off: off, end: len(j.matchVals), weight: w})
	}
	j.scanErr = err
	return err == nil
}

// Step implements Operator: in[0] is the left delta, in[1] the right one.
func (j *Join) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	j.rows.bind(ctx)
	dl, dr := in[0], in[1]
	if len(dl) == 0 && len(dr) == 0 {
		return nil, nil
	}
	var out zset.Batch
	w := &work{ctx: ctx}
	j.probes = j.probes[:0]
	lp, err := j.index(w, dl, j.leftKeys, j.leftPrefix)
	if err != nil {
		return nil, err
	}
	rp, err := j.index(w, dr, j.rightKeys, j.rightPrefix)
	if err != nil {
		return nil, err
	}
	if j.lookup != nil {
		if out, err = j.stepLookup(w, st, lp, rp); err != nil {
			return nil, err
		}
		if j.Loose {
			return out, nil
		}
		return zset.Consolidate(out)
	}
	// b' = b + Δb.
	if err := j.arrangeSide(w, st, rp, j.rightSet); err != nil {
		return nil, err
	}
	// Δa ⋈ b'.
	if out, err = j.probe(w, st, out, lp, j.leftPrefix, j.rightPrefix, true); err != nil {
		return nil, err
	}
	// a ⋈ Δb, with a not yet holding Δa.
	if out, err = j.probe(w, st, out, rp, j.rightPrefix, j.leftPrefix, false); err != nil {
		return nil, err
	}
	// a' = a + Δa.
	if err := j.arrangeSide(w, st, lp, j.leftSet); err != nil {
		return nil, err
	}
	if j.Loose {
		return out, nil
	}
	return zset.Consolidate(out)
}

// index evaluates the join key of every delta row and returns the rows
// that can match, sorted by key, so that each key is probed once.
func (j *Join) index(w *work, b zset.Batch, keys []plan.Expr, prefix *bucketed) ([]probe, error) {
	if len(b) == 0 {
		return nil, nil
	}
	start := len(j.probes)
	plen := prefix.plen()
	// All keys of one side share one buffer; probe.key slices into it.
	arena := make([]byte, 0, len(b)*(plen+8*len(keys)+2))
	refs := make([]keyRef, 0, len(b))
rowLoop:
	for i, e := range b {
		if err := w.tick(); err != nil {
			return nil, err
		}
		j.keyVals = j.keyVals[:0]
		for k, x := range keys {
			v, err := x.Eval(e.Row)
			if err != nil {
				return nil, err
			}
			if v.IsNull() && !j.nullSafe[k] {
				continue rowLoop // NULL = anything is never true
			}
			j.keyVals = append(j.keyVals, v)
		}
		// The prefix's length is known before its bucket: reserve it,
		// encode the key after it, then fill it in.
		off := len(arena)
		arena = append(arena, prefix.at(0)...)
		arena = zset.EncodeKey(arena, j.keyVals...)
		copy(arena[off:], prefix.of(arena[off+plen:]))
		refs = append(refs, keyRef{off: uint32(off), end: uint32(len(arena)), idx: int32(i)})
	}
	sortKeyRefs(refs, arena)
	for _, r := range refs {
		e := b[r.idx]
		j.probes = append(j.probes, probe{key: arena[r.off:r.end:r.end], row: e.Row, weight: e.Weight})
	}
	ps := j.probes[start:]
	return ps, nil
}

// arrange adds the probes' rows to the side's arrangement.
func (j *Join) arrange(w *work, st state.Store, ps []probe) error {
	// The probes are sorted by key, so each write lands next to the
	// previous one.
	var hint state.Hint
	for _, p := range ps {
		if err := w.tick(); err != nil {
			return err
		}
		j.keyBuf = j.arrangedKey(j.keyBuf[:0], p)
		var err error
		if j.valBuf, err = addWeightHinted(st, j.keyBuf, p.weight, j.valBuf, &hint); err != nil {
			return err
		}
	}
	return nil
}

// arrangedKey appends the arrangement key of p's row to dst.
func (j *Join) arrangedKey(dst []byte, p probe) []byte {
	return zset.EncodeRow(append(append(dst, p.key...), rowSep), p.row)
}

// rowSep separates the join key from the row in an arrangement key. It is
// never 0xff, so zset.KeyPrefixEnd bounds a join key's rows.
const rowSep = 0x01

// probe joins each run of equal-keyed probes with the rows arranged under
// the same key on the other side and appends the pairs to out. deltaLeft
// says which side the probes are on, to order the concatenated row.
func (j *Join) probe(w *work, st state.Store, out zset.Batch, ps []probe, own, other *bucketed, deltaLeft bool) (zset.Batch, error) {
	for i := 0; i < len(ps); {
		n := i + 1
		for n < len(ps) && bytes.Equal(ps[n].key, ps[i].key) {
			n++
		}
		run := ps[i:n]
		i = n
		// The other side's rows under this key: one prefix scan.
		key := run[0].key[own.plen():]
		j.keyBuf = append(append(j.keyBuf[:0], other.of(key)...), key...)
		j.matches = j.matches[:0]
		j.matchVals = j.matchVals[:0]
		j.scanErr, j.probeLen = nil, len(j.keyBuf)
		j.endBuf = zset.KeyPrefixEnd(j.endBuf[:0], j.keyBuf)
		err := st.Scan(j.keyBuf, j.endBuf, j.collect)
		if err == nil {
			err = j.scanErr
		}
		if err != nil {
			return nil, err
		}
		if out, err = j.pairUp(w, out, run, deltaLeft); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pairUp appends to out each probe of run paired with each of j.matches
// that passes the residual predicate. deltaLeft says which side the
// probes are on, to order the concatenated row.
func (j *Join) pairUp(w *work, out zset.Batch, run []probe, deltaLeft bool) (zset.Batch, error) {
	width := j.leftWidth + j.rightWidth
	for _, p := range run {
		for _, m := range j.matches {
			if err := w.tick(); err != nil {
				return nil, err
			}
			mrow := j.matchVals[m.off:m.end]
			row := j.rows.alloc(width)
			if deltaLeft {
				copy(row, p.row)
				copy(row[j.leftWidth:], mrow)
			} else {
				copy(row, mrow)
				copy(row[j.leftWidth:], p.row)
			}
			if j.residual != nil {
				ok, err := isTrue(j.residual, row)
				if err != nil {
					return nil, err
				}
				if !ok {
					j.rows.unalloc(width)
					continue
				}
			}
			w, err := zset.MulWeight(p.weight, m.weight)
			if err != nil {
				return nil, err
			}
			out = append(out, zset.Entry{Row: row, Weight: w})
		}
	}
	return out, nil
}
