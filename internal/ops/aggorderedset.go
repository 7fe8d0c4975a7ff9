package ops

import (
	"bytes"
	"encoding/binary"
	"math"
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
// values (the arrangement's total), the current result, so that it can
// be retracted, and for a percentile one cursor per fraction (rankCursor):
// the entry where its position was last found and how many values sort
// before it.
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
// Cost per changed group per step: the values are counted, not rebuilt.
// Each input row moves the cursors it sorts before (O(fractions) per
// row); then each fraction walks the arrangement from its cursor, or from
// the nearer end when that is closer, to the position it needs. A change
// of k rows moves a position by at most k values, so it reads at most
// about k + 1 entries (each a distinct value with its count) per fraction,
// and never more than min(p, n−p) for position p of n. mode() keeps an
// index of the group's value classes by count besides (see arrangeMode):
// a row moves its class's entry, and the mode is the index's first.
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
	if err := moveCursors(acc.cursors, okey, w); err != nil {
		return err
	}
	if s.fn == fnMode {
		return a.arrangeMode(st, s, acc, gkey, okey, w)
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
	p, err := s.call.Direct[0].Eval(gvals)
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
		vals, err := a.percentiles(st, s, gkey, acc, []types.Value{p})
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
	vals, err := a.percentiles(st, s, gkey, acc, fs)
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
// fraction of fs (NULL for a NULL fraction) over the group's n values,
// moving each fraction's cursor to the position it now needs.
func (a *Aggregate) percentiles(st state.Store, s *aggSpec, gkey []byte, acc *accum, fs []types.Value) ([]types.Value, error) {
	n := acc.n
	if len(acc.cursors) != len(fs) {
		acc.cursors = make([]rankCursor, len(fs)) // none valid yet
	}
	out := make([]types.Value, len(fs))
	for i, f := range fs {
		c := &acc.cursors[i]
		if f.IsNull() {
			*c = rankCursor{}
			continue
		}
		lo, hi, frac := s.percentileRanks(f.Float(), n)
		x, err := a.seekRank(st, s, gkey, c, n, lo)
		if err != nil {
			return nil, err
		}
		if lo == hi || s.fn == fnPercentileDisc {
			out[i] = x
			continue
		}
		y := x
		if hi >= c.before+c.count {
			if y, err = a.valueAfter(st, s, gkey, c.key); err != nil {
				return nil, err
			}
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

// rankCursor is where a fraction's position was found the last time:
// the arrangement entry (its key after the group's prefix), how many of
// the group's values sort before it, and its count then. Each input row
// whose key sorts before the entry moves before by its weight
// (takeOrderedSet), so the cursor stays exact and the next search starts
// from it: after a change of k rows the position moves by at most k
// values.
type rankCursor struct {
	valid         bool
	key           []byte
	before, count int64
}

// cursorStart and cursorEnd are keys before and after every entry.
var (
	cursorStart = []byte{}
	cursorEnd   = []byte{0xff}
)

// seekRank returns the value at 0-based position r of the group's n
// values and leaves c on the entry holding it. It walks from c or from
// the nearer end of the arrangement, whichever is closer to r: the cost is
// the number of entries between them.
func (a *Aggregate) seekRank(st state.Store, s *aggSpec, gkey []byte, c *rankCursor, n, r int64) (types.Value, error) {
	dist := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	if !c.valid || dist(r-c.before) > min(r, n-r) {
		if r < n-r {
			*c = rankCursor{valid: true, key: cursorStart}
		} else {
			*c = rankCursor{valid: true, key: cursorEnd, before: n}
		}
	}
	a.arrKey = append(append(a.arrKey[:0], s.prefix.of(gkey)...), gkey...)
	plen := len(a.arrKey)
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.arrKey)
	a.key2 = append(append(a.key2[:0], a.arrKey...), c.key...)
	var (
		res     types.Value
		found   bool
		scanErr error
	)
	before := c.before
	visit := func(k, v []byte, forward bool) bool {
		w, _, err := readWeight(v)
		if err != nil {
			scanErr = err
			return false
		}
		if w <= 0 {
			return true
		}
		if !forward {
			before -= w
		}
		if r < before || r >= before+w {
			if forward {
				before += w
			}
			return true
		}
		if res, err = orderedSetEntry(k[plen:]); err != nil {
			scanErr = err
			return false
		}
		*c = rankCursor{valid: true, key: append([]byte(nil), k[plen:]...), before: before, count: w}
		found = true
		return false
	}
	var err error
	if r >= before {
		err = st.Scan(a.key2, a.endKey, func(k, v []byte) bool { return visit(k, v, true) })
	} else {
		err = st.ScanReverse(a.arrKey, a.key2, func(k, v []byte) bool { return visit(k, v, false) })
	}
	if err == nil {
		err = scanErr
	}
	if err == nil && !found {
		err = corrupt("ordered-set arrangement (fewer values than counted)")
	}
	return res, err
}

// valueAfter returns the value of the first entry after the one with key
// suffix key.
func (a *Aggregate) valueAfter(st state.Store, s *aggSpec, gkey, key []byte) (types.Value, error) {
	a.arrKey = append(append(a.arrKey[:0], s.prefix.of(gkey)...), gkey...)
	plen := len(a.arrKey)
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.arrKey)
	// The smallest key after key and its extensions.
	a.key2 = append(append(append(a.key2[:0], a.arrKey...), key...), 0xff)
	return firstValue(st, a.key2, a.endKey, plen, "ordered-set arrangement (fewer values than counted)")
}

// firstValue returns the value of the first entry of positive weight in
// [lo, hi), whose keys hold the value's entry after their first plen
// bytes; none is the corrupt arrangement what.
func firstValue(st state.Store, lo, hi []byte, plen int, what string) (types.Value, error) {
	var (
		res     types.Value
		found   bool
		scanErr error
	)
	err := st.Scan(lo, hi, func(k, v []byte) bool {
		w, _, err := readWeight(v)
		if err != nil {
			scanErr = err
			return false
		}
		if w <= 0 {
			return true
		}
		res, scanErr = orderedSetEntry(k[plen:])
		found = true
		return false
	})
	if err == nil {
		err = scanErr
	}
	if err == nil && !found {
		err = corrupt(what)
	}
	return res, err
}

// moveCursors accounts for w copies of a value with key suffix okey in
// the group's cursors.
func moveCursors(cs []rankCursor, okey []byte, w int64) error {
	for i := range cs {
		if c := &cs[i]; c.valid && bytes.Compare(okey, c.key) < 0 {
			if err := addCount(&c.before, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeCursors encodes a group's cursors for its state row: per cursor a
// validity byte, then for a valid one uvarint(len(key)), key and
// varint(before) and varint(count).
func encodeCursors(cs []rankCursor) types.Value {
	if len(cs) == 0 {
		return types.Null
	}
	var b []byte
	for _, c := range cs {
		if !c.valid {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(c.key)))
		b = append(b, c.key...)
		b = binary.AppendVarint(b, c.before)
		b = binary.AppendVarint(b, c.count)
	}
	return types.MakeBytea(b)
}

// decodeCursors decodes what encodeCursors wrote.
func decodeCursors(dst []rankCursor, v types.Value) ([]rankCursor, error) {
	dst = dst[:0]
	if v.IsNull() {
		return dst, nil
	}
	b := []byte(v.Str())
	for len(b) > 0 {
		flag := b[0]
		b = b[1:]
		if flag == 0 {
			dst = append(dst, rankCursor{})
			continue
		}
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return nil, corrupt("ordered-set cursor")
		}
		key := b[n : n+int(l)]
		b = b[n+int(l):]
		before, n1 := binary.Varint(b)
		if n1 <= 0 {
			return nil, corrupt("ordered-set cursor")
		}
		count, n2 := binary.Varint(b[n1:])
		if n2 <= 0 {
			return nil, corrupt("ordered-set cursor")
		}
		b = b[n1+n2:]
		dst = append(dst, rankCursor{valid: true, key: key, before: before, count: count})
	}
	return dst, nil
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

// mode() also indexes each group's value classes by their counts:
//
//	'm' | aggregate index | EncodeKey(group values) | EncodeKeyDesc(count) | class key → 0x01
//
// where the class key is the value's sort key without its row encoding
// (the equality class, in WITHIN GROUP order). The first entry of a
// group's index is its largest class, and of equally large ones the first
// in sort order, which is PostgreSQL's mode: the result is that class's
// first value in the arrangement. A row moves its class's index entry
// (cost: the class's representations, one for most types); reading the
// mode costs two seeks.

// modeMark is the value of a mode index entry (the key says it all).
var modeMark = []byte{1}

func modePrefix(prefix Prefix, i int) Prefix {
	return prefix.With('m', byte(i>>8), byte(i))
}

// arrangeMode adds w copies of a value with arrangement key okey to the
// arrangement and moves its class's entry in the mode index.
func (a *Aggregate) arrangeMode(st state.Store, s *aggSpec, acc *accum, gkey, okey []byte, w int64) error {
	class, err := classKey(okey)
	if err != nil {
		return err
	}
	old, err := a.classCount(st, s, gkey, class)
	if err != nil {
		return err
	}
	if err := a.arrangeOrdered(st, s, acc, gkey, okey, w); err != nil {
		return err
	}
	now, err := zset.AddWeight(old, w)
	if err != nil {
		return err
	}
	if old > 0 {
		if err := st.Delete(a.modeKey(s, gkey, old, class)); err != nil {
			return err
		}
	}
	if now > 0 {
		return st.Set(a.modeKey(s, gkey, now, class), modeMark)
	}
	return nil
}

// classKey returns the class part of an arrangement key suffix: the
// value's sort key, without the row encoding that may follow it.
func classKey(okey []byte) ([]byte, error) {
	_, tail, err := zset.DecodeKeyValue(okey)
	if err != nil {
		return nil, err
	}
	return okey[:len(okey)-len(tail)], nil
}

// modeKey returns the mode index key of a class with count n.
func (a *Aggregate) modeKey(s *aggSpec, gkey []byte, n int64, class []byte) []byte {
	a.rep = append(append(a.rep[:0], s.modePrefix.of(gkey)...), gkey...)
	a.rep = zset.EncodeKeyDesc(a.rep, i8(n))
	return append(a.rep, class...)
}

// classCount sums the counts of a class's entries in the arrangement.
func (a *Aggregate) classCount(st state.Store, s *aggSpec, gkey, class []byte) (int64, error) {
	a.arrKey = append(append(append(a.arrKey[:0], s.prefix.of(gkey)...), gkey...), class...)
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.arrKey)
	var (
		n       int64
		scanErr error
	)
	err := st.Scan(a.arrKey, a.endKey, func(_, v []byte) bool {
		w, _, err := readWeight(v)
		if err != nil {
			scanErr = err
			return false
		}
		n += w
		return true
	})
	if err == nil {
		err = scanErr
	}
	return n, err
}

// mode returns the value of the group's largest equality class, the first
// in sort order among equally large ones (as PostgreSQL's mode_final,
// which replaces its candidate only by a strictly larger class), from the
// first entry of the group's mode index.
func (a *Aggregate) mode(st state.Store, s *aggSpec, gkey []byte) (types.Value, error) {
	a.key2 = append(append(a.key2[:0], s.modePrefix.of(gkey)...), gkey...)
	plen := len(a.key2)
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.key2)
	var (
		class   []byte
		scanErr error
	)
	err := st.Scan(a.key2, a.endKey, func(k, _ []byte) bool {
		_, rest, err := zset.DecodeKeyValue(k[plen:]) // the count
		if err != nil || len(rest) == 0 {
			scanErr = corrupt("mode index key")
			return false
		}
		class = append([]byte(nil), rest...)
		return false
	})
	if err == nil {
		err = scanErr
	}
	if err != nil {
		return types.Null, err
	}
	if class == nil {
		return types.Null, corrupt("mode index (no class for a group with values)")
	}
	a.arrKey = append(append(a.arrKey[:0], s.prefix.of(gkey)...), gkey...)
	alen := len(a.arrKey)
	a.arrKey = append(a.arrKey, class...)
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.arrKey)
	return firstValue(st, a.arrKey, a.endKey, alen, "mode index (a class without values)")
}
