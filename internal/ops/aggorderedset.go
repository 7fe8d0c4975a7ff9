package ops

import (
	"math"
	"slices"
	"strconv"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The ordered-set aggregates percentile_cont(fraction), percentile_disc
// (fraction) and mode(), each WITHIN GROUP (ORDER BY x), keep their
// group's non-NULL values of x in an arrangement ordered as the WITHIN
// GROUP clause sorts them:
//
//	'a' | aggregate index | EncodeKey(group values) | EncodeKey(x) (EncodeKeyDesc for DESC) [| EncodeRow(x)] → varint(count)
//
// with EncodeRow(x) after the key for kinds whose key holds the equality
// class rather than the value (numeric, floats, interval, arrays), so the
// value comes back exactly. The group's state row keeps the count of rows
// the aggregate took (after FILTER, NULL values included: PostgreSQL
// checks the fraction as soon as a group has one), the count of non-NULL
// values (the arrangement's total) and the current result, so that it can
// be retracted.
//
// A change to a group recomputes its result from the arrangement, as
// PostgreSQL's final functions compute it from the sorted input:
//
//   - percentile_disc(p) is the value at 1-based position max(1, ⌈p·n⌉);
//   - percentile_cont(p) interpolates between the values at 0-based
//     positions ⌊p·(n−1)⌋ and ⌈p·(n−1)⌉ as lo + (hi−lo)·frac (for
//     intervals (hi − lo) × frac + lo);
//   - with an array of fractions, each element is computed so, NULL
//     elements giving NULL;
//   - mode() is the value of the largest equality class, the first in
//     sort order among classes equally large.
//
// Cost per changed group per step: the values are counted, not rebuilt. A
// percentile walks the arrangement from the nearer end to the position it
// needs, reading min(k, n−k) values' entries (each entry a distinct value
// with its count) for position k; mode() reads every entry of the group.
// Over insert-only input the arrangement is kept all the same: any value
// may become the percentile or the mode later, so there is nothing to
// drop.

// initOrderedSet prepares the operators percentile_cont over interval
// interpolates with.
func (s *aggSpec) initOrderedSet() error {
	s.arranged = true
	if s.fn != fnPercentileCont || s.call.Arg.Type().ID != types.Interval {
		return nil
	}
	iv, f8 := types.Of(types.Interval), types.Of(types.Float8)
	for i, o := range []struct {
		op   string
		l, r types.Type
	}{{"-", iv, iv}, {"*", iv, f8}, {"+", iv, iv}} {
		op, err := types.ResolveBinary(o.op, o.l, o.r)
		if err != nil {
			return errs.Newf(errs.FeatureNotSupported, "percentile_cont(interval) is not supported: %v", err)
		}
		s.lerp[i] = op
	}
	return nil
}

// orderedSetKey appends the arrangement key of the non-NULL value v.
func (s *aggSpec) orderedSetKey(dst []byte, v types.Value) []byte {
	var one [1]types.Value
	one[0] = v
	if s.call.Order[0].Desc {
		dst = zset.EncodeKeyDesc(dst, one[:]...)
	} else {
		dst = zset.EncodeKey(dst, one[:]...)
	}
	if orderedSetLossy(v.Kind()) {
		dst = zset.EncodeRow(dst, one[:])
	}
	return dst
}

// orderedSetLossy reports whether the key of a value of kind k holds its
// equality class only, so that the arrangement adds its row encoding.
func orderedSetLossy(k types.Kind) bool { return keyLossy(k) || k.IsArray() }

// takeOrderedSet folds w copies of one row's value v (NULL or not) into
// the aggregate's counts and, unless NULL, its arrangement.
func (a *Aggregate) takeOrderedSet(st state.Store, s *aggSpec, acc *accum, gkey []byte, v types.Value, okey []byte, w int64) error {
	acc.dirty = true
	if err := addCount(&acc.rows, w); err != nil {
		return err
	}
	if v.IsNull() {
		return nil
	}
	if err := addCount(&acc.n, w); err != nil {
		return err
	}
	return a.arrangeOrdered(st, s, acc, gkey, okey, w)
}

// orderedSetValue computes the aggregate's result over the group's
// arrangement; gvals are the group's values, over which the fraction is
// evaluated.
func (a *Aggregate) orderedSetValue(st state.Store, s *aggSpec, gkey []byte, gvals []types.Value, acc *accum) (types.Value, error) {
	if acc.rows == 0 {
		return types.Null, nil
	}
	if s.fn == fnMode {
		if acc.n == 0 {
			return types.Null, nil
		}
		return a.mode(st, s, gkey)
	}
	p, err := s.call.Direct.Eval(gvals)
	if err != nil || p.IsNull() {
		return types.Null, err
	}
	if !p.Kind().IsArray() {
		if err := checkFraction(p.Float()); err != nil {
			return types.Null, err
		}
		if acc.n == 0 {
			return types.Null, nil
		}
		vals, err := a.percentiles(st, s, gkey, acc.n, []types.Value{p})
		if err != nil {
			return types.Null, err
		}
		return vals[0], nil
	}
	if acc.n == 0 {
		return types.Null, nil
	}
	fs := p.Elems()
	for _, f := range fs {
		if !f.IsNull() {
			if err := checkFraction(f.Float()); err != nil {
				return types.Null, err
			}
		}
	}
	vals, err := a.percentiles(st, s, gkey, acc.n, fs)
	if err != nil {
		return types.Null, err
	}
	return types.MakeArray(s.result.ID.Elem(), vals), nil
}

// checkFraction fails as PostgreSQL does for a fraction outside [0, 1].
func checkFraction(p float64) error {
	if p >= 0 && p <= 1 {
		return nil
	}
	text := strconv.FormatFloat(p, 'g', 6, 64)
	switch {
	case math.IsNaN(p):
		text = "NaN"
	case math.IsInf(p, 1):
		text = "Infinity"
	case math.IsInf(p, -1):
		text = "-Infinity"
	}
	return errs.Newf(errs.NumericOutOfRange, "percentile value %s is not between 0 and 1", text)
}

// percentileRanks returns the 0-based positions, among n values, that
// fraction p needs: one for percentile_disc, the two percentile_cont
// interpolates between, and the interpolation's weight.
func (s *aggSpec) percentileRanks(p float64, n int64) (lo, hi int64, frac float64) {
	if s.fn == fnPercentileDisc {
		r := int64(math.Ceil(p * float64(n)))
		if r > 1 {
			return r - 1, r - 1, 0
		}
		return 0, 0, 0
	}
	x := p * float64(n-1)
	lo, hi = int64(math.Floor(x)), int64(math.Ceil(x))
	return lo, hi, x - float64(lo)
}

// percentiles computes percentile_cont or percentile_disc for each
// fraction of fs (NULL for a NULL fraction) over the group's n values.
func (a *Aggregate) percentiles(st state.Store, s *aggSpec, gkey []byte, n int64, fs []types.Value) ([]types.Value, error) {
	var ranks []int64
	for _, f := range fs {
		if !f.IsNull() {
			lo, hi, _ := s.percentileRanks(f.Float(), n)
			ranks = append(ranks, lo, hi)
		}
	}
	slices.Sort(ranks)
	ranks = slices.Compact(ranks)
	at, err := a.valuesAt(st, s, gkey, n, ranks)
	if err != nil {
		return nil, err
	}
	out := make([]types.Value, len(fs))
	for i, f := range fs {
		if f.IsNull() {
			continue
		}
		lo, hi, frac := s.percentileRanks(f.Float(), n)
		x, y := at[lo], at[hi]
		if lo == hi || s.fn == fnPercentileDisc {
			out[i] = x
			continue
		}
		if out[i], err = s.interpolate(x, y, frac); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// interpolate returns lo + (hi − lo)·frac as PostgreSQL's float8_lerp
// and interval_lerp compute it.
func (s *aggSpec) interpolate(lo, hi types.Value, frac float64) (types.Value, error) {
	if s.lerp[0] == nil {
		l, h := lo.Float(), hi.Float()
		// The conversion rounds the product, so that it is never fused
		// into a multiply-add: PostgreSQL rounds it too.
		return types.MakeFloat8(l + float64(frac*(h-l))), nil
	}
	d, err := s.lerp[0].Eval(hi, lo)
	if err != nil {
		return types.Null, err
	}
	if d, err = s.lerp[1].Eval(d, types.MakeFloat8(frac)); err != nil {
		return types.Null, err
	}
	return s.lerp[2].Eval(d, lo)
}

// valuesAt returns the values at the given sorted, distinct 0-based
// positions of the group's n values, walking the arrangement from the end
// nearer to them.
func (a *Aggregate) valuesAt(st state.Store, s *aggSpec, gkey []byte, n int64, ranks []int64) (map[int64]types.Value, error) {
	out := make(map[int64]types.Value, len(ranks))
	if len(ranks) == 0 {
		return out, nil
	}
	a.arrKey = append(append(a.arrKey[:0], s.prefix...), gkey...)
	plen := len(a.arrKey)
	reverse := n-ranks[0] < ranks[len(ranks)-1]+1
	var (
		seen    int64 // values before this entry, counted from the walk's start
		next    = 0   // the next rank to find, in walk order
		scanErr error
	)
	if reverse {
		next = len(ranks) - 1
	}
	fn := func(k, v []byte) bool {
		w, _, err := readWeight(v)
		if err != nil {
			scanErr = err
			return false
		}
		if w <= 0 {
			return true
		}
		var x types.Value
		decoded := false
		for next >= 0 && next < len(ranks) {
			r := ranks[next]
			if reverse {
				r = n - 1 - r
			}
			if r >= seen+w {
				break
			}
			if !decoded {
				if x, err = orderedSetEntry(k[plen:]); err != nil {
					scanErr = err
					return false
				}
				decoded = true
			}
			out[ranks[next]] = x
			if reverse {
				next--
			} else {
				next++
			}
		}
		seen += w
		return next >= 0 && next < len(ranks)
	}
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.arrKey)
	var err error
	if reverse {
		err = st.ScanReverse(a.arrKey, a.endKey, fn)
	} else {
		err = st.Scan(a.arrKey, a.endKey, fn)
	}
	if err == nil {
		err = scanErr
	}
	if err == nil && len(out) != len(ranks) {
		err = corrupt("ordered-set arrangement (fewer values than counted)")
	}
	return out, err
}

// orderedSetEntry decodes the value of an arrangement key's suffix.
func orderedSetEntry(rest []byte) (types.Value, error) {
	v, tail, err := zset.DecodeKeyValue(rest)
	if err != nil {
		return types.Null, err
	}
	if orderedSetLossy(v.Kind()) {
		return decodeValue(tail)
	}
	if len(tail) != 0 {
		return types.Null, corrupt("ordered-set key")
	}
	return v, nil
}

// mode returns the value of the group's largest equality class, the first
// in sort order among equally large ones (as PostgreSQL's mode_final,
// which replaces its candidate only by a strictly larger class).
func (a *Aggregate) mode(st state.Store, s *aggSpec, gkey []byte) (types.Value, error) {
	a.arrKey = append(append(a.arrKey[:0], s.prefix...), gkey...)
	plen := len(a.arrKey)
	var (
		best, cur   types.Value
		bestN, curN int64
		class       []byte // the current class's key
		scanErr     error
		haveCur     bool
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
		rest := k[plen:]
		_, tail, err := zset.DecodeKeyValue(rest)
		if err != nil {
			scanErr = err
			return false
		}
		ckey := rest[:len(rest)-len(tail)]
		if haveCur && string(ckey) == string(class) {
			curN += w
			return true
		}
		if haveCur && curN > bestN {
			best, bestN = cur, curN
		}
		if cur, err = orderedSetEntry(rest); err != nil {
			scanErr = err
			return false
		}
		class = append(class[:0], ckey...)
		curN, haveCur = w, true
		return true
	}
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.arrKey)
	if err := st.Scan(a.arrKey, a.endKey, fn); err != nil {
		return types.Null, err
	}
	if scanErr != nil {
		return types.Null, scanErr
	}
	if haveCur && curN > bestN {
		best = cur
	}
	return best, nil
}
